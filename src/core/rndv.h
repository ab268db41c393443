/* rndv.h: the rendezvous half of the protocol: clear-to-send, the DATA that answers it, and,
 * over shared memory, single-copy pulls and split copies (both processes copy at once). */
#ifndef CSNI_RNDV_H
#define CSNI_RNDV_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/conn.h"
#include "core/op.h"

struct csni_unex;

/* A receive op (marked WAIT_DATA, its pp, token and msglen set) matched an RTS that came on
 * rc: answer CTS, or, for a message the sender pushed (CSNI_RTS_PUSHED), post its receive with
 * the fabric provider. op->t's lock held. False (out of memory for a pushed one's receive; op
 * failed): the caller fails rc once it let go of the transport's lock. */
bool csni_rndv_send_cts(struct csni_op *op, uint64_t sender_token, struct csni_conn *rc,
                        bool pushed);
/* A pushed message of len bytes for nobody (its transport closed, or withdrawn) that came on
 * rc: taken into memory of our own and dropped, so that its sender's provider lets go of the
 * buffer (rc fails when memory is short). No transport or peer lock held. */
void csni_rndv_drop_pushed(struct csni_conn *rc, size_t len, uint64_t sender_token);
/* Copies the message straight from the sender's memory (pid, raddr), whose RTS gave its
 * address, then tells the sender (CTS PULLED). The sender gives its address from
 * CSN_SHM_PULL's size on and below CSN_SHM_PULL_MAX's, and for any rendezvous while it has
 * large receives posted itself: both ways at once, where the stream has each CPU copy twice
 * per pair of messages (ours in, the peer's out) and halves when the two CPUs share no cache,
 * while two pulls copy once each, side by side (BENCHMARKS.md, issue 19). split (the caller
 * holds the reader lock of the connection the RTS came on, which the sender's note that ends a
 * split comes on too): from CSN_SHM_SPLIT's size on the sender is asked to write the second
 * part itself. No transport or peer lock held. False when pulls are off (CSN_CMA=0, or the
 * kernel refused), or when it would complete before a receive of pp's that waits for its data
 * (a stream's, or a split's sender part): the caller falls back to csni_rndv_send_cts. */
bool csni_rndv_pull(struct csni_op *op, pid_t pid, uint64_t raddr, uint64_t sender_token,
                    bool split);
/* The RTS of op's message, which gave the sender's memory (pid, raddr), came on rc, whose
 * reader lock the caller holds (the reader's, or taken for this): pulled (csni_rndv_pull), else
 * answered with a CTS that has the sender stream it, both before the lock goes. Let go first, a
 * pull of the sender's next message taken meanwhile would not find op waiting for data and could
 * complete before it. No transport or peer lock held. */
void csni_rndv_take(struct csni_op *op, pid_t pid, uint64_t raddr, uint64_t sender_token,
                    struct csni_conn *rc);
/* As csni_rndv_take, from the reader that read the RTS (rc's reader lock held), which may
 * list the pull in rc's batch instead when it would be made whole (CSN_SHM_PULL_BATCH): the
 * reader pulls the batch in one system call (csni_rndv_pull_batch) before it serves any frame
 * but another RTS, and before it lets go of the lock, so that receives still complete in the
 * order of their messages. No transport or peer lock held. */
void csni_rndv_pull_later(struct csni_op *op, pid_t pid, uint64_t raddr, uint64_t sender_token,
                          struct csni_conn *rc);
/* Pulls the batch of rc (its reader lock held), in one process_vm_readv, then completes the
 * receives in order and answers their senders; nothing when it is empty. */
void csni_rndv_pull_batch(struct csni_conn *rc);
/* A non-blocking receive matched the unexpected RTS u (taken off its transport's list) whose
 * sender's memory can be read: the pull is left for the next poll of any thread (and a
 * sleeper in epoll is woken for it), so that the caller, which did not ask to wait, goes on to
 * post its own transmits at once: two processes posting receives, then transmits, to each
 * other pull at the same time instead of in turn. u is the pull's from now on. No lock held. */
void csni_rndv_defer_pull(struct csni_proc *p, struct csni_unex *u, struct csni_op *op);
/* Runs the deferred pulls, those into t's receives only when t is not NULL (t closing: they
 * land before its close returns, as when a pull was made at posting); true if there were
 * any. No lock held. */
bool csni_rndv_run_pulls(struct csni_proc *p, csn_transport *t);
/* The reader's answers to CTS and DATA headers (c's reader lock held). */
void csni_rndv_on_cts(struct csni_conn *c, const struct csni_frame *f);
void csni_rndv_on_data(struct csni_conn *c, const struct csni_frame *f, struct csni_place *pl);
struct csni_ofi_fab;
/* A message the fabric provider moved itself completed (c's reader lock held): its receive or
 * transmit completes (CSN_PEER_LOST when it failed or came short). */
void csni_rndv_fabric_done(struct csni_conn *c, const struct csni_ofi_fab *d);
/* A DATA chunk of pl's receive is placed (c's reader lock held): the receive completes with
 * its last, and leaves its peer's list only then. */
void csni_rndv_data_placed(struct csni_conn *c, const struct csni_frame *f,
                           const struct csni_place *pl);

#endif
