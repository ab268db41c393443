/* frame.h: the frame header every message and control record carries on a connection (one place:
 * encode, decode, validate). */
#ifndef CSNI_FRAME_H
#define CSNI_FRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* On the wire a header is CSNI_FRAME_SIZE bytes, little-endian:
 *   0  u16 magic (0xC5A1)    2 u8 type    3 u8 flags (must be 0)
 *   4  u32 dst      transport id in the receiving process (EAGER, RTS)
 *   8  u32 src      transport id in the sending process
 *  12  u32 aux      CTS, DATA: CSNI_CTS_OK or CSNI_CTS_GONE (the other side's transport is
 *                   gone; DATA then has no payload); CTS only: CSNI_CTS_PULLED (the receiver
 *                   copied len bytes itself with process_vm_readv: the transmit is done);
 *                   CSNI_CTS_SPLIT (below); HELLO: protocol version; RTS: CSNI_RTS_ASK,
 *                   _PUSHED or _WITHDRAWN (below)
 *  16  u64 len      EAGER/DATA: payload bytes that follow; RTS: message length; CTS: bytes
 *                   the receiver wants; CREDIT: bytes returned; HELLO: key bytes that follow
 *  24  u64 cookie   RTS/CTS: the sender's token; DATA: the receiver's token; HELLO: process id;
 *                   TIDS QUERY and the COUNT answering it: the question's number
 *  32  u64 cookie2  CTS: the receiver's token; RTS: the sender's buffer address when the
 *                   receiver may pull it (shared memory), else 0; DATA: offset of this chunk
 *                   in the message (a message travels as DATA frames in order, each
 *                   as long as its sender chose: the receiver takes any length that fits)
 * HELLO: dst is 1 when the connecting process created the pair's shared-memory segment;
 *        cookie2 is then the random part of the segment's name.
 * Payload follows EAGER, DATA and HELLO headers only. */
#define CSNI_FRAME_SIZE 40
#define CSNI_FRAME_MAGIC 0xC5A1u
#define CSNI_PROTO_VERSION 1u
#define CSNI_KEY_BYTES 16
/* Largest message length a frame may announce (2^48): larger is a corrupt frame. */
#define CSNI_MAX_MSG ((uint64_t)1 << 48)

enum csni_frame_type {
    CSNI_F_HELLO = 1, /* first frame of a connection: process id and job key */
    CSNI_F_EAGER,     /* a whole message, payload follows */
    CSNI_F_RTS,       /* request to send a message of len bytes (no payload) */
    CSNI_F_CTS,       /* clear to send: the receiver matched an RTS */
    CSNI_F_DATA,      /* the payload of a message announced by RTS, answering a CTS */
    CSNI_F_CREDIT,    /* the receiver returns eager credit */
    CSNI_F_TIDS,      /* about the sender's transport ids (no payload): kind in aux, below */
    CSNI_F_MOVE,      /* the sender moves to another connection of the pair (no payload) */
    CSNI_F_TYPE_MAX
};
/* CSNI_CTS_SPLIT (shared memory, large messages: both sides copy at once). In a CTS: the
 * receiver pulls bytes [0, csni_split_at(len)) and asks the sender to write the rest straight
 * into its buffer at cookie2 (process_vm_writev); the receiver's token travels in dst (low 32
 * bits) and src (high 32 bits). In a DATA frame (no payload): the sender has written len bytes
 * from the split point on; cookie is the receiver's token. The receiver's CTS_PULLED ends
 * the sender's part. */
/* CSNI_CTS_FABRIC (CTS only, over a libfabric link): the receiver has posted a receive of len
 * bytes with the provider, tagged with its token (cookie2); the sender hands the message to
 * the provider (transport/ofi/ofi.h) instead of sending DATA frames. */
/* CSNI_CTS_NOTID (CTS only, answering an RTS): the destination transport never existed at the
 * receiver (its id was never handed out): the transmit fails with CSN_ILLEGAL_NETID (GONE: it
 * closed, CSN_PEER_LOST). */
/* RTS kinds (aux). PUSHED (over a libfabric link): the sender has handed the message to the
 * provider already, tagged with its token (cookie); the receiver posts its receive with that
 * tag once it matches, and answers nothing: the provider's completions end both sides.
 * WITHDRAWN (len 0): the sender's transport closed before the receiver matched the pushed
 * message with this token, or the message whose RTS gave its address for a pull (over shared
 * memory); the receiver takes a pushed payload into memory of its own and drops it, or
 * forgets the address and answers CTS GONE, and keeps the RTS as an ordinary one (a receive
 * that takes it asks, and fails). */
enum { CSNI_RTS_ASK = 0, CSNI_RTS_PUSHED = 1, CSNI_RTS_WITHDRAWN = 2 };
enum {
    CSNI_CTS_OK = 0,
    CSNI_CTS_GONE = 1,
    CSNI_CTS_PULLED = 2,
    CSNI_CTS_SPLIT = 3,
    CSNI_CTS_NOTID = 4,
    CSNI_CTS_FABRIC = 5
};

/* CSNI_F_TIDS kinds. QUERY: how many transport ids have you handed out? COUNT (the answer, or
 * unasked after a message to an id never handed out): ids below len were. GONE: transport len
 * closed (sent to every peer at its close, and to the sender of a message that found it
 * closed). A process sends no message to a transport of a peer until it knows the id was
 * handed out and has not closed: nothing is lost silently to a transport that does not exist. */
enum { CSNI_TIDS_QUERY = 0, CSNI_TIDS_COUNT = 1, CSNI_TIDS_GONE = 2 };

/* CSNI_F_MOVE kinds (core/peer.c): LAST, the sender's last frame on the connection it leaves
 * (for the pair's other one); OK, the answer, on the same connection: LAST and all before it
 * were read, the sender may write on the other one. */
enum { CSNI_MOVE_LAST = 0, CSNI_MOVE_OK = 1 };

/* Where a split rendezvous of len bytes divides: half, on a page boundary. */
static inline uint64_t csni_split_at(uint64_t len)
{
    return (len / 2) & ~(uint64_t)4095;
}

/* Largest DATA frame on rings and fabrics, and the first one on sockets: a message beyond it
 * travels as several, so that frames queued behind it (a CTS for the other direction) wait at
 * most this long, not for the whole message. A socket's later chunks follow its refit
 * low-water mark (core/conn.c). */
#define CSNI_DATA_CHUNK ((uint64_t)128 << 10)

struct csni_frame {
    uint8_t type;
    uint32_t dst, src, aux;
    uint64_t len, cookie, cookie2;
};

/* ---- one name per meaning ----
 * The words dst, src, aux, cookie and cookie2 mean different things by frame type (the table
 * above). Code outside src/wire builds frames with the builders and reads them with the
 * readers below, never through the words themselves (tests/wire checks it). */
/* nonce: with ring, the unguessable part of the segment's name. */
static inline struct csni_frame csni_frame_hello(uint64_t proc, int ring, uint32_t lane,
                                                 uint64_t nonce)
{
    return (struct csni_frame){.type = CSNI_F_HELLO,
                               .dst = ring ? 1u : 0u,
                               .src = lane,
                               .aux = CSNI_PROTO_VERSION,
                               .len = CSNI_KEY_BYTES,
                               .cookie = proc,
                               .cookie2 = nonce};
}
static inline struct csni_frame csni_frame_eager(uint32_t dst, uint32_t src, uint64_t len)
{
    return (struct csni_frame){.type = CSNI_F_EAGER, .dst = dst, .src = src, .len = len};
}

/* pull_addr: the sender's buffer when the receiver may copy it itself, else 0. pushed: over
 * a libfabric link, the payload follows by the provider already (CSNI_RTS_PUSHED). */
static inline struct csni_frame csni_frame_rts(uint32_t dst, uint32_t src, uint64_t len,
                                               uint64_t sender_token, uint64_t pull_addr,
                                               bool pushed)
{
    return (struct csni_frame){.type = CSNI_F_RTS,
                               .dst = dst,
                               .src = src,
                               .aux = pushed ? CSNI_RTS_PUSHED : CSNI_RTS_ASK,
                               .len = len,
                               .cookie = sender_token,
                               .cookie2 = pull_addr};
}
static inline struct csni_frame csni_frame_rts_withdrawn(uint32_t dst, uint32_t src,
                                                         uint64_t sender_token)
{
    return (struct csni_frame){.type = CSNI_F_RTS,
                               .dst = dst,
                               .src = src,
                               .aux = CSNI_RTS_WITHDRAWN,
                               .cookie = sender_token};
}
/* kind: CSNI_CTS_OK, _GONE or _PULLED (csni_frame_cts_split for _SPLIT). */
static inline struct csni_frame csni_frame_cts(uint32_t kind, uint64_t len, uint64_t sender_token,
                                               uint64_t receiver_token)
{
    return (struct csni_frame){.type = CSNI_F_CTS,
                               .aux = kind,
                               .len = len,
                               .cookie = sender_token,
                               .cookie2 = receiver_token};
}
static inline struct csni_frame csni_frame_cts_split(uint64_t len, uint64_t sender_token,
                                                     uint64_t receiver_token,
                                                     uint64_t receiver_addr)
{
    return (struct csni_frame){.type = CSNI_F_CTS,
                               .aux = CSNI_CTS_SPLIT,
                               .len = len,
                               .cookie = sender_token,
                               .cookie2 = receiver_addr,
                               .dst = (uint32_t)receiver_token,
                               .src = (uint32_t)(receiver_token >> 32)};
}
/* kind: CSNI_CTS_OK (len payload bytes at offset follow), _GONE or _SPLIT (no payload). */
static inline struct csni_frame csni_frame_data(uint32_t kind, uint64_t len,
                                                uint64_t receiver_token, uint64_t offset)
{
    return (struct csni_frame){
        .type = CSNI_F_DATA, .aux = kind, .len = len, .cookie = receiver_token, .cookie2 = offset};
}
static inline struct csni_frame csni_frame_credit(uint64_t bytes)
{
    return (struct csni_frame){.type = CSNI_F_CREDIT, .len = bytes};
}
/* kind: CSNI_TIDS_QUERY (value 0), _COUNT (value: ids handed out) or _GONE (value: the id);
 * gen: the question's number (QUERY, and the COUNT answering it; 0 in an unasked COUNT). */
static inline struct csni_frame csni_frame_tids(uint32_t kind, uint32_t value, uint64_t gen)
{
    return (struct csni_frame){.type = CSNI_F_TIDS, .aux = kind, .len = value, .cookie = gen};
}

static inline struct csni_frame csni_frame_move(uint32_t kind)
{
    return (struct csni_frame){.type = CSNI_F_MOVE, .aux = kind};
}

/* EAGER, RTS: the destination and source transports. */
static inline uint32_t csni_frame_dst_tport(const struct csni_frame *f)
{
    return f->dst;
}
static inline uint32_t csni_frame_src_tport(const struct csni_frame *f)
{
    return f->src;
}
/* CTS, DATA: CSNI_CTS_OK, _GONE, _PULLED (CTS) or _SPLIT. */
static inline uint32_t csni_frame_kind(const struct csni_frame *f)
{
    return f->aux;
}
/* MOVE: CSNI_MOVE_LAST or _OK. */
static inline uint32_t csni_frame_move_kind(const struct csni_frame *f)
{
    return f->aux;
}
/* TIDS: its kind and value. */
static inline uint32_t csni_frame_tids_kind(const struct csni_frame *f)
{
    return f->aux;
}
static inline uint32_t csni_frame_tids_value(const struct csni_frame *f)
{
    return (uint32_t)f->len;
}
static inline uint64_t csni_frame_tids_gen(const struct csni_frame *f)
{
    return f->cookie;
}
/* RTS, CTS: the sender's token. */
static inline uint64_t csni_frame_sender_token(const struct csni_frame *f)
{
    return f->cookie;
}
/* CTS (also split), DATA: the receiver's token. */
static inline uint64_t csni_frame_receiver_token(const struct csni_frame *f)
{
    if (f->type == CSNI_F_DATA)
        return f->cookie;
    if (f->aux == CSNI_CTS_SPLIT)
        return (uint64_t)f->dst | (uint64_t)f->src << 32;
    return f->cookie2;
}
/* RTS: CSNI_RTS_ASK, _PUSHED or _WITHDRAWN. */
static inline uint32_t csni_frame_rts_kind(const struct csni_frame *f)
{
    return f->aux;
}
/* RTS: the sender's buffer for a pull (0: none). Split CTS: the receiver's buffer. */
static inline uint64_t csni_frame_pull_addr(const struct csni_frame *f)
{
    return f->cookie2;
}
static inline uint64_t csni_frame_split_addr(const struct csni_frame *f)
{
    return f->cookie2;
}
/* DATA: where this chunk starts in the message. */
static inline uint64_t csni_frame_chunk_offset(const struct csni_frame *f)
{
    return f->cookie2;
}
/* HELLO: the connecting process, whether it made the pair's shared-memory segment, its lane. */
static inline uint64_t csni_frame_hello_proc(const struct csni_frame *f)
{
    return f->cookie;
}
static inline int csni_frame_hello_ring(const struct csni_frame *f)
{
    return f->dst == 1;
}
static inline uint32_t csni_frame_hello_lane(const struct csni_frame *f)
{
    return f->src;
}
static inline uint64_t csni_frame_hello_nonce(const struct csni_frame *f)
{
    return f->cookie2;
}
/* The type of an encoded header. */
static inline uint8_t csni_frame_hdr_type(const uint8_t hdr[CSNI_FRAME_SIZE])
{
    return hdr[2];
}
/* Whether writing the encoded frame completes its transmit: an EAGER or a DATA frame. */
static inline int csni_frame_hdr_completes(const uint8_t hdr[CSNI_FRAME_SIZE])
{
    return hdr[2] == CSNI_F_DATA || hdr[2] == CSNI_F_EAGER;
}

void csni_frame_encode(const struct csni_frame *f, uint8_t out[CSNI_FRAME_SIZE]);

/* Stores an encoded header at out as five 64-bit words (the wire's little-endian bytes) built
 * in registers, one store each (csni_frame_encode's too). Where out is a ring record being
 * polled: encoding bytes to the stack and copying them loaded what was just stored in
 * narrower pieces, a load the store buffer cannot serve, which waited behind the previous
 * ring record (a stream of 8-byte messages); nine narrow stores straight into the record gave
 * the polling receiver more chances to take the line back between them (1 KiB half round trip
 * +0.03 us). BENCHMARKS.md, issue 19. */
static inline void csni_frame_put64(uint8_t *out, uint64_t v)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    v = __builtin_bswap64(v);
#endif
    memcpy(out, &v, sizeof v);
}

static inline void csni_frame_put(uint8_t *out, uint8_t type, uint32_t dst, uint32_t src,
                                  uint32_t aux, uint64_t len, uint64_t cookie, uint64_t cookie2)
{
    csni_frame_put64(out, CSNI_FRAME_MAGIC | (uint64_t)type << 16 | (uint64_t)dst << 32);
    csni_frame_put64(out + 8, src | (uint64_t)aux << 32);
    csni_frame_put64(out + 16, len);
    csni_frame_put64(out + 24, cookie);
    csni_frame_put64(out + 32, cookie2);
}

/* csni_frame_eager(dst, src, len), encoded at out from values in registers: a frame built
 * in memory and read back would be read in wider pieces than it was written. */
static inline void csni_frame_put_eager(uint8_t *out, uint32_t dst, uint32_t src, uint64_t len)
{
    csni_frame_put(out, CSNI_F_EAGER, dst, src, 0, len, 0, 0);
}
/* The short form of an EAGER frame (shared-memory rings only, where the ring's record header
 * already carries the length: transport/shm/shm.c, "Short records"): one 64-bit word, dst
 * in its low half and src in its high half, the payload after it (a 32-byte message then
 * takes one cache line instead of two). */
#define CSNI_SHORT_SIZE 8
static inline void csni_frame_put_short(uint8_t *out, uint32_t dst, uint32_t src)
{
    csni_frame_put64(out, dst | (uint64_t)src << 32);
}
/* Decodes a short EAGER frame whose payload is len bytes into *f, checked as csni_frame_decode
 * checks an EAGER frame (the same code). 0, or -1 with *why set. */
int csni_frame_decode_short(const uint8_t in[CSNI_SHORT_SIZE], uint64_t len, uint64_t eager_max,
                            struct csni_frame *f, const char **why);

/* Rewrites len and cookie2 of an encoded header (the next chunk of a DATA frame). */
void csni_frame_set_chunk(uint8_t hdr[CSNI_FRAME_SIZE], uint64_t len, uint64_t offset);

/* Decodes and validates. eager_max bounds EAGER payloads. Returns 0, or -1 with *why set to a
 * static description of what is wrong (the connection is then dropped). */
int csni_frame_decode(const uint8_t in[CSNI_FRAME_SIZE], uint64_t eager_max, struct csni_frame *f,
                      const char **why);

#endif
