/* comm.h: the thin communication layer under the benchmarks, so one source builds on csn and on
 * MPI. */
#ifndef BENCH_COMM_H
#define BENCH_COMM_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* A request is a caller-owned slot; its content belongs to the backend (comm_csn.c or
 * comm_mpi.c). Arrays of requests are plain C arrays. */
typedef struct comm_req {
    void *buf;   /* the operation's buffer */
    size_t len;  /* posted length; after completion of a receive: bytes received */
    int peer;    /* send: destination rank; receive: requested source (-1 any), then actual */
    int is_send; /* 1 send, 0 receive */
    int done;    /* set by the backend when complete */
    int status;  /* 0 ok, otherwise a backend error (overrun, peer lost) */
    uint64_t opaque[4]; /* backend state (MPI_Request, ...) */
} comm_req;

int comm_init(int *argc, char ***argv); /* 0 on success; prints the reason otherwise */
void comm_finalize(void);
int comm_rank(void);
int comm_size(void);
double comm_wtime(void); /* seconds, monotonic */
void comm_barrier(void);
void comm_abort(int code, const char *fmt, ...); /* prints "RANK n: msg" to stderr, ends the job */
void comm_report(int rank, const char *fmt, va_list ap); /* the line comm_abort prints (backends) */
const char *comm_library(void);                          /* e.g. "csn 0.1.0" or "Open MPI 4.1.4" */
const char *comm_transport(void); /* e.g. "shm", "tcp", "shm within hosts, tcp between", "vader" */
const char *comm_hostname(void);                         /* this process's host name */

/* Checks peer (aborts the job on a bad rank) and fills r for a new operation (both backends). */
void comm_req_setup(comm_req *r, void *buf, size_t len, int peer, int is_send);

/* Non-blocking point-to-point. peer is a rank; for receives -1 means any source.
 * Each returns 0 or aborts the job with a clear message. */
int comm_isend(const void *buf, size_t len, int dst, comm_req *r);
int comm_irecv(void *buf, size_t len, int src, comm_req *r);
int comm_waitall(int n, comm_req *r);                /* completes all n (done ones are skipped) */
int comm_waitany(int n, comm_req *r, int *index);    /* completes one not-yet-done request */
int comm_test(comm_req *r);                          /* 1 if r is complete (progresses), else 0 */
int comm_send(const void *buf, size_t len, int dst); /* blocking */
int comm_recv(void *buf, size_t len, int src, size_t *received, int *from); /* blocking */

/* Collectives the reports need (small data, not timed). */
double comm_allreduce_max(double v);
double comm_allreduce_min(double v);
double comm_allreduce_sum(double v);
void comm_gather_double(double v, double *all);              /* all[size] valid on rank 0 */
void comm_gather_str(const char *s, char *all, size_t each); /* all[size*each] on rank 0 */
void comm_bcast_int(int *v, int n);                          /* from rank 0 */

/* Additions (after the first version; the functions above are unchanged). */
void comm_gather_doubles(const double *v, int n,
                         double *all);      /* all[size*n], rank-major, on rank 0 */
size_t comm_max_len(void);                  /* largest message the backend can move in one call */
const char *comm_status_string(int status); /* text of a comm_req.status */

#endif
