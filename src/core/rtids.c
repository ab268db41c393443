/* rtids.c: what this process knows of a peer's transport ids (see rtids.h). */
#include <stdlib.h>

#include "core/complete.h"
#include "core/rtids.h"

/* Asks pp question gen (the transmits it covers are marked with it). When it cannot be sent
 * (pp lost: its loss fails what is held; or out of memory), nothing would answer: what is
 * held fails here. */
static void rtid_ask(struct csni_peer *pp, uint64_t gen)
{
    struct csni_frame q = csni_frame_tids(CSNI_TIDS_QUERY, 0, gen);
    if (csni_peer_send_frame(pp, &q))
        return;
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
}

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
    bool ask = !pp->asked;
    uint64_t gen = ask ? ++pp->asked_gen : 0;
    op->token = gen;
    csni_oplist_push(&pp->wait_tids, op);
    pp->asked = true;
    csni_unlock(&pp->lock);
    if (ask)
        rtid_ask(pp, gen);
    return true;
}

struct csni_op *csni_rtid_answer(struct csni_peer *pp, uint32_t n, uint64_t gen,
                                 struct csni_op **refused)
{
    struct csni_oplist go = {NULL, NULL}, no = {NULL, NULL};
    uint64_t ask = 0;
    csni_lock(&pp->lock);
    for (struct csni_op *op = pp->wait_tids.head, *prev = NULL, *next; op; op = next) {
        next = op->next;
        uint32_t tid = csni_netid_tid(op->peer);
        enum csni_rtid st = csni_rtid_state(pp, tid);
        if (st == CSNI_RTID_GONE)
            op->status = CSN_PEER_LOST;
        else if (tid >= n && gen != 0 && op->token == gen)
            op->status = CSN_ILLEGAL_NETID; /* not there when pp answered, asked after op */
        else if (tid >= n) {
            prev = op; /* to an id pp may have handed out after answering: asked again */
            continue;
        }
        csni_oplist_unlink(&pp->wait_tids, prev, op);
        csni_oplist_push(tid < n && st != CSNI_RTID_GONE ? &go : &no, op);
    }
    if (go.head || no.head) {
        atomic_fetch_add(&pp->releasing, 1);
    } else {
        /* Published only now, and not while another answer (an unasked count, on another
         * connection) is still sending held transmits: a transmit that sees n leaves after
         * the held ones. That answer publishes its own count when done. */
        if (atomic_load(&pp->releasing) == 0 &&
            n > atomic_load_explicit(&pp->tids, memory_order_relaxed))
            atomic_store_explicit(&pp->tids, n, memory_order_release);
        if (gen != 0 && gen == pp->asked_gen)
            pp->asked = false; /* our question is answered */
        if (!pp->asked && pp->wait_tids.head) {
            ask = ++pp->asked_gen;
            for (struct csni_op *op = pp->wait_tids.head; op; op = op->next)
                op->token = ask;
            pp->asked = true;
        }
    }
    csni_unlock(&pp->lock);
    if (ask)
        rtid_ask(pp, ask);
    *refused = no.head;
    return go.head;
}

void csni_rtid_released(struct csni_peer *pp)
{
    atomic_fetch_sub(&pp->releasing, 1);
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
