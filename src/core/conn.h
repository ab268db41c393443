/* conn.h: the connection engine. It alone owns a connection's reader and writer state: it
 * reads frames (from a socket or a shared-memory ring), hands each header to its caller, and
 * places the payload where the protocol's answer (a placement) says; it queues and writes
 * frames. It never calls up: the layer above (core/poll.c) drives the reader with
 * csni_conn_next and hands headers to the protocol (core/match.h). */
#ifndef CSNI_CONN_H
#define CSNI_CONN_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/uio.h>

#include "csn.h"
#include "core/lock.h"
#include "core/near.h"
#include "core/op.h"
#include "transport/shm/shm.h"
#include "wire/frame.h"

/* Pulls one connection's reader makes in one system call at most (CSN_SHM_PULL_BATCH's most). */
#define CSNI_PULL_BATCH_MAX 16

struct csni_proc;
struct csni_peer;
struct csni_conn;
struct csni_unex;
struct csni_ofi_link;

/* Where the payload of a frame goes: the protocol's answer to a header. */
struct csni_place {
    uint8_t *dst;         /* payload destination, NULL to discard */
    size_t want;          /* bytes to place at dst */
    size_t discard;       /* bytes to drop after them */
    struct csni_op *op;   /* the receive being filled, or NULL */
    struct csni_unex *ux; /* the unexpected record being filled, or NULL */
    csn_transport *t;     /* the transport of op or ux */
    bool listed;          /* op is still on its peer's wait list (a DATA chunk, the last too):
                           * the peer's loss or the transport's close finds it there */
};

/* How a connection moves bytes: a socket, or shared-memory rings. Non-blocking. read: bytes
 * read, 0 at end of stream, -1 with errno (EAGAIN: nothing). writev: bytes accepted (possibly
 * fewer), -1 with errno (EAGAIN: full). */
struct csni_link_ops {
    ssize_t (*read)(struct csni_conn *c, void *buf, size_t n);
    ssize_t (*writev)(struct csni_conn *c, const struct iovec *iov, int n);
};

enum csni_rx_phase { CSNI_RX_HDR = 0, CSNI_RX_PAYLOAD };

struct csni_conn {
    int fd; /* the socket: data, or (shm) doorbell and death detector */
    const struct csni_link_ops *link;
    struct csni_shm *shm;              /* rings, for shared-memory connections (writer lock) */
    struct csni_ofi_link *_Atomic ofi; /* the fabric endpoint of ofi connections (transport/ofi) */
    struct csni_shm *_Atomic ring;     /* = shm, published (release) for lock-free pollers */
    _Atomic bool tx_pending;           /* frames wait on the send queue (a hint for pollers) */
    struct csni_proc *p;
    /* The process at the other end: set before the connection is published (connecting
     * side) or once its HELLO proved the job key (csni_conn_bind), never changed after. */
    struct csni_peer *pp;
    int proc; /* its process id (-1 until known), for messages */
    _Atomic bool dead;
    bool broken;        /* failed by this process for a reason (csni_conn_fail's why) */
    _Atomic bool ended; /* dead, and its end not yet reported (csni_conn_take_ended) */
    /* A stranger's connection that ended, its descriptor and buffer released: the structure
     * waits on the list for reuse by the next accepted connection (csni_conn_new). */
    _Atomic bool retired;
    uint64_t born_ns; /* when it was accepted (the handshake deadline of strangers) */
    bool epollout;    /* EPOLLOUT is registered */
    /* Reader: one at a time (the "device lock" of seed 002), held only across non-blocking
     * reads, never while sleeping. Everything below to tx_lock is the reader's. */
    csni_lock_t rx_lock;
    uint8_t *rbuf; /* staging buffer: small frames arrive here in batches */
    size_t rpos, rend;
    bool rx_short; /* the staged bytes came from a short socket read (this pass only) */
    enum csni_rx_phase phase;
    struct csni_frame f;  /* header being served */
    struct csni_place pl; /* where its payload goes */
    size_t ring_taken;    /* bytes of the ring record served in place, consumed at placement */
    uint8_t key[CSNI_KEY_BYTES]; /* HELLO payload being read */
    /* The protocol's own per-connection count (written only under rx_lock): eager credit
     * consumed here, not yet handed back. */
    int64_t owed;
    /* Pulls matched while reading, made together in one system call before the reader serves
     * anything else or lets go of rx_lock (core/rndv.c: csni_rndv_pull_later). */
    struct csni_pull_batch {
        unsigned n;
        size_t bytes;
        struct csni_op *op[CSNI_PULL_BATCH_MAX];
        uint64_t raddr[CSNI_PULL_BATCH_MAX], token[CSNI_PULL_BATCH_MAX];
    } pullb;
    /* Writer: one at a time, held only across non-blocking writes. */
    csni_lock_t tx_lock;
    /* Shared memory: what blocking transmits longer than CSN_SHM_EAGER_BLOCKING (up to
     * CSN_SHM_EAGER_NEAR) cost eager and as rendezvous, and which way the next goes
     * (core/near.h). Hints: written by any sender without a lock. */
    struct csni_near near;
    /* Eager credit taken from the peer's ahead of need by the direct small-message path
     * (csni_conn_send_now with a cost), spent here without an atomic; given back to the peer
     * when the connection dies or moves. Under tx_lock. */
    int64_t credit;
    /* The socket's network kind (NULL: a ring, or a kind unknown) and the unsent-byte limit
     * its writer last set (refit when the socket is full). Set before publication. */
    const struct csni_net_ops *net;
    size_t notsent;
    struct csni_sendreq *sq_head, *sq_tail;
    /* A move (core/peer.c): moved, on the connection left, is where what is sent here from
     * then on goes; paused, on that one, holds its queue unwritten until the peer's OK.
     * Under tx_lock. */
    struct csni_conn *moved;
    bool paused;
    struct csni_conn *next; /* the process's connection list (insert-only, immutable links) */
    /* The list of connections with a ring: what the pollers walk at every turn, without the
     * strangers'. On it once (on_rings), under csni_conns.lock; dead ones are taken out by
     * csni_conns_prune_rings, whose links only ever skip forward (see there). */
    struct csni_conn *_Atomic next_ring;
    bool on_rings;
};

/* The process's connections (owned by this engine). */
struct csni_conns {
    csni_mutex_t lock;               /* inserts (rank LISTS) */
    struct csni_conn *_Atomic head;  /* walked without a lock from an acquire load */
    struct csni_conn *_Atomic rings; /* those with a ring (next_ring), the same way */
    _Atomic int nlive;               /* connections not dead */
    _Atomic int nshm;                /* live shared-memory ones (pollers look at their rings) */
    _Atomic int nended;              /* dead ones whose end is not yet reported */
    _Atomic int nstrangers;          /* accepted ones that have not yet proved the key */
    _Atomic int nretired;            /* released structures waiting for reuse */
    _Atomic int ndead_rings;         /* dead ones still on the rings list */
};

void csni_conns_init(struct csni_conns *cs);
static inline struct csni_conn *csni_conns_first(struct csni_conns *cs)
{
    return atomic_load_explicit(&cs->head, memory_order_acquire);
}
/* The first of the connections with a ring (then csni_conn_next_ring): a poller's walk. Dead
 * and stranger connections stay on the process's list for reuse, hundreds of them after a
 * flood of strangers (test_harden outsider), each a cache miss at every turn of every poll. */
static inline struct csni_conn *csni_conns_rings(struct csni_conns *cs)
{
    return atomic_load_explicit(&cs->rings, memory_order_acquire);
}
static inline struct csni_conn *csni_conn_next_ring(const struct csni_conn *c)
{
    return atomic_load_explicit(&c->next_ring, memory_order_acquire);
}
/* Takes the dead connections off the rings list once there are CSNI_DEAD_RINGS_MAX of them (a
 * dead connection is never read again): a rank whose forked children come and go, each with a
 * ring, walked every one of them at every poll (800 gone: 16 us a round trip, 0.5-1.9 before). */
#define CSNI_DEAD_RINGS_MAX 8
void csni_conns_prune_rings(struct csni_conns *cs);
/* Puts c on the rings list, once (its ring is published already). */
void csni_conns_add_ring(struct csni_conns *cs, struct csni_conn *c);

/* A connection on socket fd (it takes ownership: closed when its end is reported, at the
 * latest when the process ends), registered with the process's epoll set. pp: the peer when we
 * connected (NULL: accepted, unknown until its HELLO); shm: the pair's rings when we made
 * them. NULL when memory is short or the registration fails (fd is then the caller's again). */
struct csni_conn *csni_conn_new(struct csni_proc *p, int fd, struct csni_peer *pp, int proc,
                                struct csni_shm *shm);
/* An accepted connection proved the key (CSNI_RX_HELLO): from now on it belongs to pp, and its
 * socket only rings doorbells when shm is given. Reader lock held. */
void csni_conn_bind(struct csni_conn *c, struct csni_peer *pp, int proc, struct csni_shm *shm);

/* Writes and reads this thread made on any connection (a count that only moves): a waiter
 * whose own polls move data keeps spinning (wait.c). initial-exec: no __tls_get_addr call on
 * the paths that count. */
extern _Thread_local unsigned csni_moved __attribute__((tls_model("initial-exec")));

/* Set by a thread that reads its sockets itself at every turn (poll.c, few sockets): a read
 * of a socket that came back short ends the reader's pass (CSNI_RX_DRAINED) once its bytes
 * are served, instead of a second read that would find nothing: the thread's next turn
 * reads again anyway. */
extern _Thread_local bool csni_conn_short_ends __attribute__((tls_model("initial-exec")));

/* ---- reading (the caller holds rx_lock across a series of calls) ---- */
static inline void csni_conn_rx_lock(struct csni_conn *c)
{
    csni_lock_long(&c->rx_lock); /* held across whole pulls (rndv.c) */
}
static inline bool csni_conn_rx_trylock(struct csni_conn *c)
{
    return csni_trylock(&c->rx_lock);
}
static inline void csni_conn_rx_unlock(struct csni_conn *c)
{
    csni_unlock(&c->rx_lock);
}

enum csni_rx_event {
    CSNI_RX_DRAINED = 0, /* nothing more to read now, or the connection is dead */
    CSNI_RX_FRAME,       /* a header (csni_conn_frame): answer it with csni_conn_place */
    CSNI_RX_PLACED,      /* the current frame's payload is placed: *done says where */
    CSNI_RX_HELLO,       /* an accepted connection proved the job key (its HELLO in
                          * csni_conn_frame): bind it (csni_conn_bind) or fail it */
    CSNI_RX_FAILED,      /* end of stream, a read error or a corrupt frame: the connection
                          * is failed; *done is the placement it abandoned */
};
/* Reads and serves what is there, up to the next event. Never blocks. FRAME: *staged points
 * at an EAGER payload already wholly in memory (valid until csni_conn_place), else NULL. */
enum csni_rx_event csni_conn_next(struct csni_conn *c, const uint8_t **staged,
                                  struct csni_place *done);
static inline const struct csni_frame *csni_conn_frame(const struct csni_conn *c)
{
    return &c->f;
}
/* The answer to a FRAME: where its payload goes (a staged payload must have been copied by
 * now: want 0). */
void csni_conn_place(struct csni_conn *c, const struct csni_place *pl);
/* Shared memory, between frames: the next record is an EAGER frame for transport tid, whole
 * in place (*f, *payload valid until csni_conn_skip; *take: the record's bytes, header and
 * payload, for csni_conn_skip). False: anything else, for the general reader. */
bool csni_conn_peek_eager(struct csni_conn *c, uint32_t tid, struct csni_frame *f,
                          const uint8_t **payload, size_t *take);
void csni_conn_skip(struct csni_conn *c, size_t take);
/* Every connection's placement for transport t (closing) switches to discarding; the
 * receives they were filling, unless still listed with their peer, are chained on *gone. */
void csni_conns_cancel(struct csni_proc *p, csn_transport *t, struct csni_op **gone);

/* ---- writing ---- */
/* Whether a frame of one of t's transmits is still queued or being written somewhere (its
 * buffer is still in use). */
bool csni_conns_sending(struct csni_proc *p, csn_transport *t);
/* Writes the frame now if the connection is idle, else queues it (the connection then owns
 * sr until it clears sr->queued). Control frames (no op, no payload) overtake queued data.
 * A dead connection completes sr's op with CSN_PEER_LOST. Writing may complete sr->op, which
 * takes its transport lock: a caller passing an op holds no transport, peer or writer lock;
 * requests with no op (CTS, CREDIT) may be sent under transport and peer locks. Never blocks. */
void csni_conn_send(struct csni_conn *c, struct csni_sendreq *sr);
/* Shared memory only: writes an EAGER frame to transport dst from src, with its payload, at
 * once if nothing is queued and the ring has room (the caller keeps its buffer); false:
 * nothing written, send it the queued way. cost: the eager credit the frame spends, taken
 * from the connection's own (refilled from the peer's, part of a window at a time); 0: the
 * caller took it. Never blocks. dst and src are transport ids passed as 64-bit values: GCC
 * 12 spilled a 32-bit one with a 32-bit store and read it back with a 64-bit load, which the
 * store buffer cannot serve, so it waited behind the previous ring record (BENCHMARKS.md,
 * issue 19). */
bool csni_conn_send_now(struct csni_conn *c, uint64_t dst, uint64_t src, const void *payload,
                        size_t len, int64_t cost);
/* Shared memory only: writes a frame with no payload (hdr: csni_frame_encode's) at once if
 * nothing is queued and the ring has room, with no request queued; false: nothing written,
 * send it the queued way (csni_conn_send). Completes nothing; the caller keeps hdr. Never
 * blocks; takes only c's writer lock. */
bool csni_conn_send_frame_now(struct csni_conn *c, const uint8_t hdr[CSNI_FRAME_SIZE]);
/* The first step of a move to c (core/peer.c): what is queued on c from now on waits
 * unwritten until csni_conn_moved_ok on the connection moved from (or that one's death), and
 * csni_conn_send_now to c refuses. Never blocks; takes only c's writer lock. */
void csni_conn_pause(struct csni_conn *c);
/* The second: the pair's sends move from c to next, paused before: sr, the MOVE LAST frame,
 * is queued on c behind everything already there; every later csni_conn_send to c goes to
 * next, and csni_conn_send_now to c refuses. Never blocks; not under a peer or transport lock
 * (a failed write completes c's queued operations). */
void csni_conn_move(struct csni_conn *c, struct csni_sendreq *sr, struct csni_conn *next);
/* The peer's OK to the move from c came (reader of c): the queue of the connection moved to is
 * written. Never blocks. */
void csni_conn_moved_ok(struct csni_conn *c);
/* csni_conn_send on c itself, also after a move from c. */
void csni_conn_send_here(struct csni_conn *c, struct csni_sendreq *sr);
/* The OK answering the peer's LAST on c: ahead of everything unwritten on c, and written also
 * while c is paused (both ends may be moving, each to the connection the other left: each
 * end's OK must not wait for its own). Never blocks. */
void csni_conn_send_ok(struct csni_conn *c, struct csni_sendreq *sr);
/* Writes what is queued until the link is full. block_lock: wait for the writer lock, else
 * return if another thread writes. Never blocks otherwise. */
void csni_conn_flush(struct csni_conn *c, bool block_lock);

/* ---- failure ---- */
/* Marks the connection dead (why: a line on stderr, NULL for a peer's normal end), takes it
 * out of the epoll set, fails its queued frames (their ops complete with CSN_PEER_LOST) and
 * flags it ended for the poller, which reports it to the peer table. Any locks of rank below
 * the writer's may be held. */
void csni_conn_fail(struct csni_conn *c, const char *why);
/* An ended connection not yet reported: true once per connection. */
bool csni_conn_take_ended(struct csni_conn *c);
/* An ended connection (taken with csni_conn_take_ended, so csni_conn_fail has returned):
 * closes its socket (a ring's doorbell). Every use of the descriptor holds the reader or the
 * writer lock and reads the number under it, so none can reach a file that reuses the number:
 * a dead peer's descriptor goes back at once (a rank whose forked children come and go,
 * bench/forkchurn). A peer's structure stays (the peer table and pollers still hold it); one
 * that never proved the key (no peer, no ring) also gives back its buffer and is retired, to
 * be reused by a later csni_conn_new at once: then true, and c is not the caller's any more.
 * No lock held. */
bool csni_conn_close(struct csni_conn *c);
/* Shared memory: drains the socket's doorbell bytes under the reader lock (block: waits for
 * it; else 0 at once when another thread reads the connection). -1 when the peer closed it or
 * the descriptor was closed. */
int csni_conn_bells(struct csni_conn *c, bool block);
/* Before a thread sleeps: arm the connection's ring (see csni_shm_arm). 1: it has work
 * already; -1: a reader is at work on it (do not sleep yet); 0: armed, or a socket. */
int csni_conn_arm(struct csni_conn *c);
/* After every connection was armed: the process's heavy fence (csni_shm_heavy_fence). true: it
 * ran, and every connection must be armed and looked at again before the thread sleeps. */
bool csni_conn_arm_fence(void);

#endif
