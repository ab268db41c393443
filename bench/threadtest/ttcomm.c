/* ttcomm.c: the backends of ttcomm.h: csn, or MPI_THREAD_MULTIPLE when built with TT_MPI. */
#include "ttcomm.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifdef TT_MPI
#include <mpi.h>
#else
#include <csn.h>

#include "csn_transports.h"
#endif

/* A wait that sees nothing complete for this long is a hang: the job fails with a message
 * instead (the benchmark never legitimately waits this long). */
#define TT_WAIT_SECONDS 30

double tt_wtime(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int tt_early_rank(void)
{
    static const char *const vars[] = {"CSN_RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        const char *v = getenv(vars[i]);
        if (v != NULL && *v != '\0')
            return atoi(v);
    }
    return 0;
}

static void ttcomm_vreport(const char *fmt, va_list ap)
{
    char msg[512];
    vsnprintf(msg, sizeof msg, fmt, ap);
    fprintf(stderr, "threadtest: rank %d: %s\n", tt_rank(), msg);
    fflush(stderr);
}

#ifdef TT_MPI
/* ------------------------------------------------------------------------------------ MPI */

struct tt_ep {
    int thread;
    int partner;
    int max_reqs;
    MPI_Request *mreq;
    MPI_Status *mstat;
};

static int ttcomm_rank, ttcomm_size;
static char ttcomm_lib[MPI_MAX_LIBRARY_VERSION_STRING];

_Static_assert(sizeof(MPI_Request) <= sizeof(((tt_req *)0)->opaque), "MPI_Request too large");

int tt_init(int *argc, char ***argv, int conn_per_thread)
{
    int provided = MPI_THREAD_SINGLE, len = 0;
    if (conn_per_thread) {
        fprintf(stderr, "threadtest-mpi: --conn-per-thread applies to csn only\n");
        return 2;
    }
    if (MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS) {
        fprintf(stderr, "threadtest-mpi: MPI_Init_thread failed\n");
        return 1;
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &ttcomm_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ttcomm_size);
    if (provided < MPI_THREAD_MULTIPLE) {
        if (ttcomm_rank == 0)
            fprintf(stderr,
                    "threadtest-mpi: the MPI library provides thread level %d, not "
                    "MPI_THREAD_MULTIPLE (%d); threadtest needs concurrent MPI calls\n",
                    provided, MPI_THREAD_MULTIPLE);
        MPI_Finalize();
        return 1;
    }
    MPI_Get_library_version(ttcomm_lib, &len);
    /* Keep the first part ("Open MPI v4.1.4"): the rest is packaging detail. */
    ttcomm_lib[strcspn(ttcomm_lib, ",\n")] = '\0';
    return 0;
}

void tt_finalize(void)
{
    MPI_Finalize();
}

int tt_rank(void)
{
    return ttcomm_rank;
}

int tt_size(void)
{
    return ttcomm_size;
}

const char *tt_library(void)
{
    return ttcomm_lib;
}

const char *tt_transport(void)
{
    return "MPI_COMM_WORLD, one tag per thread";
}

const char *tt_connections(void)
{
    return "MPI_THREAD_MULTIPLE (the MPI library's own sharing)";
}

void tt_fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    ttcomm_vreport(fmt, ap);
    va_end(ap);
    MPI_Abort(MPI_COMM_WORLD, 1);
    _exit(1);
}

tt_ep *tt_open(int thread, int max_reqs)
{
    tt_ep *ep = calloc(1, sizeof *ep);
    if (ep == NULL)
        tt_fail("out of memory");
    ep->thread = thread;
    ep->partner = 1 - ttcomm_rank;
    ep->max_reqs = max_reqs;
    ep->mreq = calloc((size_t)max_reqs, sizeof *ep->mreq);
    ep->mstat = calloc((size_t)max_reqs, sizeof *ep->mstat);
    if (ep->mreq == NULL || ep->mstat == NULL)
        tt_fail("out of memory");
    return ep;
}

void tt_close(tt_ep *ep)
{
    if (ep == NULL)
        return;
    free(ep->mreq);
    free(ep->mstat);
    free(ep);
}

void tt_barrier(tt_ep *ep)
{
    (void)ep;
    if (MPI_Barrier(MPI_COMM_WORLD) != MPI_SUCCESS)
        tt_fail("MPI_Barrier failed");
}

void tt_isend(tt_ep *ep, const void *buf, size_t len, tt_req *r)
{
    MPI_Request q;
    if (MPI_Isend(buf, (int)len, MPI_BYTE, ep->partner, ep->thread, MPI_COMM_WORLD, &q) !=
        MPI_SUCCESS)
        tt_fail("thread %d: MPI_Isend failed", ep->thread);
    *r = (tt_req){.buf = (void *)buf, .len = len, .is_send = 1};
    memcpy(r->opaque, &q, sizeof q);
}

void tt_irecv(tt_ep *ep, void *buf, size_t len, tt_req *r)
{
    MPI_Request q;
    if (MPI_Irecv(buf, (int)len, MPI_BYTE, ep->partner, ep->thread, MPI_COMM_WORLD, &q) !=
        MPI_SUCCESS)
        tt_fail("thread %d: MPI_Irecv failed", ep->thread);
    *r = (tt_req){.buf = buf, .len = len, .is_send = 0};
    memcpy(r->opaque, &q, sizeof q);
}

void tt_waitall(tt_ep *ep, int n, tt_req *r)
{
    if (n > ep->max_reqs)
        tt_fail("thread %d: %d requests exceed the endpoint's %d", ep->thread, n, ep->max_reqs);
    for (int i = 0; i < n; i++)
        memcpy(&ep->mreq[i], r[i].opaque, sizeof ep->mreq[i]);
    if (MPI_Waitall(n, ep->mreq, ep->mstat) != MPI_SUCCESS)
        tt_fail("thread %d: MPI_Waitall failed", ep->thread);
    for (int i = 0; i < n; i++) {
        r[i].done = 1;
        if (!r[i].is_send) {
            int count = 0;
            MPI_Get_count(&ep->mstat[i], MPI_BYTE, &count);
            r[i].received = (size_t)count;
        }
    }
}

void tt_send(tt_ep *ep, const void *buf, size_t len)
{
    if (MPI_Send(buf, (int)len, MPI_BYTE, ep->partner, ep->thread, MPI_COMM_WORLD) != MPI_SUCCESS)
        tt_fail("thread %d: MPI_Send failed", ep->thread);
}

size_t tt_recv(tt_ep *ep, void *buf, size_t cap)
{
    MPI_Status st;
    int count = 0;
    if (MPI_Recv(buf, (int)cap, MPI_BYTE, ep->partner, ep->thread, MPI_COMM_WORLD, &st) !=
        MPI_SUCCESS)
        tt_fail("thread %d: MPI_Recv failed", ep->thread);
    MPI_Get_count(&st, MPI_BYTE, &count);
    return (size_t)count;
}

#else
/* ------------------------------------------------------------------------------------ csn */

struct tt_ep {
    csn_transport *t;
    csn_netid partner;
    int thread;
};

static char ttcomm_lib[64];
static char ttcomm_conn[128];

int tt_init(int *argc, char ***argv, int conn_per_thread)
{
    (void)argc;
    (void)argv;
    /* The library reads CSN_CONN_PER_TRANSPORT when it initialises, at the first csn_open,
     * which comes after this (no thread exists yet, so setenv is safe). */
    if (conn_per_thread && setenv("CSN_CONN_PER_TRANSPORT", "1", 1) != 0) {
        fprintf(stderr, "threadtest: setenv CSN_CONN_PER_TRANSPORT failed\n");
        return 1;
    }
    const char *v = getenv("CSN_CONN_PER_TRANSPORT");
    if (v != NULL && strcmp(v, "1") == 0)
        snprintf(ttcomm_conn, sizeof ttcomm_conn,
                 "one connection per transport (CSN_CONN_PER_TRANSPORT=1, %s)",
                 conn_per_thread ? "--conn-per-thread" : "from the environment");
    else
        snprintf(ttcomm_conn, sizeof ttcomm_conn,
                 "shared: one connection per peer process for all transports");
    snprintf(ttcomm_lib, sizeof ttcomm_lib, "csn %s", csn_version());
    return 0;
}

void tt_finalize(void) {}

int tt_rank(void)
{
    return csn_job_rank();
}

int tt_size(void)
{
    return csn_job_size();
}

const char *tt_library(void)
{
    return ttcomm_lib;
}

const char *tt_transport(void)
{
    return bench_csn_transports(csn_job_size());
}

const char *tt_connections(void)
{
    return ttcomm_conn;
}

void tt_fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    ttcomm_vreport(fmt, ap);
    va_end(ap);
    /* csnrun stops the other process when this one exits non-zero. */
    _exit(1);
}

tt_ep *tt_open(int thread, int max_reqs)
{
    char me[64], partner[64];
    csn_status rv;
    tt_ep *ep = calloc(1, sizeof *ep);
    (void)max_reqs;
    if (ep == NULL)
        tt_fail("out of memory");
    ep->thread = thread;
    snprintf(me, sizeof me, "tt.%d.%d", tt_rank(), thread);
    snprintf(partner, sizeof partner, "tt.%d.%d", 1 - tt_rank(), thread);
    if ((rv = csn_open(&ep->t)) != CSN_OK)
        tt_fail("thread %d: csn_open: %s", thread, csn_status_string(rv));
    if ((rv = csn_register_name(ep->t, me)) != CSN_OK)
        tt_fail("thread %d: csn_register_name %s: %s", thread, me, csn_status_string(rv));
    if ((rv = csn_lookup_name(&ep->partner, partner)) != CSN_OK)
        tt_fail("thread %d: csn_lookup_name %s: %s", thread, partner, csn_status_string(rv));
    return ep;
}

void tt_close(tt_ep *ep)
{
    if (ep == NULL)
        return;
    csn_close(&ep->t);
    free(ep);
}

void tt_barrier(tt_ep *ep)
{
    csn_status rv = csn_job_barrier(ep->t);
    if (rv != CSN_OK)
        tt_fail("csn_job_barrier: %s", csn_status_string(rv));
}

void tt_isend(tt_ep *ep, const void *buf, size_t len, tt_req *r)
{
    *r = (tt_req){.buf = (void *)buf, .len = len, .is_send = 1};
    csn_status rv = csn_tx_nb(ep->t, ep->partner, buf, len);
    if (rv != CSN_OK)
        tt_fail("thread %d: csn_tx_nb: %s", ep->thread, csn_status_string(rv));
}

void tt_irecv(tt_ep *ep, void *buf, size_t len, tt_req *r)
{
    *r = (tt_req){.buf = buf, .len = len, .is_send = 0};
    csn_status rv = csn_rx_nb_from(ep->t, ep->partner, buf, len, &r->received);
    if (rv != CSN_OK)
        tt_fail("thread %d: csn_rx_nb_from: %s", ep->thread, csn_status_string(rv));
}

/* Completions come oldest first, and the requests were posted in array order per kind, so
 * the search for the completed one starts after the previous match of its kind. */
static int ttcomm_find(int n, tt_req *r, int *hint, int is_send, const void *buf)
{
    for (int k = 0; k < n; k++) {
        int i = (*hint + k) % n;
        if (!r[i].done && r[i].is_send == is_send && r[i].buf == buf) {
            *hint = (i + 1) % n;
            return i;
        }
    }
    return -1;
}

void tt_waitall(tt_ep *ep, int n, tt_req *r)
{
    int pending = 0, hint_tx = 0, hint_rx = 0;
    for (int i = 0; i < n; i++)
        pending += !r[i].done;
    while (pending > 0) {
        csn_netid id = CSN_NULL_NETID;
        void *buf = NULL;
        csn_status st = CSN_OK;
        csn_status rv =
            csn_test(ep->t, CSN_TX | CSN_RX, (uint64_t)TT_WAIT_SECONDS * 1000000u, &id, &buf, &st);
        if (rv == CSN_TIMEOUT)
            tt_fail("thread %d: nothing completed within %d s (%d of %d requests pending)",
                    ep->thread, TT_WAIT_SECONDS, pending, n);
        if (rv != CSN_TX_READY && rv != CSN_RX_READY)
            tt_fail("thread %d: csn_test: %s", ep->thread, csn_status_string(rv));
        if (st != CSN_OK)
            tt_fail("thread %d: %s completed with %s", ep->thread,
                    rv == CSN_TX_READY ? "a transmit" : "a receive", csn_status_string(st));
        if (id != ep->partner)
            tt_fail("thread %d: completion names netid %#llx, not the partner %#llx", ep->thread,
                    (unsigned long long)id, (unsigned long long)ep->partner);
        int is_send = rv == CSN_TX_READY;
        int i = ttcomm_find(n, r, is_send ? &hint_tx : &hint_rx, is_send, buf);
        if (i < 0)
            tt_fail("thread %d: completion of a %s for a buffer not pending", ep->thread,
                    is_send ? "transmit" : "receive");
        r[i].done = 1;
        pending--;
    }
}

void tt_send(tt_ep *ep, const void *buf, size_t len)
{
    csn_status rv = csn_tx(ep->t, ep->partner, buf, len);
    if (rv != CSN_OK)
        tt_fail("thread %d: csn_tx: %s", ep->thread, csn_status_string(rv));
}

size_t tt_recv(tt_ep *ep, void *buf, size_t cap)
{
    csn_netid from = ep->partner;
    size_t got = 0;
    csn_status rv = csn_rx(ep->t, &from, buf, cap, &got);
    if (rv != CSN_OK)
        tt_fail("thread %d: csn_rx: %s", ep->thread, csn_status_string(rv));
    if (from != ep->partner)
        tt_fail("thread %d: csn_rx got a message from %#llx, not the partner %#llx", ep->thread,
                (unsigned long long)from, (unsigned long long)ep->partner);
    return got;
}
#endif
