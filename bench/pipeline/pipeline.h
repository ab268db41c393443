/* pipeline.h: shared definitions of the multi-phase all-to-all pipeline benchmark (seed 000). */
#ifndef PL_PIPELINE_H
#define PL_PIPELINE_H

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#define PL_MAX_PHASE 64
#define PL_MAX_NODE 4096
#define PL_MAX_BUFSIZE (1ull << 30)
#define PL_MB 1e6 /* throughputs are reported in MB/s with MB = 10^6 bytes */

/* Command line. Sizes are in bytes. */
struct pl_opts {
    int nphase;         /* phases per node, >= 2 */
    uint64_t bufsize;   /* bytes of ONE block (one message); a buffer holds nnode blocks */
    uint64_t nbuf;      /* buffers streamed through every phase */
    const char *source; /* NULL: memory; pl_none: none; otherwise a file (may contain %r) */
    const char *sink;   /* NULL: memory; pl_none: none; otherwise a file (may contain %r) */
    const char *json;   /* NULL or the JSON report file (written by rank 0) */
    unsigned timeout_s; /* longest single wait before giving up */
    uint64_t die_after; /* 0: off; else a sender kills itself after this many blocks */
    int threads;        /* 1: phases, senders and receivers are threads of the node process */
    uint64_t lead;      /* the first phase fills buffer i once the last phase consumed buffer
                           i-lead; 0: no such limit (default 2*nphase, see pl_first) */
    int lead_set;       /* 1: --lead was given */
    int sched_normal;   /* 1: --sched normal (else SCHED_BATCH, set in main) */
};

/* --source none / --sink none: the first phase hands its buffers on without filling them,
 * the last phase gives them back without reading them (the transfers alone are measured). */
extern const char pl_none[];

/* Parses argv. Returns 0 on success, 1 when --help was asked (usage printed when
 * `talk`), 2 on a usage error (one line printed when `talk`). */
int pl_parse(int argc, char **argv, struct pl_opts *o, int talk);
void pl_usage(FILE *f);

/* A counter that only grows, waited for with a futex on v. sleepers counts the waiters
 * that may be asleep on it, so that an increment nobody waits for costs no system call. */
struct pl_count {
    _Atomic uint32_t v;
    _Atomic uint32_t sleepers;
};

/* Double-buffer state of one phase on one node. All counters only grow.
 * filled[k]  : blocks written into buffer k so far (receivers, or the first phase, +1 each);
 * drained[k] : blocks taken out of buffer k so far (senders, or the last phase, +1 each).
 * Use number i of a buffer (i = 0, 1, 2, ... over the run) uses k = i % 2 and round r = i / 2:
 * buffer k may be written once drained[k] >= nnode*r and read once filled[k] >= nnode*(r+1). */
struct pl_sync {
    struct pl_count filled[2];
    char pad1[64 - 2 * sizeof(struct pl_count)];
    struct pl_count drained[2];
    char pad2[64 - 2 * sizeof(struct pl_count)];
};

/* The node's shared area: one MAP_SHARED|MAP_ANONYMOUS mapping created by the rank before
 * any fork, so every process of the node sees it at the same address. */
struct pl_shared {
    _Atomic uint32_t abort; /* 1: a process of this node failed or was told to stop */
    _Atomic uint32_t ready; /* children connected (senders: hello sent; receivers: got) */
    _Atomic uint32_t start; /* 1: the rank started the first phase */
    _Atomic uint32_t done;  /* 1: the last phase consumed its last buffer */
    double t_start;         /* CLOCK_MONOTONIC seconds; written before start = 1 */
    double t_end;           /* written before done = 1 */
    char pad[64 - 4 * sizeof(uint32_t) - 2 * sizeof(double)];
    struct pl_sync phase[]; /* nphase entries */
};

/* One process's view of the node (set up by the rank, inherited through fork). */
struct pl_node {
    const struct pl_opts *o;
    int node, nnode;
    struct pl_shared *sh;
    unsigned char *bufs; /* 2*nphase buffers of buf_stride bytes */
    size_t buf_stride;   /* >= nnode*bufsize, page aligned */
    size_t map_len;
    char source_path[4096], sink_path[4096]; /* %r expanded; "" for memory */
    uint64_t source_off, sink_off;           /* where this node's slice starts in the files */
};

enum pl_role { PL_ROLE_PHASE, PL_ROLE_RECEIVER, PL_ROLE_SENDER };
struct pl_thread;

/* What a waiting process (or thread) watches besides the counter it waits on, and the
 * children it started. With --threads, children are threads and only the abort flag
 * tells of a failure (every failing thread raises it). */
struct pl_ctx {
    struct pl_node *n;
    char who[80]; /* "node 1 phase 2 sender 3" */
    pid_t parent; /* the parent process it must not outlive; 0: none (threads) */
    pid_t *kids;  /* child processes to reap while waiting (phase processes, rank) */
    char (*kid_name)[48];
    int nkids, kids_left;
    int killed;           /* 1 once we SIGKILLed the stragglers */
    int no_timeout;       /* pl_wait_ge waits without --timeout */
    struct pl_thread *th; /* child threads (--threads), nkids of them */
};

unsigned char *pl_buf(const struct pl_node *n, int phase, int k);

double pl_now(void);
/* Waits until *w >= target. 0 on success; -1 on abort, timeout, dead parent or failed
 * child (one line printed unless the node was already aborting). */
int pl_wait_ge(struct pl_ctx *c, _Atomic uint32_t *w, uint32_t target, const char *what);
/* Waits until cnt->v >= target, woken only by wakes whose bitset shares a bit with `bits`. */
int pl_wait_count(struct pl_ctx *c, struct pl_count *cnt, uint32_t target, uint32_t bits,
                  const char *what);
void pl_add_wake(_Atomic uint32_t *w, uint32_t v);
/* Adds 1 and, if anyone may sleep on it, wakes the waiters whose bits share one with
 * `bits`; only when the count reaches a multiple of `every`: the filled and drained
 * counters of senders and receivers are only ever waited for at multiples of nnode, so the
 * nnode-1 earlier ones of a buffer need not wake anyone (a woken phase process would only
 * find the buffer incomplete and sleep again). */
void pl_count_add(struct pl_count *cnt, uint32_t bits, uint32_t every);
/* Marks the node as aborting and wakes every waiter. Async-signal-safe. */
void pl_abort(struct pl_shared *sh, int nphase);
/* Reaps exited children without blocking: 0 ok, -1 when one failed (reported). */
int pl_reap(struct pl_ctx *c);
/* Waits for every remaining child (up to grace_s, then SIGKILL). 0 when all exited 0. */
int pl_reap_all(struct pl_ctx *c, double grace_s);
/* Child side of fork: dies with the parent; 0 ok, -1 if the parent is already gone. */
int pl_child_setup(pid_t parent);

/* The processes (or threads) of one node (node.c). pl_children allocates room for up to
 * max children of c; pl_start starts one (phase p, index j); pl_finish waits for all
 * (grace_s, then processes are killed; 0 when all ended well, -1 on a failure, -2 when
 * threads are still running after grace_s). */
int pl_children(struct pl_ctx *c, int max);
int pl_start(struct pl_ctx *c, enum pl_role role, int p, int j);
int pl_finish(struct pl_ctx *c, double grace_s);
void pl_children_free(struct pl_ctx *c);

extern volatile sig_atomic_t pl_got_signal;
void pl_install_signals(struct pl_shared *sh, int nphase);

#endif
