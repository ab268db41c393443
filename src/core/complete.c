/* complete.c: completion of operations, and the deferred wake-up of sleepers. */
#include "core/complete.h"
#include "core/futex.h"
#include "core/state.h"
#include "core/tport.h"

_Thread_local bool csni_polling __attribute__((tls_model("initial-exec")));

/* Wakes t's sleepers: those on its futex, and the poller if it waits for t in epoll. */
static void complete_wake_now(csn_transport *t)
{
    csni_futex_wake(&t->wake_seq);
    if (!csni_polling && atomic_load(&csni_p->prog.poller_t) == t)
        csni_kick_epoll(csni_p);
}

#define COMPLETE_DEFER 16
static _Thread_local struct {
    unsigned depth, n;
    csn_transport *t[COMPLETE_DEFER];
} complete_deferred __attribute__((tls_model("initial-exec")));

void csni_defer_wakes(bool on)
{
    if (on) {
        complete_deferred.depth++;
        return;
    }
    CSNI_ASSERT(complete_deferred.depth > 0);
    if (--complete_deferred.depth > 0)
        return;
    for (unsigned i = 0; i < complete_deferred.n; i++)
        complete_wake_now(complete_deferred.t[i]);
    complete_deferred.n = 0;
}

/* done_seq and wake_seq have moved already (spinners see them at once); the system calls
 * may wait for the end of the reader's batch. Transports are never freed, so a deferred
 * pointer stays valid. */
static void complete_wake_sleepers(csn_transport *t)
{
    if (complete_deferred.depth == 0) {
        complete_wake_now(t);
        return;
    }
    for (unsigned i = 0; i < complete_deferred.n; i++)
        if (complete_deferred.t[i] == t)
            return;
    if (complete_deferred.n == COMPLETE_DEFER) {
        complete_wake_now(t);
        return;
    }
    complete_deferred.t[complete_deferred.n++] = t;
}

void csni_complete(csn_transport *t, struct csni_op *op, csn_status st)
{
    bool blocking = op->blocking;
    if (op->kind == CSNI_OP_RX) {
        csni_complete_rx_result(t, op, st);
    } else {
        if (op->pull_asked)
            atomic_fetch_sub_explicit(&t->pulled_tx, op->len, memory_order_relaxed);
        op->status = st;
    }
    if (blocking) {
        /* A blocking call's op is on no list and lives on its caller's stack: after this
         * store the caller may return. seq_cst pairs with the sleeper's increment of
         * sleepers before its look at the state (csni_wait): one of them sees the other. */
        atomic_store(&op->state, CSNI_ST_DONE);
        if (atomic_load(&t->sleepers) > 0) {
            atomic_fetch_add(&t->wake_seq, 1);
            complete_wake_sleepers(t);
        }
        return;
    }
    csni_lock_assert_held(&t->lock);
    atomic_store_explicit(&op->state, CSNI_ST_DONE, memory_order_relaxed);
    csni_oplist_push(&t->cq, op);
    /* Only holders of t->lock write done_seq: a plain increment loses nothing. A sleeper
     * counts itself in sleepers before it looks at cq under t->lock (csni_wait), so the lock
     * orders the two: either it finds op there, or we see its count here and wake it. No
     * locked instruction: in a stream of small messages each one waited for the record's
     * cache line to reach the polling receiver (BENCHMARKS.md, issue 19). */
    atomic_store_explicit(&t->done_seq,
                          atomic_load_explicit(&t->done_seq, memory_order_relaxed) + 1,
                          memory_order_release);
    if (atomic_load_explicit(&t->sleepers, memory_order_relaxed) > 0) {
        atomic_fetch_add(&t->wake_seq, 1);
        complete_wake_sleepers(t);
    }
}

void csni_complete_unlocked(struct csni_op *op, csn_status st)
{
    csn_transport *t = op->t;
    if (op->blocking) {
        csni_complete(t, op, st);
        return;
    }
    csni_lock(&t->lock);
    csni_complete(t, op, st);
    csni_unlock(&t->lock);
}
