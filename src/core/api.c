/* api.c: the public calls: argument checks, transports' life cycle, and the nine CSN calls on top
 * of match.c and wait.c. */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/complete.h"
#include "core/debug.h"
#include "core/hostbar.h"
#include "core/match.h"
#include "core/netid.h"
#include "core/poll.h"
#include "core/proc.h"
#include "core/state.h"
#include "core/teardown.h"
#include "core/tport.h"
#include "core/wait.h"
#include "names/hosts.h"
#include "names/names.h"

#define API_VERSION "0.1.0"

/* A transport is usable when it carries the live magic. Closed structures are kept (never
 * freed) with a dead magic, so a stale pointer reads as closed instead of crashing. */
static csn_status api_check(csn_transport *t)
{
    if (!t || atomic_load(&t->magic) != CSNI_TPORT_MAGIC || !csni_p)
        return CSN_UNINITIALISED_TRANSPORT;
    return CSN_OK;
}

static csn_status api_check_buf(const void *buf, size_t len)
{
    if ((!buf && len) || len > CSNI_MAX_MSG)
        return CSN_INVALID_ARGUMENT;
    return CSN_OK;
}

/* A destination is acceptable when it is well formed and names a process of the job; a
 * transport of this process is looked up when the message is posted (match_post_self), those
 * of others when it arrives. The system transport is never a user's destination. */
static csn_status api_check_netid(struct csni_proc *p, csn_netid id)
{
    if (!csni_netid_wellformed(id) || csni_netid_tid(id) == CSNI_SYS_TPORT)
        return CSN_ILLEGAL_NETID; /* any process's hidden system transport too */
    if (csni_netid_rank(id) == p->me)
        return CSN_OK;
    /* Ids at or above the job size belong to forked processes; an unknown one is found
     * out when connecting (no published address). */
    return p->boot.launched ? CSN_OK : CSN_ILLEGAL_NETID;
}

csn_status csn_open(csn_transport **t)
{
    struct csni_proc *p;
    csn_status rv;
    if (!t)
        return CSN_INVALID_ARGUMENT;
    *t = NULL;
    if ((rv = csni_proc_get(&p)) != CSN_OK)
        return rv;
    return csni_tport_create(&p->tab, p->me, t);
}

csn_status csn_close(csn_transport **tp)
{
    struct csni_proc *p = csni_p;
    csn_transport *t;
    csn_status rv;
    if (!tp)
        return CSN_INVALID_ARGUMENT;
    t = *tp;
    if ((rv = api_check(t)) != CSN_OK)
        return rv;
    uint32_t expect = CSNI_TPORT_MAGIC;
    if (!atomic_compare_exchange_strong(&t->magic, &expect, CSNI_TPORT_DEAD))
        return CSN_UNINITIALISED_TRANSPORT; /* another thread closed it first */
    *tp = NULL;
    csni_tport_unpublish(&p->tab, t); /* before the drain takes t->lock: see tport_find */
    struct csni_op *held = csni_tport_unhold(p, t);
    /* Receivers that may still read our buffers (pulls) answer first. A peer that neither
     * answers nor dies within 5 s is left: a read it makes later delivers whatever the buffer
     * then holds, to it alone. */
    if (csni_tport_unpull(p, t)) {
        uint64_t until = csni_now_ns() + 5000000000ull;
        while (csni_tport_pull_pending(p, t)) {
            if (csni_now_ns() > until) {
                fprintf(stderr,
                        "csn[%d]: close: a receiver has not answered for a message it "
                        "was to pull after 5 s\n",
                        p->me);
                break;
            }
            csni_poll(p);
            sched_yield();
        }
    }
    /* Frames of ours still being written point into user buffers: let them finish (a dead
     * peer fails them), so the caller may free its buffers when we return. */
    while (csni_conns_sending(p, t)) {
        csni_poll(p);
        usleep(200);
    }
    csni_tport_drain(p, t, held);
    for (size_t i = 0; i < t->nnames; i++) {
        csni_names_unregister(t->names[i], t->id);
        free(t->names[i]);
    }
    free(t->names);
    csni_lock(&t->lock);
    t->names = NULL;
    t->nnames = 0;
    csni_unlock(&t->lock);
    csni_tport_bury(&p->tab, t);
    return CSN_OK;
}

csn_status csn_register_name(csn_transport *t, const char *name)
{
    csn_status rv;
    char *copy, **names;
    if ((rv = api_check(t)) != CSN_OK)
        return rv;
    if (!name || !csni_name_valid(name))
        return CSN_INVALID_ARGUMENT;
    if (!(copy = strdup(name)))
        return CSN_NO_HEAP;
    if ((rv = csni_names_register(name, t->id)) != CSN_OK)
        goto fail;
    csni_lock(&t->lock);
    names = realloc(t->names, (t->nnames + 1) * sizeof *names);
    if (names) {
        t->names = names;
        t->names[t->nnames++] = copy;
    }
    csni_unlock(&t->lock);
    if (!names) {
        csni_names_unregister(name, t->id);
        rv = CSN_NO_HEAP;
        goto fail;
    }
    return CSN_OK;
fail:
    free(copy);
    return rv;
}

csn_status csn_lookup_name(csn_netid *id, const char *name)
{
    struct csni_proc *p;
    csn_status rv;
    if (!id || !name || !csni_name_valid(name))
        return CSN_INVALID_ARGUMENT;
    if ((rv = csni_proc_get(&p)) != CSN_OK)
        return rv;
    return csni_names_lookup(name, p->tun.lookup_timeout_ms, id);
}

/* ---- operations ----
 * A non-blocking call's op comes from its transport's free list and is handed back by
 * csn_test. A blocking call's op lives on the caller's stack: it is on no list once done,
 * its completion takes no transport lock, and it costs no allocation. */
static void api_init_op(struct csni_op *op, csn_transport *t, csn_netid peer, void *buf, size_t len,
                        size_t *received)
{
    op->t = t;
    op->peer = peer;
    op->buf = buf;
    op->len = len;
    op->received = received;
}

/* A transmit that left at once, as a completion for csn_test: only what csni_complete,
 * csn_test, csni_op_free and a closing transport read of a done transmit is set (in a stream
 * of small messages the rest of csni_op_init was a tenth of csn_tx_nb's instructions). */
static void api_init_done_tx(struct csni_op *op, csn_transport *t, csn_netid to, const void *buf,
                             size_t len)
{
    api_init_op(op, t, to, (void *)buf, len, NULL);
    op->kind = CSNI_OP_TX;
    op->blocking = false;
    op->pull_asked = false;
}

/* op: a blocking call's own (stack) op to fill, or NULL for one from t's free list. */
static csn_status api_new_op(csn_transport *t, struct csni_op *op, csn_netid peer, void *buf,
                             size_t len, size_t *received, struct csni_op **out)
{
    if (op) {
        csni_op_init(op, t);
        op->blocking = true;
    } else {
        unsigned max = csni_p->tun.max_ops;
        csni_lock(&t->lock);
        op = csni_op_alloc(t, max);
        bool busy = !op && t->nops >= max;
        csni_unlock(&t->lock);
        if (!op)
            return busy ? CSN_BUSY : CSN_NO_HEAP;
    }
    api_init_op(op, t, peer, buf, len, received);
    *out = op;
    return CSN_OK;
}

static void api_free_op(csn_transport *t, struct csni_op *op)
{
    if (op->blocking)
        return;
    csni_lock(&t->lock);
    csni_op_free(t, op);
    csni_unlock(&t->lock);
}

static csn_status api_check_tx(csn_transport *t, csn_netid to, const void *buf, size_t len)
{
    csn_status rv;
    if ((rv = api_check(t)) != CSN_OK || (rv = api_check_buf(buf, len)) != CSN_OK)
        return rv;
    return api_check_netid(csni_p, to);
}

static csn_status api_tx(csn_transport *t, csn_netid to, const void *buf, size_t len,
                         struct csni_op *stack, struct csni_op **out)
{
    csn_status rv;
    struct csni_op *op;
    if ((rv = api_check_tx(t, to, buf, len)) != CSN_OK)
        return rv;
    if ((rv = api_new_op(t, stack, to, (void *)buf, len, NULL, &op)) != CSN_OK)
        return rv;
    if ((rv = csni_post_tx(t, op)) != CSN_OK) {
        api_free_op(t, op);
        return rv;
    }
    *out = op;
    return CSN_OK;
}

static csn_status api_rx(csn_transport *t, csn_netid from, void *buf, size_t len, size_t *received,
                         struct csni_op *stack, struct csni_op **out)
{
    csn_status rv;
    struct csni_op *op;
    if ((rv = api_check(t)) != CSN_OK || (rv = api_check_buf(buf, len)) != CSN_OK)
        return rv;
    /* A one-source receive may name a transport of this process that has closed since:
     * its messages may still be queued. Only the form and the process are checked. */
    if (from != CSN_NULL_NETID &&
        (!csni_netid_wellformed(from) || csni_netid_tid(from) == CSNI_SYS_TPORT ||
         (csni_netid_rank(from) != csni_p->me && !csni_p->boot.launched)))
        return CSN_ILLEGAL_NETID;
    if (stack) {
        if ((rv = api_new_op(t, stack, from, buf, len, received, &op)) != CSN_OK ||
            (rv = csni_post_rx(t, op)) != CSN_OK)
            return rv;
        *out = op;
        return CSN_OK;
    }
    /* Non-blocking: the op is taken from the free list and posted in one hold of t's lock. */
    bool gone = csni_rx_src_gone(from);
    unsigned max = csni_p->tun.max_ops;
    csni_lock(&t->lock);
    op = csni_op_alloc(t, max);
    if (!op) {
        bool busy = t->nops >= max;
        csni_unlock(&t->lock);
        return busy ? CSN_BUSY : CSN_NO_HEAP;
    }
    api_init_op(op, t, from, buf, len, received);
    if ((rv = csni_post_rx_locked(t, op, gone)) != CSN_OK) {
        api_free_op(t, op);
        return rv;
    }
    *out = op;
    return CSN_OK;
}

/* Waits for a blocking call's own op. Its request (a receive's clear-to-send) may still be
 * in a connection's hands after completion: the stack frame is given back only when the
 * writer has let go of it (a dead connection lets go too). */
static csn_status api_finish(csn_transport *t, struct csni_op *op, csn_netid *peer)
{
    struct csni_op *got;
    csni_wait(t, op, 0, CSN_FOREVER, &got);
    while (atomic_load_explicit(&op->sr.queued, memory_order_acquire)) {
        csni_poll(csni_p);
        sched_yield();
    }
    if (peer)
        *peer = op->peer;
    return op->status;
}

/* A small message to a ready peer whose connection has nothing queued is written straight
 * into the shared-memory ring (csni_tx_now, as csn_tx does): its completion is known at once
 * and queued in the same hold of t->lock that takes its op from the free list (the op first:
 * a message must not leave when CSN_BUSY is due). Lock order: the transport's lock before
 * the peer's and the writer's, which csni_tx_now may take. Otherwise the general path, with
 * the op already taken. */
csn_status csn_tx_nb(csn_transport *t, csn_netid to, const void *buf, size_t len)
{
    struct csni_op *op;
    csn_status rv = api_check_tx(t, to, buf, len);
    if (rv != CSN_OK)
        return rv;
    csni_debug_on_tx(csni_p, to, len, false);
    unsigned max = csni_p->tun.max_ops;
    csni_lock(&t->lock);
    op = csni_op_take(t, max);
    if (op) {
        if (csni_tx_now(t, to, buf, len)) {
            api_init_done_tx(op, t, to, buf, len);
            csni_complete(t, op, CSN_OK);
            csni_unlock(&t->lock);
            return CSN_OK;
        }
        csni_op_init(op, t);
        api_init_op(op, t, to, (void *)buf, len, NULL);
    }
    bool busy = !op && t->nops >= max;
    csni_unlock(&t->lock);
    if (!op)
        return busy ? CSN_BUSY : CSN_NO_HEAP;
    if ((rv = csni_post_tx(t, op)) != CSN_OK)
        api_free_op(t, op);
    return rv;
}

csn_status csn_rx_nb(csn_transport *t, void *buf, size_t len, size_t *received)
{
    struct csni_op *op;
    return api_rx(t, CSN_NULL_NETID, buf, len, received, NULL, &op);
}

csn_status csn_rx_nb_from(csn_transport *t, csn_netid from, void *buf, size_t len, size_t *received)
{
    struct csni_op *op;
    return api_rx(t, from, buf, len, received, NULL, &op);
}

csn_status csn_tx(csn_transport *t, csn_netid to, const void *buf, size_t len)
{
    struct csni_op own, *op;
    /* The checks first: the small-message path trusts its arguments. */
    csn_status rv = api_check_tx(t, to, buf, len);
    if (rv != CSN_OK)
        return rv;
    csni_debug_on_tx(csni_p, to, len, true);
    if (csni_tx_now(t, to, buf, len))
        return CSN_OK;
    rv = api_tx(t, to, buf, len, &own, &op);
    return rv == CSN_OK ? api_finish(t, op, NULL) : rv;
}

csn_status csn_rx(csn_transport *t, csn_netid *from, void *buf, size_t len, size_t *received)
{
    struct csni_op own, *op;
    csn_status rv;
    if (!from)
        return CSN_INVALID_ARGUMENT;
    if ((rv = api_rx(t, *from, buf, len, received, &own, &op)) != CSN_OK)
        return rv;
    return api_finish(t, op, from);
}

csn_status csn_test(csn_transport *t, unsigned flags, uint64_t timeout_us, csn_netid *id,
                    void **buf, csn_status *op_status)
{
    struct csni_op res, *op = &res;
    csn_status rv;
    if ((rv = api_check(t)) != CSN_OK)
        return rv;
    if (flags == 0 || (flags & ~(unsigned)(CSN_TX | CSN_RX)))
        return CSN_INVALID_ARGUMENT;
    if ((rv = csni_test_wait(t, flags, timeout_us, op)) != CSN_OK)
        return rv;
    if (id)
        *id = op->peer;
    if (buf)
        *buf = op->buf;
    if (op_status)
        *op_status = op->status;
    return op->kind == CSNI_OP_TX ? CSN_TX_READY : CSN_RX_READY;
}

/* ---- job helpers ---- */
int csn_job_rank(void)
{
    struct csni_proc *p;
    return csni_proc_get(&p) == CSN_OK ? p->boot.rank : 0;
}

int csn_job_size(void)
{
    struct csni_proc *p;
    return csni_proc_get(&p) == CSN_OK ? p->boot.size : 1;
}

/* The barrier's messages go over the hidden system transports (id 1 of every rank), so the
 * user's posted receives never see them. Each carries the barrier's generation (ranks out of
 * step cannot happen between live ranks: a mismatch means a lost peer) and two flags: in the
 * first barrier's release, rank 0's choice of algorithm for the rest of the job
 * (API_BARRIER_FLAT); in the second barrier, whether the sender and all it heard from have the
 * host barrier's segment (API_BARRIER_HOST, see core/hostbar.h). */
#define API_BARRIER_FLAT ((uint64_t)1 << 63)
#define API_BARRIER_HOST ((uint64_t)1 << 62)
#define API_BARRIER_FLAGS (API_BARRIER_FLAT | API_BARRIER_HOST)

static csn_status api_barrier_tx(struct csni_proc *p, int to, uint64_t *msg)
{
    csn_netid id = csni_netid_make(to, CSNI_SYS_TPORT);
    struct csni_op txo, *tx;
    csn_status rv;
    if (csni_tx_now(p->sys, id, msg, sizeof *msg))
        return CSN_OK;
    if ((rv = api_new_op(p->sys, &txo, id, msg, sizeof *msg, NULL, &tx)) != CSN_OK ||
        (rv = csni_post_tx(p->sys, tx)) != CSN_OK)
        return rv;
    return api_finish(p->sys, tx, NULL);
}

/* Waits for the message of generation gen from rank `from`; *flags: its flags. */
static csn_status api_barrier_rx(struct csni_proc *p, int from, uint64_t gen, uint64_t *flags)
{
    struct csni_op rxo, *rx;
    uint64_t got = 0;
    size_t len = 0;
    csn_status rv;
    if ((rv = api_new_op(p->sys, &rxo, csni_netid_make(from, CSNI_SYS_TPORT), &got, sizeof got,
                         &len, &rx)) != CSN_OK ||
        (rv = csni_post_rx(p->sys, rx)) != CSN_OK || (rv = api_finish(p->sys, rx, NULL)) != CSN_OK)
        return rv;
    if (len != sizeof got || (got & ~API_BARRIER_FLAGS) != gen)
        return CSN_PEER_LOST;
    *flags = got & API_BARRIER_FLAGS;
    return CSN_OK;
}

/* Dissemination: round k, tell rank+2^k and hear rank-2^k; log2(N) rounds, all ranks at once.
 * *host: our API_BARRIER_HOST in, that of all ranks (ANDed over what we hear) out. */
static csn_status api_barrier_flat(struct csni_proc *p, int me, int n, uint64_t gen, bool *host)
{
    csn_status rv = CSN_OK;
    for (int k = 1; k < n && rv == CSN_OK; k <<= 1) {
        uint64_t msg = gen | (*host ? API_BARRIER_HOST : 0), flags = 0;
        if ((rv = api_barrier_tx(p, (me + k) % n, &msg)) == CSN_OK &&
            (rv = api_barrier_rx(p, (me - k % n + n) % n, gen, &flags)) == CSN_OK)
            *host = *host && (flags & API_BARRIER_HOST);
    }
    return rv;
}

/* A binomial tree rooted at rank 0: a rank hears from its children (me + 2^k for 2^k below
 * its lowest set bit), tells its parent (me without that bit), hears the parent's release and
 * passes it on, largest subtree first. 2 log2(N) steps, but every rank waits twice at most and
 * talks to 2 ranks on average, where dissemination has each wait log2(N) times and connect to
 * log2(N) others. With many ranks on few CPUs every wait is a sleep and a wake-up (tens of us
 * on this kind of VM): measured on 2 CPUs (BENCHMARKS.md), the tree takes 1.2-1.4x
 * dissemination's time per barrier at 8 and 16 ranks, 0.37x at 32 and 64; a tiny nettest of
 * 1024 ranks 0.54x the wall time. The first barrier of a job is a tree (no connections to log2(N)
 * peers before anyone can choose); rank 0 then chooses for the rest of the job and says so in the
 * release: the tree when its host runs more ranks than CPUs and the job has more than
 * API_BARRIER_TREE_MIN ranks, else dissemination. *host: as in api_barrier_flat (the children's
 * answers go up, rank 0's conclusion comes down in the release). */
#define API_BARRIER_TREE_MIN 16
static csn_status api_barrier_tree(struct csni_proc *p, int me, int n, uint64_t gen, bool *host)
{
    csn_status rv = CSN_OK;
    bool flat = !p->tun.oversubscribed || n <= API_BARRIER_TREE_MIN;
    uint64_t flags = 0;
    unsigned low = me ? (unsigned)me & -(unsigned)me : 1u << 30;
    for (unsigned k = 1; k < low && me + (int)k < n && rv == CSN_OK; k <<= 1)
        if ((rv = api_barrier_rx(p, me + (int)k, gen, &flags)) == CSN_OK)
            *host = *host && (flags & API_BARRIER_HOST);
    uint64_t msg = gen | (*host ? API_BARRIER_HOST : 0);
    if (me && rv == CSN_OK && (rv = api_barrier_tx(p, me & (me - 1), &msg)) == CSN_OK &&
        (rv = api_barrier_rx(p, me & (me - 1), gen, &flags)) == CSN_OK) {
        flat = (flags & API_BARRIER_FLAT) != 0;
        *host = (flags & API_BARRIER_HOST) != 0;
    }
    msg = gen | (flat ? API_BARRIER_FLAT : 0) | (*host ? API_BARRIER_HOST : 0);
    unsigned top = 1;
    while (top < low && me + (int)top < n)
        top <<= 1;
    for (unsigned k = top >> 1; k >= 1 && rv == CSN_OK; k >>= 1)
        rv = api_barrier_tx(p, me + (int)k, &msg);
    if (rv == CSN_OK)
        p->barrier_flat = flat;
    return rv;
}

/* A barrier over messages. The first two of a job that may use the host barrier set it up:
 * rank 0 makes the segment before the first, the others open it before the second, and the
 * second's messages carry whether each could; from the third on, all use it or none. */
static csn_status api_barrier_msg(struct csni_proc *p, int me, int n, uint64_t gen)
{
    bool setup = gen <= 2 && p->tun.host_barrier;
    if (setup && gen == (me == 0 ? 1u : 2u))
        p->hostbar_new = me == 0 ? csni_hostbar_create(p) : csni_hostbar_open(p);
    bool host = setup && gen == 2 && p->hostbar_new != NULL;
    csn_status rv = n == 2 || p->barrier_flat ? api_barrier_flat(p, me, n, gen, &host)
                                              : api_barrier_tree(p, me, n, gen, &host);
    if (setup && gen == 2) {
        if (me == 0 && p->hostbar_new)
            csni_hostbar_unlink(p); /* ours: a file that was there before stays */
        if (rv == CSN_OK && host)
            p->hostbar = p->hostbar_new;
        else
            csni_hostbar_close(p->hostbar_new);
        p->hostbar_new = NULL;
    }
    return rv;
}

csn_status csn_job_barrier(csn_transport *t)
{
    struct csni_proc *p = csni_p;
    csn_status rv;
    if ((rv = api_check(t)) != CSN_OK)
        return rv;
    if (p->forked)
        return CSN_INVALID_ARGUMENT; /* only the ranks themselves take part */
    int n = p->boot.size, me = p->boot.rank;
    if (n == 1)
        return CSN_OK;
    csni_mutex_lock(&p->barrier_lock);
    uint64_t gen = ++p->barrier_gen;
    rv = p->hostbar ? csni_hostbar_wait(p, p->hostbar) : api_barrier_msg(p, me, n, gen);
    csni_mutex_unlock(&p->barrier_lock);
    return rv;
}

/* ---- extensions ---- */
csn_netid csn_netid_of(const csn_transport *t)
{
    return api_check((csn_transport *)t) == CSN_OK ? t->id : CSN_NULL_NETID;
}

int csn_netid_rank(csn_netid id)
{
    return csni_netid_wellformed(id) ? csni_netid_rank(id) : -1;
}

const char *csn_transport_name(void)
{
    struct csni_proc *p;
    return csni_proc_get(&p) == CSN_OK ? csni_within_name(p) : "none";
}

const char *csn_version(void)
{
    return API_VERSION;
}
