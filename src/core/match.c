/* match.c: the message protocol: posting, matching, eager and rendezvous delivery, completion.
 *
 * Protocol. A message of at most eager_max bytes for which the sender holds enough eager
 * credit travels as one EAGER frame; any other travels as RTS (no payload), the receiver
 * answers CTS once a receive matches, and the sender then writes one DATA frame read
 * straight into the receive buffer. Credit bounds what a receiver must buffer for messages
 * nobody asked for (CSN_UNEXPECTED_LIMIT): when it is spent, senders fall back to RTS and
 * their transmits stay incomplete until the receiver posts (back-pressure, nothing lost).
 * Matching happens when the header arrives, in arrival order, so per-pair FIFO order holds.
 *
 * Lock order: conn rx_lock -> transport lock -> peer lock -> conn tx_lock. A transport lock is
 * never taken while a tx_lock is held and two transport locks are never held together:
 * completions found under those locks are deferred until they are released. */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "core/core.h"

#define CSNI_EAGER_OVERHEAD 64 /* credit charged per eager message besides its bytes */

static int64_t match_cost(size_t len)
{
    return (int64_t)len + CSNI_EAGER_OVERHEAD;
}

/* ---- lists ---- */
static void oplist_push(struct csni_oplist *l, struct csni_op *op)
{
    op->next = NULL;
    if (l->tail)
        l->tail->next = op;
    else
        l->head = op;
    l->tail = op;
}

/* Unlinks and returns the first op for which it matches (op == want, or op->token == token
 * when want is NULL), or NULL. */
static struct csni_op *oplist_take(struct csni_oplist *l, struct csni_op *want, uint64_t token)
{
    struct csni_op *prev = NULL;
    for (struct csni_op *op = l->head; op; prev = op, op = op->next) {
        if (want ? op != want : op->token != token)
            continue;
        if (prev)
            prev->next = op->next;
        else
            l->head = op->next;
        if (l->tail == op)
            l->tail = prev;
        op->next = NULL;
        return op;
    }
    return NULL;
}

static struct csni_op *oplist_take_token(struct csni_oplist *l, uint64_t token)
{
    return oplist_take(l, NULL, token);
}

static void oplist_remove(struct csni_oplist *l, struct csni_op *want)
{
    oplist_take(l, want, 0);
}

static void ux_push(csn_transport *t, struct csni_unex *u)
{
    u->next = NULL;
    if (t->ux_tail)
        t->ux_tail->next = u;
    else
        t->ux_head = u;
    t->ux_tail = u;
}

static void ux_unlink(csn_transport *t, struct csni_unex *prev, struct csni_unex *u)
{
    if (prev)
        prev->next = u->next;
    else
        t->ux_head = u->next;
    if (t->ux_tail == u)
        t->ux_tail = prev;
    u->next = NULL;
}

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
    oplist_remove(&t->posted, op);
    op->peer = src;
    op->msglen = len;
    op->pp = pp;
}

/* ---- storage ---- */
static unsigned pool_class(size_t len)
{
    unsigned c = 6; /* 64 bytes smallest */
    while (((size_t)1 << c) < len)
        c++;
    return c;
}

void *csni_pool_get(struct csni_proc *p, size_t len)
{
    unsigned c = pool_class(len);
    void *b = NULL;
    pthread_mutex_lock(&p->lock);
    if (p->pool[c]) {
        b = p->pool[c];
        p->pool[c] = *(void **)b;
    }
    pthread_mutex_unlock(&p->lock);
    /* On a cache line: a copy into a destination off a 16-byte boundary can run many times
     * slower (bench/copyalign). Sizes are powers of two from 64, as aligned_alloc wants. */
    return b ? b : aligned_alloc(64, (size_t)1 << c);
}

void csni_pool_put(struct csni_proc *p, void *buf, size_t len)
{
    unsigned c = pool_class(len);
    pthread_mutex_lock(&p->lock);
    *(void **)buf = p->pool[c];
    p->pool[c] = buf;
    pthread_mutex_unlock(&p->lock);
}

struct csni_unex *csni_unex_alloc(struct csni_proc *p)
{
    struct csni_unex *u;
    pthread_mutex_lock(&p->lock);
    u = p->free_unex;
    if (u)
        p->free_unex = u->next;
    pthread_mutex_unlock(&p->lock);
    if (!u && !(u = malloc(sizeof *u)))
        return NULL;
    memset(u, 0, sizeof *u);
    return u;
}

void csni_unex_free(struct csni_proc *p, struct csni_unex *u)
{
    pthread_mutex_lock(&p->lock);
    u->next = p->free_unex;
    p->free_unex = u;
    pthread_mutex_unlock(&p->lock);
}

struct csni_op *csni_op_alloc(csn_transport *t)
{
    struct csni_op *op, **link = &t->free_ops;
    if (t->nops >= csni_p->max_ops)
        return NULL;
    /* Skip ops whose request (a CTS) is still owned by a connection's writer; never wait for
     * one here: the writer's progress may need this transport's lock. */
    while (*link && atomic_load_explicit(&(*link)->sr.queued, memory_order_acquire))
        link = &(*link)->next;
    if ((op = *link) != NULL)
        *link = op->next;
    else if (!(op = malloc(sizeof *op)))
        return NULL;
    csni_op_init(op, t);
    t->nops++;
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
    op->pp = NULL;
    op->sr.next = NULL;
    op->sr.payload = NULL;
    op->sr.paylen = 0;
    op->sr.off = 0;
    op->sr.op = NULL;
    op->sr.heap = false;
    op->sr.chunked = false;
    op->sr.sent = 0;
    op->got = 0;
    atomic_init(&op->sr.queued, false);
}

void csni_op_free(csn_transport *t, struct csni_op *op)
{
    op->state = CSNI_ST_FREE;
    op->next = t->free_ops;
    t->free_ops = op;
    t->nops--;
}

/* ---- completion ---- */
/* Wakes t's sleepers: those on its futex, and the poller if it waits for t in epoll. */
static void match_wake_now(csn_transport *t)
{
    csni_futex_wake(&t->wake_seq);
    if (!csni_polling && atomic_load(&csni_p->poller_t) == t)
        csni_kick_epoll(csni_p);
}

#define MATCH_DEFER 16
static _Thread_local struct {
    unsigned depth, n;
    csn_transport *t[MATCH_DEFER];
} match_deferred __attribute__((tls_model("initial-exec")));

void csni_defer_wakes(bool on)
{
    if (on) {
        match_deferred.depth++;
        return;
    }
    if (--match_deferred.depth > 0)
        return;
    for (unsigned i = 0; i < match_deferred.n; i++)
        match_wake_now(match_deferred.t[i]);
    match_deferred.n = 0;
}

/* wake_seq has moved already (spinners see it at once); the system calls may wait for the
 * end of the reader's batch. Transports are never freed, so a deferred pointer stays valid. */
static void match_wake_sleepers(csn_transport *t)
{
    if (match_deferred.depth == 0) {
        match_wake_now(t);
        return;
    }
    for (unsigned i = 0; i < match_deferred.n; i++)
        if (match_deferred.t[i] == t)
            return;
    if (match_deferred.n == MATCH_DEFER) {
        match_wake_now(t);
        return;
    }
    match_deferred.t[match_deferred.n++] = t;
}

void csni_wake(csn_transport *t)
{
    /* seq_cst pairs with the sleeper's increment of sleepers then load of wake_seq
     * (csni_wait): one of the two sides always sees the other. */
    atomic_fetch_add(&t->wake_seq, 1);
    if (atomic_load(&t->sleepers) > 0)
        match_wake_sleepers(t);
}

void csni_complete(csn_transport *t, struct csni_op *op, csn_status st)
{
    bool blocking = op->blocking;
    if (op->kind == CSNI_OP_RX) {
        size_t got = op->msglen < op->len ? op->msglen : op->len;
        if (st == CSN_OK && op->msglen > op->len)
            st = CSN_OVERRUN;
        if (st == CSN_PEER_LOST)
            got = 0;
        if (op->received)
            *op->received = got;
    }
    op->status = st;
    if (blocking) {
        /* A blocking call's op is on no list and lives on its caller's stack: after this
         * store the caller may return. seq_cst pairs with the sleeper's increment of
         * sleepers before its look at the state (csni_wait): one of them sees the other. */
        atomic_store(&op->state, CSNI_ST_DONE);
        if (atomic_load(&t->sleepers) > 0) {
            atomic_fetch_add(&t->wake_seq, 1);
            match_wake_sleepers(t);
        }
        return;
    }
    atomic_store_explicit(&op->state, CSNI_ST_DONE, memory_order_relaxed);
    oplist_push(&t->cq, op);
    csni_wake(t);
}

/* Completes an op without holding its transport's lock (a blocking call's op needs none). */
static void match_complete_unlocked(struct csni_op *op, csn_status st)
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

/* ---- credit ---- */
void csni_return_credit(struct csni_peer *pp, int64_t bytes)
{
    /* Counted without the lock; the lock only when a CREDIT frame is due. Each frame is its
     * own request: one still queued must not hold back what came due since (nothing would
     * send it once the peer, short of credit, stops sending). */
    int64_t owed = atomic_fetch_add(&pp->owed, bytes) + bytes;
    if (owed < csni_p->window / 4)
        return;
    struct csni_sendreq *sr = calloc(1, sizeof *sr);
    if (!sr)
        return; /* stays owed: the next return tries again */
    sr->heap = true;
    csni_lock(&pp->lock);
    struct csni_conn *c = pp->conn;
    if (c && !pp->lost && (owed = atomic_exchange(&pp->owed, 0)) > 0) {
        struct csni_frame f = {.type = CSNI_F_CREDIT, .len = (uint64_t)owed};
        csni_frame_encode(&f, sr->hdr);
        csni_conn_send(c, sr);
        sr = NULL;
    }
    csni_unlock(&pp->lock);
    free(sr);
}

/* Credit for a message its connection's reader consumed (rx_lock held): gathered per
 * connection without an atomic, handed to the peer's count a sixteenth of a window at a time
 * (at most that much stays unreturned while the connection is quiet). */
static void match_owe(struct csni_conn *c, int64_t bytes)
{
    c->owed += bytes;
    if (c->owed >= csni_p->window / 16) {
        csni_return_credit(c->pp, c->owed);
        c->owed = 0;
    }
}

/* ---- sending ---- */

static csn_status match_post_self(csn_transport *t, struct csni_op *op)
{
    struct csni_proc *p = csni_p;
    csn_transport *d = csni_tport_find(p, csni_netid_tid(op->peer));
    struct csni_op *rx;
    if (!d)
        return CSN_ILLEGAL_NETID;
    if ((rx = match_first_posted(d, t->id)) != NULL) {
        match_take_posted(d, rx, t->id, NULL, op->len);
        memcpy(rx->buf, op->buf, op->len < rx->len ? op->len : rx->len);
        csni_complete(d, rx, CSN_OK);
        csni_unlock(&d->lock);
        match_complete_unlocked(op, CSN_OK);
        return CSN_OK;
    }
    struct csni_unex *u = csni_unex_alloc(p);
    if (!u) {
        csni_unlock(&d->lock);
        return CSN_NO_HEAP;
    }
    u->src = t->id;
    u->len = op->len;
    size_t held = atomic_load(&p->self_unexpected);
    if (op->len <= p->eager_max && held + op->len <= p->unexpected_limit &&
        (u->data = csni_pool_get(p, op->len ? op->len : 1)) != NULL) {
        /* Buffered like an eager message: the transmit completes now. */
        atomic_fetch_add(&p->self_unexpected, op->len);
        memcpy(u->data, op->buf, op->len);
        u->kind = CSNI_UX_EAGER;
        u->complete = true;
        ux_push(d, u);
        csni_unlock(&d->lock);
        match_complete_unlocked(op, CSN_OK);
        return CSN_OK;
    }
    /* Parked: the receive that matches copies straight from the sender's buffer. */
    u->kind = CSNI_UX_SELF;
    u->txop = op;
    op->state = CSNI_ST_SELF_WAIT;
    ux_push(d, u);
    csni_unlock(&d->lock);
    return CSN_OK;
}

/* Takes eager credit for cost bytes, without a lock; false when there is not enough (two
 * racing takers may both give back and fall to rendezvous: harmless). */
static bool match_take_credit(struct csni_peer *pp, int64_t cost)
{
    if (atomic_load_explicit(&pp->credit, memory_order_relaxed) < cost)
        return false;
    if (atomic_fetch_sub(&pp->credit, cost) >= cost)
        return true;
    atomic_fetch_add(&pp->credit, cost);
    return false;
}

/* The small-message path of a blocking transmit. */
bool csni_tx_now(csn_transport *t, csn_netid to, const void *buf, size_t len)
{
    struct csni_proc *p = csni_p;
    if (!p || p->conn_per_transport || len > p->shm_eager || (!buf && len) ||
        atomic_load_explicit(&t->magic, memory_order_acquire) != CSNI_TPORT_MAGIC ||
        !csni_netid_wellformed(to))
        return false;
    int rank = csni_netid_rank(to);
    if (rank == p->me || rank >= CSNI_PEER_TAB)
        return false;
    struct csni_peer *pp = atomic_load_explicit(&p->peer_tab[rank], memory_order_acquire);
    if (!pp || !atomic_load_explicit(&pp->ready, memory_order_acquire))
        return false;
    struct csni_conn *c = pp->conn; /* final once ready */
    int64_t cost = match_cost(len);
    if (!c || !c->shm || len > pp->eager_max || !match_take_credit(pp, cost))
        return false;
    uint8_t hdr[CSNI_FRAME_SIZE];
    struct csni_frame f = {
        .type = CSNI_F_EAGER, .dst = csni_netid_tid(to), .src = t->tid, .len = len};
    csni_frame_encode(&f, hdr);
    if (csni_conn_send_now(c, hdr, buf, len))
        return true;
    atomic_fetch_add(&pp->credit, cost);
    return false;
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
    pp = rank < CSNI_PEER_TAB ? atomic_load_explicit(&p->peer_tab[rank], memory_order_acquire)
                              : NULL;
    if ((!pp || !atomic_load_explicit(&pp->ready, memory_order_acquire)) &&
        !(pp = csni_peer_get(p, rank, &rv)))
        return rv;
    op->pp = pp;
    struct csni_frame f = {.dst = csni_netid_tid(op->peer), .src = t->tid, .len = op->len};
    /* pp->conn is final once csni_peer_get returned (NULL: never reached, lost). */
    struct csni_conn *c = p->conn_per_transport ? NULL : pp->conn;
    if (c && op->len <= pp->eager_max && match_take_credit(pp, match_cost(op->len))) {
        /* Eager. A dead connection completes the op with CSN_PEER_LOST when queued. */
        f.type = CSNI_F_EAGER;
        csni_frame_encode(&f, op->sr.hdr);
        if (c->shm && csni_conn_send_now(c, op->sr.hdr, op->buf, op->len)) {
            /* Written: the small-message path. A blocking call's op is its own thread's,
             * nobody else waits for it. */
            if (op->blocking) {
                op->status = CSN_OK;
                atomic_store_explicit(&op->state, CSNI_ST_DONE, memory_order_release);
            } else {
                match_complete_unlocked(op, CSN_OK);
            }
            return CSN_OK;
        }
        op->sr.payload = op->buf;
        op->sr.paylen = op->len;
        op->sr.op = op;
        csni_conn_send(c, &op->sr); /* may complete op: no lock held */
        return CSN_OK;
    }
    csni_lock(&pp->lock);
    if (pp->lost) {
        csni_unlock(&pp->lock);
        match_complete_unlocked(op, CSN_PEER_LOST);
        return CSN_OK;
    }
    if (p->conn_per_transport && op->len <= pp->eager_max &&
        match_take_credit(pp, match_cost(op->len))) {
        f.type = CSNI_F_EAGER;
        op->sr.payload = op->buf;
        op->sr.paylen = op->len;
    } else {
        op->token = atomic_fetch_add(&p->next_token, 1);
        f.type = CSNI_F_RTS;
        f.cookie = op->token;
        if (pp->conn->shm && p->cma)
            f.cookie2 = (uint64_t)(uintptr_t)op->buf; /* the receiver may pull it */
        op->state = CSNI_ST_WAIT_CTS;
        oplist_push(&pp->wait_cts, op);
        op->sr.payload = NULL;
        op->sr.paylen = 0;
    }
    csni_frame_encode(&f, op->sr.hdr);
    op->sr.op = op;
    c = pp->conn;
    csni_unlock(&pp->lock);
    if (p->conn_per_transport)
        c = csni_send_conn(t, pp);
    /* Outside the peer lock: writing may complete the op at once. Frames of one thread
     * still leave in call order, which is all per-pair FIFO needs. */
    csni_conn_send(c, &op->sr);
    return CSN_OK;
}

/* Called by the stream core when a frame's last byte is written, with no lock held. */
void csni_sent(struct csni_op *op, const uint8_t *hdr)
{
    uint8_t type = hdr[2];
    if (type == CSNI_F_EAGER || type == CSNI_F_DATA)
        match_complete_unlocked(op, CSN_OK);
}

/* ---- receiving: a receive is posted ---- */

/* Copies n bytes between local and another process's memory (process_vm_readv/writev).
 * Returns 0, or the errno that stopped it. */
static int match_vm_copy(pid_t pid, void *local, uint64_t remote, size_t n, bool write)
{
    size_t done = 0;
    while (done < n) {
        struct iovec l = {.iov_base = (uint8_t *)local + done, .iov_len = n - done};
        struct iovec r = {.iov_base = (void *)(uintptr_t)(remote + done), .iov_len = n - done};
        ssize_t got = write ? process_vm_writev(pid, &l, 1, &r, 1, 0)
                            : process_vm_readv(pid, &l, 1, &r, 1, 0);
        if (got > 0)
            done += (size_t)got;
        else if (got == 0)
            return EFAULT;
        else if (errno != EINTR)
            return errno;
    }
    return 0;
}

/* Sends a control frame that is not an op's own (a split CTS, a PUSHED note): a heap request
 * the writer frees. False when the peer is lost or memory is short. */
static bool match_send_note(struct csni_peer *pp, const struct csni_frame *f)
{
    struct csni_sendreq *sr = calloc(1, sizeof *sr);
    if (!sr)
        return false;
    sr->heap = true;
    csni_frame_encode(f, sr->hdr);
    csni_lock(&pp->lock);
    bool ok = !pp->lost && pp->conn;
    if (ok)
        csni_conn_send(pp->conn, sr);
    csni_unlock(&pp->lock);
    if (!ok)
        free(sr);
    return ok;
}

/* Copies a rendezvous message straight from the sender's memory, then tells the sender it is
 * done (CTS PULLED). No transport or peer lock held. With split (a receive posted before the
 * RTS came, read under its connection's device lock, large enough), the receiver first asks
 * the sender to write the second half itself (CTS SPLIT) and pulls only the first: both
 * processes copy at once; the sender's PUSHED note completes the receive. Returns false when
 * the kernel refuses (the caller then falls back to CTS and DATA through the connection). */
static bool match_pull(struct csni_op *op, pid_t pid, uint64_t raddr, uint64_t sender_token,
                       bool split)
{
    struct csni_proc *p = csni_p;
    struct csni_peer *pp = op->pp;
    size_t n = op->msglen < op->len ? op->msglen : op->len, mine = n;
    csn_status st = CSN_OK;
    if (split && p->split_min && n >= p->split_min && !p->conn_per_transport) {
        struct csni_frame g = {.type = CSNI_F_CTS,
                               .aux = CSNI_CTS_SPLIT,
                               .len = n,
                               .cookie = sender_token,
                               .cookie2 = (uint64_t)(uintptr_t)op->buf,
                               .dst = (uint32_t)op->token,
                               .src = (uint32_t)(op->token >> 32)};
        if (match_send_note(pp, &g))
            mine = (size_t)csni_split_at(n);
        else
            split = false; /* lost or no memory: pull it all */
    } else {
        split = false;
    }
    int e = match_vm_copy(pid, op->buf, raddr, mine, false);
    if (e == ESRCH) {
        st = CSN_PEER_LOST;
    } else if (e != 0) {
        if (e == EPERM || e == ENOSYS)
            p->cma = false; /* probed: this kernel or policy says no; never try again */
        if (!split)
            return false;
        csni_conn_fail(pp->conn, "cannot read the sender's memory for a split transfer");
        match_complete_unlocked(op, CSN_PEER_LOST);
        return true;
    }
    if (st == CSN_OK) {
        struct csni_frame f = {
            .type = CSNI_F_CTS, .aux = CSNI_CTS_PULLED, .len = mine, .cookie = sender_token};
        csni_frame_encode(&f, op->sr.hdr);
        op->sr.payload = NULL;
        op->sr.paylen = 0;
        op->sr.op = NULL;
        csni_lock(&pp->lock);
        if (pp->lost) {
            st = CSN_PEER_LOST;
        } else {
            /* Listed only now, the copy done: the PUSHED note comes on the connection whose
             * device lock our caller holds, so it cannot be read before this. */
            if (split)
                oplist_push(&pp->wait_data, op);
            csni_conn_send(pp->conn, &op->sr);
        }
        csni_unlock(&pp->lock);
    }
    if (!split || st != CSN_OK)
        match_complete_unlocked(op, st);
    return true;
}

/* Sends CTS for a matched RTS; op is an rx already marked WAIT_DATA. t->lock held. */
static void match_send_cts(struct csni_op *op, uint64_t sender_token)
{
    struct csni_peer *pp = op->pp;
    struct csni_frame f = {.type = CSNI_F_CTS,
                           .aux = CSNI_CTS_OK,
                           .len = op->msglen < op->len ? op->msglen : op->len,
                           .cookie = sender_token,
                           .cookie2 = op->token};
    csni_lock(&pp->lock);
    if (pp->lost) {
        csni_unlock(&pp->lock);
        csni_complete(op->t, op, CSN_PEER_LOST);
        return;
    }
    oplist_push(&pp->wait_data, op);
    csni_frame_encode(&f, op->sr.hdr);
    op->sr.payload = NULL;
    op->sr.paylen = 0;
    op->sr.op = NULL;
    csni_conn_send(pp->conn, &op->sr); /* no op attached: completes nothing */
    csni_unlock(&pp->lock);
}

csn_status csni_post_rx(csn_transport *t, struct csni_op *op)
{
    struct csni_proc *p = csni_p;
    struct csni_unex *u, *prev = NULL;
    struct csni_op *deferred = NULL;

    op->kind = CSNI_OP_RX;
    op->state = CSNI_ST_POSTED;
    /* Looked up before taking t's lock (the table lock comes first in the lock order). */
    bool src_gone = op->peer != CSN_NULL_NETID && csni_netid_rank(op->peer) == p->me &&
                    !csni_tport_exists(p, csni_netid_tid(op->peer));
    csni_lock(&t->lock);
    for (u = t->ux_head; u; prev = u, u = u->next)
        if (!u->rxop && match_accepts(op->peer, u->src))
            break;
    if (!u) {
        if (op->peer != CSN_NULL_NETID && csni_netid_rank(op->peer) == p->me) {
            /* From a transport of ours that no longer exists, nothing more can come. */
            if (src_gone) {
                csni_complete(t, op, CSN_PEER_LOST);
                csni_unlock(&t->lock);
                return CSN_OK;
            }
        } else if (op->peer != CSN_NULL_NETID) {
            /* A one-source receive from a process already lost can never complete. */
            /* Look, don't connect: connecting may block or declare the peer lost, which
             * takes transport locks, and we hold t's. */
            struct csni_peer *pp = p->boot.launched && atomic_load(&p->nlost) > 0
                                       ? csni_peer_lookup(p, csni_netid_rank(op->peer))
                                       : NULL;
            bool lost = false;
            if (pp) {
                csni_lock(&pp->lock);
                lost = pp->lost;
                csni_unlock(&pp->lock);
            }
            if (lost) {
                csni_complete(t, op, CSN_PEER_LOST);
                csni_unlock(&t->lock);
                return CSN_OK;
            }
        }
        oplist_push(&t->posted, op);
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
        ux_unlink(t, prev, u);
        memcpy(op->buf, u->data, u->len < op->len ? u->len : op->len);
        csni_pool_put(p, u->data, u->len ? u->len : 1);
        if (u->pp)
            csni_return_credit(u->pp, match_cost(u->len));
        else
            atomic_fetch_sub(&p->self_unexpected, u->len);
        csni_complete(t, op, CSN_OK);
        break;
    case CSNI_UX_SELF:
        ux_unlink(t, prev, u);
        memcpy(op->buf, u->txop->buf, u->len < op->len ? u->len : op->len);
        deferred = u->txop;
        csni_complete(t, op, CSN_OK);
        break;
    case CSNI_UX_RTS:
        ux_unlink(t, prev, u);
        op->pp = u->pp;
        op->token = atomic_fetch_add(&p->next_token, 1);
        op->state = CSNI_ST_WAIT_DATA;
        if (u->raddr && p->cma) {
            pid_t pid = u->pid;
            uint64_t raddr = u->raddr, token = u->token;
            csni_unlock(&t->lock);
            csni_unex_free(p, u);
            if (match_pull(op, pid, raddr, token, false))
                return CSN_OK;
            csni_lock(&t->lock);
            match_send_cts(op, token);
            csni_unlock(&t->lock);
            return CSN_OK;
        }
        match_send_cts(op, u->token);
        break;
    }
    csni_unlock(&t->lock);
    csni_unex_free(p, u);
    if (deferred)
        match_complete_unlocked(deferred, CSN_OK);
    return CSN_OK;
}

/* A thread waiting on t, polling, found an eager frame for t whole in a ring record (rx_lock
 * held): place it into the receive it matches (the first posted that accepts the source) and
 * complete that, without the general reader. own: the caller's blocking receive, which must
 * be that one (then completed as its owner's, no sleeper to pair with); NULL (csn_test): any,
 * completed the general way (queued, sleepers woken). */
bool csni_match_direct(struct csni_conn *c, csn_transport *t, struct csni_op *own,
                       const struct csni_frame *f, const uint8_t *payload)
{
    csn_netid src = csni_netid_make(c->pp->proc, f->src);
    csni_lock(&t->lock);
    struct csni_op *op = match_first_posted(t, src);
    if (!op || (own && op != own)) {
        csni_unlock(&t->lock);
        return false;
    }
    match_take_posted(t, op, src, c->pp, f->len);
    size_t n = f->len < op->len ? f->len : op->len;
    memcpy(op->buf, payload, n);
    if (own) {
        if (op->received)
            *op->received = n;
        op->status = f->len > op->len ? CSN_OVERRUN : CSN_OK;
        atomic_store_explicit(&op->state, CSNI_ST_DONE, memory_order_release);
    } else {
        csni_complete(t, op, CSN_OK);
    }
    csni_unlock(&t->lock);
    match_owe(c, match_cost(f->len));
    return true;
}

/* ---- receiving: a frame header arrived on a connection (rx_lock held) ---- */

static void match_discard(struct csni_conn *c, size_t n)
{
    c->dst = NULL;
    c->want = 0;
    c->discard = n;
    c->rxop = NULL;
    c->rxux = NULL;
    c->rxt = NULL;
}

static void match_on_message(struct csni_conn *c, const uint8_t *staged)
{
    struct csni_proc *p = c->p;
    struct csni_peer *pp = c->pp;
    const struct csni_frame *f = &c->f;
    csn_netid src = csni_netid_make(pp->proc, f->src);
    csn_transport *t = csni_tport_find(p, f->dst);
    struct csni_op *op;

    if (!t) {
        /* The destination transport is closed (or never was): the message is dropped; a
         * rendezvous sender is told, so its transmit completes with CSN_PEER_LOST. */
        if (f->type == CSNI_F_EAGER) {
            match_discard(c, staged ? 0 : f->len); /* credit returns at payload end */
        } else {
            struct csni_sendreq *sr = calloc(1, sizeof *sr);
            struct csni_frame g = {.type = CSNI_F_CTS, .aux = CSNI_CTS_GONE, .cookie = f->cookie};
            match_discard(c, 0);
            if (!sr)
                return;
            sr->heap = true;
            csni_frame_encode(&g, sr->hdr);
            csni_lock(&pp->lock);
            if (pp->conn && !pp->lost)
                csni_conn_send(pp->conn, sr);
            else
                free(sr);
            csni_unlock(&pp->lock);
        }
        return;
    }
    if ((op = match_first_posted(t, src)) != NULL) {
        match_take_posted(t, op, src, pp, f->len);
        op->state = CSNI_ST_WAIT_DATA;
        if (staged) {
            /* The whole payload is here already: place it and complete under this one
             * lock hold (the small-message path). Its credit returns at payload end. */
            size_t n = f->len < op->len ? f->len : op->len;
            memcpy(op->buf, staged, n);
            match_discard(c, 0);
            csni_complete(t, op, CSN_OK);
        } else if (f->type == CSNI_F_EAGER) {
            size_t n = f->len < op->len ? f->len : op->len;
            c->dst = op->buf;
            c->want = n;
            c->discard = f->len - n;
            c->rxop = op;
            c->rxux = NULL;
            c->rxt = t;
        } else {
            op->token = atomic_fetch_add(&p->next_token, 1);
            match_discard(c, 0);
            if (f->cookie2 && c->shm && p->cma) {
                /* Pulled under the device lock, as the seed receives "the remaining
                 * packets directly to the user's buffer" before unlocking the device. */
                csni_unlock(&t->lock);
                if (match_pull(op, csni_shm_peer_pid(c), f->cookie2, f->cookie, true))
                    return;
                csni_lock(&t->lock);
            }
            match_send_cts(op, f->cookie);
        }
        csni_unlock(&t->lock);
        return;
    }
    struct csni_unex *u = csni_unex_alloc(p);
    if (!u) {
        csni_unlock(&t->lock);
        csni_conn_fail(c, "out of memory for an unexpected message");
        return;
    }
    u->src = src;
    u->len = f->len;
    u->pp = pp;
    if (f->type == CSNI_F_EAGER) {
        u->kind = CSNI_UX_EAGER;
        u->data = csni_pool_get(p, f->len ? f->len : 1);
        if (!u->data) {
            csni_unlock(&t->lock);
            csni_unex_free(p, u);
            csni_conn_fail(c, "out of memory for an unexpected message");
            return;
        }
        /* Complete only once the reader is done with it (csni_on_payload_done), even when
         * empty: until then c->rxux points at it and nobody else may free it. */
        u->complete = false;
        c->dst = u->data;
        c->want = f->len;
        if (staged) {
            memcpy(u->data, staged, f->len); /* on_payload_done marks it complete */
            c->dst = NULL;
            c->want = 0;
        }
        c->discard = 0;
        c->rxop = NULL;
        c->rxux = u;
        c->rxt = t;
    } else {
        u->kind = CSNI_UX_RTS;
        u->token = f->cookie;
        if (f->cookie2 && c->shm) {
            u->raddr = f->cookie2;
            u->pid = csni_shm_peer_pid(c);
        }
        u->complete = true;
        match_discard(c, 0);
    }
    ux_push(t, u);
    csni_unlock(&t->lock);
}

/* A split CTS: write the second part of our message straight into the receiver's buffer,
 * then tell it (PUSHED). The transmit stays on the CTS list: the receiver's CTS_PULLED, which
 * comes after this one on the same connection, completes it. */
static void match_on_split(struct csni_conn *c)
{
    struct csni_peer *pp = c->pp;
    const struct csni_frame *f = &c->f;
    uint64_t rtoken = (uint64_t)f->dst | (uint64_t)f->src << 32;
    struct csni_frame g = {.type = CSNI_F_DATA, .aux = CSNI_CTS_SPLIT, .cookie = rtoken};
    csni_lock(&pp->lock);
    struct csni_op *op;
    for (op = pp->wait_cts.head; op && op->token != f->cookie; op = op->next)
        ;
    void *buf = op ? op->buf : NULL;
    bool fits = op && f->len <= op->len;
    csni_unlock(&pp->lock);
    if (!op) {
        g.aux = CSNI_CTS_GONE; /* our transport closed meanwhile */
        match_send_note(pp, &g);
        return;
    }
    if (!fits || !c->shm) {
        csni_conn_fail(c, "split clear-to-send that does not fit the message");
        return;
    }
    uint64_t at = csni_split_at(f->len);
    int e = match_vm_copy(csni_shm_peer_pid(c), (uint8_t *)buf + at, f->cookie2 + at,
                          (size_t)(f->len - at), true);
    if (e == ESRCH)
        return; /* the receiver is gone: our transmit fails with it */
    if (e != 0) {
        csni_conn_fail(c, "cannot write the receiver's memory for a split transfer");
        return;
    }
    g.len = f->len - at;
    match_send_note(pp, &g);
}

static void match_on_cts(struct csni_conn *c)
{
    struct csni_peer *pp = c->pp;
    const struct csni_frame *f = &c->f;
    struct csni_op *op;

    match_discard(c, 0);
    if (f->aux == CSNI_CTS_SPLIT) {
        match_on_split(c);
        return;
    }
    csni_lock(&pp->lock);
    op = oplist_take_token(&pp->wait_cts, f->cookie);
    if (!op) {
        /* Our transport closed meanwhile: tell the receiver no data will come. */
        struct csni_sendreq *sr = calloc(1, sizeof *sr);
        if (sr) {
            struct csni_frame g = {.type = CSNI_F_DATA, .aux = CSNI_CTS_GONE, .cookie = f->cookie2};
            sr->heap = true;
            csni_frame_encode(&g, sr->hdr);
            csni_conn_send(pp->conn, sr);
        }
        csni_unlock(&pp->lock);
        return;
    }
    if (f->aux == CSNI_CTS_GONE) {
        csni_unlock(&pp->lock);
        match_complete_unlocked(op, CSN_PEER_LOST);
        return;
    }
    if (f->aux == CSNI_CTS_PULLED && f->len <= op->len) {
        csni_unlock(&pp->lock);
        match_complete_unlocked(op, CSN_OK); /* the receiver copied it itself */
        return;
    }
    if (f->len > op->len) {
        csni_unlock(&pp->lock);
        match_complete_unlocked(op, CSN_PEER_LOST);
        csni_conn_fail(c, "clear-to-send asks for more than the message");
        return;
    }
    /* Sent in chunks (the stream writer re-heads each), so that control frames to the same
     * process never wait for a whole large message. */
    struct csni_frame g = {.type = CSNI_F_DATA,
                           .aux = CSNI_CTS_OK,
                           .len = f->len < CSNI_DATA_CHUNK ? f->len : CSNI_DATA_CHUNK,
                           .cookie = f->cookie2};
    /* The RTS's last byte left before this CTS could exist, but its writer may not have
     * let go of the request yet: wait for that (a few instructions) before reusing it. */
    while (atomic_load_explicit(&op->sr.queued, memory_order_acquire))
        sched_yield();
    csni_frame_encode(&g, op->sr.hdr);
    op->sr.payload = op->buf;
    op->sr.paylen = f->len;
    op->sr.off = 0;
    op->sr.sent = 0;
    op->sr.chunked = f->len > CSNI_DATA_CHUNK;
    struct csni_conn *sc = pp->conn;
    csni_unlock(&pp->lock);
    csni_conn_send(sc, &op->sr); /* may complete op: no transport or peer lock held */
}

static void match_on_data(struct csni_conn *c)
{
    struct csni_peer *pp = c->pp;
    const struct csni_frame *f = &c->f;
    struct csni_op *op;

    /* A DATA frame may be one chunk of the message (at cookie2): the receive stays on the
     * list until its last byte is in (csni_on_payload_done). */
    csni_lock(&pp->lock);
    for (op = pp->wait_data.head; op && op->token != f->cookie; op = op->next)
        ;
    bool last = op && (f->aux != CSNI_CTS_OK ||
                       op->got + f->len >= (op->msglen < op->len ? op->msglen : op->len));
    if (last)
        oplist_remove(&pp->wait_data, op);
    csni_unlock(&pp->lock);
    if (!op) {
        match_discard(c, f->len); /* our receive was cancelled by csn_close */
        return;
    }
    if (f->aux == CSNI_CTS_GONE) {
        match_discard(c, 0);
        match_complete_unlocked(op, CSN_PEER_LOST);
        return;
    }
    if (f->aux == CSNI_CTS_SPLIT) {
        /* The sender wrote the second part itself; our pull had the first. */
        size_t n = op->msglen < op->len ? op->msglen : op->len;
        match_discard(c, 0);
        if (f->len != n - csni_split_at(n)) {
            match_complete_unlocked(op, CSN_PEER_LOST);
            csni_conn_fail(c, "split data length differs from the clear-to-send");
            return;
        }
        match_complete_unlocked(op, CSN_OK);
        return;
    }
    size_t n = op->msglen < op->len ? op->msglen : op->len;
    if (f->cookie2 != op->got || f->len > n - op->got || (f->len == 0 && n > 0)) {
        if (!last) {
            csni_lock(&pp->lock);
            oplist_remove(&pp->wait_data, op);
            csni_unlock(&pp->lock);
        }
        match_discard(c, 0);
        match_complete_unlocked(op, CSN_PEER_LOST);
        csni_conn_fail(c, "data chunk out of place for the clear-to-send");
        return;
    }
    c->dst = (uint8_t *)op->buf + op->got;
    c->want = f->len;
    c->discard = 0;
    c->rxop = op;
    c->rxux = NULL;
    c->rxt = op->t;
}

void csni_on_frame(struct csni_conn *c, const uint8_t *staged)
{
    switch (c->f.type) {
    case CSNI_F_EAGER:
    case CSNI_F_RTS:
        match_on_message(c, staged);
        break;
    case CSNI_F_CTS:
        match_on_cts(c);
        break;
    case CSNI_F_DATA:
        match_on_data(c);
        break;
    case CSNI_F_CREDIT:
        match_discard(c, 0);
        atomic_fetch_add(&c->pp->credit, (int64_t)c->f.len);
        break;
    default:
        csni_conn_fail(c, "unexpected frame type");
        break;
    }
}

/* The payload announced by c->f has been placed (rx_lock held). */
void csni_on_payload_done(struct csni_conn *c)
{
    struct csni_proc *p = c->p;
    csn_transport *t = c->rxt;
    bool eager = c->f.type == CSNI_F_EAGER;

    if (c->rxop && c->f.type == CSNI_F_DATA) {
        /* A chunk is in; the receive completes with its last (then off the list). */
        struct csni_op *op = c->rxop;
        op->got += c->f.len;
        if (op->got >= (op->msglen < op->len ? op->msglen : op->len))
            match_complete_unlocked(op, CSN_OK);
    } else if (c->rxop) {
        csni_lock(&t->lock);
        csni_complete(t, c->rxop, CSN_OK);
        csni_unlock(&t->lock);
    } else if (c->rxux) {
        struct csni_unex *u = c->rxux;
        csni_lock(&t->lock);
        u->complete = true;
        if (u->rxop) {
            struct csni_op *op = u->rxop;
            struct csni_unex *prev = NULL, *x;
            for (x = t->ux_head; x && x != u; prev = x, x = x->next)
                ;
            ux_unlink(t, prev, u);
            memcpy(op->buf, u->data, u->len < op->len ? u->len : op->len);
            csni_complete(t, op, CSN_OK);
            csni_unlock(&t->lock);
            csni_pool_put(p, u->data, u->len ? u->len : 1);
            csni_unex_free(p, u);
            match_owe(c, match_cost(c->f.len));
            goto out;
        }
        csni_unlock(&t->lock);
        eager = false; /* credit comes back when a receive takes the message */
    }
    if (eager)
        match_owe(c, match_cost(c->f.len));
out:
    c->rxop = NULL;
    c->rxux = NULL;
    c->rxt = NULL;
}

/* ---- peer death ---- */
void csni_peer_lost(struct csni_proc *p, struct csni_peer *pp)
{
    struct csni_oplist cts, data;
    csni_lock(&pp->lock);
    if (pp->lost) {
        csni_unlock(&pp->lock);
        return;
    }
    pp->lost = true;
    atomic_fetch_add(&p->nlost, 1);
    cts = pp->wait_cts;
    data = pp->wait_data;
    pp->wait_cts.head = pp->wait_cts.tail = NULL;
    pp->wait_data.head = pp->wait_data.tail = NULL;
    csni_unlock(&pp->lock);
    for (struct csni_op *op = cts.head, *n; op; op = n) {
        n = op->next;
        match_complete_unlocked(op, CSN_PEER_LOST);
    }
    for (struct csni_op *op = data.head, *n; op; op = n) {
        n = op->next;
        match_complete_unlocked(op, CSN_PEER_LOST);
    }
    /* One-source receives from it, and rendezvous announcements it can no longer serve. */
    pthread_rwlock_rdlock(&p->tlock);
    for (uint32_t i = 0; i < p->ntports; i++) {
        csn_transport *t = p->tports[i];
        if (!t)
            continue;
        csni_lock(&t->lock);
        struct csni_op *prev = NULL;
        for (struct csni_op *op = t->posted.head, *n; op; op = n) {
            n = op->next;
            if (op->peer != CSN_NULL_NETID && csni_netid_rank(op->peer) == pp->proc) {
                if (prev)
                    prev->next = n;
                else
                    t->posted.head = n;
                if (t->posted.tail == op)
                    t->posted.tail = prev;
                csni_complete(t, op, CSN_PEER_LOST);
            } else {
                prev = op;
            }
        }
        struct csni_unex *up = NULL;
        for (struct csni_unex *u = t->ux_head, *n; u; u = n) {
            n = u->next;
            if (u->pp == pp && (u->kind == CSNI_UX_RTS || !u->complete)) {
                ux_unlink(t, up, u);
                if (u->rxop)
                    csni_complete(t, u->rxop, CSN_PEER_LOST);
                if (u->kind == CSNI_UX_EAGER)
                    csni_pool_put(p, u->data, u->len ? u->len : 1);
                csni_unex_free(p, u);
            } else {
                up = u;
            }
        }
        csni_unlock(&t->lock);
    }
    pthread_rwlock_unlock(&p->tlock);
}

/* ---- close: cancel everything of t (t is already out of the table; no lock held) ---- */
void csni_tport_drain(csn_transport *t)
{
    struct csni_proc *p = csni_p;
    struct csni_op *deferred = NULL, *gone = NULL;

    /* Readers filling t's buffers switch to discarding; the receives they were filling are
     * cancelled with the others. */
    pthread_mutex_lock(&p->lock);
    struct csni_conn *conns = p->conns;
    pthread_mutex_unlock(&p->lock);
    for (struct csni_conn *c = conns; c; c = c->next) {
        csni_lock(&c->rx_lock);
        if (c->rxt == t) {
            /* An unexpected record being filled is freed below with t's others. */
            if (c->rxop) {
                c->rxop->next = gone;
                gone = c->rxop;
            }
            c->discard += c->want;
            c->dst = NULL;
            c->want = 0;
            c->rxop = NULL;
            c->rxux = NULL;
            c->rxt = NULL;
        }
        csni_unlock(&c->rx_lock);
    }
    /* Our transmits and receives parked with peers. */
    pthread_mutex_lock(&p->lock);
    struct csni_peer *peers = p->peers;
    pthread_mutex_unlock(&p->lock);
    for (struct csni_peer *pp = peers; pp; pp = pp->next) {
        csni_lock(&pp->lock);
        struct csni_oplist *lists[2] = {&pp->wait_cts, &pp->wait_data};
        for (int i = 0; i < 2; i++) {
            struct csni_op *prev = NULL;
            for (struct csni_op *op = lists[i]->head, *n; op; op = n) {
                n = op->next;
                if (op->t == t) {
                    if (prev)
                        prev->next = n;
                    else
                        lists[i]->head = n;
                    if (lists[i]->tail == op)
                        lists[i]->tail = prev;
                    op->next = gone;
                    gone = op;
                } else {
                    prev = op;
                }
            }
        }
        csni_unlock(&pp->lock);
    }
    /* Our transmits parked with other transports of this process point into our caller's
     * buffers: withdraw them. */
    pthread_rwlock_rdlock(&p->tlock);
    for (uint32_t i = 0; i < p->ntports; i++) {
        csn_transport *d = p->tports[i];
        if (!d)
            continue;
        csni_lock(&d->lock);
        struct csni_unex *up = NULL;
        for (struct csni_unex *u = d->ux_head, *n; u; u = n) {
            n = u->next;
            if (u->kind == CSNI_UX_SELF && u->txop->t == t) {
                ux_unlink(d, up, u);
                u->txop->next = gone;
                gone = u->txop;
                csni_unex_free(p, u);
            } else {
                up = u;
            }
        }
        csni_unlock(&d->lock);
    }
    pthread_rwlock_unlock(&p->tlock);
    /* Unexpected messages held for t. */
    csni_lock(&t->lock);
    struct csni_unex *ux = t->ux_head;
    t->ux_head = t->ux_tail = NULL;
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
        switch (u->kind) {
        case CSNI_UX_EAGER:
            csni_pool_put(p, u->data, u->len ? u->len : 1);
            if (!u->pp)
                atomic_fetch_sub(&p->self_unexpected, u->len);
            else if (u->complete)
                csni_return_credit(u->pp, match_cost(u->len));
            break;
        case CSNI_UX_SELF:
            u->txop->next = deferred;
            deferred = u->txop;
            break;
        case CSNI_UX_RTS: {
            struct csni_sendreq *sr = calloc(1, sizeof *sr);
            struct csni_frame g = {.type = CSNI_F_CTS, .aux = CSNI_CTS_GONE, .cookie = u->token};
            if (!sr)
                break;
            sr->heap = true;
            csni_frame_encode(&g, sr->hdr);
            csni_lock(&u->pp->lock);
            if (u->pp->conn && !u->pp->lost)
                csni_conn_send(u->pp->conn, sr);
            else
                free(sr);
            csni_unlock(&u->pp->lock);
            break;
        }
        }
        csni_unex_free(p, u);
    }
    for (struct csni_op *op = deferred, *n; op; op = n) {
        n = op->next;
        match_complete_unlocked(op, CSN_PEER_LOST);
    }
}
