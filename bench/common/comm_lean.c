/* comm_lean.c: the bench comm layer with no library under it: the least a single-copy message
 * layer on one host does, as a reference for csn and MPI in nettest's cells (nettest-lean) and
 * under pingpong's latency loop (pingpong-lean).
 *
 * comm_init forks the ranks (LEAN_NP, default 4; bench/common/forked.h: the process started
 * supervises them and gives the job's exit status), which share one anonymous mapping. A
 * message is announced by its sender in the slot of the pair (its address, length and sequence
 * number), pulled by its receiver with one process_vm_readv, and answered in the slot, which
 * completes the sender's request. Messages of up to LEAN_EAGER
 * bytes (default 0) are copied by their sender into the pair's shared buffer instead, and the
 * send completes at once. LEAN_ANSWER=0 (default 1) makes every non-blocking send complete at
 * once, a pulled one too: its sender does not wait for the answer, which only its next send to
 * that receiver waits for. No library can do that (a send's buffer is free only once it was
 * read); it is sound in nettest, whose ranks rewrite a send buffer only after the barrier that
 * follows every receive. What remains is the work every layer that announces its messages
 * does: the announcement, one copy (or two through the shared buffer), the procedures' order;
 * a bound on that work, not on the waits (BENCHMARKS.md, issue 19). A blocking send (Star's
 * leaves, the setup's collectives, whose buffers are reused at once) still waits for its
 * answer, or copies through the shared buffer. The barrier is a counter in shared memory. A
 * wait with nothing to do yields the CPU at every LEAN_YIELD-th turn (default 1). LEAN_WORK_NS
 * (default 0) adds that much busy work to every send and taken receive. A wait that
 * sees nothing for BENCH_COMM_TIMEOUT seconds (default 120), or another rank's failure, ends
 * the rank. Nothing else: no headers, no matching beyond the pair's order, no progress thread,
 * no errors from peers but their failure flag. One message per pair and direction is in
 * flight at a time (a second send waits until the first is taken: nettest's procedures send
 * one per pair per iteration); receives name their source. */
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comm.h"
#include "forked.h"
#include "tool.h"

#define LEAN_MAX_EAGER (1u << 20)

enum { LEAN_SEQ = 0 };              /* opaque[]: the request's sequence number */
enum { LEAN_OK = 0, LEAN_OVERRUN }; /* comm_req.status */

/* The pair from -> to. ann and done are sequence numbers: the sender stores addr and len, then
 * ann (release); the receiver reads ann (acquire), takes the message, then stores done. */
struct lean_slot {
    _Alignas(64) _Atomic uint64_t ann;
    uint64_t addr, len;
    _Alignas(64) _Atomic uint64_t done;
};

static struct forked_job *lean_job;
static struct lean_slot (*lean_slots)[FORKED_MAX_NP]; /* [from][to], shared */
static uint8_t *lean_eager_buf;                       /* [from][to] buffers of lean_eager bytes */
static size_t lean_eager;
static unsigned lean_yield = 1;
static int lean_answer = 1; /* 0: a pulled send completes without waiting for its answer */
static int lean_me, lean_np;
static const char *lean_prog = "lean"; /* the program (nettest-lean, pingpong-lean, ...) */
static uint64_t lean_sent[FORKED_MAX_NP], lean_taken[FORKED_MAX_NP];
static double lean_timeout = 120.0; /* seconds of waiting without progress before giving up */

/* The shared buffer of the pair from -> to. */
static uint8_t *lean_eager_at(int from, int to)
{
    return lean_eager_buf + ((size_t)from * (size_t)lean_np + (size_t)to) * lean_eager;
}

/* LEAN_WORK_NS: that much busy work added to every send and every taken receive, as turns of
 * an empty loop timed at start: how the cells answer a layer's own work per message (a library
 * that does more than this layer, on the path every procedure waits for). */
static unsigned long lean_work_turns;
static long lean_work_ns;

static void lean_spin(unsigned long turns)
{
    for (unsigned long i = 0; i < turns; i++)
        __asm__ volatile("" ::: "memory");
}

static void lean_work(void)
{
    lean_spin(lean_work_turns);
}

/* Turns of lean_spin's loop that take ns nanoseconds here (timed over a million turns). */
static unsigned long lean_work_calibrate(long ns)
{
    if (ns == 0)
        return 0;
    double t0 = comm_wtime();
    lean_spin(1000000);
    double per_turn = (comm_wtime() - t0) / 1e6;
    return per_turn > 0 ? (unsigned long)((double)ns * 1e-9 / per_turn) : 0;
}

void comm_abort(int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    comm_report(lean_me, fmt, ap);
    va_end(ap);
    if (lean_job != NULL)
        atomic_store(&lean_job->failed, 1);
    _exit(code != 0 ? code : 1);
}

static long lean_env(const char *name, long dflt, long lo, long hi)
{
    const char *v = getenv(name);
    char *end = NULL;
    if (v == NULL || *v == '\0')
        return dflt;
    long x = strtol(v, &end, 10);
    if (*end != '\0' || x < lo || x > hi) {
        fprintf(stderr, "%s: %s takes a number from %ld to %ld, not '%s'\n", lean_prog, name, lo,
                hi, v);
        exit(2);
    }
    return x;
}

int comm_init(int *argc, char ***argv)
{
    (void)argc;
    if (argv != NULL && *argv != NULL)
        lean_prog = bench_prog((*argv)[0]);
    lean_np = (int)lean_env("LEAN_NP", 4, 2, FORKED_MAX_NP);
    lean_eager = (size_t)lean_env("LEAN_EAGER", 0, 0, LEAN_MAX_EAGER);
    lean_yield = (unsigned)lean_env("LEAN_YIELD", 1, 1, 1000);
    lean_answer = (int)lean_env("LEAN_ANSWER", 1, 0, 1);
    lean_work_ns = lean_env("LEAN_WORK_NS", 0, 0, 1000000);
    lean_work_turns = lean_work_calibrate(lean_work_ns);
    const char *tmo = getenv("BENCH_COMM_TIMEOUT");
    if (tmo != NULL && atof(tmo) > 0)
        lean_timeout = atof(tmo);
    size_t slots = sizeof(struct lean_slot) * FORKED_MAX_NP * (size_t)lean_np;
    void *area;
    lean_me =
        forked_start(&lean_job, lean_np, slots + (size_t)lean_np * (size_t)lean_np * lean_eager,
                     &area, lean_prog);
    if (lean_me < 0)
        return -1;
    lean_slots = area;
    lean_eager_buf = (uint8_t *)area + slots;
    comm_barrier();
    return 0;
}

void comm_finalize(void)
{
    comm_barrier(); /* the supervisor (forked_start) gives the job's exit status */
}

int comm_rank(void)
{
    return lean_me;
}

int comm_size(void)
{
    return lean_np;
}

const char *comm_library(void)
{
    static char name[192];
    const char *base = lean_answer ? "lean (no library: flags in shared memory, process_vm_readv"
                                   : "lean floor (no library; LEAN_ANSWER=0: non-blocking sends "
                                     "complete unanswered";
    if (lean_work_ns == 0)
        snprintf(name, sizeof name, "%s)", base);
    else
        snprintf(name, sizeof name, "%s; LEAN_WORK_NS=%ld ns of busy work per message: %lu turns)",
                 base, lean_work_ns, lean_work_turns);
    return name;
}

const char *comm_transport(void)
{
    return lean_eager ? "shared memory up to LEAN_EAGER, process_vm_readv beyond"
                      : "process_vm_readv";
}

size_t comm_max_len(void)
{
    return SIZE_MAX / 2;
}

const char *comm_status_string(int status)
{
    switch (status) {
    case LEAN_OK:
        return "ok";
    case LEAN_OVERRUN:
        return "message longer than the receive";
    default:
        return "unknown status";
    }
}

/* A turn of a wait that found nothing: give the CPU away; stop when a rank failed or nothing
 * moved for lean_timeout. */
static void lean_idle(double *since, const char *what)
{
    if (atomic_load_explicit(&lean_job->failed, memory_order_relaxed))
        comm_abort(1, "another rank failed (while in %s)", what);
    double now = comm_wtime();
    if (*since == 0)
        *since = now;
    else if (now - *since > lean_timeout)
        comm_abort(1, "%s: nothing for %.0f s", what, lean_timeout);
    static unsigned turn;
    if (++turn % lean_yield == 0)
        sched_yield();
}

static void lean_barrier_idle(void *since)
{
    lean_idle(since, "the barrier");
}

void comm_barrier(void)
{
    double since = 0;
    if (forked_barrier(lean_job, lean_barrier_idle, &since) != 0)
        comm_abort(1, "another rank failed (while in the barrier)");
}

/* Takes the receive r's message if it is announced: 1 done, 0 not yet. */
static int lean_take(comm_req *r)
{
    struct lean_slot *s = &lean_slots[r->peer][lean_me];
    if (atomic_load_explicit(&s->ann, memory_order_acquire) < r->opaque[LEAN_SEQ])
        return 0;
    size_t n = (size_t)s->len, want = n < r->len ? n : r->len;
    if (n > r->len)
        r->status = LEAN_OVERRUN;
    if (n <= lean_eager) {
        memcpy(r->buf, lean_eager_at(r->peer, lean_me), want);
    } else {
        int e = forked_pull(lean_job, r->peer, r->buf, s->addr, want);
        if (e != 0)
            comm_abort(1, "process_vm_readv of %zu bytes from rank %d: %s", want, r->peer,
                       strerror(e));
    }
    r->len = want;
    atomic_store_explicit(&s->done, r->opaque[LEAN_SEQ], memory_order_release);
    lean_work();
    return 1;
}

/* Whether r is complete now (a receive takes its message if it can). */
static int lean_progress(comm_req *r)
{
    if (!r->done) {
        if (r->is_send)
            r->done = atomic_load_explicit(&lean_slots[lean_me][r->peer].done,
                                           memory_order_acquire) >= r->opaque[LEAN_SEQ];
        else
            r->done = lean_take(r);
    }
    return r->done;
}

/* A send; a pulled one is done at once unless answered (then when its receiver took it). */
static int lean_isend(const void *buf, size_t len, int dst, comm_req *r, int answered)
{
    lean_work();
    comm_req_setup(r, (void *)buf, len, dst, 1);
    if (dst == lean_me)
        comm_abort(1, "%s: a send to itself", lean_prog);
    struct lean_slot *s = &lean_slots[lean_me][dst];
    uint64_t seq = ++lean_sent[dst];
    double since = 0;
    while (atomic_load_explicit(&s->done, memory_order_acquire) < seq - 1)
        lean_idle(&since, "a send waiting for the one before it");
    r->opaque[LEAN_SEQ] = seq;
    s->len = len;
    if (len <= lean_eager) {
        memcpy(lean_eager_at(lean_me, dst), buf, len);
        r->done = 1;
    } else {
        s->addr = (uint64_t)(uintptr_t)buf;
        r->done = !answered;
    }
    atomic_store_explicit(&s->ann, seq, memory_order_release);
    return 0;
}

int comm_isend(const void *buf, size_t len, int dst, comm_req *r)
{
    return lean_isend(buf, len, dst, r, lean_answer);
}

int comm_irecv(void *buf, size_t len, int src, comm_req *r)
{
    comm_req_setup(r, buf, len, src, 0);
    if (src < 0 || src == lean_me)
        comm_abort(1, "%s: a receive names another rank (not %d)", lean_prog, src);
    r->opaque[LEAN_SEQ] = ++lean_taken[src];
    return 0;
}

int comm_test(comm_req *r)
{
    return lean_progress(r);
}

int comm_waitall(int n, comm_req *r)
{
    double since = 0;
    for (;;) {
        int open = 0, moved = 0;
        for (int i = 0; i < n; i++) {
            if (r[i].done)
                continue;
            if (lean_progress(&r[i]))
                moved = 1;
            else
                open = 1;
        }
        if (!open)
            return 0;
        if (moved)
            since = 0;
        else
            lean_idle(&since, "a wait");
    }
}

int comm_waitany(int n, comm_req *r, int *index)
{
    double since = 0;
    for (;;) {
        int open = 0;
        for (int i = 0; i < n; i++) {
            if (r[i].done)
                continue;
            if (lean_progress(&r[i])) {
                *index = i;
                return 0;
            }
            open = 1;
        }
        if (!open) {
            *index = -1;
            return 0;
        }
        lean_idle(&since, "a wait for any");
    }
}

int comm_send(const void *buf, size_t len, int dst)
{
    comm_req r;
    lean_isend(buf, len, dst, &r, 1);
    comm_waitall(1, &r);
    return r.status;
}

int comm_recv(void *buf, size_t len, int src, size_t *received, int *from)
{
    comm_req r;
    comm_irecv(buf, len, src, &r);
    comm_waitall(1, &r);
    if (received != NULL)
        *received = r.len;
    if (from != NULL)
        *from = r.peer;
    return r.status;
}
