/* ofi.h: the libfabric (OFI) link (CSN_TRANSPORT=ofi). A pair's connection keeps its TCP
 * socket for the authenticated HELLO, the exchange of the two endpoints' addresses and death
 * detection; its frames move as messages of a reliable-datagram endpoint of the pair's own
 * (FI_EP_RDM, tagged, send-after-send ordered), served to the connection engine as a byte
 * stream. libfabric is reached only through the dlopened libcsn-ofi.so (ofi_module.h). */
#ifndef CSNI_OFI_H
#define CSNI_OFI_H

#include <stdbool.h>
#include <stdint.h>

#include "csn.h"

struct csni_conn;
struct csni_frame;

/* The longest a waiting thread sleeps while the fabric is in use: the tcp provider's wait
 * descriptor (rxm over tcp, libfabric 1.17) misses some arrivals, so a sleeper looks again by
 * itself this often (measured, 8 B ping-pong with every wait sleeping: 22 ms per message with
 * the 100 ms safety nap, 4 ms with 1 ms, csn's TCP 1.7 ms, all at load 60+). */
#define CSNI_OFI_NAP_NS 1000000ull

/* CSN_TRANSPORT=ofi: loads the component and opens the provider. CSN_OK, or
 * CSN_INVALID_ARGUMENT after one line on stderr. */
csn_status csni_ofi_init(void);
/* Whether the process moves its data over ofi (csni_ofi_init succeeded). */
bool csni_ofi_on(void);
/* "ofi:PROVIDER" */
const char *csni_ofi_name(void);
/* The HELLO nonce of a connection without rings: marks an ofi connection (its address
 * follows the HELLO on the socket). */
uint64_t csni_ofi_hello_nonce(void);
bool csni_ofi_hello_is_ofi(const struct csni_frame *f);
/* The connecting side, after its HELLO: opens the pair's endpoint, sends its address, makes c
 * an ofi link. 0, or -1 (nothing left behind). */
int csni_ofi_connect(struct csni_conn *c);
/* The accepting side, bound (reader lock held): takes the peer's address after the HELLO,
 * opens the endpoint, answers with its address, makes c an ofi link. 0, or -1 with *why. */
int csni_ofi_accept(struct csni_conn *c, const char **why);
/* The connection failed: its endpoint's descriptor leaves the epoll set, its name outside
 * the process (the shm provider's file) goes; the endpoint stays till exit. */
void csni_ofi_fail(struct csni_conn *c);
/* A connection that never got going (csni_conn_new failed after csni_ofi_connect). */
void csni_ofi_drop(struct csni_conn *c);
/* Before a thread sleeps (see csni_conn_arm): 1 work is there, 0 may sleep. Reader lock held. */
int csni_ofi_arm(struct csni_conn *c);

#endif
