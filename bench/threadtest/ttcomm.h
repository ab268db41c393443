/* ttcomm.h: threadtest's thread-safe comm layer, one endpoint per thread, on csn or MPI. */
#ifndef TT_COMM_H
#define TT_COMM_H

#include <stddef.h>
#include <stdint.h>

/* One endpoint per thread: a csn transport named "tt.<rank>.<thread>" talking to the
 * transport of the same thread index in the other process, or, on MPI, MPI_COMM_WORLD with
 * the thread index as tag. An endpoint is used by its own thread only; everything else here
 * may be called from any thread unless said otherwise. */
typedef struct tt_ep tt_ep;

/* A caller-owned request slot; opaque holds the backend's handle (MPI_Request). */
typedef struct tt_req {
    void *buf;
    size_t len;      /* send: length; receive: capacity */
    size_t received; /* receive: bytes that arrived */
    int is_send;
    int done;
    uint64_t opaque[2];
} tt_req;

/* Before any thread exists. conn_per_thread asks csn for one connection per transport
 * (it sets CSN_CONN_PER_TRANSPORT=1 before the first csn_open). 0, or prints why and
 * returns non-zero. */
int tt_init(int *argc, char ***argv, int conn_per_thread);
void tt_finalize(void);
int tt_rank(void);
int tt_size(void);
int tt_early_rank(void); /* rank from the launcher's environment, before tt_init; 0 if unknown */
const char *tt_library(void);     /* "csn 0.1.0", "Open MPI v4.1.4, ..." */
const char *tt_transport(void);   /* what carries the messages */
const char *tt_connections(void); /* how threads share the network device */
double tt_wtime(void);            /* seconds, monotonic */
void tt_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

/* Opens this thread's endpoint (all threads of both processes may do so at once) and finds
 * its partner; max_reqs bounds the requests of one tt_waitall. Fails the job on error. */
tt_ep *tt_open(int thread, int max_reqs);
void tt_close(tt_ep *ep);
/* Barrier of the two processes; exactly one thread per process calls it, with its endpoint. */
void tt_barrier(tt_ep *ep);

/* Point-to-point with the partner; failures end the job with a message. */
void tt_isend(tt_ep *ep, const void *buf, size_t len, tt_req *r);
void tt_irecv(tt_ep *ep, void *buf, size_t len, tt_req *r);
void tt_waitall(tt_ep *ep, int n, tt_req *r); /* sets done and, for receives, received */
void tt_send(tt_ep *ep, const void *buf, size_t len);
size_t tt_recv(tt_ep *ep, void *buf, size_t cap); /* returns the length that arrived */

#endif
