/* comm_csn.c: the bench comm layer on csn: ranks found by name, completions matched by buffer. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "comm.h"
#include "csn.h"
#include "csn_transports.h"

/* Single-threaded: the benchmarks call the layer from one thread per process.
 *
 * csn_test reports completions one at a time, naming the operation by its buffer and peer,
 * and may report an operation other than the ones the caller waits for. Every posted
 * request is therefore kept in `pending` (in post order) until its completion arrives; the
 * completion is recorded in the request (opaque[COMPLETE]) whoever waits, and `done` is set
 * when a wait or test hands it to the caller. The received length goes straight into
 * r->len (csn reads the posted length by value and writes the delivered one at completion).
 *
 * The layer has no tags: messages between two ranks match in the order they were sent, so
 * the collectives (built from point-to-point messages via rank 0) must not be called while
 * benchmark messages are still unmatched. */
enum { COMM_COMPLETE = 0, COMM_OPSTATUS = 1 };

static csn_transport *comm_t;
static int comm_me, comm_np;
static csn_netid *comm_ids;
/* The requests csn_test may still complete, oldest first, one queue for receives ([0]) and
 * one for sends ([1]): v[head..tail). Each kind mostly completes in the order it was posted,
 * so a completion is found at or near its queue's head and taking it out moves only the ones
 * before it (usually none). One queue for both would make every send of a both-ways window
 * walk past the window's receives still open: O(window) per message (MPI_Waitall has no such
 * cost, so the comparison would be unfair to csn). */
struct comm_queue {
    comm_req **v;
    size_t head, tail, cap;
};
static struct comm_queue comm_pending[2];
static double comm_timeout = 120.0; /* seconds without any completion before giving up */
static char comm_libname[64];

void comm_abort(int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    comm_report(comm_me, fmt, ap);
    va_end(ap);
    /* No orderly close: the peers may be blocked towards us; csnrun stops the job. */
    _exit(code != 0 ? code : 1);
}

/* A status as words; a system error with its errno's (the contract: errno tells which). */
static const char *comm_why(csn_status s)
{
    static char why[160];
    if (s != CSN_SYSTEM_ERROR)
        return csn_status_string(s);
    snprintf(why, sizeof why, "%s: %s", csn_status_string(s), strerror(errno));
    return why;
}

static void comm_check(csn_status s, const char *what)
{
    if (s != CSN_OK)
        comm_abort(1, "%s: %s", what, comm_why(s));
}

int comm_init(int *argc, char ***argv)
{
    const char *tmo = getenv("BENCH_COMM_TIMEOUT");
    (void)argc;
    (void)argv;
    if (tmo != NULL && atof(tmo) > 0)
        comm_timeout = atof(tmo);
    comm_me = csn_job_rank();
    comm_np = csn_job_size();
    csn_status s = csn_open(&comm_t);
    if (s != CSN_OK) {
        /* On CSN_SYSTEM_ERROR errno names the failed call's error (the contract). The rank
         * from the launcher's environment: the library that would say it did not start. */
        int e = errno;
        const char *rank = getenv("CSN_RANK");
        fprintf(stderr, "RANK %s: csn_open: %s%s%s%s\n", rank && *rank ? rank : "?",
                csn_status_string(s), s == CSN_SYSTEM_ERROR ? " (" : "",
                s == CSN_SYSTEM_ERROR ? strerror(e) : "", s == CSN_SYSTEM_ERROR ? ")" : "");
        return -1;
    }
    comm_ids = calloc((size_t)comm_np, sizeof *comm_ids);
    if (comm_ids == NULL) {
        fprintf(stderr, "RANK %d: out of memory\n", comm_me);
        goto fail;
    }
    /* Every rank's address without a lookup per rank: this is each process's first
     * transport, so its netid is csn_job_netid(rank); after one barrier all of them exist. */
    if (csn_netid_of(comm_t) != csn_job_netid(comm_me)) {
        fprintf(stderr, "RANK %d: the benchmark's transport is not the process's first\n", comm_me);
        goto fail;
    }
    if (comm_np > 1 && (s = csn_job_barrier(comm_t)) != CSN_OK)
        goto fail_status;
    for (int r = 0; r < comm_np; r++)
        comm_ids[r] = csn_job_netid(r);
    /* Make every connection now (an empty message each way), so that no benchmark times
     * a connection set-up in its first iteration; in jobs of more than BENCH_PRECONNECT
     * ranks (default 64) connections are made lazily, at the first message of each pair
     * (all pairs of 1000 ranks would be a million connections). */
    const char *pc = getenv("BENCH_PRECONNECT");
    int prec = comm_np <= (pc != NULL && *pc != '\0' ? atoi(pc) : 64);
    for (int r = 0; prec && r < comm_np; r++)
        if (r != comm_me && (s = csn_tx_nb(comm_t, comm_ids[r], NULL, 0)) != CSN_OK)
            goto fail_status;
    for (int r = 0; prec && r < comm_np; r++) {
        csn_netid from = comm_ids[r];
        size_t got;
        char none;
        if (r != comm_me && (s = csn_rx(comm_t, &from, &none, 0, &got)) != CSN_OK)
            goto fail_status;
    }
    for (int r = 1; prec && r < comm_np; r++) {
        csn_netid id;
        void *buf;
        csn_status op;
        if ((s = csn_test(comm_t, CSN_TX, CSN_FOREVER, &id, &buf, &op)) != CSN_TX_READY ||
            (s = op) != CSN_OK)
            goto fail_status;
    }
    snprintf(comm_libname, sizeof comm_libname, "csn %s", csn_version());
    return 0;
fail_status:
    fprintf(stderr, "RANK %d: connecting to the other ranks: %s\n", comm_me, comm_why(s));
fail:
    free(comm_ids);
    comm_ids = NULL;
    csn_close(&comm_t);
    return -1;
}

void comm_finalize(void)
{
    if (comm_t == NULL)
        return;
    /* Nobody closes while another rank may still send to it. */
    comm_barrier();
    csn_close(&comm_t);
    free(comm_ids);
    for (int k = 0; k < 2; k++) {
        free(comm_pending[k].v);
        comm_pending[k] = (struct comm_queue){0};
    }
    comm_ids = NULL;
}

int comm_rank(void)
{
    return comm_me;
}

int comm_size(void)
{
    return comm_np;
}

void comm_barrier(void)
{
    comm_check(csn_job_barrier(comm_t), "csn_job_barrier");
}

const char *comm_library(void)
{
    return comm_libname[0] ? comm_libname : "csn";
}

/* What the job's messages travel over, for headers and JSON: the transport of the one pair
 * in a 2-rank job, else a summary over all pairs ("shm" on one host, "tcp" with one rank per
 * host, "shm within hosts, tcp between" otherwise). Computed once (csn_job_transport reads
 * the ranks' hosts only in a job that spans hosts, and stops at the first pair of each kind). */
const char *comm_transport(void)
{
    return bench_csn_transports(comm_np);
}

size_t comm_max_len(void)
{
    return (size_t)1 << 48;
}

const char *comm_status_string(int status)
{
    return csn_status_string((csn_status)status);
}

static int comm_rank_of(csn_netid id)
{
    for (int r = 0; r < comm_np; r++)
        if (comm_ids[r] == id)
            return r;
    return -1;
}

/* Records the completion csn_test reported in the oldest pending request it can be. */
static void comm_record(int is_send, csn_netid id, void *buf, csn_status op)
{
    struct comm_queue *q = &comm_pending[is_send != 0];
    for (size_t i = q->head; i < q->tail; i++) {
        comm_req *r = q->v[i];
        if (r->buf != buf)
            continue;
        if (r->peer >= 0 && comm_ids[r->peer] != id)
            continue;
        if (r->peer < 0)
            r->peer = comm_rank_of(id);
        r->status = (int)op;
        r->opaque[COMM_OPSTATUS] = (uint64_t)op;
        r->opaque[COMM_COMPLETE] = 1;
        if (i > q->head) /* out of order: the older ones move up (in order: no call) */
            memmove(&q->v[q->head + 1], &q->v[q->head], (i - q->head) * sizeof *q->v);
        if (++q->head == q->tail)
            q->head = q->tail = 0;
        return;
    }
    comm_abort(1, "csn_test completed a %s of buffer %p with rank %d that was never posted here",
               is_send ? "send" : "receive", buf, comm_rank_of(id));
}

/* One csn_test: 1 when a completion was recorded, 0 on timeout. */
static int comm_progress(uint64_t timeout_us)
{
    csn_netid id = CSN_NULL_NETID;
    void *buf = NULL;
    csn_status op = CSN_OK;
    csn_status s = csn_test(comm_t, CSN_TX | CSN_RX, timeout_us, &id, &buf, &op);
    if (s == CSN_TIMEOUT)
        return 0;
    if (s != CSN_TX_READY && s != CSN_RX_READY)
        comm_abort(1, "csn_test: %s", csn_status_string(s));
    comm_record(s == CSN_TX_READY, id, buf, op);
    return 1;
}

/* Progress with a watchdog: gives up after comm_timeout seconds without any completion.
 * *idle: the seconds of timed-out tests since the last completion (each at least 0.1 s): the
 * clock is not read per completion (a system call's worth of time per message where the
 * clock source is not the TSC, and a cost the MPI twin's MPI_Waitall does not have). */
#define COMM_TEST_US 100000
static void comm_progress_wait(double *idle, int n, const comm_req *r)
{
    if (comm_progress(COMM_TEST_US))
        *idle = 0.0;
    else if ((*idle += COMM_TEST_US * 1e-6) > comm_timeout) {
        for (int i = 0; i < n; i++)
            if (!r[i].done && !r[i].opaque[COMM_COMPLETE])
                comm_abort(1,
                           "no message completed for %.0f s (BENCH_COMM_TIMEOUT); still waiting "
                           "for a %s of %zu bytes %s rank %d",
                           comm_timeout, r[i].is_send ? "send" : "receive", r[i].len,
                           r[i].is_send ? "to" : "from", r[i].peer);
        comm_abort(1, "no message completed for %.0f s", comm_timeout);
    }
}

static void comm_track(comm_req *r)
{
    struct comm_queue *q = &comm_pending[r->is_send != 0];
    if (q->tail == q->cap && q->head > 0) {
        memmove(q->v, &q->v[q->head], (q->tail - q->head) * sizeof *q->v);
        q->tail -= q->head;
        q->head = 0;
    }
    if (q->tail == q->cap) {
        size_t cap = q->cap ? 2 * q->cap : 64;
        comm_req **p = realloc(q->v, cap * sizeof *p);
        if (p == NULL)
            comm_abort(1, "out of memory for %zu requests", cap);
        q->v = p;
        q->cap = cap;
    }
    q->v[q->tail++] = r;
}

int comm_isend(const void *buf, size_t len, int dst, comm_req *r)
{
    comm_req_setup(r, (void *)buf, len, dst, 1);
    for (;;) {
        csn_status s = csn_tx_nb(comm_t, comm_ids[dst], buf, len);
        if (s == CSN_OK)
            break;
        if (s != CSN_BUSY)
            comm_abort(1, "csn_tx_nb of %zu bytes to rank %d: %s", len, dst, csn_status_string(s));
        comm_progress(1000);
    }
    comm_track(r);
    return 0;
}

int comm_irecv(void *buf, size_t len, int src, comm_req *r)
{
    comm_req_setup(r, buf, len, src, 0);
    for (;;) {
        csn_status s =
            csn_rx_nb_from(comm_t, src < 0 ? CSN_NULL_NETID : comm_ids[src], buf, len, &r->len);
        if (s == CSN_OK)
            break;
        if (s != CSN_BUSY)
            comm_abort(1, "csn_rx_nb of %zu bytes from rank %d: %s", len, src,
                       csn_status_string(s));
        comm_progress(1000);
    }
    comm_track(r);
    return 0;
}

int comm_waitall(int n, comm_req *r)
{
    double idle = 0.0;
    /* Requests mostly complete in order: resume the scan at the first one still open, so a
     * window of n costs O(n), not O(n^2). */
    for (int i = 0;;) {
        while (i < n && (r[i].done || r[i].opaque[COMM_COMPLETE]))
            r[i++].done = 1;
        if (i == n)
            return 0;
        comm_progress_wait(&idle, n, r);
    }
}

int comm_waitany(int n, comm_req *r, int *index)
{
    double idle = 0.0;
    for (;;) {
        int open = 0;
        for (int i = 0; i < n; i++) {
            if (r[i].done)
                continue;
            if (r[i].opaque[COMM_COMPLETE]) {
                r[i].done = 1;
                *index = i;
                return 0;
            }
            open = 1;
        }
        if (!open) {
            *index = -1;
            return 0;
        }
        comm_progress_wait(&idle, n, r);
    }
}

int comm_test(comm_req *r)
{
    if (!r->done && !r->opaque[COMM_COMPLETE])
        comm_progress(0);
    if (r->opaque[COMM_COMPLETE])
        r->done = 1;
    return r->done;
}

/* Blocking send and receive map to csn_tx and csn_rx, as the MPI twin's map to MPI_Send and
 * MPI_Recv: the library's own blocking path, not a request and csn_test. A receive from any
 * rank keeps the request path and its watchdog (no peer can be named to be lost). */
int comm_send(const void *buf, size_t len, int dst)
{
    return (int)csn_tx(comm_t, comm_ids[dst], buf, len);
}

int comm_recv(void *buf, size_t len, int src, size_t *received, int *from)
{
    if (src >= 0) {
        csn_netid id = comm_ids[src];
        size_t got = 0;
        csn_status s = csn_rx(comm_t, &id, buf, len, &got);
        if (received != NULL)
            *received = got;
        if (from != NULL)
            *from = comm_rank_of(id);
        return (int)s;
    }
    comm_req r;
    comm_irecv(buf, len, src, &r);
    comm_waitall(1, &r);
    if (received != NULL)
        *received = r.len;
    if (from != NULL)
        *from = r.peer;
    return r.status;
}
