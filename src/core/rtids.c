/* rtids.c: what this process knows of a peer's transport ids (see rtids.h). */
#include <stdlib.h>

#include "core/complete.h"
#include "core/rtids.h"

bool csni_rtid_hold(struct csni_peer *pp, struct csni_op *op, uint32_t tid)
{
    csni_lock(&pp->lock);
    if (pp->lost) {
        csni_unlock(&pp->lock);
        csni_complete_unlocked(op, CSN_PEER_LOST);
        return true;
    }
    if (csni_rtid_state(pp, tid) != CSNI_RTID_UNKNOWN) {
        csni_unlock(&pp->lock); /* the answer came meanwhile */
        return false;
    }
    csni_oplist_push(&pp->wait_tids, op);
    bool ask = !pp->asked;
    pp->asked = true;
    csni_unlock(&pp->lock);
    if (!ask)
        return true;
    struct csni_frame q = csni_frame_tids(CSNI_TIDS_QUERY, 0);
    if (csni_peer_send_frame(pp, &q))
        return true;
    /* Lost (its loss fails what is held) or out of memory: nothing will answer. */
    csni_lock(&pp->lock);
    struct csni_op *held = pp->lost ? NULL : pp->wait_tids.head;
    if (held) {
        pp->wait_tids.head = pp->wait_tids.tail = NULL;
        pp->asked = false;
    }
    csni_unlock(&pp->lock);
    for (struct csni_op *n; held; held = n) {
        n = held->next;
        csni_complete_unlocked(held, CSN_NO_HEAP);
    }
    return true;
}

struct csni_op *csni_rtid_answer(struct csni_peer *pp, uint32_t n)
{
    csni_lock(&pp->lock);
    struct csni_op *held = pp->wait_tids.head;
    pp->wait_tids.head = pp->wait_tids.tail = NULL;
    if (!held) {
        /* Published only now: a transmit that sees n sent directly comes after the held ones. */
        if (n > atomic_load_explicit(&pp->tids, memory_order_relaxed))
            atomic_store_explicit(&pp->tids, n, memory_order_release);
        pp->asked = false;
    }
    csni_unlock(&pp->lock);
    return held;
}

void csni_rtid_gone(struct csni_peer *pp, uint32_t tid)
{
    if (tid >= CSNI_GONE_TIDS || tid == CSNI_SYS_TPORT)
        return;
    csni_lock(&pp->lock);
    _Atomic uint64_t *g = atomic_load_explicit(&pp->gone, memory_order_relaxed);
    if (!g && (g = calloc(CSNI_GONE_TIDS / 64, sizeof *g)) != NULL)
        atomic_store_explicit(&pp->gone, g, memory_order_release); /* kept for pp's life */
    if (g)
        atomic_fetch_or_explicit(&g[tid / 64], (uint64_t)1 << (tid % 64), memory_order_relaxed);
    csni_unlock(&pp->lock);
}
