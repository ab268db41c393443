/* frame.h: the frame header every message and control record carries on a connection (one place:
 * encode, decode, validate). */
#ifndef CSNI_FRAME_H
#define CSNI_FRAME_H

#include <stddef.h>
#include <stdint.h>

/* On the wire a header is CSNI_FRAME_SIZE bytes, little-endian:
 *   0  u16 magic (0xC5A1)    2 u8 type    3 u8 flags (must be 0)
 *   4  u32 dst      transport id in the receiving process (EAGER, RTS)
 *   8  u32 src      transport id in the sending process
 *  12  u32 aux      CTS, DATA: CSNI_CTS_OK or CSNI_CTS_GONE (the other side's transport is
 *                   gone; DATA then has no payload); CTS only: CSNI_CTS_PULLED (the receiver
 *                   copied len bytes itself with process_vm_readv: the transmit is done);
 *                   CSNI_CTS_SPLIT (below); HELLO: protocol version
 *  16  u64 len      EAGER/DATA: payload bytes that follow; RTS: message length; CTS: bytes
 *                   the receiver wants; CREDIT: bytes returned; HELLO: key bytes that follow
 *  24  u64 cookie   RTS/CTS: the sender's token; DATA: the receiver's token; HELLO: process id
 *  32  u64 cookie2  CTS: the receiver's token; RTS: the sender's buffer address when the
 *                   receiver may pull it (shared memory), else 0; DATA: offset of this chunk
 *                   in the message (a message travels as DATA frames of at most
 *                   CSNI_DATA_CHUNK bytes, in order)
 * HELLO: dst is 1 when the connecting process created the pair's shared-memory segment.
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
    CSNI_F_TYPE_MAX
};
/* CSNI_CTS_SPLIT (shared memory, large messages: both sides copy at once). In a CTS: the
 * receiver pulls bytes [0, csni_split_at(len)) and asks the sender to write the rest straight
 * into its buffer at cookie2 (process_vm_writev); the receiver's token travels in dst (low 32
 * bits) and src (high 32 bits). In a DATA frame (no payload): the sender has written len bytes
 * from the split point on; cookie is the receiver's token. The receiver's CTS_PULLED ends
 * the sender's part. */
enum { CSNI_CTS_OK = 0, CSNI_CTS_GONE = 1, CSNI_CTS_PULLED = 2, CSNI_CTS_SPLIT = 3 };

/* Where a split rendezvous of len bytes divides: half, on a page boundary. */
static inline uint64_t csni_split_at(uint64_t len)
{
    return (len / 2) & ~(uint64_t)4095;
}

/* Largest DATA frame: a message beyond it travels as several, so that frames queued behind it
 * (a CTS for the other direction) wait at most this long, not for the whole message. */
#define CSNI_DATA_CHUNK ((uint64_t)128 << 10)

struct csni_frame {
    uint8_t type;
    uint32_t dst, src, aux;
    uint64_t len, cookie, cookie2;
};

void csni_frame_encode(const struct csni_frame *f, uint8_t out[CSNI_FRAME_SIZE]);
/* Rewrites len and cookie2 of an encoded header (the next chunk of a DATA frame). */
void csni_frame_set_chunk(uint8_t hdr[CSNI_FRAME_SIZE], uint64_t len, uint64_t offset);

/* Decodes and validates. eager_max bounds EAGER payloads. Returns 0, or -1 with *why set to a
 * static description of what is wrong (the connection is then dropped). */
int csni_frame_decode(const uint8_t in[CSNI_FRAME_SIZE], uint64_t eager_max, struct csni_frame *f,
                      const char **why);

#endif
