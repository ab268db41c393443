/* match.c: posting and matching: transmits leave as EAGER or RTS, receives are matched against
 * the unexpected store or wait on the posted list, and each arriving message header is matched
 * to the first posted receive that accepts it. The rendezvous half is in rndv.c. */
#include <stdlib.h>

#include "core/complete.h"
#include "core/copy.h"
#include "core/credit.h"
#include "core/match.h"
#include "core/near.h"
#include "core/netid.h"
#include "core/peer.h"
#include "core/state.h"
#include "core/rndv.h"
#include "core/rtids.h"
#include "core/teardown.h"
#include "core/tport.h"
#include "transport/ofi/ofi.h"

/* A receive the fabric provider would not take (csni_rndv_send_cts false): no memory, or its
 * receive queue full (a provider queue smaller than csn's posted receives, e.g. a small
 * FI_OFI_RXM_RX_SIZE). */
#define MATCH_FAB_RX_FAILED                                                                        \
    "cannot post a fabric receive (no memory, or the provider's receive queue is full)"

static bool match_accepts(csn_netid filter, csn_netid src)
{
    return filter == CSN_NULL_NETID || filter == src;
}

/* The receive a message from src matches: the first posted on t that accepts it (t->lock
 * held). */
static struct csni_op *match_first_posted(csn_transport *t, csn_netid src)
{
    struct csni_op *op = t->posted.head;
    while (op && !match_accepts(op->peer, src))
        op = op->next;
    return op;
}

/* Takes the matched receive off the posted list and records the message it gets (t->lock
 * held). pp: the sending process, NULL for a transport of this process. */
static void match_take_posted(csn_transport *t, struct csni_op *op, csn_netid src,
                              struct csni_peer *pp, uint64_t len)
{
    csni_oplist_remove(&t->posted, op);
    op->peer = src;
    op->msglen = len;
    op->pp = pp;
}

/* ---- sending ---- */
static csn_status match_post_self(csn_transport *t, struct csni_op *op)
{
    struct csni_proc *p = csni_p;
    csn_transport *d = csni_tport_find(&p->tab, csni_netid_tid(op->peer));
    struct csni_op *rx;
    if (!d)
        return CSN_ILLEGAL_NETID;
    if ((rx = match_first_posted(d, t->id)) != NULL) {
        match_take_posted(d, rx, t->id, NULL, op->len);
        csni_copy(rx->buf, op->buf, op->len < rx->len ? op->len : rx->len);
        csni_complete(d, rx, CSN_OK);
        csni_unlock(&d->lock);
        csni_complete_unlocked(op, CSN_OK);
        return CSN_OK;
    }
    struct csni_unex *u = csni_unex_alloc(&p->store);
    if (!u) {
        csni_unlock(&d->lock);
        return CSN_NO_HEAP;
    }
    u->src = t->id;
    u->len = op->len;
    size_t held = atomic_load(&p->store.self_bytes);
    if (op->len <= p->tun.eager_max && held + op->len <= p->tun.unexpected_limit &&
        (u->data = csni_pool_get(&p->store, op->len)) != NULL) {
        /* Buffered like an eager message: the transmit completes now. */
        atomic_fetch_add(&p->store.self_bytes, op->len);
        csni_copy(u->data, op->buf, op->len);
        u->kind = CSNI_UX_EAGER;
        u->complete = true;
        csni_ux_push(&d->ux, u);
        csni_unlock(&d->lock);
        csni_complete_unlocked(op, CSN_OK);
        return CSN_OK;
    }
    /* Parked: the receive that matches copies straight from the sender's buffer. */
    u->kind = CSNI_UX_SELF;
    u->txop = op;
    op->state = CSNI_ST_SELF_WAIT;
    csni_ux_push(&d->ux, u);
    csni_unlock(&d->lock);
    return CSN_OK;
}

/* Whether a rendezvous of ours to pp that asked to be pulled is unanswered; pp's lock held. */
static bool match_pull_asked(const struct csni_peer *pp)
{
    for (const struct csni_op *o = pp->wait_cts.head; o; o = o->next)
        if (o->pull_asked)
            return true;
    return false;
}

/* Both ways at once over shared memory: while receives of ours longer than half the eager
 * size are outstanding (t->large_rx), a message longer than that (len) is sent to pp as a
 * rendezvous the receiver pulls, not eager. Eager both ways, each side copies every message
 * twice (into the ring and out of the other), where a pull copies it once (64 KiB both ways
 * 13.9 GB/s eager against 16.4 pulled, Open MPI 15.6; BENCHMARKS.md, issue 19). One way,
 * eager stays: the two copies run on two CPUs at once there. Such a message also goes as a
 * rendezvous while any rendezvous of ours to pp is unanswered: sent eager behind one, it could
 * complete at the receiver before it (a pull listed for later) and break the order of one
 * sender's receives (test_pingpong_window, 64 KiB both ways). Longer than half the eager
 * size: csni_tx_now leaves those messages to match_send, whose path this is. */
static bool match_pulled_both_ways(const struct csni_proc *p, csn_transport *t,
                                   struct csni_peer *pp)
{
    if (!p->cma)
        return false;
    if (atomic_load_explicit(&t->large_rx, memory_order_relaxed) > 0)
        return true;
    csni_lock(&pp->lock);
    bool asked = pp->wait_cts.head != NULL;
    csni_unlock(&pp->lock);
    return asked;
}

bool csni_tx_now(csn_transport *t, csn_netid to, const void *buf, size_t len)
{
    struct csni_proc *p = csni_p;
    if (p->tun.conn_per_transport || len > p->tun.shm_half_eager)
        return false; /* longer: match_send decides (match_pulled_both_ways) */
    int rank = csni_netid_rank(to);
    if (rank == p->me)
        return false;
    struct csni_peer *pp = csni_peer_ready(&p->peers, rank);
    if (!pp)
        return false;
    struct csni_conn *c = pp->conn; /* set once ready (an old one after a move refuses) */
    if (!c || !c->shm || len > pp->eager_max ||
        csni_rtid_state(pp, csni_netid_tid(to)) != CSNI_RTID_OPEN)
        return false;
    return csni_conn_send_now(c, csni_netid_tid(to), t->tid, buf, len, csni_credit_cost(len));
}

/* Over a fabric whose provider moves large messages itself, a rendezvous message goes to the
 * provider at once, before the receiver asks, on the connection its RTS takes (pp->conn,
 * final once pp->own is seen): the receiver posts its receive when it matches, and no CTS
 * round trip comes first, as MPIs hand their large sends to the provider (latency 256 KiB-1
 * MiB 1.14-1.21x better, BENCHMARKS.md). Returns the RTS to send, a request of its own: the
 * provider's completion may come before the RTS is written, and the op is the user's again
 * then. NULL: ask as usual (not such a message, conn not final, OFI_PUSH_MAX under way, no
 * memory). pp's lock held, op on its CTS list. */
static struct csni_sendreq *match_push(struct csni_peer *pp, struct csni_op *op, uint32_t dst)
{
    struct csni_conn *c = pp->conn;
    if (!c->ofi || !csni_ofi_rndv_min() || op->len < csni_ofi_rndv_min() ||
        !atomic_load_explicit(&pp->own, memory_order_acquire))
        return NULL;
    struct csni_frame f = csni_frame_rts(dst, op->t->tid, op->len, op->token, 0, true);
    struct csni_sendreq *sr = csni_sendreq_new(&f);
    if (sr && !csni_ofi_fab_push(c, op->buf, op->len, op->token, op->t)) {
        free(sr);
        sr = NULL;
    }
    op->pushed = sr != NULL;
    return sr;
}

/* The clock of the Near choice's intervals: the TSC where there is one (clock_gettime on every
 * such transmit cost a pulled 8 KiB half round trip 0.95x where rdtsc left it at 1.00x, 10
 * rounds each, BENCHMARKS.md, issue 19). */
static inline uint64_t match_near_now(void)
{
#if defined(__x86_64__) || defined(__i386__)
    return __builtin_ia32_rdtsc();
#else
    return csni_now_ns();
#endif
}

/* Near: a blocking transmit waits for its message anyway, and eager it is done once in the
 * ring, where a rendezvous waits for the receiver's pull and answer; but two copies through
 * the ring cost more than one pull where the CPUs share no cache (BENCHMARKS.md, issue 19),
 * and a VM's vCPUs move between the two. So up to CSN_SHM_EAGER_NEAR it goes the way that
 * costs less on its connection now, as timed there (core/near.h). */
static bool match_near(const struct csni_proc *p, struct csni_conn *c, size_t len)
{
    return len <= p->tun.shm_eager_near && csni_near_eager(&c->near, match_near_now());
}

/* Sends op to pp, whose transport dst is known to exist. own: the calling thread posted op
 * (a blocking call's op may then be marked done without a wake-up). */
static void match_send(csn_transport *t, struct csni_op *op, struct csni_peer *pp, bool own)
{
    struct csni_proc *p = csni_p;
    uint32_t dst = csni_netid_tid(op->peer);
    bool lanes = p->tun.conn_per_transport;
    /* pp->conn is set once the peer is ready (NULL: never reached, lost); a move may change it,
     * and a frame given to the old one then goes to the new one (csni_conn_send). */
    struct csni_conn *c = lanes ? NULL : pp->conn;
    size_t emax = pp->eager_max;
    if (op->blocking && c && c->shm) {
        emax = p->tun.shm_eager_blocking;
        if (op->len > emax && match_near(p, c, op->len))
            emax = op->len;
    }
    if (c && op->len <= emax &&
        !(c->shm && op->len > p->tun.shm_half_eager && match_pulled_both_ways(p, t, pp)) &&
        csni_credit_take(pp, csni_credit_cost(op->len))) {
        /* Eager. A dead connection completes the op with CSN_PEER_LOST when queued. */
        if (c->shm && csni_conn_send_now(c, dst, t->tid, op->buf, op->len, 0)) {
            /* Written: the small-message path. A blocking call's op is its own thread's,
             * nobody else waits for it. */
            if (op->blocking && own) {
                op->status = CSN_OK;
                atomic_store_explicit(&op->state, CSNI_ST_DONE, memory_order_release);
            } else {
                csni_complete_unlocked(op, CSN_OK);
            }
            return;
        }
        struct csni_frame f = csni_frame_eager(dst, t->tid, op->len);
        csni_frame_encode(&f, op->sr.hdr);
        op->sr.payload = op->buf;
        op->sr.paylen = op->len;
        op->sr.op = op;
        csni_conn_send(c, &op->sr); /* may complete op: no lock held */
        return;
    }
    csni_lock(&pp->lock);
    if (pp->lost) {
        csni_unlock(&pp->lock);
        csni_complete_unlocked(op, CSN_PEER_LOST);
        return;
    }
    /* The frame to send: op's own request, or a pushed message's RTS (match_push), after which
     * the op is not ours to touch once the peer lock goes. */
    struct csni_sendreq *sr = &op->sr;
    if (lanes && op->len <= pp->eager_max && csni_credit_take(pp, csni_credit_cost(op->len))) {
        struct csni_frame f = csni_frame_eager(dst, t->tid, op->len);
        csni_frame_encode(&f, op->sr.hdr);
        op->sr.payload = op->buf;
        op->sr.paylen = op->len;
        op->sr.op = op;
    } else {
        op->token = atomic_fetch_add(&p->next_token, 1);
        op->state = CSNI_ST_WAIT_CTS;
        bool asked = match_pull_asked(pp);
        csni_oplist_push(&pp->wait_cts, op);
        if (lanes || !(sr = match_push(pp, op, dst))) {
            /* Over shared memory the receiver may pull the message itself: from CSN_SHM_PULL
             * bytes on, and any rendezvous while large receives of ours are outstanding (both
             * ways at once: csni_rndv_pull), or while one we sent asking to be pulled is
             * unanswered: a rendezvous without the address behind it is streamed at once,
             * while the receiver may have listed that pull for later, and would complete
             * first (test_pingpong_window, 64 KiB both ways, once our receives were done). */
            op->pull_asked = pp->conn->shm && p->cma &&
                             ((op->len >= p->tun.pull_min && op->len < p->tun.pull_max) || asked ||
                              atomic_load_explicit(&t->large_rx, memory_order_relaxed) > 0);
            uint64_t pull = 0;
            if (op->pull_asked) {
                pull = (uint64_t)(uintptr_t)op->buf;
                atomic_fetch_add_explicit(&t->pulled_tx, op->len, memory_order_relaxed);
            }
            struct csni_frame f = csni_frame_rts(dst, t->tid, op->len, op->token, pull, false);
            csni_frame_encode(&f, op->sr.hdr);
            op->sr.payload = NULL;
            op->sr.paylen = 0;
            op->sr.op = op;
            sr = &op->sr;
        }
    }
    c = pp->conn;
    csni_unlock(&pp->lock);
    if (lanes)
        c = csni_peer_send_conn(t, pp);
    /* Outside the peer lock: writing may complete the op at once. Frames of one thread
     * still leave in call order, which is all per-pair FIFO needs. A pushed message's op may
     * be complete already (the provider's completion does not wait for the RTS). */
    csni_conn_send(c, sr);
}

csn_status csni_post_tx(csn_transport *t, struct csni_op *op)
{
    struct csni_proc *p = csni_p;
    int rank = csni_netid_rank(op->peer);
    csn_status rv = CSN_OK;
    struct csni_peer *pp;

    op->kind = CSNI_OP_TX;
    op->state = CSNI_ST_POSTED;
    if (rank == p->me)
        return match_post_self(t, op);
    if (!(pp = csni_peer_ready(&p->peers, rank))) {
        if (!(pp = csni_peer_get(p, rank, &rv)))
            return rv;
        if (rv == CSN_PEER_LOST)
            csni_peer_lost(p, pp);
    }
    op->pp = pp;
    if (p->tun.own_sends && !atomic_load_explicit(&pp->own, memory_order_relaxed))
        csni_peer_own(p, pp, op->len); /* once per peer at most: not on the fast path */
    for (;;) {
        enum csni_rtid st = csni_rtid_state(pp, csni_netid_tid(op->peer));
        if (st == CSNI_RTID_GONE) {
            csni_complete_unlocked(op, CSN_PEER_LOST);
            return CSN_OK;
        }
        if (st == CSNI_RTID_OPEN)
            break;
        if (csni_rtid_hold(pp, op, csni_netid_tid(op->peer)))
            return CSN_OK; /* sent or failed when pp answers (match_on_tids) */
    }
    match_send(t, op, pp, true);
    return CSN_OK;
}

/* ---- receiving: a receive is posted ---- */

/* Whether a one-source receive from another process can never complete: that process is
 * already lost, or it told us that transport closed. Looks only (connecting may block or
 * declare the peer lost, which takes transport locks, and the caller holds t's). */
static bool match_source_lost(struct csni_proc *p, csn_netid src)
{
    if (!p->boot.launched ||
        (atomic_load(&p->peers.nlost) == 0 && atomic_load(&p->peers.ngone) == 0))
        return false;
    struct csni_peer *pp = csni_peer_lookup(p, csni_netid_rank(src));
    return pp &&
           (csni_peer_is_lost(pp) || csni_rtid_state(pp, csni_netid_tid(src)) == CSNI_RTID_GONE);
}

bool csni_rx_src_gone(csn_netid from)
{
    struct csni_proc *p = csni_p;
    return from != CSN_NULL_NETID && csni_netid_rank(from) == p->me &&
           !csni_tport_exists(&p->tab, csni_netid_tid(from));
}

csn_status csni_post_rx(csn_transport *t, struct csni_op *op)
{
    /* Looked up before taking t's lock (the table lock comes first in the lock order). */
    bool src_gone = csni_rx_src_gone(op->peer);
    csni_lock(&t->lock);
    return csni_post_rx_locked(t, op, src_gone);
}

csn_status csni_post_rx_locked(csn_transport *t, struct csni_op *op, bool src_gone)
{
    struct csni_proc *p = csni_p;
    struct csni_unex *u, *prev = NULL;
    struct csni_op *deferred = NULL;
    struct csni_conn *failed = NULL;

    op->kind = CSNI_OP_RX;
    op->large = op->len > p->tun.shm_half_eager;
    if (op->large) /* until it completes (csni_complete) */
        atomic_fetch_add_explicit(&t->large_rx, 1, memory_order_relaxed);
    /* Relaxed: nobody else sees op before it is listed under t's lock (a seq_cst store is a
     * locked instruction, which waits for this thread's stores to leave, such as a record
     * just written into a ring whose line the peer is polling). */
    atomic_store_explicit(&op->state, CSNI_ST_POSTED, memory_order_relaxed);
    bool one = op->peer != CSN_NULL_NETID, mine = one && csni_netid_rank(op->peer) == p->me;
    for (u = t->ux.head; u; prev = u, u = u->next)
        if (!u->rxop && match_accepts(op->peer, u->src))
            break;
    if (!u) {
        /* From a transport of ours that no longer exists, or a process lost, nothing more can
         * come. */
        if ((mine && src_gone) || (one && !mine && match_source_lost(p, op->peer))) {
            csni_complete(t, op, CSN_PEER_LOST);
            csni_unlock(&t->lock);
            return CSN_OK;
        }
        csni_oplist_push(&t->posted, op);
        csni_unlock(&t->lock);
        return CSN_OK;
    }
    op->peer = u->src;
    op->msglen = u->len;
    switch (u->kind) {
    case CSNI_UX_EAGER:
        if (!u->complete) {
            /* Payload still arriving into the pool buffer: the reader finishes the job. */
            u->rxop = op;
            op->state = CSNI_ST_WAIT_DATA;
            csni_unlock(&t->lock);
            return CSN_OK;
        }
        csni_ux_unlink(&t->ux, prev, u);
        csni_copy(op->buf, u->data, u->len < op->len ? u->len : op->len);
        csni_pool_put(&p->store, u->data, u->len);
        if (u->pp)
            csni_credit_return(u->pp, csni_credit_cost(u->len), p->tun.window);
        else
            atomic_fetch_sub(&p->store.self_bytes, u->len);
        csni_complete(t, op, CSN_OK);
        break;
    case CSNI_UX_SELF:
        csni_ux_unlink(&t->ux, prev, u);
        csni_copy(op->buf, u->txop->buf, u->len < op->len ? u->len : op->len);
        deferred = u->txop;
        csni_complete(t, op, CSN_OK);
        break;
    case CSNI_UX_RTS:
        csni_ux_unlink(&t->ux, prev, u);
        op->pp = u->pp;
        op->token = atomic_fetch_add(&p->next_token, 1);
        op->state = CSNI_ST_WAIT_DATA;
        if (u->raddr && p->cma && !op->blocking) {
            csni_unlock(&t->lock);
            csni_rndv_defer_pull(p, u, op);
            return CSN_OK;
        }
        if (u->raddr) {
            pid_t pid = u->pid;
            uint64_t raddr = u->raddr, token = u->token;
            struct csni_conn *rc = u->conn;
            csni_unlock(&t->lock);
            csni_unex_free(&p->store, u);
            /* Under the reader lock of the connection the RTS came on, as a split needs. */
            csni_conn_rx_lock(rc);
            csni_rndv_take(op, pid, raddr, token, rc);
            csni_conn_rx_unlock(rc);
            return CSN_OK;
        }
        if (!csni_rndv_send_cts(op, u->token, u->conn, u->pushed))
            failed = u->conn;
        break;
    }
    csni_unlock(&t->lock);
    if (failed)
        csni_conn_fail(failed, MATCH_FAB_RX_FAILED);
    csni_unex_free(&p->store, u);
    if (deferred)
        csni_complete_unlocked(deferred, CSN_OK);
    return CSN_OK;
}

static void match_learn_tid(struct csni_conn *c, const struct csni_frame *f);

int csni_match_direct(struct csni_conn *c, csn_transport *t, struct csni_op *own,
                      struct csni_op *res, const struct csni_frame *f, const uint8_t *payload)
{
    csn_netid src = csni_netid_make(c->pp->proc, csni_frame_src_tport(f));
    /* As csni_proto_frame does: a reply to this message then leaves without asking whether
     * its sender's transport exists (seen missing over shm, where small messages to a waiting
     * receive come this way: test_mp pushdrop's transmit was held in 3 of 10 runs). */
    match_learn_tid(c, f);
    csni_lock(&t->lock);
    struct csni_op *op = match_first_posted(t, src);
    if (!op || (own && op != own)) {
        csni_unlock(&t->lock);
        return CSNI_MATCH_NONE;
    }
    match_take_posted(t, op, src, c->pp, f->len);
    size_t n = f->len < op->len ? f->len : op->len;
    csni_copy(op->buf, payload, n);
    int rv = CSNI_MATCH_DONE;
    if (own) {
        /* csni_complete without its wake-ups: the owner is the caller, who looks at the state. */
        csni_complete_rx_result(t, op, CSN_OK);
        atomic_store_explicit(&op->state, CSNI_ST_DONE, memory_order_release);
    } else if (res && !t->cq.head) {
        /* csn_test, with nothing older queued, takes the result here: no queue and no second
         * hold of t's lock per message in a stream of small messages. */
        csni_complete_rx_result(t, op, CSN_OK);
        csni_complete_hand(t, op, res);
        csni_cq_note_empty(t);
        rv = CSNI_MATCH_HANDED;
    } else {
        csni_complete(t, op, CSN_OK);
    }
    csni_unlock(&t->lock);
    csni_credit_owe(c, csni_credit_cost(f->len), csni_p->tun.window);
    return rv;
}

/* ---- receiving: a message header arrived on a connection ---- */

/* The destination transport is closed (or never was): the message is dropped; a rendezvous
 * sender is told, so its transmit completes with CSN_PEER_LOST. */
static void match_no_transport(struct csni_conn *c, const struct csni_frame *f,
                               const uint8_t *staged, struct csni_place *pl)
{
    /* Closed (its id was handed out): CSN_PEER_LOST for the sender; never was: a garbage
     * netid. */
    uint32_t n = csni_table_size(&c->p->tab), dst = csni_frame_dst_tport(f);
    bool existed = dst < n;
    if (f->type == CSNI_F_EAGER) {
        /* Sent before the sender heard of the close: its later transmits fail at once. (A
         * sender never sends to an id it was not told of: the count is for older builds.) */
        struct csni_frame g = existed ? csni_frame_tids(CSNI_TIDS_GONE, dst, 0)
                                      : csni_frame_tids(CSNI_TIDS_COUNT, n, 0);
        (void)csni_peer_send_frame(c->pp, &g); /* lost: the peer is lost too */
        pl->discard = staged ? 0 : f->len;
        csni_credit_owe(c, csni_credit_cost(f->len), csni_p->tun.window);
        return;
    }
    struct csni_frame g =
        csni_frame_cts(existed ? CSNI_CTS_GONE : CSNI_CTS_NOTID, 0, csni_frame_sender_token(f), 0);
    (void)csni_peer_send_frame(c->pp, &g); /* lost: its transmit fails with it anyway */
    if (csni_frame_rts_kind(f) == CSNI_RTS_PUSHED)
        csni_rndv_drop_pushed(c, f->len, csni_frame_sender_token(f));
}

/* The sender closed the transport of a message it pushed or asked us to pull
 * (CSNI_RTS_WITHDRAWN): if its RTS still waits here unmatched, the provider's message is taken
 * and dropped, or the sender's address forgotten and the sender told (GONE: its close waits
 * for either), and the RTS stays as an ordinary one: a receive that takes it asks, and fails
 * as the sender's transport is gone (as over every transport). Matched already, its receive
 * is posted or its pull made or listed: the sender hears of it as usual. */
static void match_on_withdrawn(struct csni_conn *c, const struct csni_frame *f)
{
    csn_transport *t = csni_tport_find(&c->p->tab, csni_frame_dst_tport(f)); /* locked */
    uint64_t token = csni_frame_sender_token(f);
    struct csni_unex *u = NULL;
    for (u = t ? t->ux.head : NULL; u; u = u->next)
        if (u->kind == CSNI_UX_RTS && (u->pushed || u->raddr) && u->pp == c->pp &&
            u->token == token)
            break;
    /* No t: closed or closing. A pushed message was dropped then (match_no_transport,
     * teardown); a pull is not made any more, or lands in a cancelled receive; its sender
     * waits for an answer, maybe in its own close while ours waits for it. */
    bool pushed = u && u->pushed, answer = t ? u && u->raddr : c->shm != NULL;
    struct csni_conn *rc = u ? u->conn : NULL;
    size_t len = u ? u->len : 0;
    if (u) {
        u->pushed = false;
        u->raddr = 0;
    }
    if (t)
        csni_unlock(&t->lock);
    if (pushed)
        csni_rndv_drop_pushed(rc, len, token);
    struct csni_frame g = csni_frame_cts(CSNI_CTS_GONE, 0, token, 0);
    if (answer)
        (void)csni_peer_send_frame(c->pp, &g); /* lost: the sender's wait ends with it */
}

/* An unexpected-store entry for the message f from c's peer: who sent it and how long; for an
 * RTS also its token and, when the sender offered its buffer over shared memory, where to
 * pull it from. NULL when out of memory. */
static struct csni_unex *match_ux_new(struct csni_conn *c, const struct csni_frame *f)
{
    struct csni_unex *u = csni_unex_alloc(&c->p->store);
    if (!u)
        return NULL;
    u->src = csni_netid_make(c->pp->proc, csni_frame_src_tport(f));
    u->len = f->len;
    u->pp = c->pp;
    if (f->type == CSNI_F_RTS) {
        u->kind = CSNI_UX_RTS;
        u->token = csni_frame_sender_token(f);
        u->conn = c;
        u->pushed = csni_frame_rts_kind(f) == CSNI_RTS_PUSHED;
        if (csni_frame_pull_addr(f) && c->shm) {
            u->raddr = csni_frame_pull_addr(f);
            u->pid = csni_shm_peer_pid(c->shm);
        }
        u->complete = true;
    }
    return u;
}

/* Lists the pull of the RTS f into op behind the deferred pulls. Returns false, t->lock still
 * held, when there is no memory for the entry (the caller pulls now); true with t->lock
 * released. */
static bool match_defer_pull(struct csni_conn *c, csn_transport *t, struct csni_op *op,
                             const struct csni_frame *f)
{
    struct csni_unex *u = match_ux_new(c, f);
    if (!u)
        return false;
    csni_unlock(&t->lock);
    csni_rndv_defer_pull(c->p, u, op);
    return true;
}

/* A message matched the posted receive op (t->lock held, released here). */
static void match_to_posted(struct csni_conn *c, csn_transport *t, struct csni_op *op,
                            const struct csni_frame *f, const uint8_t *staged,
                            struct csni_place *pl)
{
    struct csni_proc *p = c->p;
    match_take_posted(t, op, csni_netid_make(c->pp->proc, csni_frame_src_tport(f)), c->pp, f->len);
    op->state = CSNI_ST_WAIT_DATA;
    if (f->type == CSNI_F_EAGER) {
        size_t n = f->len < op->len ? f->len : op->len;
        if (staged) {
            /* The whole payload is here already: place it and complete under this one lock
             * hold (the small-message path). */
            csni_copy(op->buf, staged, n);
            csni_complete(t, op, CSN_OK);
            csni_unlock(&t->lock);
            csni_credit_owe(c, csni_credit_cost(f->len), p->tun.window);
            return;
        }
        *pl =
            (struct csni_place){.dst = op->buf, .want = n, .discard = f->len - n, .op = op, .t = t};
        csni_unlock(&t->lock);
        return;
    }
    op->token = atomic_fetch_add(&p->next_token, 1);
    uint64_t pull = csni_frame_pull_addr(f);
    if (pull && c->shm && p->cma) {
        /* Deferred pulls listed or under way (receives posted after their RTS, pulled by
         * whoever polls): this one goes behind them, so that receives complete in the order
         * they were posted (pulled here at once, it would complete first). Listed too when
         * we are the progress thread and a user thread is back to pull it. */
        if ((atomic_load(&p->npulls) > 0 || atomic_load(&t->pulling) > 0 ||
             csni_bg_users_back(p)) &&
            match_defer_pull(c, t, op, f))
            return;
        /* Pulled under the reader lock, as the seed receives "the remaining packets directly
         * to the user's buffer" before unlocking the device (or streamed: csni_rndv_take). */
        csni_unlock(&t->lock);
        csni_rndv_pull_later(op, csni_shm_peer_pid(c->shm), pull, csni_frame_sender_token(f), c);
        return;
    }
    bool ok = csni_rndv_send_cts(op, csni_frame_sender_token(f), c,
                                 csni_frame_rts_kind(f) == CSNI_RTS_PUSHED);
    csni_unlock(&t->lock);
    if (!ok)
        csni_conn_fail(c, MATCH_FAB_RX_FAILED);
}

/* No receive matched: the message goes into t's unexpected store (t->lock held, released). */
static void match_to_store(struct csni_conn *c, csn_transport *t, const struct csni_frame *f,
                           const uint8_t *staged, struct csni_place *pl)
{
    struct csni_proc *p = c->p;
    struct csni_unex *u = match_ux_new(c, f);
    if (!u)
        goto nomem;
    if (f->type == CSNI_F_EAGER) {
        u->kind = CSNI_UX_EAGER;
        if (!(u->data = csni_pool_get(&p->store, f->len))) {
            csni_unex_free(&p->store, u);
            goto nomem;
        }
        /* Complete only once the reader is done with it (csni_proto_placed), even when empty
         * or staged: until then the placement points at it and nobody else may free it. */
        u->complete = false;
        if (staged)
            csni_copy(u->data, staged, f->len);
        *pl = (struct csni_place){
            .dst = staged ? NULL : u->data, .want = staged ? 0 : f->len, .ux = u, .t = t};
    }
    csni_ux_push(&t->ux, u);
    csni_unlock(&t->lock);
    return;
nomem:
    csni_unlock(&t->lock);
    csni_conn_fail(c, "out of memory for an unexpected message");
}

static void match_on_message(struct csni_conn *c, const struct csni_frame *f, const uint8_t *staged,
                             struct csni_place *pl)
{
    csn_transport *t = csni_tport_find(&c->p->tab, csni_frame_dst_tport(f));
    if (!t) {
        match_no_transport(c, f, staged, pl);
        return;
    }
    struct csni_op *op =
        match_first_posted(t, csni_netid_make(c->pp->proc, csni_frame_src_tport(f)));
    if (op)
        match_to_posted(c, t, op, f, staged, pl);
    else
        match_to_store(c, t, f, staged, pl);
}

/* pp's ids below n were handed out (answering question gen; 0: unasked): the transmits held
 * for them leave or fail, in the order they were held. */
static void match_count(struct csni_peer *pp, uint32_t n, uint64_t gen)
{
    for (;;) {
        struct csni_op *refused, *go = csni_rtid_answer(pp, n, gen, &refused);
        if (!go && !refused)
            break;
        for (struct csni_op *next; go; go = next) {
            next = go->next;
            match_send(go->t, go, pp, false);
        }
        for (struct csni_op *next; refused; refused = next) {
            next = refused->next;
            csni_complete_unlocked(refused, refused->status);
        }
        csni_rtid_released(pp);
    }
}

/* A message from the peer's transport tid shows that its ids up to tid were handed out (they
 * are handed out in order and never reused): as good as an unasked count, and it spares the
 * question's round trip when a process first answers a peer that spoke first (a gather's
 * answer, a reply). Taken only where all of a peer's frames come over the one connection it
 * sends on (not CSN_CONN_PER_TRANSPORT): there the close of any of its transports (TIDS GONE)
 * arrives before any message it sent later. The transmit path's two loads when the id is known
 * (or is the system transport, or closed). */
static void match_learn_tid(struct csni_conn *c, const struct csni_frame *f)
{
    uint32_t tid = csni_frame_src_tport(f);
    if (tid == UINT32_MAX || c->p->tun.conn_per_transport ||
        csni_rtid_state(c->pp, tid) != CSNI_RTID_UNKNOWN)
        return;
    match_count(c->pp, tid + 1, 0);
}

/* A note about transport ids: a question (answered with our count), an answer (our held
 * transmits to that peer leave or fail), or a transport of the peer closed. */
static void match_on_tids(struct csni_conn *c, const struct csni_frame *f)
{
    struct csni_peer *pp = c->pp;
    uint32_t v = csni_frame_tids_value(f);
    switch (csni_frame_tids_kind(f)) {
    case CSNI_TIDS_QUERY: {
        struct csni_frame a =
            csni_frame_tids(CSNI_TIDS_COUNT, csni_table_size(&c->p->tab), csni_frame_tids_gen(f));
        (void)csni_peer_send_frame(c->pp, &a); /* lost: the asker's peer is lost */
        break;
    }
    case CSNI_TIDS_COUNT:
        match_count(pp, v, csni_frame_tids_gen(f));
        break;
    case CSNI_TIDS_GONE:
        csni_rtid_gone(pp, v);
        csni_peer_tport_gone(c->p, pp, v);
        break;
    }
}

void csni_proto_frame(struct csni_conn *c, const struct csni_frame *f, const uint8_t *staged,
                      struct csni_place *pl)
{
    switch (f->type) {
    case CSNI_F_RTS:
        if (csni_frame_rts_kind(f) == CSNI_RTS_PUSHED && !c->ofi) {
            csni_conn_fail(c, "pushed request-to-send on a connection without a fabric");
            break;
        }
        if (csni_frame_rts_kind(f) == CSNI_RTS_WITHDRAWN) {
            match_on_withdrawn(c, f);
            break;
        }
        /* fallthrough */
    case CSNI_F_EAGER:
        match_learn_tid(c, f);
        match_on_message(c, f, staged, pl);
        break;
    case CSNI_F_CTS:
        csni_rndv_on_cts(c, f);
        break;
    case CSNI_F_DATA:
        csni_rndv_on_data(c, f, pl);
        break;
    case CSNI_F_CREDIT:
        csni_credit_granted(c->pp, f->len);
        break;
    case CSNI_F_TIDS:
        match_on_tids(c, f);
        break;
    case CSNI_F_MOVE:
        csni_peer_on_move(c, f);
        break;
    default:
        csni_conn_fail(c, "unexpected frame type");
        break;
    }
}

/* An unexpected EAGER message's payload is in: it is complete, and goes to the receive that
 * matched it meanwhile, if one did. */
static void match_ux_placed(struct csni_conn *c, const struct csni_frame *f,
                            const struct csni_place *pl)
{
    struct csni_proc *p = c->p;
    csn_transport *t = pl->t;
    struct csni_unex *u = pl->ux;
    csni_lock(&t->lock);
    u->complete = true;
    struct csni_op *op = u->rxop;
    if (!op) {
        csni_unlock(&t->lock);
        return; /* credit comes back when a receive takes the message */
    }
    struct csni_unex *prev = NULL, *x;
    for (x = t->ux.head; x && x != u; prev = x, x = x->next)
        ;
    csni_ux_unlink(&t->ux, prev, u);
    csni_copy(op->buf, u->data, u->len < op->len ? u->len : op->len);
    csni_complete(t, op, CSN_OK);
    csni_unlock(&t->lock);
    csni_pool_put(&p->store, u->data, u->len);
    csni_unex_free(&p->store, u);
    csni_credit_owe(c, csni_credit_cost(f->len), p->tun.window);
}

void csni_proto_placed(struct csni_conn *c, const struct csni_frame *f, const struct csni_place *pl)
{
    if (pl->op && f->type == CSNI_F_DATA)
        csni_rndv_data_placed(c, f, pl);
    else if (pl->op) {
        csni_complete_unlocked(pl->op, CSN_OK);
        csni_credit_owe(c, csni_credit_cost(f->len), c->p->tun.window);
    } else if (pl->ux)
        match_ux_placed(c, f, pl);
}

void csni_proto_abandon(const struct csni_place *pl)
{
    /* A receive still listed with its peer fails with the peer's loss; an unexpected record
     * being filled stays incomplete and is dropped then too. */
    if (pl->op && !pl->listed)
        csni_complete_unlocked(pl->op, CSN_PEER_LOST);
}
