/* rndv.c: rendezvous: CTS and DATA, single-copy pulls and split copies over shared memory. */
#include <errno.h>
#include <sched.h>

#include "core/complete.h"
#include "core/peer.h"
#include "core/state.h"
#include "core/rndv.h"
#include "transport/ofi/ofi.h"
#include "transport/shm/cma.h"

/* Whether a pull of pp's message may be made now, and *split whether in part. Not split while
 * pp has a transfer of ours to pull: its CPU is busy copying already, and asking it to write
 * half of this message as well makes the two transfers take turns instead of running side by
 * side (both ways at once, bench/shm-vs-mpi.sh). Not made behind a receive of pp's that waits
 * for its data, which it would complete before (streamed instead: the caller answers CTS),
 * except a split behind splits only: their notes come in the order of our CTSs, while a
 * stream's data may be overtaken by a note. */
static bool rndv_may_pull(struct csni_peer *pp, bool *split)
{
    bool ok = true;
    csni_lock(&pp->lock);
    *split = *split && pp->wait_cts.head == NULL;
    for (const struct csni_op *o = pp->wait_data.head; o && ok; o = o->next)
        ok = *split && o->split;
    csni_unlock(&pp->lock);
    return ok;
}

/* A whole pull of op's message (mine bytes) ended with st: the receive completes, then the
 * sender hears that it was pulled. Told first, the sender may send its next message eager, and
 * a thread reading it could complete a later receive before ours (test_pingpong_window both
 * ways, 2 runs of 30 under load). The answer then cannot live in op, which is the user's again:
 * its own request. */
static void rndv_pulled(struct csni_op *op, size_t mine, uint64_t sender_token, csn_status st)
{
    struct csni_peer *pp = op->pp;
    struct csni_frame f = csni_frame_cts(CSNI_CTS_PULLED, mine, sender_token, 0);
    if (st == CSN_OK && csni_peer_is_lost(pp))
        st = CSN_PEER_LOST;
    csni_complete_unlocked(op, st);
    if (st == CSN_OK && !csni_peer_send_frame(pp, &f) && !csni_peer_is_lost(pp))
        csni_conn_fail(pp->conn, "out of memory for the answer to a pulled message");
}

/* Whether a message of n bytes is to be split (CSN_SHM_SPLIT), before rndv_may_pull's look. */
static bool rndv_split_wanted(const struct csni_proc *p, size_t n)
{
    return p->tun.split_min && n >= p->tun.split_min && !p->tun.conn_per_transport;
}

/* csni_rndv_pull once rndv_may_pull said yes (split: what it left of the wish). */
static bool rndv_pull_now(struct csni_op *op, pid_t pid, uint64_t raddr, uint64_t sender_token,
                          bool split)
{
    struct csni_proc *p = csni_p;
    struct csni_peer *pp = op->pp;
    size_t n = csni_op_deliver(op), mine = n;
    csn_status st = CSN_OK;
    if (split) {
        struct csni_frame g = csni_frame_cts_split(n, sender_token, op->token, (uintptr_t)op->buf);
        if (csni_peer_send_frame(pp, &g))
            mine = (size_t)csni_split_at(n);
        else
            split = false; /* lost or no memory: pull it all */
    }
    bool busy = csni_busy_begin(p);
    int e = csni_cma_copy(pid, op->buf, raddr, mine, false);
    csni_busy_end(p, busy);
    if (e == ESRCH) {
        st = CSN_PEER_LOST;
    } else if (e != 0) {
        if (e == EPERM || e == ENOSYS)
            p->cma = false; /* probed: this kernel or policy says no; never try again */
        if (!split)
            return false;
        csni_conn_fail(pp->conn, "cannot read the sender's memory for a split transfer");
        csni_complete_unlocked(op, CSN_PEER_LOST);
        return true;
    }
    if (st == CSN_OK && split) {
        struct csni_frame f = csni_frame_cts(CSNI_CTS_PULLED, mine, sender_token, 0);
        csni_frame_encode(&f, op->sr.hdr);
        op->sr.payload = NULL;
        op->sr.paylen = 0;
        op->sr.op = NULL;
        csni_lock(&pp->lock);
        if (pp->lost) {
            st = CSN_PEER_LOST;
        } else {
            /* Listed only now, the copy done: the PUSHED note comes on the connection whose
             * reader lock our caller holds, so it cannot be read before this. */
            op->split = true;
            csni_oplist_push(&pp->wait_data, op);
            csni_conn_send(pp->conn, &op->sr);
        }
        csni_unlock(&pp->lock);
        if (st == CSN_OK)
            return true;
    }
    rndv_pulled(op, mine, sender_token, st);
    return true;
}

bool csni_rndv_pull(struct csni_op *op, pid_t pid, uint64_t raddr, uint64_t sender_token,
                    bool split)
{
    split = split && rndv_split_wanted(csni_p, csni_op_deliver(op));
    return csni_p->cma && rndv_may_pull(op->pp, &split) &&
           rndv_pull_now(op, pid, raddr, sender_token, split);
}

/* The sender streams op's message instead (CTS), under its transport's lock. */
static void rndv_stream(struct csni_op *op, uint64_t sender_token, struct csni_conn *rc)
{
    csn_transport *t = op->t;
    csni_lock(&t->lock);
    (void)csni_rndv_send_cts(op, sender_token, rc, false); /* not pushed: always true */
    csni_unlock(&t->lock);
}

/* A pushed message matched op (its RTS came on rc): the receive is posted with the provider,
 * under the peer lock with op listed first (as csni_rndv_send_cts's), and nothing goes back.
 * op->t's lock held. False: out of memory, op failed, rc to be failed by the caller. */
static bool rndv_take_pushed(struct csni_op *op, uint64_t sender_token, struct csni_conn *rc)
{
    struct csni_peer *pp = op->pp;
    bool posted = false;
    csni_lock(&pp->lock);
    bool lost = pp->lost;
    if (!lost) {
        csni_oplist_push(&pp->wait_data, op);
        posted = csni_ofi_fab_recv_pushed(rc, op->buf, csni_op_deliver(op), op->msglen,
                                          sender_token, op->token, op->t);
        if (!posted)
            csni_oplist_remove(&pp->wait_data, op);
    }
    csni_unlock(&pp->lock);
    if (!posted)
        csni_complete(op->t, op, CSN_PEER_LOST);
    return posted || lost;
}

void csni_rndv_drop_pushed(struct csni_conn *rc, size_t len, uint64_t sender_token)
{
    if (!csni_ofi_fab_drop(rc, len, sender_token))
        csni_conn_fail(rc, "out of memory to take a pushed message for nobody");
}

void csni_rndv_take(struct csni_op *op, pid_t pid, uint64_t raddr, uint64_t sender_token,
                    struct csni_conn *rc)
{
    if (!csni_rndv_pull(op, pid, raddr, sender_token, true))
        rndv_stream(op, sender_token, rc);
}

/* Messages longer than this are pulled at once, and a batch holds at most RNDV_BATCH_BYTES:
 * one call for several messages gains where each call's own cost (pinning the pages, the
 * system call) is a part of the copy's, and a message waiting in a batch is a message not
 * complete yet (bench/cma-batch.sh: 1.04-1.07x at 256-512 KiB, 0.98-1.08x at 1 MiB). */
#define RNDV_BATCH_MSG ((size_t)512 << 10)
#define RNDV_BATCH_BYTES ((size_t)2 << 20)

void csni_rndv_pull_later(struct csni_op *op, pid_t pid, uint64_t raddr, uint64_t sender_token,
                          struct csni_conn *c)
{
    struct csni_proc *p = c->p;
    struct csni_pull_batch *b = &c->pullb;
    size_t n = csni_op_deliver(op);
    bool split = rndv_split_wanted(p, n);
    /* One look at the peer's state decides (as csni_rndv_pull's would). Listed only where the
     * pull would be made whole now: its conditions cannot change before the batch is pulled,
     * under the reader lock we hold (a stream or a split of this peer's begins only with a
     * frame read on this connection). */
    bool ok = p->cma && rndv_may_pull(op->pp, &split);
    if (ok && !split && p->tun.pull_batch > 1 && n > 0 && n <= RNDV_BATCH_MSG) {
        if (b->n == p->tun.pull_batch || b->bytes + n > RNDV_BATCH_BYTES)
            csni_rndv_pull_batch(c);
        b->op[b->n] = op;
        b->raddr[b->n] = raddr;
        b->token[b->n] = sender_token;
        b->n++;
        b->bytes += n;
        return;
    }
    csni_rndv_pull_batch(c);
    if (!ok || !rndv_pull_now(op, pid, raddr, sender_token, split))
        rndv_stream(op, sender_token, c);
}

void csni_rndv_pull_batch(struct csni_conn *c)
{
    struct csni_pull_batch *b = &c->pullb;
    unsigned n = b->n;
    if (n == 0)
        return;
    b->n = 0;
    b->bytes = 0;
    pid_t pid = csni_shm_peer_pid(c->shm);
    struct csni_cma_seg seg[CSNI_PULL_BATCH_MAX];
    for (unsigned i = 0; i < n; i++)
        seg[i] = (struct csni_cma_seg){.local = b->op[i]->buf,
                                       .remote = b->raddr[i],
                                       .len = csni_op_deliver(b->op[i])};
    struct csni_proc *p = c->p;
    bool busy = csni_busy_begin(p);
    int e = csni_cma_readv(pid, seg, n);
    csni_busy_end(p, busy);
    /* Refused (not permitted, a bad address): each again alone, which fails or streams it as
     * a single pull does. */
    for (unsigned i = 0; i < n; i++) {
        if (e != 0 && e != ESRCH)
            csni_rndv_take(b->op[i], pid, b->raddr[i], b->token[i], c);
        else
            rndv_pulled(b->op[i], seg[i].len, b->token[i], e ? CSN_PEER_LOST : CSN_OK);
    }
}

void csni_rndv_defer_pull(struct csni_proc *p, struct csni_unex *u, struct csni_op *op)
{
    u->rxop = op;
    csni_lock(&p->pulls_lock);
    csni_ux_push(&p->pulls, u);
    /* seq_cst, as the sleeper's count in nepoll before its look at npulls
     * (csni_poll_sleep): one of us sees the other. */
    atomic_fetch_add(&p->npulls, 1);
    csni_unlock(&p->pulls_lock);
    if (atomic_load(&p->prog.nepoll) > 0)
        csni_kick_epoll(p); /* the progress thread, or a poller, asleep: this is its work */
}

/* The oldest deferred pull into t's receives (any, if t is NULL); pulls_lock held. */
static struct csni_unex *rndv_oldest(struct csni_proc *p, csn_transport *t, struct csni_unex **prev)
{
    struct csni_unex *u = p->pulls.head;
    for (*prev = NULL; u && t && u->rxop->t != t; u = u->next)
        *prev = u;
    return u;
}

/* Takes the oldest deferred pull (into t's receives only, unless t is NULL) together with the
 * reader lock of the connection its RTS came on, and counts it under way with its transport
 * before letting go of the list: a closing transport that finds none listed waits for those
 * under way (csni_rndv_run_pulls). The entry is taken only while it is still the oldest with
 * that lock held: the pull before it, of the same sender, has ended then, so one sender's
 * pulls finish in the order of their receives (two threads each taking the next entry, then
 * waiting for the lock, could run them the other way round). */
static struct csni_unex *rndv_take_pull(struct csni_proc *p, csn_transport *t)
{
    struct csni_unex *u, *prev;
    for (;;) {
        csni_lock(&p->pulls_lock);
        u = rndv_oldest(p, t, &prev);
        struct csni_conn *c = u ? u->conn : NULL;
        csni_unlock(&p->pulls_lock);
        if (!c)
            return NULL;
        csni_conn_rx_lock(c);
        csni_lock(&p->pulls_lock);
        u = rndv_oldest(p, t, &prev);
        if (u && u->conn == c) {
            csni_ux_unlink(&p->pulls, prev, u);
            atomic_fetch_sub_explicit(&p->npulls, 1, memory_order_relaxed);
            atomic_fetch_add(&u->rxop->t->pulling, 1);
            csni_unlock(&p->pulls_lock);
            return u;
        }
        csni_unlock(&p->pulls_lock);
        csni_conn_rx_unlock(c); /* taken meanwhile: look again */
    }
}

/* Whether a pull into t's receives is listed. */
static bool rndv_listed(struct csni_proc *p, csn_transport *t)
{
    struct csni_unex *prev;
    csni_lock(&p->pulls_lock);
    bool listed = rndv_oldest(p, t, &prev) != NULL;
    csni_unlock(&p->pulls_lock);
    return listed;
}

bool csni_rndv_run_pulls(struct csni_proc *p, csn_transport *t)
{
    bool any = false;
    if (!t && atomic_load(&p->npulls) == 0)
        return false;
    for (;;) {
        struct csni_unex *u;
        while ((u = rndv_take_pull(p, t)) != NULL) {
            struct csni_op *op = u->rxop;
            csn_transport *owner = op->t;
            pid_t pid = u->pid;
            uint64_t raddr = u->raddr, token = u->token;
            /* Under the reader lock of the connection the RTS came on (taken with the entry),
             * as the pulls its reader makes for receives posted before their RTS: pulls of one
             * sender's messages (all on its one sending connection) never run at once, even
             * into one buffer a program gave several receives (as osu_bw does). */
            struct csni_conn *c = u->conn;
            csni_unex_free(&p->store, u);
            csni_rndv_take(op, pid, raddr, token, c);
            csni_conn_rx_unlock(c);
            atomic_fetch_sub(&owner->pulling, 1);
            any = true;
        }
        /* A closing transport waits until none of its pulls is listed or under way (another
         * thread's pull into its buffer: one copy at most). */
        if (!t || (atomic_load(&t->pulling) == 0 && !rndv_listed(p, t)))
            return any;
        sched_yield();
    }
}

bool csni_rndv_send_cts(struct csni_op *op, uint64_t sender_token, struct csni_conn *rc,
                        bool pushed)
{
    struct csni_peer *pp = op->pp;
    size_t n = csni_op_deliver(op);
    if (pushed)
        return rndv_take_pushed(op, sender_token, rc);
    struct csni_frame f = csni_frame_cts(CSNI_CTS_OK, n, sender_token, op->token);
    csni_lock_assert_held(&op->t->lock);
    csni_lock(&pp->lock);
    if (pp->lost) {
        csni_unlock(&pp->lock);
        csni_complete(op->t, op, CSN_PEER_LOST);
        return true;
    }
    csni_oplist_push(&pp->wait_data, op);
    /* Over a fabric link a large one is the provider's to move: its receive is posted first
     * (the op listed already, so its completion finds it; under the peer lock, so a close
     * that takes the op finds the receive and withdraws it). Posted on the connection the
     * RTS came on, and the CTS goes back on it: that connection's way to us carries the
     * sender's data, its way back only what answers it (this CTS, the provider's read
     * requests), which so never wait behind our own large messages (core/peer.c). */
    bool fabric = rc->ofi && csni_ofi_rndv_min() && n >= csni_ofi_rndv_min() &&
                  csni_ofi_fab_recv(rc, op->buf, n, op->token, op->t);
    if (fabric)
        f = csni_frame_cts(CSNI_CTS_FABRIC, n, sender_token, op->token);
    csni_frame_encode(&f, op->sr.hdr);
    op->sr.payload = NULL;
    op->sr.paylen = 0;
    op->sr.op = NULL;
    /* No op attached: completes nothing. A fabric CTS stays on rc, also after our own sends
     * moved from it. */
    if (fabric)
        csni_conn_send_here(rc, &op->sr);
    else
        csni_conn_send(pp->conn, &op->sr);
    csni_unlock(&pp->lock);
    return true;
}

/* A split CTS: write the second part of our message straight into the receiver's buffer,
 * then tell it (PUSHED). The transmit stays on the CTS list: the receiver's CTS_PULLED, which
 * comes after this one on the same connection, completes it. */
static void rndv_on_split(struct csni_conn *c, const struct csni_frame *f)
{
    struct csni_peer *pp = c->pp;
    uint64_t rtoken = csni_frame_receiver_token(f);
    csni_lock(&pp->lock);
    struct csni_op *op = csni_oplist_find_token(&pp->wait_cts, csni_frame_sender_token(f));
    void *buf = op ? op->buf : NULL;
    bool fits = op && f->len <= op->len;
    csni_unlock(&pp->lock);
    if (!op) {
        struct csni_frame g = csni_frame_data(CSNI_CTS_GONE, 0, rtoken, 0);
        (void)csni_peer_send_frame(pp, &g); /* our transport closed meanwhile; lost: moot */
        return;
    }
    if (!fits || !c->shm) {
        csni_conn_fail(c, "split clear-to-send that does not fit the message");
        return;
    }
    uint64_t at = csni_split_at(f->len);
    bool busy = csni_busy_begin(c->p);
    int e = csni_cma_copy(csni_shm_peer_pid(c->shm), (uint8_t *)buf + at,
                          csni_frame_split_addr(f) + at, (size_t)(f->len - at), true);
    csni_busy_end(c->p, busy);
    if (e == ESRCH)
        return; /* the receiver is gone: our transmit fails with it */
    if (e != 0) {
        csni_conn_fail(c, "cannot write the receiver's memory for a split transfer");
        return;
    }
    struct csni_frame g = csni_frame_data(CSNI_CTS_SPLIT, f->len - at, rtoken, 0);
    (void)csni_peer_send_frame(pp, &g); /* lost: the receive fails with the peer */
}

/* A fabric CTS: the receiver has posted its receive with the provider; ours is handed to it
 * too. The transmit stays on the CTS list (peer loss and close find it there) until the
 * provider completes it (csni_rndv_fabric_done). */
static void rndv_on_fabric(struct csni_conn *c, const struct csni_frame *f)
{
    struct csni_peer *pp = c->pp;
    uint64_t token = csni_frame_sender_token(f), rtoken = csni_frame_receiver_token(f);
    if (!c->ofi) {
        csni_conn_fail(c, "fabric clear-to-send on a connection without a fabric");
        return;
    }
    /* Handed to the provider under the peer lock: a close that takes the op off the list
     * after this finds the provider's send and waits for it (csni_ofi_fab_busy) before the
     * buffer is the user's again. */
    csni_lock(&pp->lock);
    struct csni_op *op = csni_oplist_find_token(&pp->wait_cts, token);
    bool unasked = op && op->pushed; /* with the provider already: a broken peer's answer */
    bool fits = op && !unasked && f->len <= op->len;
    bool sent = fits && csni_ofi_fab_send(c, op->buf, (size_t)f->len, rtoken, token, op->t);
    csni_unlock(&pp->lock);
    if (!op) {
        /* Our transport closed meanwhile: an empty message fails the receive posted for it. */
        if (!csni_ofi_fab_send(c, NULL, 0, rtoken, 0, NULL))
            csni_conn_fail(c, "out of memory for a fabric notice");
    } else if (unasked) {
        csni_conn_fail(c, "clear-to-send for a message sent unasked");
    } else if (!fits) {
        csni_conn_fail(c, "clear-to-send asks for more than the message"); /* fails the op */
    } else if (!sent) {
        csni_conn_fail(c, "out of memory for a fabric transfer");
    }
}

void csni_rndv_fabric_done(struct csni_conn *c, const struct csni_ofi_fab *d)
{
    struct csni_peer *pp = c->pp;
    /* A notice of ours has no op; a withdrawn receive's op is close's or peer loss's. */
    if (!d->t || d->err == ECANCELED)
        return;
    csni_lock(&pp->lock);
    struct csni_op *op = csni_oplist_take_token(d->rx ? &pp->wait_data : &pp->wait_cts, d->token);
    csni_unlock(&pp->lock);
    if (!op)
        return; /* taken by a close or a peer loss meanwhile */
    bool ok = d->err == 0 && (!d->rx || d->len == csni_op_deliver(op));
    if (d->rx)
        op->got = d->len;
    else
        csni_op_wait_released(op); /* its RTS's writer may still hold the request */
    csni_complete_unlocked(op, !ok ? CSN_PEER_LOST : d->rx ? CSN_OK : op->refused);
}

/* A CTS for op, a message we pushed (CSNI_RTS_PUSHED), taken off the CTS list (pp's lock held,
 * released here): it goes back there until its provider completes it (csni_rndv_fabric_done,
 * the provider holding its buffer till then). The receiver's transport gone (GONE, NOTID):
 * the status is given then (the receiver takes the message and drops it); any other answer is
 * a broken peer's. */
static void rndv_cts_pushed(struct csni_conn *c, struct csni_op *op, uint32_t kind)
{
    bool refusal = kind == CSNI_CTS_GONE || kind == CSNI_CTS_NOTID;
    if (refusal)
        op->refused = kind == CSNI_CTS_GONE ? CSN_PEER_LOST : CSN_ILLEGAL_NETID;
    csni_oplist_push(&c->pp->wait_cts, op);
    csni_unlock(&c->pp->lock);
    if (!refusal)
        csni_conn_fail(c, "clear-to-send for a message sent unasked");
}

void csni_rndv_on_cts(struct csni_conn *c, const struct csni_frame *f)
{
    struct csni_peer *pp = c->pp;
    uint32_t kind = csni_frame_kind(f);
    if (kind == CSNI_CTS_SPLIT) {
        rndv_on_split(c, f);
        return;
    }
    if (kind == CSNI_CTS_FABRIC) {
        rndv_on_fabric(c, f);
        return;
    }
    csni_lock(&pp->lock);
    struct csni_op *op = csni_oplist_take_token(&pp->wait_cts, csni_frame_sender_token(f));
    if (!op) {
        csni_unlock(&pp->lock);
        /* Our transport closed meanwhile: tell the receiver no data will come. */
        struct csni_frame g = csni_frame_data(CSNI_CTS_GONE, 0, csni_frame_receiver_token(f), 0);
        (void)csni_peer_send_frame(pp, &g);
        return;
    }
    if (op->pushed) {
        rndv_cts_pushed(c, op, kind);
        return;
    }
    if (kind == CSNI_CTS_GONE || kind == CSNI_CTS_NOTID) {
        csni_unlock(&pp->lock);
        csni_complete_unlocked(op, kind == CSNI_CTS_GONE ? CSN_PEER_LOST : CSN_ILLEGAL_NETID);
        return;
    }
    if (kind == CSNI_CTS_PULLED && f->len <= op->len) {
        csni_unlock(&pp->lock);
        csni_complete_unlocked(op, CSN_OK); /* the receiver copied it itself */
        return;
    }
    if (f->len > op->len) {
        csni_unlock(&pp->lock);
        csni_complete_unlocked(op, CSN_PEER_LOST);
        csni_conn_fail(c, "clear-to-send asks for more than the message");
        return;
    }
    /* Sent in chunks (the writer re-heads each), so that control frames to the same process
     * never wait for a whole large message. The RTS's last byte left before this CTS could
     * exist, but its writer may not have let go of the request yet: wait for that (a few
     * instructions) before reusing it. */
    uint64_t first = f->len < CSNI_DATA_CHUNK ? f->len : CSNI_DATA_CHUNK;
    struct csni_frame g = csni_frame_data(CSNI_CTS_OK, first, csni_frame_receiver_token(f), 0);
    csni_op_wait_released(op);
    csni_frame_encode(&g, op->sr.hdr);
    op->sr.payload = op->buf;
    op->sr.paylen = f->len;
    op->sr.off = 0;
    op->sr.sent = 0;
    op->sr.chunked = f->len > CSNI_DATA_CHUNK;
    op->sr.chunk = (size_t)first;
    struct csni_conn *sc = pp->conn;
    csni_unlock(&pp->lock);
    csni_conn_send(sc, &op->sr); /* may complete op: no transport or peer lock held */
}

/* A receive fails on a DATA frame that does not fit what its CTS asked for. */
static void rndv_data_bad(struct csni_conn *c, struct csni_op *op, bool listed, const char *why)
{
    if (listed) {
        csni_lock(&c->pp->lock);
        csni_oplist_remove(&c->pp->wait_data, op);
        csni_unlock(&c->pp->lock);
    }
    csni_complete_unlocked(op, CSN_PEER_LOST);
    csni_conn_fail(c, why);
}

void csni_rndv_on_data(struct csni_conn *c, const struct csni_frame *f, struct csni_place *pl)
{
    struct csni_peer *pp = c->pp;
    uint32_t kind = csni_frame_kind(f);
    /* A DATA frame may be one chunk of the message: the receive stays on the list until its
     * last byte is in (csni_rndv_data_placed), also while the last chunk is being placed. The
     * reader may let go of its lock in the middle of a chunk (the ring empty); a pull of this
     * sender's next message taken then must see this receive still waiting for its data, or
     * it completes first (test_pingpong_window streamed, 256 KiB both ways: receive 27 before
     * 26, once in CI). */
    csni_lock(&pp->lock);
    struct csni_op *op = csni_oplist_find_token(&pp->wait_data, csni_frame_receiver_token(f));
    if (op && kind != CSNI_CTS_OK)
        csni_oplist_remove(&pp->wait_data, op);
    csni_unlock(&pp->lock);
    if (!op) {
        /* Our receive was cancelled by csn_close. Only an OK chunk carries payload (a SPLIT
         * note's len counts bytes the sender wrote into our memory). */
        pl->discard = kind == CSNI_CTS_OK ? f->len : 0;
        return;
    }
    if (kind == CSNI_CTS_GONE) {
        csni_complete_unlocked(op, CSN_PEER_LOST);
        return;
    }
    size_t n = csni_op_deliver(op);
    if (kind == CSNI_CTS_SPLIT) {
        /* The sender wrote the second part itself; our pull had the first. */
        if (f->len != n - csni_split_at(n)) {
            rndv_data_bad(c, op, false, "split data length differs from the clear-to-send");
            return;
        }
        csni_complete_unlocked(op, CSN_OK);
        return;
    }
    if (csni_frame_chunk_offset(f) != op->got || f->len > n - op->got || (f->len == 0 && n > 0)) {
        rndv_data_bad(c, op, true, "data chunk out of place for the clear-to-send");
        return;
    }
    *pl = (struct csni_place){
        .dst = (uint8_t *)op->buf + op->got, .want = f->len, .op = op, .t = op->t, .listed = true};
}

void csni_rndv_data_placed(struct csni_conn *c, const struct csni_frame *f,
                           const struct csni_place *pl)
{
    struct csni_peer *pp = c->pp;
    struct csni_op *op = pl->op;
    /* Not listed any more: the peer's loss took it meanwhile, and completed it. */
    csni_lock(&pp->lock);
    bool listed = csni_oplist_find_token(&pp->wait_data, csni_frame_receiver_token(f)) == op;
    bool last = false;
    if (listed) {
        op->got += f->len;
        last = op->got >= csni_op_deliver(op);
        if (last)
            csni_oplist_remove(&pp->wait_data, op);
    }
    csni_unlock(&pp->lock);
    if (last)
        csni_complete_unlocked(op, CSN_OK);
}
