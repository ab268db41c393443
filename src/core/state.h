/* state.h: the process's state: identity, tunables, and the parts each module owns (the
 * transport table, the peers, the connections, the unexpected store, waiting and progress). */
#ifndef CSNI_STATE_H
#define CSNI_STATE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <unistd.h>

#include "csn.h"
#include "boot/boot.h"
#include "core/conn.h"
#include "core/lock.h"
#include "core/peer.h"
#include "core/tport.h"
#include "core/unex.h"
#include "transport/net.h"
#include "wire/frame.h"

/* Tunables: read once at start-up (proc.c), constant after. */
/* CSN_SHM_PULL's "never" (csni_tun.pull_min): no message is this long. */
#define CSNI_PULL_NEVER ((uint64_t)1 << 48)

/* CSN_SHM_MEMBARRIER is on by default up to this many ranks a CPU (core/proc.c). */
#define CSNI_MEMBARRIER_SHARE 4

struct csni_tun {
    uint64_t lookup_timeout_ms;
    size_t eager_max;
    size_t unexpected_limit;
    int64_t window; /* eager credit granted to each peer process */
    /* The most of it the direct small-message path takes at a time into a connection
     * (core/conn.c): a sixty-fourth of the window, at most 16 KiB (about 140 messages of 8
     * bytes): one atomic per that many messages instead of one each (a locked instruction
     * waits for the previous record's line to reach the receiver, BENCHMARKS.md, issue 19),
     * and little enough that a sender with nothing more to send holds back only a sliver of
     * the window (another path's message then goes as a rendezvous, which is harmless). */
    int64_t credit_ahead;
    bool lock_bias; /* CSN_LOCK_BIAS, and the kernel has the barrier (core/bias.c) */
    unsigned max_ops;
    uint64_t spin_ns;
    uint64_t polite_spin_ns; /* the spin of a wait that yields at each turn */
    uint64_t nap_ns;         /* longest sleep of a waiter before it looks by itself */
    bool oversubscribed;     /* more ranks on our CPUs (cpu_share) than those CPUs */
    int ncpu;                /* CPUs in our affinity mask */
    uint32_t cpu_share;      /* ranks of this host that may run on our CPUs (CSN_CPU_SHARE) */
    bool conn_per_transport;
    /* Over a fabric whose provider moves large messages itself: an end sends those on a
     * connection it made (core/peer.c, csni_peer_own). */
    bool own_sends;
    const struct csni_net_ops *net; /* the network kind within the host */
    bool use_shm;                   /* shared-memory rings over the host's connections */
    /* The job's barriers may go through the host barrier (core/hostbar.c): CSN_HOST_BARRIER,
     * shared memory, launched, more than one rank, all of them on this host, not forked. */
    bool host_barrier;
    char shm_dir[256];
    uint64_t shm_ring;
    uint64_t shm_compact; /* CSN_SHM_COMPACT as used: csni_shm_compact_bytes */
    bool shm_membarrier;  /* the sleeper's membarrier stands in for the ringer's fence */
    bool shm_populate;    /* a pair's rings mapped whole at once (CSN_SHM_POPULATE) */
    size_t shm_eager;
    /* Half of it: longer receives count as large (t->large_rx), and longer messages may go as
     * a pulled rendezvous both ways at once, so csni_tx_now leaves them to match_send. */
    size_t shm_half_eager;
    size_t shm_eager_blocking; /* a blocking transmit's shm eager limit, >= shm_eager */
    size_t shm_eager_near;     /* and up to this where its copies are fast (match.c) */
    size_t split_min;          /* rendezvous at least this long: both sides copy (0: never) */
    size_t pull_min;           /* shm rendezvous at least this long: the receiver pulls it ... */
    size_t pull_max;           /* ... if shorter than this (CSNI_PULL_NEVER: no limit) */
    unsigned pull_batch;       /* pulls a reader makes in one system call at most (1: one each) */
    size_t tcp_notsent;        /* TCP_NOTSENT_LOWAT of data sockets (0: the kernel's) */
    uint64_t tcp_hold_us; /* ... and at most this long at the path's rate, if more (0: fixed) */
};

/* Waiting and progress (wait.c, progress.c, poll.c). */
struct csni_prog {
    pthread_t thread;
    bool running;
    _Atomic int spinners; /* user threads polling in their spin phase */
    /* A sleeping user thread may itself wait in epoll for everyone (the poller): a message
     * for it then costs one wake-up, not the progress thread's and then its own. */
    _Atomic bool poller;             /* a user thread holds the poller role */
    csn_transport *_Atomic poller_t; /* the transport that poller waits on */
    _Atomic int nsleepers;           /* user threads in the sleep phase of a wait */
    _Atomic int nepoll;              /* threads in csni_poll_sleep (the rings are armed) */
    _Atomic uint32_t bg_word;        /* futex word the progress thread parks on */
    _Atomic bool bg_parked;
    _Atomic bool deep_parked;  /* in a park longer than PROGRESS_PARK_ACTIVE_NS (a poller runs) */
    _Atomic bool kicked;       /* a thread went to sleep: the progress thread must poll */
    _Atomic uint64_t activity; /* waits ended by user threads (the progress thread's cue) */
    _Atomic int bg_copying;    /* long copies the progress thread is making (csni_busy_begin) */
    uint64_t bg_seen;          /* activity when the progress thread began to poll (its own) */
    _Atomic bool stopping;
};

struct csni_proc {
    struct csni_boot boot;
    int me;      /* job process id (the rank, or an id from PROC after fork) */
    bool forked; /* a process forked by a rank */
    pid_t pid;
    uint8_t key[CSNI_KEY_BYTES];
    struct csni_tun tun;
    bool cma; /* process_vm_readv works (cleared at the first refusal) */
    struct csni_table tab;
    csn_transport *sys; /* hidden transport (id CSNI_SYS_TPORT) for the barrier */
    csni_mutex_t barrier_lock;
    csni_mutex_t accept_lock; /* from accept4 until the connection is listed (core/poll.c) */
    uint64_t barrier_gen;
    bool barrier_flat; /* dissemination from now on (rank 0 said so in the first barrier) */
    /* The host barrier (core/hostbar.c): in use from the third barrier on (hostbar), or set up
     * by the first two (hostbar_new). Both under barrier_lock. */
    struct csni_hostbar *hostbar, *hostbar_new;
    struct csni_peers peers;
    struct csni_conns conns;
    struct csni_store store;
    int listen_fd, listen_tcp, epfd, evfd;  /* listen_tcp: -1 unless the job spans hosts */
    const struct csni_net_ops *listen2_net; /* the kind of listen_tcp */
    _Atomic uint64_t accept_paused;         /* out of descriptors: listeners off until then */
    char addr[600];                         /* published endpoint: "ADDR[|ADDR2]|h=HOST" */
    struct csni_prog prog;
    _Atomic uint64_t next_token;
    /* Single-copy pulls that non-blocking receives left for the next poll (core/rndv.c):
     * oldest first, each an RTS entry whose rxop is the receive; npulls: how many are listed
     * (read without the lock by every poll). */
    csni_lock_t pulls_lock;
    struct csni_uxlist pulls;
    _Atomic unsigned npulls;
    /* Out of descriptors with no stranger to drop (poll_no_fds): since when, or 0, and when it
     * was last found so. Last: cold, and the hot fields above keep their places. */
    _Atomic uint64_t no_fds_since, no_fds_last;
};

/* The process's state (state.c), built at the first call (proc.c: csni_proc_get). */
extern struct csni_proc *csni_p;
/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t csni_now_ns(void);

/* Wakes whoever waits in the process's epoll set (an eventfd write). Never blocks. */
void csni_kick_epoll(struct csni_proc *p);

/* Set in the progress thread alone (core/progress.c), at its start. */
extern _Thread_local bool csni_in_progress_thread __attribute__((tls_model("initial-exec")));

/* A long copy in the library (a single-copy pull, or the write half of a split) begins and
 * ends: made by a user thread, it counts as a spinner while it lasts, so that the progress
 * thread stays parked (core/progress.c). While it polls, the progress thread looks at the user
 * threads between two polls, microseconds apart, and a user thread inside a 1-4 MiB pull
 * (0.2-0.7 ms) neither ends a wait nor spins then: taken for one that computes, it had the
 * progress thread take the next pulls itself, two threads of the rank copying at once on a
 * 2-CPU host (pulled both ways at 1-4 MiB, 8-11 GB/s against 12-13 with it parked;
 * BENCHMARKS.md, issue 19). Made by the progress thread, it counts in bg_copying: a user
 * thread waiting meanwhile yields its CPU at every turn (core/wait.c). begin returns whether
 * it counted as a spinner; end takes that. */
static inline bool csni_busy_begin(struct csni_proc *p)
{
    atomic_fetch_add(csni_in_progress_thread ? &p->prog.bg_copying : &p->prog.spinners, 1);
    return !csni_in_progress_thread;
}

static inline void csni_busy_end(struct csni_proc *p, bool counted)
{
    atomic_fetch_sub(counted ? &p->prog.spinners : &p->prog.bg_copying, 1);
}

/* Whether the caller is the progress thread and a user thread came back into the library
 * since it began to poll (a spinner, or a wait ended: activity moved from bg_seen). Then the
 * progress thread lists the pulls it finds rather than making them, and leaves: the user
 * thread pulls them in its wait. Made beside that thread's own pulls, the progress thread's
 * took turns with them for the connection's reader lock on a 2-CPU host, a third copying
 * thread on two CPUs (a whole window of 64 pulled by a progress thread woken in the first
 * rounds of a batch: both ways at 1 MiB, BENCHMARKS.md, issue 19). A user thread that went
 * back to computing is seen at the progress thread's next look, one park period later. */
static inline bool csni_bg_users_back(struct csni_proc *p)
{
    return csni_in_progress_thread &&
           (atomic_load(&p->prog.spinners) > 0 ||
            atomic_load_explicit(&p->prog.activity, memory_order_relaxed) != p->prog.bg_seen);
}

#endif
