/* csn.h: the public C API of libcsn, the Meiko CSN message-passing interface (CONTRACT.md section
 * 1). */
#ifndef CSN_H
#define CSN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(CSN_BUILDING) && defined(__GNUC__)
#define CSN_API __attribute__((visibility("default")))
#else
#define CSN_API
#endif

typedef struct csn_transport csn_transport; /* opaque; one endpoint, usually one per thread */
typedef uint64_t csn_netid;                 /* names one transport anywhere in the job */
#define CSN_NULL_NETID ((csn_netid)0)
#define CSN_FOREVER UINT64_MAX /* csn_test timeout: wait until something completes */

typedef enum csn_status {
    CSN_OK = 0,
    CSN_TX_READY,                /* csn_test: a transmit completed */
    CSN_RX_READY,                /* csn_test: a receive completed */
    CSN_TIMEOUT,                 /* csn_test: nothing completed within the timeout */
    CSN_NO_HEAP,                 /* out of memory */
    CSN_ILLEGAL_NETID,           /* netid names no transport of this job */
    CSN_UNINITIALISED_TRANSPORT, /* NULL or closed transport */
    CSN_NAME_TAKEN,              /* csn_register_name: another live transport holds the name */
    CSN_OVERRUN,                 /* message longer than the receive buffer */
    CSN_BUSY,                    /* too many outstanding operations; retry after csn_test */
    CSN_NOT_FOUND,               /* csn_lookup_name gave up after the lookup timeout */
    CSN_PEER_LOST,               /* the peer transport's process died or closed */
    CSN_INVALID_ARGUMENT,        /* NULL pointer, bad flags, over-long name, ... */
    CSN_SYSTEM_ERROR             /* a system call failed; errno tells which */
} csn_status;

enum { CSN_TX = 1u << 0, CSN_RX = 1u << 1 }; /* flags for csn_test */

CSN_API csn_status csn_open(csn_transport **t);
CSN_API csn_status csn_close(csn_transport **t); /* sets *t to NULL; drops its names */
CSN_API csn_status csn_register_name(csn_transport *t, const char *name);
CSN_API csn_status csn_lookup_name(csn_netid *id, const char *name);
CSN_API csn_status csn_tx(csn_transport *t, csn_netid to, const void *buf, size_t len);
CSN_API csn_status csn_rx(csn_transport *t, csn_netid *from, void *buf, size_t len,
                          size_t *received);
CSN_API csn_status csn_tx_nb(csn_transport *t, csn_netid to, const void *buf, size_t len);
CSN_API csn_status csn_rx_nb(csn_transport *t, void *buf, size_t len, size_t *received);
CSN_API csn_status csn_test(csn_transport *t, unsigned flags, uint64_t timeout_us, csn_netid *id,
                            void **buf, csn_status *op_status);
CSN_API const char *csn_status_string(csn_status s);

/* Job helpers (beyond the nine calls). */
CSN_API int csn_job_rank(void); /* this process's rank in the job, 0..size-1 */
/* Number of processes in the job: 1 when not launched, and where this process cannot join
 * its job (csn_open then fails and says why). */
CSN_API int csn_job_size(void);
CSN_API csn_status csn_job_barrier(csn_transport *t); /* all ranks, each with one transport */

/* Extensions (not in CONTRACT.md; may grow). */
/* csn_rx_nb accepting only from one transport (CSN_NULL_NETID: any), as csn_rx does. */
CSN_API csn_status csn_rx_nb_from(csn_transport *t, csn_netid from, void *buf, size_t len,
                                  size_t *received);
CSN_API csn_netid csn_netid_of(const csn_transport *t); /* the netid of one's own transport */
CSN_API int csn_netid_rank(csn_netid id);               /* rank of the process owning id, or -1 */
CSN_API const char *csn_transport_name(void); /* intra-host transport in use: "unix", "tcp", ... */
CSN_API const char *csn_version(void);
/* The netid of rank's first transport (the first csn_open of that process), computed without
 * a lookup: SPMD programs get every rank's address from this instead of one name lookup per
 * rank. A transmit to a transport that does not exist yet fails with CSN_ILLEGAL_NETID, so
 * use it once the transport surely exists, e.g. after csn_job_barrier (each rank passing its first
 * transport). CSN_NULL_NETID when rank is not in 0..csn_job_size()-1. */
CSN_API csn_netid csn_job_netid(int rank);
/* The transport that messages between ranks a and b take: "self" when a == b, the intra-host
 * transport (as csn_transport_name()) when both run on one host, else the one between hosts
 * ("tcp"). Reads the two ranks' published addresses (waiting for them as for a name, each
 * read once per process), except in a job whose ranks all run on this host. NULL when a or
 * b is not in 0..csn_job_size()-1 or its address cannot be had. */
CSN_API const char *csn_job_transport(int a, int b);

#ifdef __cplusplus
}
#endif
#endif
