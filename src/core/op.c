/* op.c: operations' allocation (a per-transport free list) and send requests. */
#include <sched.h>
#include <stdlib.h>

#include "core/op.h"
#include "core/tport.h"

struct csni_sendreq *csni_sendreq_new(const struct csni_frame *f)
{
    struct csni_sendreq *sr = calloc(1, sizeof *sr);
    if (!sr)
        return NULL;
    sr->heap = true;
    csni_frame_encode(f, sr->hdr);
    return sr;
}

struct csni_op *csni_op_take(csn_transport *t, unsigned max_ops)
{
    struct csni_op *op, **link = &t->free_ops;
    csni_lock_assert_held(&t->lock);
    if (t->nops >= max_ops)
        return NULL;
    /* Skip ops whose request (a CTS) is still owned by a connection's writer; never wait for
     * one here: the writer's progress may need this transport's lock. */
    while (*link && atomic_load_explicit(&(*link)->sr.queued, memory_order_acquire))
        link = &(*link)->next;
    if ((op = *link) != NULL)
        *link = op->next;
    else if (!(op = malloc(sizeof *op)))
        return NULL;
    t->nops++;
    return op;
}

struct csni_op *csni_op_alloc(csn_transport *t, unsigned max_ops)
{
    struct csni_op *op = csni_op_take(t, max_ops);
    if (op)
        csni_op_init(op, t);
    return op;
}

void csni_op_init(struct csni_op *op, csn_transport *t)
{
    /* Every field an op may read before it is set; not the frame bytes. */
    op->next = NULL;
    op->t = t;
    op->kind = 0;
    atomic_init(&op->state, CSNI_ST_FREE);
    op->blocking = false;
    op->status = CSN_OK;
    op->msglen = 0;
    op->token = 0;
    op->pushed = false;
    op->pull_asked = false;
    op->split = false;
    op->refused = CSN_OK;
    op->pp = NULL;
    op->sr.next = NULL;
    op->sr.payload = NULL;
    op->sr.paylen = 0;
    op->sr.off = 0;
    op->sr.op = NULL;
    op->sr.heap = false;
    op->sr.urgent = false;
    op->sr.chunked = false;
    op->sr.sent = 0;
    op->got = 0;
    atomic_init(&op->sr.queued, false);
}

void csni_op_free(csn_transport *t, struct csni_op *op)
{
    csni_lock_assert_held(&t->lock);
    CSNI_ASSERT(t->nops > 0);
    /* relaxed: nobody waits for FREE, and a seq_cst store is a locked exchange, one per
     * completion taken by csn_test (it waited for the last record's line to reach the
     * receiver: BENCHMARKS.md, issue 19). */
    atomic_store_explicit(&op->state, CSNI_ST_FREE, memory_order_relaxed);
    op->next = t->free_ops;
    t->free_ops = op;
    t->nops--;
}

void csni_op_wait_released(struct csni_op *op)
{
    while (atomic_load_explicit(&op->sr.queued, memory_order_acquire))
        sched_yield();
}
