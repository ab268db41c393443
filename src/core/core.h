/* core.h: the library's internal state: processes, peers, connections, transports, operations. */
#ifndef CSNI_CORE_H
#define CSNI_CORE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/uio.h>

#include "csn.h"
#include "boot/boot.h"
#include "core/lock.h"
#include "core/netid.h"
#include "wire/frame.h"
#include "transport/shm/shm.h"

struct csni_proc;
struct csni_peer;
struct csni_conn;
struct csni_op;

/* ---- send requests: one frame (header + optional payload) queued on a connection ---- */
struct csni_sendreq {
    struct csni_sendreq *next;
    uint8_t hdr[CSNI_FRAME_SIZE];
    const void *payload;
    size_t paylen;
    size_t off; /* bytes of header+payload (of this chunk) already written */
    /* chunked (DATA): the payload leaves as frames of at most CSNI_DATA_CHUNK bytes, each
     * with its own header (offset in cookie2); sent: payload bytes of the chunks before. */
    bool chunked;
    size_t sent;
    struct csni_op *op; /* the op to advance when the frame is written, or NULL */
    bool heap;          /* malloc'd by the library: freed once written */
    /* True while the request sits on a connection's queue: the connection owns it. The
     * writer clears it (release) as its very last access, so an owner that sees it false
     * (acquire) may reuse the memory. */
    _Atomic bool queued;
};

/* ---- operations ---- */
enum csni_op_kind { CSNI_OP_TX = 1, CSNI_OP_RX = 2 };
enum csni_op_state {
    CSNI_ST_FREE = 0,
    CSNI_ST_POSTED,    /* rx: on the posted queue; tx: being sent (eager or RTS) */
    CSNI_ST_WAIT_CTS,  /* tx: RTS written, waiting for the receiver */
    CSNI_ST_WAIT_DATA, /* rx: matched an RTS or a partial eager message, waiting for payload */
    CSNI_ST_SELF_WAIT, /* tx to a transport of this process, parked until a receive matches */
    CSNI_ST_DONE
};

struct csni_op {
    struct csni_op *next; /* link on exactly one list: posted, peer wait list, cq, free list */
    csn_transport *t;
    uint8_t kind;
    _Atomic uint8_t state; /* DONE is stored last, after status and received */
    bool blocking;         /* completion is for the blocking caller, never put on the cq */
    csn_status status;     /* CSN_OK, CSN_OVERRUN or CSN_PEER_LOST when done */
    csn_netid peer; /* tx: destination; rx: source filter (CSN_NULL_NETID = any), then sender */
    void *buf;
    size_t len;
    size_t *received;       /* rx: where the delivered length is written (may be NULL) */
    size_t msglen;          /* rx: length of the matched message */
    size_t got;             /* rx: bytes of a chunked DATA payload placed so far */
    uint64_t token;         /* rendezvous token, unique within the process */
    struct csni_peer *pp;   /* the remote process involved, if any */
    struct csni_sendreq sr; /* tx: EAGER/RTS then DATA; rx: CTS */
};

/* ---- unexpected messages: arrived before a matching receive was posted ---- */
enum csni_unex_kind { CSNI_UX_EAGER = 1, CSNI_UX_RTS, CSNI_UX_SELF };
struct csni_unex {
    struct csni_unex *next;
    uint8_t kind;
    bool complete; /* EAGER: the whole payload is in data */
    csn_netid src;
    size_t len;           /* message length */
    void *data;           /* EAGER: pool buffer of len bytes */
    uint64_t token;       /* RTS: the sender's token */
    struct csni_peer *pp; /* EAGER/RTS: the sending process */
    uint64_t raddr;       /* RTS: the sender's buffer, for a pull (0: none) */
    pid_t pid;            /* RTS with raddr: the sender's pid */
    struct csni_op *txop; /* SELF: the parked transmit of this process */
    struct csni_op *rxop; /* EAGER, incomplete: the receive that matched it meanwhile */
};

/* ---- a transport (endpoint): the CSN "Transport" ---- */
#define CSNI_TPORT_MAGIC 0x7C5A7C5Au
#define CSNI_TPORT_DEAD 0xDEADC5A1u

struct csni_oplist {
    struct csni_op *head, *tail;
};

struct csn_transport {
    _Atomic uint32_t magic;
    uint32_t tid;
    csn_netid id;
    csni_lock_t lock;          /* protects everything below */
    struct csni_oplist posted; /* receives in posting order */
    struct csni_unex *ux_head, *ux_tail;
    struct csni_oplist cq;     /* completed non-blocking operations, oldest first */
    _Atomic uint32_t wake_seq; /* futex word: bumped at every completion */
    _Atomic int sleepers;      /* threads asleep on wake_seq */
    unsigned nops;             /* outstanding operations (CSN_BUSY bound) */
    struct csni_op *free_ops;
    char **names; /* registered names, dropped at close */
    size_t nnames;
    csn_transport *next_free; /* graveyard link: closed structures are reused, never freed */
    struct csni_lane {        /* CSN_CONN_PER_TRANSPORT: this transport's own connections */
        int proc;
        struct csni_conn *conn;
    } * lanes;
    unsigned nlanes;
};

/* ---- how a connection moves bytes: a socket, or shared-memory rings ---- */
struct csni_link_ops {
    /* Non-blocking. read: bytes read, 0 at end of stream, -1 with errno (EAGAIN: nothing).
     * writev: bytes accepted (possibly fewer), -1 with errno (EAGAIN: full). */
    ssize_t (*read)(struct csni_conn *c, void *buf, size_t n);
    ssize_t (*writev)(struct csni_conn *c, const struct iovec *iov, int n);
};
extern const struct csni_link_ops csni_sock_link;
extern const struct csni_link_ops csni_shm_link;

/* ---- a connection to another process ---- */
enum csni_rx_phase { CSNI_RX_HDR = 0, CSNI_RX_PAYLOAD };
struct csni_conn {
    int fd; /* the socket: data, or (shm) doorbell and death detector */
    const struct csni_link_ops *link;
    struct csni_shm *shm;          /* rings, for shared-memory connections */
    struct csni_shm *_Atomic ring; /* = shm, published (release) for lock-free pollers */
    _Atomic bool tx_pending;       /* frames wait on the send queue (a hint for pollers) */
    struct csni_proc *p;
    struct csni_peer *pp; /* NULL until HELLO is read (accepted connections) */
    _Atomic bool dead;
    bool epollout; /* EPOLLOUT is registered */
    /* Receiving: one reader at a time (the "device lock" of seed 002). Held only across
     * non-blocking recv calls, never while sleeping. */
    csni_lock_t rx_lock;
    uint8_t *rbuf; /* staging buffer: small frames arrive here in batches */
    size_t rpos, rend;
    enum csni_rx_phase phase;
    struct csni_frame f;         /* header being served */
    uint8_t *dst;                /* payload destination, NULL to discard */
    size_t want;                 /* payload bytes still to place in dst */
    size_t discard;              /* payload bytes to drop after that */
    struct csni_op *rxop;        /* receive being filled, or NULL */
    struct csni_unex *rxux;      /* unexpected record being filled, or NULL */
    csn_transport *rxt;          /* transport of rxop/rxux */
    int64_t owed;                /* eager credit consumed here, not yet handed back */
    uint8_t key[CSNI_KEY_BYTES]; /* HELLO payload being read */
    /* Sending: one writer at a time; held only across non-blocking writev calls. */
    csni_lock_t tx_lock;
    struct csni_sendreq *sq_head, *sq_tail;
    struct csni_conn *next; /* process's connection list (insert-only, immutable links) */
};

/* ---- another process of the job ---- */
struct csni_peer {
    int proc;
    csni_lock_t lock; /* protects conn choice and the lists below */
    /* The connection this process sends on: set once under the lock, read without it once
     * ready is seen true (atomic: a HELLO may set it while a sender looks). */
    struct csni_conn *_Atomic conn;
    bool lost;
    int nconns;                   /* live connections; it is lost when the last one ends */
    _Atomic bool ready;           /* conn set or lost (final): no need to connect */
    _Atomic int64_t credit;       /* eager bytes we may still send to it (no lock) */
    _Atomic size_t eager_max;     /* largest message sent eagerly to it (read without lock) */
    struct csni_oplist wait_cts;  /* our transmits waiting for its CTS */
    struct csni_oplist wait_data; /* our receives waiting for its DATA */
    _Atomic int64_t owed;         /* eager credit we owe it */
    pthread_mutex_t conn_lock;    /* held while connecting (not on the fast path) */
    struct csni_peer *next;
};

/* ---- a stream transport's addressing (Unix and TCP share the stream core) ---- */
struct csni_transport_ops {
    const char *name;
    /* Creates the listening socket of this process (non-blocking) and writes the address
     * others connect to into addr. Does not block. CSN_OK or CSN_SYSTEM_ERROR. */
    csn_status (*listen)(struct csni_proc *p, int *fd, char *addr, size_t cap);
    /* Connects to a published address; blocks until connected (local: at once).
     * The caller owns the returned fd. CSN_OK, CSN_PEER_LOST (refused/absent) or
     * CSN_SYSTEM_ERROR. */
    csn_status (*connect)(const char *addr, int *fd);
};
extern const struct csni_transport_ops csni_unix_ops;
extern const struct csni_transport_ops csni_tcp_ops;
void csni_tcp_tune(const struct csni_proc *p, int fd); /* options of a data socket (tcp.c) */

/* ---- the process ---- */
struct csni_proc {
    struct csni_boot boot;
    int me;      /* job process id (the rank, or an id from PROC after fork) */
    bool forked; /* a process forked by a rank */
    pid_t pid;
    const struct csni_transport_ops *ops;
    uint8_t key[CSNI_KEY_BYTES];
    /* Tunables, read once at init. */
    uint64_t lookup_timeout_ms;
    size_t eager_max;
    size_t unexpected_limit;
    int64_t window; /* eager credit granted to each peer process */
    unsigned max_ops;
    uint64_t spin_ns;
    uint64_t polite_spin_ns; /* the spin of a wait that yields at each turn */
    uint64_t nap_ns;         /* longest sleep of a waiter before it looks by itself */
    bool oversubscribed;     /* more ranks on our CPUs (cpu_share) than those CPUs */
    int ncpu;                /* CPUs in our affinity mask */
    uint32_t cpu_share;      /* ranks of this host that may run on our CPUs (CSN_CPU_SHARE) */
    bool conn_per_transport;
    /* Transports by id. Readers look without a lock (csni_tport_find): slots and the array
     * pointer are atomics, and an outgrown array is retired, never freed, so a reader holding
     * the old one still reads valid (if stale) slots. Writers hold tlock. */
    pthread_rwlock_t tlock;
    csn_transport *_Atomic *_Atomic tports;
    _Atomic uint32_t ntports;
    uint32_t captports;
    csn_transport *_Atomic *retired[32];
    csn_transport *graveyard;
    csn_transport *sys; /* hidden transport (id CSNI_SYS_TPORT) for the barrier */
    pthread_mutex_t barrier_lock;
    uint64_t barrier_gen;
    /* Peers and connections. */
    pthread_mutex_t lock; /* peers list, connection list, pools */
    struct csni_peer *peers;
#define CSNI_PEER_TAB 4096
    struct csni_peer *_Atomic peer_tab[CSNI_PEER_TAB]; /* peers by process id, lock-free */
    _Atomic int nlost;                                 /* peers lost so far */
    struct csni_conn *_Atomic conns;
    int listen_fd, listen_tcp, epfd, evfd; /* listen_tcp: -1 unless the job spans hosts */
    char addr[600];                        /* published endpoint: "ADDR[|tcp:IP:PORT]|h=HOST" */
    pthread_t progress_thread;
    bool progress_running;
    _Atomic int spinners; /* user threads polling in their spin phase */
    /* A sleeping user thread may itself wait in epoll for everyone (the poller): a message
     * for it then costs one wake-up, not the progress thread's and then its own. */
    _Atomic bool poller;             /* a user thread holds the poller role */
    csn_transport *_Atomic poller_t; /* the transport that poller waits on */
    _Atomic int nsleepers;           /* user threads in the sleep phase of a wait */
    _Atomic int nepoll;              /* threads in csni_poll_sleep (the rings are armed) */
    _Atomic uint32_t bg_word;        /* futex word the progress thread parks on */
    _Atomic bool bg_parked;
    _Atomic bool kicked;       /* a thread went to sleep: the progress thread must poll */
    _Atomic uint64_t activity; /* waits ended by user threads (the progress thread's cue) */
    _Atomic bool stopping;
    _Atomic uint64_t next_token;
    /* Unexpected-message storage. */
    struct csni_unex *free_unex;
    void *pool[32];                 /* free lists of buffers by power-of-two class */
    _Atomic size_t self_unexpected; /* bytes of unexpected in-process messages held */
    /* Shared memory. */
    bool use_shm;
    bool cma; /* process_vm_readv works (cleared at the first refusal) */
    char shm_dir[256];
    uint64_t shm_ring;
    size_t shm_eager;
    size_t split_min;   /* rendezvous at least this long: both sides copy (0: never) */
    size_t tcp_notsent; /* TCP_NOTSENT_LOWAT of data sockets (0: the kernel's) */
    _Atomic int nshm;   /* shared-memory connections (pollers look at their rings) */
    _Atomic int nconns;
};

extern struct csni_proc *csni_p;

/* proc.c */
csn_status csni_proc_get(struct csni_proc **pp);                   /* initialises on first use */
csn_transport *csni_tport_find(struct csni_proc *p, uint32_t tid); /* returns with t->lock held */
csn_status csni_tport_create(struct csni_proc *p, csn_transport **out); /* api.c */
bool csni_tport_exists(struct csni_proc *p, uint32_t tid);
struct csni_peer *csni_peer_lookup(struct csni_proc *p,
                                   int proc); /* finds or creates; NULL: no memory */
struct csni_peer *csni_peer_get(struct csni_proc *p, int proc, csn_status *rv); /* and connects */
struct csni_conn *csni_send_conn(csn_transport *t, struct csni_peer *pp);
void csni_peer_lost(struct csni_proc *p, struct csni_peer *pp);
void csni_kick_progress(struct csni_proc *p);
bool csni_arm_rings(struct csni_proc *p, bool handle);
void csni_kick_epoll(struct csni_proc *p);
/* One round of sleeping in epoll (at most nap_ns) and handling what woke us. */
void csni_poll_sleep(struct csni_proc *p, uint64_t nap_ns);
void csni_accept_pending(struct csni_proc *p);
uint64_t csni_now_ns(void);
void csni_conn_add(struct csni_proc *p, struct csni_conn *c);

/* match.c: message arrival and matching (protocol) */
void csni_complete(csn_transport *t, struct csni_op *op, csn_status st); /* t->lock held */
struct csni_op *csni_op_alloc(csn_transport *t);                         /* t->lock held */
void csni_op_init(struct csni_op *op, csn_transport *t); /* a fresh op of t, not on a list */
void csni_op_free(csn_transport *t, struct csni_op *op); /* t->lock held */
csn_status csni_post_tx(csn_transport *t, struct csni_op *op);
/* A small message to a process reached over shared memory, written into the ring at once
 * when nothing is queued and credit allows, without an operation; false: take the general
 * path (nothing was sent). */
bool csni_tx_now(csn_transport *t, csn_netid to, const void *buf, size_t len);
csn_status csni_post_rx(csn_transport *t, struct csni_op *op);
/* Header in c->f; sets up payload placement. staged: an EAGER payload already wholly in
 * memory (staging buffer or ring record), placed at once; NULL: it is still to be read. */
void csni_on_frame(struct csni_conn *c, const uint8_t *staged);
void csni_on_payload_done(struct csni_conn *c);
bool csni_match_direct(struct csni_conn *c, csn_transport *t, struct csni_op *own,
                       const struct csni_frame *f, const uint8_t *payload);
void csni_return_credit(struct csni_peer *pp, int64_t bytes);
void csni_sent(struct csni_op *op, const uint8_t *hdr); /* a tx frame is fully written */
void csni_tport_drain(csn_transport *t);                /* at close: cancel everything */
void *csni_pool_get(struct csni_proc *p, size_t len);
void csni_pool_put(struct csni_proc *p, void *buf, size_t len);
struct csni_unex *csni_unex_alloc(struct csni_proc *p);
void csni_unex_free(struct csni_proc *p, struct csni_unex *u);

/* stream.c: the stream core shared by Unix and TCP */
struct csni_conn *csni_conn_new(struct csni_proc *p, int fd, struct csni_peer *pp,
                                struct csni_shm *shm);
/* Writes the frame now if the connection is idle, else queues it (the connection then owns
 * sr until it clears sr->queued). When sr->op is set, writing may complete that op, which
 * takes its transport lock: callers then hold no transport, peer or tx lock. Requests with
 * no op (CTS, CREDIT) may be sent under transport and peer locks. */
void csni_conn_send(struct csni_conn *c, struct csni_sendreq *sr);
/* Shared memory only: writes one frame at once if nothing is queued and the ring has room
 * (the caller keeps buf); false: nothing written, send it the queued way. */
bool csni_conn_send_now(struct csni_conn *c, const uint8_t *hdr, const void *payload, size_t len);
void csni_conn_rx(struct csni_conn *c, bool block_lock); /* reads what is there */
void csni_conn_flush(struct csni_conn *c, bool block_lock);
void csni_conn_fail(struct csni_conn *c, const char *why);
void csni_conn_doorbells(struct csni_conn *c); /* shm: drain the socket's wake-up bytes */
void csni_conn_poll(struct csni_conn *c);      /* shm: non-blocking look at the rings */
/* A thread waiting on t looks at the ring itself: true when the next frame was an eager
 * message for t and its receive (own, or any when NULL) is complete (csni_match_direct);
 * false: use the general reader. */
bool csni_conn_rx_direct(struct csni_conn *c, csn_transport *t, struct csni_op *own);

/* wait.c */
void csni_futex_wake(_Atomic uint32_t *w);
int csni_futex_wait(_Atomic uint32_t *w, uint32_t val, uint64_t timeout_ns);
/* Waits for want (a blocking call's own op; *got = want), or, want NULL, for the first
 * completion of the kinds in flags: then *got must point to the caller's record, which
 * receives the completed op's peer, buf, status and kind (the op goes back to t). */
csn_status csni_wait(csn_transport *t, struct csni_op *want, unsigned flags, uint64_t timeout_us,
                     struct csni_op **got);
void csni_wake(csn_transport *t);
/* This thread is the poller (wait.c). initial-exec: no __tls_get_addr call on hot paths. */
extern _Thread_local bool csni_polling __attribute__((tls_model("initial-exec")));
/* In a forked child: only the forking thread may be counted as waiting (wait.c). */
void csni_wait_forked(void);
/* Between csni_defer_wakes(true) and (false) (nestable), futex wake-ups of sleepers are
 * collected and made once per transport at the end. */
void csni_defer_wakes(bool on);
void csni_poll(struct csni_proc *p);
/* A receive's spin on t: the first ring with data is read directly if its next frame is a
 * message for t's receive (own, or any when NULL) (1). 0: every ring empty, nothing queued to
 * send; -1: the caller polls the general way. */
int csni_poll_direct(struct csni_proc *p, csn_transport *t, struct csni_op *own);

/* errors.c */
csn_status csni_errno_status(int err);

#endif
