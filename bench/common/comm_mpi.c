/* comm_mpi.c: the bench comm layer on MPI (the -mpi twins): one tag, MPI_COMM_WORLD. */
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "comm.h"

/* The MPI_Request of a posted request lives in opaque[0]; done is set when a wait or test
 * has completed it. Every message uses one tag, so matching is by source and order, as on
 * csn. Counts are ints in MPI: longer messages are refused (comm_max_len). */
_Static_assert(sizeof(MPI_Request) <= sizeof(((comm_req *)0)->opaque), "MPI_Request fits");

#define COMM_TAG 7
#define COMM_STACK 64

static int comm_me, comm_np;
static char comm_libname[128];

static MPI_Request *comm_mreq(comm_req *r)
{
    return (MPI_Request *)(void *)r->opaque;
}

void comm_abort(int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    comm_report(comm_me, fmt, ap);
    va_end(ap);
    MPI_Abort(MPI_COMM_WORLD, code != 0 ? code : 1);
    exit(code != 0 ? code : 1);
}

int comm_init(int *argc, char ***argv)
{
    int len = 0;
    char ver[MPI_MAX_LIBRARY_VERSION_STRING];
    if (MPI_Init(argc, argv) != MPI_SUCCESS) {
        fprintf(stderr, "MPI_Init failed\n");
        return -1;
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &comm_me);
    MPI_Comm_size(MPI_COMM_WORLD, &comm_np);
    /* Errors come back as values so that the message says which operation failed. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Get_library_version(ver, &len);
    /* Keep the first line, up to the first comma ("Open MPI v4.1.4, package: ..."). */
    ver[strcspn(ver, ",\n")] = '\0';
    snprintf(comm_libname, sizeof comm_libname, "%.*s", (int)sizeof comm_libname - 1, ver);
    return 0;
}

void comm_finalize(void)
{
    MPI_Finalize();
}

int comm_rank(void)
{
    return comm_me;
}

int comm_size(void)
{
    return comm_np;
}

static void comm_check(int rc, const char *what)
{
    if (rc != MPI_SUCCESS)
        comm_abort(1, "%s: %s", what, comm_status_string(rc));
}

void comm_barrier(void)
{
    comm_check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
}

const char *comm_library(void)
{
    return comm_libname;
}

const char *comm_transport(void)
{
    /* MPI does not say which transport it chose; report the selection the user forced. */
    const char *btl = getenv("OMPI_MCA_btl");
    static char buf[128];
    snprintf(buf, sizeof buf, "mpi (btl %s)", btl != NULL ? btl : "default");
    return buf;
}

size_t comm_max_len(void)
{
    return (size_t)INT_MAX;
}

const char *comm_status_string(int status)
{
    static char buf[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (status == 0)
        return "ok";
    if (MPI_Error_string(status, buf, &len) != MPI_SUCCESS)
        snprintf(buf, sizeof buf, "MPI error %d", status);
    return buf;
}

static void comm_setup(comm_req *r, void *buf, size_t len, int peer, int is_send)
{
    if (len > (size_t)INT_MAX)
        comm_abort(1, "%s of %zu bytes: more than MPI's int count allows",
                   is_send ? "send" : "receive", len);
    comm_req_setup(r, buf, len, peer, is_send);
}

int comm_isend(const void *buf, size_t len, int dst, comm_req *r)
{
    comm_setup(r, (void *)buf, len, dst, 1);
    int rc = MPI_Isend(buf, (int)len, MPI_BYTE, dst, COMM_TAG, MPI_COMM_WORLD, comm_mreq(r));
    if (rc != MPI_SUCCESS)
        comm_abort(1, "MPI_Isend of %zu bytes to rank %d: %s", len, dst, comm_status_string(rc));
    return 0;
}

int comm_irecv(void *buf, size_t len, int src, comm_req *r)
{
    comm_setup(r, buf, len, src, 0);
    int rc = MPI_Irecv(buf, (int)len, MPI_BYTE, src < 0 ? MPI_ANY_SOURCE : src, COMM_TAG,
                       MPI_COMM_WORLD, comm_mreq(r));
    if (rc != MPI_SUCCESS)
        comm_abort(1, "MPI_Irecv of %zu bytes from rank %d: %s", len, src, comm_status_string(rc));
    return 0;
}

/* Fills a completed request from its MPI_Status. */
static void comm_complete(comm_req *r, const MPI_Status *st, int rc)
{
    r->done = 1;
    r->status = rc == MPI_SUCCESS ? 0 : (st->MPI_ERROR != MPI_SUCCESS ? st->MPI_ERROR : rc);
    if (!r->is_send) {
        int count = 0;
        if (MPI_Get_count(st, MPI_BYTE, &count) == MPI_SUCCESS && count >= 0)
            r->len = (size_t)count;
        r->peer = st->MPI_SOURCE;
    }
}

/* Waits for the not-done requests of r, gathered into a contiguous MPI_Request array. */
int comm_waitall(int n, comm_req *r)
{
    MPI_Request sreq[COMM_STACK];
    MPI_Status sst[COMM_STACK];
    int sidx[COMM_STACK];
    MPI_Request *req = sreq;
    MPI_Status *st = sst;
    int *idx = sidx;
    int m = 0;
    if (n > COMM_STACK) {
        req = malloc((size_t)n * sizeof *req);
        st = malloc((size_t)n * sizeof *st);
        idx = malloc((size_t)n * sizeof *idx);
        if (req == NULL || st == NULL || idx == NULL)
            comm_abort(1, "out of memory waiting for %d requests", n);
    }
    for (int i = 0; i < n; i++)
        if (!r[i].done) {
            req[m] = *comm_mreq(&r[i]);
            idx[m++] = i;
        }
    int rc = MPI_Waitall(m, req, st);
    if (rc != MPI_SUCCESS && rc != MPI_ERR_IN_STATUS)
        comm_abort(1, "MPI_Waitall: %s", comm_status_string(rc));
    for (int k = 0; k < m; k++) {
        *comm_mreq(&r[idx[k]]) = req[k];
        comm_complete(&r[idx[k]], &st[k], rc == MPI_SUCCESS ? MPI_SUCCESS : st[k].MPI_ERROR);
    }
    if (req != sreq) {
        free(req);
        free(st);
        free(idx);
    }
    return 0;
}

int comm_waitany(int n, comm_req *r, int *index)
{
    MPI_Request sreq[COMM_STACK];
    int sidx[COMM_STACK];
    MPI_Request *req = sreq;
    int *idx = sidx;
    MPI_Status st;
    int m = 0, k = MPI_UNDEFINED;
    if (n > COMM_STACK) {
        req = malloc((size_t)n * sizeof *req);
        idx = malloc((size_t)n * sizeof *idx);
        if (req == NULL || idx == NULL)
            comm_abort(1, "out of memory waiting for %d requests", n);
    }
    for (int i = 0; i < n; i++)
        if (!r[i].done) {
            req[m] = *comm_mreq(&r[i]);
            idx[m++] = i;
        }
    *index = -1;
    if (m > 0) {
        int rc = MPI_Waitany(m, req, &k, &st);
        if (rc != MPI_SUCCESS && k == MPI_UNDEFINED)
            comm_abort(1, "MPI_Waitany: %s", comm_status_string(rc));
        if (k != MPI_UNDEFINED) {
            *comm_mreq(&r[idx[k]]) = req[k];
            comm_complete(&r[idx[k]], &st, rc);
            *index = idx[k];
        }
    }
    if (req != sreq) {
        free(req);
        free(idx);
    }
    return 0;
}

int comm_test(comm_req *r)
{
    int flag = 0;
    MPI_Status st;
    if (r->done)
        return 1;
    int rc = MPI_Test(comm_mreq(r), &flag, &st);
    if (rc != MPI_SUCCESS)
        comm_abort(1, "MPI_Test: %s", comm_status_string(rc));
    if (flag)
        comm_complete(r, &st, rc);
    return r->done;
}

int comm_send(const void *buf, size_t len, int dst)
{
    comm_req r;
    comm_setup(&r, (void *)buf, len, dst, 1);
    return MPI_Send(buf, (int)len, MPI_BYTE, dst, COMM_TAG, MPI_COMM_WORLD);
}

int comm_recv(void *buf, size_t len, int src, size_t *received, int *from)
{
    comm_req r;
    MPI_Status st;
    comm_setup(&r, buf, len, src, 0);
    int rc = MPI_Recv(buf, (int)len, MPI_BYTE, src < 0 ? MPI_ANY_SOURCE : src, COMM_TAG,
                      MPI_COMM_WORLD, &st);
    comm_complete(&r, &st, rc);
    if (received != NULL)
        *received = r.len;
    if (from != NULL)
        *from = r.peer;
    return r.status;
}

/* ---- collectives (small, not timed) ---- */

double comm_allreduce_max(double v)
{
    double out = v;
    comm_check(MPI_Allreduce(&v, &out, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD), "MPI_Allreduce");
    return out;
}

double comm_allreduce_min(double v)
{
    double out = v;
    comm_check(MPI_Allreduce(&v, &out, 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD), "MPI_Allreduce");
    return out;
}

double comm_allreduce_sum(double v)
{
    double out = v;
    comm_check(MPI_Allreduce(&v, &out, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD), "MPI_Allreduce");
    return out;
}

void comm_gather_doubles(const double *v, int n, double *all)
{
    comm_check(MPI_Gather(v, n, MPI_DOUBLE, all, n, MPI_DOUBLE, 0, MPI_COMM_WORLD), "MPI_Gather");
}

void comm_gather_str(const char *s, char *all, size_t each)
{
    char *mine = calloc(1, each);
    if (mine == NULL)
        comm_abort(1, "out of memory");
    snprintf(mine, each, "%s", s);
    comm_check(MPI_Gather(mine, (int)each, MPI_CHAR, all, (int)each, MPI_CHAR, 0, MPI_COMM_WORLD),
               "MPI_Gather");
    free(mine);
}

void comm_bcast_int(int *v, int n)
{
    comm_check(MPI_Bcast(v, n, MPI_INT, 0, MPI_COMM_WORLD), "MPI_Bcast");
}
