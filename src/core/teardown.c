/* teardown.c: the end of a peer process (every operation involving it fails) and of a
 * transport (everything of it is cancelled and handed back). */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/complete.h"
#include "core/conn.h"
#include "core/credit.h"
#include "core/netid.h"
#include "core/peer.h"
#include "core/rndv.h"
#include "core/rtids.h"
#include "core/state.h"
#include "core/teardown.h"
#include "core/tport.h"
#include "transport/ofi/ofi.h"

/* Moves the ops of l for which keep() is false onto *out (the list owner's lock held). */
static void teardown_take(struct csni_oplist *l, csn_transport *t, struct csni_op **out)
{
    for (struct csni_op *op = l->head, *prev = NULL, *n; op; op = n) {
        n = op->next;
        if (t && op->t != t) {
            prev = op;
            continue;
        }
        csni_oplist_unlink(l, prev, op);
        op->next = *out;
        *out = op;
    }
}

static void teardown_fail_all(struct csni_op *ops, csn_status st)
{
    for (struct csni_op *n; ops; ops = n) {
        n = ops->next;
        csni_complete_unlocked(ops, st);
    }
}

/* One-source receives from pp (from its transport tid only, unless tid is UINT32_MAX), and,
 * for the whole process, rendezvous announcements it can no longer serve, on t (t->lock
 * held). */
static void teardown_lost_on(struct csni_proc *p, csn_transport *t, struct csni_peer *pp,
                             uint32_t tid)
{
    for (struct csni_op *op = t->posted.head, *prev = NULL, *n; op; op = n) {
        n = op->next;
        if (op->peer != CSN_NULL_NETID && csni_netid_rank(op->peer) == pp->proc &&
            (tid == UINT32_MAX || csni_netid_tid(op->peer) == tid)) {
            csni_oplist_unlink(&t->posted, prev, op);
            csni_complete(t, op, CSN_PEER_LOST);
        } else {
            prev = op;
        }
    }
    if (tid != UINT32_MAX)
        return;
    for (struct csni_unex *u = t->ux.head, *up = NULL, *n; u; u = n) {
        n = u->next;
        if (u->pp == pp && (u->kind == CSNI_UX_RTS || !u->complete)) {
            csni_ux_unlink(&t->ux, up, u);
            if (u->rxop)
                csni_complete(t, u->rxop, CSN_PEER_LOST);
            if (u->kind == CSNI_UX_EAGER)
                csni_pool_put(&p->store, u->data, u->len);
            csni_unex_free(&p->store, u);
        } else {
            up = u;
        }
    }
}

/* teardown_lost_on over every transport of ours. */
static void teardown_lost_on_all(struct csni_proc *p, struct csni_peer *pp, uint32_t tid)
{
    csni_table_rdlock(&p->tab);
    for (uint32_t i = 0; i < csni_table_size(&p->tab); i++) {
        csn_transport *t = csni_table_at(&p->tab, i);
        if (!t)
            continue;
        csni_lock(&t->lock);
        teardown_lost_on(p, t, pp, tid);
        csni_unlock(&t->lock);
    }
    csni_table_unlock(&p->tab);
}

void csni_peer_lost(struct csni_proc *p, struct csni_peer *pp)
{
    struct csni_op *ops = NULL;
    csni_lock(&pp->lock);
    if (pp->lost) {
        csni_unlock(&pp->lock);
        return;
    }
    pp->lost = true;
    atomic_fetch_add(&p->peers.nlost, 1);
    teardown_take(&pp->wait_cts, NULL, &ops);
    teardown_take(&pp->wait_data, NULL, &ops);
    teardown_take(&pp->wait_tids, NULL, &ops);
    csni_unlock(&pp->lock);
    atomic_store_explicit(&pp->ready, true, memory_order_release);
    teardown_fail_all(ops, CSN_PEER_LOST);
    teardown_lost_on_all(p, pp, UINT32_MAX);
}

void csni_peer_tport_gone(struct csni_proc *p, struct csni_peer *pp, uint32_t tid)
{
    if (tid >= CSNI_GONE_TIDS || tid == CSNI_SYS_TPORT)
        return; /* not remembered either (csni_rtid_gone): later receives would wait too */
    atomic_fetch_add(&p->peers.ngone, 1);
    teardown_lost_on_all(p, pp, tid);
}

/* Our transmits parked with other transports of this process point into our caller's
 * buffers: withdraw them onto *gone. */
static void teardown_withdraw_self(struct csni_proc *p, csn_transport *t, struct csni_op **gone)
{
    csni_table_rdlock(&p->tab);
    for (uint32_t i = 0; i < csni_table_size(&p->tab); i++) {
        csn_transport *d = csni_table_at(&p->tab, i);
        if (!d)
            continue;
        csni_lock(&d->lock);
        for (struct csni_unex *u = d->ux.head, *up = NULL, *n; u; u = n) {
            n = u->next;
            if (u->kind == CSNI_UX_SELF && u->txop->t == t) {
                csni_ux_unlink(&d->ux, up, u);
                u->txop->next = *gone;
                *gone = u->txop;
                csni_unex_free(&p->store, u);
            } else {
                up = u;
            }
        }
        csni_unlock(&d->lock);
    }
    csni_table_unlock(&p->tab);
}

/* An unexpected message held for a closing transport is let go of: buffers back, credit back,
 * a rendezvous sender told, a parked transmit of ours onto *deferred. */
static void teardown_drop_unex(struct csni_proc *p, struct csni_unex *u, struct csni_op **deferred)
{
    switch (u->kind) {
    case CSNI_UX_EAGER:
        csni_pool_put(&p->store, u->data, u->len);
        if (!u->pp)
            atomic_fetch_sub(&p->store.self_bytes, u->len);
        else if (u->complete)
            csni_credit_return(u->pp, csni_credit_cost(u->len), p->tun.window);
        break;
    case CSNI_UX_SELF:
        u->txop->next = *deferred;
        *deferred = u->txop;
        break;
    case CSNI_UX_RTS: {
        struct csni_frame g = csni_frame_cts(CSNI_CTS_GONE, 0, u->token, 0);
        (void)csni_peer_send_frame(u->pp, &g); /* lost: its transmit fails with it */
        if (u->pushed)
            csni_rndv_drop_pushed(u->conn, u->len, u->token);
        break;
    }
    }
    csni_unex_free(&p->store, u);
}

struct csni_op *csni_tport_unhold(struct csni_proc *p, csn_transport *t)
{
    struct csni_op *held = NULL;

    csni_mutex_lock(&p->peers.lock);
    struct csni_peer *peers = p->peers.list;
    csni_mutex_unlock(&p->peers.lock);
    for (struct csni_peer *pp = peers; pp; pp = pp->next) {
        csni_lock(&pp->lock);
        teardown_take(&pp->wait_tids, t, &held);
        csni_unlock(&pp->lock);
    }
    /* Those an answer took just before are being sent (match_on_tids): once it is done they
     * are frames on their way, which the caller waits for with the others. */
    for (struct csni_peer *pp = peers; pp; pp = pp->next)
        while (atomic_load(&pp->releasing) > 0)
            sched_yield();
    return held;
}

/* Whether an op of t that asked pp to pull it is unanswered (pp's lock held). */
static bool teardown_pull_pending(const struct csni_peer *pp, const csn_transport *t)
{
    for (const struct csni_op *op = pp->wait_cts.head; op; op = op->next)
        if (op->t == t && op->pull_asked)
            return true;
    return false;
}

bool csni_tport_unpull(struct csni_proc *p, csn_transport *t)
{
    if (atomic_load_explicit(&t->pulled_tx, memory_order_relaxed) == 0)
        return false; /* none asked to be pulled */
    csni_mutex_lock(&p->peers.lock);
    struct csni_peer *peers = p->peers.list;
    csni_mutex_unlock(&p->peers.lock);
    bool any = false;
    for (struct csni_peer *pp = peers; pp; pp = pp->next) {
        /* Requests with no op may be sent under the peer lock (core/conn.h). One short of
         * memory stays unanswered: close waits its 5 s for it. */
        csni_lock(&pp->lock);
        for (const struct csni_op *op = pp->wait_cts.head; op && pp->conn && !pp->lost;
             op = op->next) {
            if (op->t != t || !op->pull_asked)
                continue;
            struct csni_frame w =
                csni_frame_rts_withdrawn(csni_netid_tid(op->peer), t->tid, op->token);
            struct csni_sendreq *sr = csni_sendreq_new(&w);
            if (sr)
                csni_conn_send(pp->conn, sr);
            any = true;
        }
        csni_unlock(&pp->lock);
    }
    return any;
}

bool csni_tport_pull_pending(struct csni_proc *p, csn_transport *t)
{
    csni_mutex_lock(&p->peers.lock);
    struct csni_peer *peers = p->peers.list;
    csni_mutex_unlock(&p->peers.lock);
    bool pending = false;
    for (struct csni_peer *pp = peers; pp && !pending; pp = pp->next) {
        csni_lock(&pp->lock);
        pending = !pp->lost && teardown_pull_pending(pp, t);
        csni_unlock(&pp->lock);
    }
    return pending;
}

/* How long a closing transport waits for the fabric provider to give back its buffers. */
#define TEARDOWN_FABRIC_NS (5 * 1000000000ull)

/* t's messages with a fabric provider (off the peers' lists now, so no new one starts): its
 * receives are withdrawn, its transmits finish; until then the provider holds the user's
 * buffers, which are the caller's again when close returns. */
static void teardown_fabric_quiesce(struct csni_proc *p, csn_transport *t)
{
    uint64_t until = csni_now_ns() + TEARDOWN_FABRIC_NS;
    bool cancel = true, busy = true;
    while (busy) {
        busy = false;
        for (struct csni_conn *c = csni_conns_first(&p->conns); c; c = c->next) {
            if (!c->ofi)
                continue;
            csni_conn_rx_lock(c);
            if (cancel)
                csni_ofi_fab_cancel(c, t);
            busy |= csni_ofi_fab_busy(c, t);
            csni_conn_rx_unlock(c);
        }
        cancel = false;
        if (busy && csni_now_ns() > until) {
            fprintf(stderr,
                    "csn[%d]: close: the fabric provider still holds buffers of the "
                    "transport after %llu s\n",
                    p->me, TEARDOWN_FABRIC_NS / 1000000000ull);
            return;
        }
        if (busy)
            sched_yield();
    }
}

void csni_tport_drain(struct csni_proc *p, csn_transport *t, struct csni_op *held)
{
    struct csni_op *deferred = NULL, *gone = held;

    csni_mutex_lock(&p->peers.lock);
    struct csni_peer *peers = p->peers.list;
    csni_mutex_unlock(&p->peers.lock);
    /* Pulls a non-blocking receive of t left for later land now, as they would have at its
     * posting. */
    (void)csni_rndv_run_pulls(p, t);
    /* Readers filling t's buffers switch to discarding; the receives they were filling are
     * cancelled with the others. */
    csni_conns_cancel(p, t, &gone);
    /* Our transmits and receives parked with peers. */
    struct csni_frame note = csni_frame_tids(CSNI_TIDS_GONE, t->tid, 0);
    for (struct csni_peer *pp = peers; pp; pp = pp->next) {
        struct csni_op *before = gone;
        csni_lock(&pp->lock);
        teardown_take(&pp->wait_cts, t, &gone);
        struct csni_op *sends = gone;
        teardown_take(&pp->wait_data, t, &gone);
        bool tell = pp->conn && !pp->lost;
        csni_unlock(&pp->lock);
        /* Messages we pushed that the receiver may not have matched: withdrawn, so that it
         * takes them (the provider holds our buffers until it does: the wait below). */
        for (struct csni_op *op = sends; tell && op != before; op = op->next)
            if (op->pushed) {
                struct csni_frame w = csni_frame_rts_withdrawn(csni_netid_tid(op->peer), t->tid,
                                                               op->token);
                (void)csni_peer_send_frame(pp, &w); /* lost: so is the peer */
            }
        /* Its senders learn that t is gone: their later transmits fail at once (PEER_LOST)
         * instead of being dropped on arrival. */
        if (tell)
            (void)csni_peer_send_frame(pp, &note); /* lost or short of memory: harmless */
    }
    teardown_fabric_quiesce(p, t);
    teardown_withdraw_self(p, t, &gone);
    /* Unexpected messages held for t. */
    csni_lock(&t->lock);
    struct csni_unex *ux = t->ux.head;
    t->ux.head = t->ux.tail = NULL;
    for (struct csni_unex *u = ux; u; u = u->next)
        if (u->rxop) { /* a receive waiting for this message's payload */
            u->rxop->next = gone;
            gone = u->rxop;
            u->rxop = NULL;
        }
    /* Every cancelled or unclaimed operation goes back to t's free list (it stays with the
     * structure, which is reused, never freed); a blocking call's (another thread's, on its
     * stack) returns CSN_UNINITIALISED_TRANSPORT. */
    struct csni_op *lists[3] = {t->posted.head, t->cq.head, gone};
    for (int i = 0; i < 3; i++)
        for (struct csni_op *op = lists[i], *n; op; op = n) {
            n = op->next;
            if (op->blocking)
                csni_complete(t, op, CSN_UNINITIALISED_TRANSPORT);
            else
                csni_op_free(t, op);
        }
    t->posted.head = t->posted.tail = NULL;
    t->cq.head = t->cq.tail = NULL;
    csni_unlock(&t->lock);
    for (struct csni_unex *u = ux, *n; u; u = n) {
        n = u->next;
        teardown_drop_unex(p, u, &deferred);
    }
    teardown_fail_all(deferred, CSN_PEER_LOST);
}
