/* comm_common.c: the backend-independent part of the bench comm layer (clock, host name, request
 * set-up, gathers built on the backends). */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "comm.h"

/* Both backends time with the same clock, so csn and MPI figures are measured alike. */
double comm_wtime(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

const char *comm_hostname(void)
{
    static char name[256];
    if (name[0] == '\0' && gethostname(name, sizeof name - 1) != 0)
        name[0] = '?';
    return name;
}

void comm_report(int rank, const char *fmt, va_list ap)
{
    fflush(stdout);
    fprintf(stderr, "RANK %d: ", rank);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    fflush(NULL);
}

void comm_req_setup(comm_req *r, void *buf, size_t len, int peer, int is_send)
{
    int np = comm_size();
    if (peer < -1 || peer >= np || (is_send && peer < 0))
        comm_abort(1, "%s with bad rank %d (job of %d)", is_send ? "send" : "receive", peer, np);
    memset(r, 0, sizeof *r);
    r->buf = buf;
    r->len = len;
    r->peer = peer;
    r->is_send = is_send;
}

void comm_gather_double(double v, double *all)
{
    comm_gather_doubles(&v, 1, all);
}
