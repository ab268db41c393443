/* complete.h: completion of operations and the wake-up of the threads waiting for them. */
#ifndef CSNI_COMPLETE_H
#define CSNI_COMPLETE_H

#include <stdbool.h>

#include "csn.h"
#include "core/op.h"
#include "core/tport.h"

/* Completes op with st (CSN_OK, CSN_OVERRUN is derived for a receive, CSN_PEER_LOST,
 * CSN_UNINITIALISED_TRANSPORT at close): a non-blocking op goes on t's completion queue, a
 * blocking call's op is only marked done. t->lock held (not needed for a blocking op). */
void csni_complete(csn_transport *t, struct csni_op *op, csn_status st);
/* The same, taking op's transport lock when it needs it: the caller holds no transport lock. */
void csni_complete_unlocked(struct csni_op *op, csn_status st);
/* A receive's result, as its completion reports it: the bytes it got (*received), its status
 * (CSN_OVERRUN derived from a longer message; CSN_PEER_LOST: nothing got) and the end of its
 * count among t's large receives. Not its state, not a queue: csni_complete, and the direct
 * path that hands a message to its waiter (core/match.c), go on from here. */
static inline void csni_complete_rx_result(csn_transport *t, struct csni_op *op, csn_status st)
{
    size_t got = csni_op_deliver(op);
    if (op->large)
        atomic_fetch_sub_explicit(&t->large_rx, 1, memory_order_relaxed);
    if (st == CSN_OK && op->msglen > op->len)
        st = CSN_OVERRUN;
    if (st == CSN_PEER_LOST)
        got = 0;
    if (op->received)
        *op->received = got;
    op->status = st;
}

/* csn_test takes op's completion (t->lock held, op on no list): its result goes to res, op back
 * to t's free list. */
static inline void csni_complete_hand(csn_transport *t, struct csni_op *op, struct csni_op *res)
{
    res->peer = op->peer;
    res->buf = op->buf;
    res->status = op->status;
    res->kind = op->kind;
    csni_op_free(t, op);
}

/* t's completion queue was found empty (t->lock held): notes the done_seq it was empty at
 * (csn_transport.empty_seq), storing only when that changed. */
static inline void csni_cq_note_empty(csn_transport *t)
{
    uint32_t seq = atomic_load_explicit(&t->done_seq, memory_order_relaxed);
    if (atomic_load_explicit(&t->empty_seq, memory_order_relaxed) != seq)
        atomic_store_explicit(&t->empty_seq, seq, memory_order_relaxed);
}

/* Between csni_defer_wakes(true) and (false) (nestable), futex wake-ups of sleepers are
 * collected and made once per transport at the end: a burst for a thread costs one wake-up. */
void csni_defer_wakes(bool on);

/* This thread is the poller (it waits in epoll for the process: a wake-up of its transport
 * needs no kick). initial-exec: no __tls_get_addr call on hot paths. */
extern _Thread_local bool csni_polling __attribute__((tls_model("initial-exec")));

#endif
