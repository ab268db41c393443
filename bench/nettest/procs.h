/* procs.h: the six timed test procedures of nettest (seed 001) over the bench comm layer. */
#ifndef NETTEST_PROCS_H
#define NETTEST_PROCS_H

#include <stddef.h>

#include "comm.h"
#include "nettest.h"

/* What one rank needs to run the procedures. Buffers are indexed by peer rank: sbuf[j]
 * holds what this rank sends to j, rbuf[j] what it receives from j (both of at least len
 * bytes; NULL for a rank that is never a neighbour). rlen[j] is set to the length received
 * from j. req holds room for 2*np requests, nb for np ranks. */
struct nt_ctx {
    int me, np;
    size_t len;
    unsigned char **sbuf, **rbuf;
    size_t *rlen;
    comm_req *req;
    int *nb;
    enum nt_test test; /* for error messages */
};

/* One iteration of test t as the seed describes it: barrier, t0, the exchange, barrier, t1.
 * Returns t1 - t0 in seconds. A failed operation aborts the job with a clear message. */
double nt_iteration(struct nt_ctx *c, enum nt_test t);

#endif
