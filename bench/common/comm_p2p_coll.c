/* comm_p2p_coll.c: the collectives of the bench comm layer built from its blocking point-to-point
 * calls through rank 0, for the backends that have none of their own (csn, lean). Small and
 * never timed. A backend without tags must not run them while benchmark messages are unmatched. */
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "comm.h"

static void comm_send_ok(const void *buf, size_t len, int dst)
{
    int st = comm_send(buf, len, dst);
    if (st != 0)
        comm_abort(1, "collective send to rank %d: %s", dst, comm_status_string(st));
}

static void comm_recv_ok(void *buf, size_t len, int src)
{
    size_t got = 0;
    int st = comm_recv(buf, len, src, &got, NULL);
    if (st != 0 || got != len)
        comm_abort(1, "collective receive from rank %d: %s (%zu of %zu bytes)", src,
                   comm_status_string(st), got, len);
}

void comm_gather_doubles(const double *v, int n, double *all)
{
    size_t bytes = (size_t)n * sizeof *v;
    if (comm_rank() != 0) {
        comm_send_ok(v, bytes, 0);
        return;
    }
    memcpy(all, v, bytes);
    for (int r = 1; r < comm_size(); r++)
        comm_recv_ok(all + (size_t)r * (size_t)n, bytes, r);
}

void comm_gather_str(const char *s, char *all, size_t each)
{
    char *mine = calloc(1, each);
    if (mine == NULL)
        comm_abort(1, "out of memory");
    snprintf(mine, each, "%s", s);
    if (comm_rank() != 0) {
        comm_send_ok(mine, each, 0);
    } else {
        memcpy(all, mine, each);
        for (int r = 1; r < comm_size(); r++)
            comm_recv_ok(all + (size_t)r * each, each, r);
    }
    free(mine);
}

void comm_bcast_int(int *v, int n)
{
    size_t bytes = (size_t)n * sizeof *v;
    if (comm_rank() != 0) {
        comm_recv_ok(v, bytes, 0);
        return;
    }
    for (int r = 1; r < comm_size(); r++)
        comm_send_ok(v, bytes, r);
}

enum comm_op { COMM_MAX, COMM_MIN, COMM_SUM };

static double comm_allreduce(double v, enum comm_op op)
{
    if (comm_rank() != 0) {
        comm_send_ok(&v, sizeof v, 0);
        comm_recv_ok(&v, sizeof v, 0);
        return v;
    }
    for (int r = 1; r < comm_size(); r++) {
        double x;
        comm_recv_ok(&x, sizeof x, r);
        if (op == COMM_MAX)
            v = x > v ? x : v;
        else if (op == COMM_MIN)
            v = x < v ? x : v;
        else
            v += x;
    }
    for (int r = 1; r < comm_size(); r++)
        comm_send_ok(&v, sizeof v, r);
    return v;
}

double comm_allreduce_max(double v)
{
    return comm_allreduce(v, COMM_MAX);
}

double comm_allreduce_min(double v)
{
    return comm_allreduce(v, COMM_MIN);
}

double comm_allreduce_sum(double v)
{
    return comm_allreduce(v, COMM_SUM);
}
