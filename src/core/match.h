/* match.h: the message protocol: posting transmits and receives, matching messages to
 * receives, and the answer to each frame a connection reads (where its payload goes).
 *
 * A message of at most eager_max bytes for which the sender holds enough eager credit travels
 * as one EAGER frame; any other travels as RTS (no payload), the receiver answers CTS once a
 * receive matches, and the sender then writes the message as DATA frames read straight into
 * the receive buffer (or, over shared memory, the receiver copies it itself: rndv.c). Credit
 * bounds what a receiver must buffer for messages nobody asked for (credit.h). Matching
 * happens when the header arrives, in arrival order, so per-pair FIFO order holds. */
#ifndef CSNI_MATCH_H
#define CSNI_MATCH_H

#include <stdbool.h>

#include "csn.h"
#include "core/conn.h"
#include "core/op.h"
#include "wire/frame.h"

/* Posts op (its kind, peer, buf and len set). tx: sends or queues it; rx: matches it against
 * what arrived or queues it. No lock held. CSN_OK (the op completes, possibly already), or an
 * error before anything was posted (CSN_ILLEGAL_NETID, CSN_NO_HEAP). */
csn_status csni_post_tx(csn_transport *t, struct csni_op *op);
csn_status csni_post_rx(csn_transport *t, struct csni_op *op);
/* csni_post_rx in two parts, so that a caller can take op from t's free list in the same hold
 * of t's lock: src_gone = csni_rx_src_gone(op's peer), before taking t->lock (the table lock
 * comes first); then post_rx_locked with t->lock held, which it releases. */
bool csni_rx_src_gone(csn_netid from);
csn_status csni_post_rx_locked(csn_transport *t, struct csni_op *op, bool src_gone);
/* A small blocking transmit to a process reached over shared memory, written into the ring at
 * once when nothing is queued and credit allows, without an operation; false: nothing was
 * sent, take the general path. t and to must have been checked. */
bool csni_tx_now(csn_transport *t, csn_netid to, const void *buf, size_t len);
/* A thread waiting on t found an EAGER frame for t whole in c's ring (c's reader lock held):
 * place it into the receive it matches and complete that, without the general reader. own:
 * the caller's blocking receive, which must be the one that matches (completed as its
 * owner's); NULL: any (completed the general way, or, res not NULL, handed to csn_test).
 * res: csn_test's result; the receive's completion is written there and its op given back,
 * never queued, when t has no older completion queued. CSNI_MATCH_NONE: not taken, nothing
 * changed; CSNI_MATCH_DONE: completed; CSNI_MATCH_HANDED: completed into res. */
enum { CSNI_MATCH_NONE, CSNI_MATCH_DONE, CSNI_MATCH_HANDED };
int csni_match_direct(struct csni_conn *c, csn_transport *t, struct csni_op *own,
                      struct csni_op *res, const struct csni_frame *f, const uint8_t *payload);

/* ---- the reader's upcalls, made by core/poll.c with c's reader lock held ---- */
/* A header arrived on c: answer where its payload goes (staged: an EAGER payload already
 * wholly in memory, to be copied now). */
void csni_proto_frame(struct csni_conn *c, const struct csni_frame *f, const uint8_t *staged,
                      struct csni_place *pl);
/* The payload of f is placed as pl said. */
void csni_proto_placed(struct csni_conn *c, const struct csni_frame *f,
                       const struct csni_place *pl);
/* The connection failed while pl was being filled. */
void csni_proto_abandon(const struct csni_place *pl);

#endif
