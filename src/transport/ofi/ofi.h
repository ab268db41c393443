/* ofi.h: the libfabric (OFI) link (CSN_TRANSPORT=ofi). A pair's connection keeps its TCP
 * socket for the authenticated HELLO, the exchange of the two endpoints' addresses and death
 * detection; its frames move as messages of a reliable-datagram endpoint of the pair's own
 * (FI_EP_RDM, tagged, send-after-send ordered), served to the connection engine as a byte
 * stream. libfabric is reached only through the dlopened libcsn-ofi.so (ofi_module.h). */
#ifndef CSNI_OFI_H
#define CSNI_OFI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "csn.h"

struct csni_conn;
struct csni_frame;

/* The longest a waiting thread sleeps while the fabric is in use: the tcp provider's wait
 * descriptor (rxm over tcp, libfabric 1.17) misses some arrivals, so a sleeper looks again by
 * itself this often (measured, 8 B ping-pong with every wait sleeping: 22 ms per message with
 * the 100 ms safety nap, 4 ms with 1 ms, csn's TCP 1.7 ms, all at load 60+). */
#define CSNI_OFI_NAP_NS 1000000ull

/* CSN_OFI_RNDV's default: every rendezvous message. The provider's own protocol is 2.5-3.8x
 * the stream's speed from 256 KiB on one host; on the testbed's shaped links it keeps the
 * known answer because each end sends its large messages on a connection it made (core/peer.c,
 * csni_peer_own), whose way back carries only their answers (BENCHMARKS.md, DESIGN.md). */
#define CSNI_OFI_RNDV_DEFAULT 1u
/* CSN_TRANSPORT=ofi: loads the component and opens the provider; rndv_min: CSN_OFI_RNDV (0:
 * never). CSN_OK, or CSN_INVALID_ARGUMENT after one line on stderr. */
csn_status csni_ofi_init(size_t rndv_min);
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
/* ---- Messages the provider moves itself (CSN_OFI_RNDV): a rendezvous's payload goes from
 * the sender's buffer to the receiver's by the provider's own protocol (rxm: its rendezvous,
 * an RMA read), not through the link's stream and its bounce buffers. The receiver posts its
 * receive before its CTS (CSNI_CTS_FABRIC) says so; the sender then sends. Each side's
 * operation completes when its provider says (csni_ofi_fab_take). */
/* What one such message's completion says: a receive (token: the receiver's) or a send
 * (token: the sender's); t: the transport of its operation (NULL: a notice, no operation);
 * len: bytes received; err: 0, ECANCELED (withdrawn) or another errno. */
struct csni_ofi_fab {
    bool rx;
    uint64_t token;
    void *t;
    size_t len;
    int err;
};
/* Rendezvous messages from this many bytes on go that way; 0: none do (not asked for, which
 * is the default, or the provider needs registered memory). */
size_t csni_ofi_rndv_min(void);
/* Posts the receive of len bytes into buf (the provider's until its completion), for the
 * sender's csni_ofi_fab_send with rtoken == token. False: not posted (out of memory or room);
 * answer with an ordinary CTS. Not blocking; any lock may be held (fab_lock and the
 * provider's are leaves). */
bool csni_ofi_fab_recv(struct csni_conn *c, void *buf, size_t len, uint64_t token, void *t);
/* Sends len bytes of buf (the provider's until its completion) to the receive posted with
 * rtoken; the send's completion carries token. buf NULL, len 0, t NULL: a notice that fails
 * that receive (our transmit is gone). False only when out of memory. Not blocking. */
bool csni_ofi_fab_send(struct csni_conn *c, const void *buf, size_t len, uint64_t rtoken,
                       uint64_t token, void *t);
/* A pushed rendezvous (CSNI_RTS_PUSHED). The sender hands len bytes of buf to the provider
 * before the receiver asks, tagged with its token (the send's completion carries it too);
 * false: not sent (no peer address yet, the link failed, OFI_PUSH_MAX of its sends under way,
 * out of memory): send an ordinary RTS. The receiver, once it matched the RTS, posts its
 * receive of the msglen-byte message the sender pushed with stoken; buf has room for room
 * bytes (fewer: the head goes there, the completion's len says room). A message for nobody
 * (its transport closed, or its sender withdrew it) is taken and dropped (csni_ofi_fab_drop),
 * so that the sender's provider lets go of its buffer. False: out of memory. Not blocking;
 * any lock may be held. */
bool csni_ofi_fab_push(struct csni_conn *c, const void *buf, size_t len, uint64_t token, void *t);
bool csni_ofi_fab_recv_pushed(struct csni_conn *c, void *buf, size_t room, size_t msglen,
                              uint64_t stoken, uint64_t token, void *t);
bool csni_ofi_fab_drop(struct csni_conn *c, size_t msglen, uint64_t stoken);
/* Completions found so far (at most n, the oldest not first): their count. Reader lock held. */
int csni_ofi_fab_take(struct csni_conn *c, struct csni_ofi_fab *out, int n);
/* Withdraws c's posted receives of transport t (all of them when t is NULL): each completes
 * with ECANCELED, or as it would have when already under way. Not blocking. */
void csni_ofi_fab_cancel(struct csni_conn *c, const void *t);
/* Drives c's provider once; whether it still holds a message of transport t (its buffer),
 * unless c failed. Reader lock held (the writer's is taken here). Not blocking. */
bool csni_ofi_fab_busy(struct csni_conn *c, const void *t);
/* Before a thread sleeps (see csni_conn_arm): 1 work is there, 0 may sleep. Reader lock held. */
int csni_ofi_arm(struct csni_conn *c);

#endif
