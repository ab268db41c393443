/* conn.c: the connection engine: framing, reading and placing, queueing and writing, failure,
 * for socket and shared-memory connections alike. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/complete.h"
#include "core/conn.h"
#include "core/pool.h"
#include "core/state.h"
#include "transport/ofi/ofi.h"
#include "transport/net.h"

#define CONN_RBUF 65536u   /* staging buffer: many small frames per recv */
#define CONN_DIRECT 16384u /* payload remainders this large are read straight in place */
#define CONN_BATCH 32      /* frames gathered into one sendmsg */
#define CONN_CHUNK_MAX ((size_t)4 << 20) /* longest DATA chunk on a socket (conn_chunk_max) */
#define CONN_DONE (2 * CONN_BATCH)       /* completions collected per flush call */

/* ---- links ---- */
static ssize_t conn_sock_read(struct csni_conn *c, void *buf, size_t n)
{
    return recv(c->fd, buf, n, MSG_DONTWAIT);
}

static ssize_t conn_sock_writev(struct csni_conn *c, const struct iovec *iov, int n)
{
    struct msghdr mh = {.msg_iov = (struct iovec *)iov, .msg_iovlen = (size_t)n};
    return sendmsg(c->fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT); /* EPIPE, not SIGPIPE */
}

static ssize_t conn_ring_read(struct csni_conn *c, void *buf, size_t n)
{
    return csni_shm_read(c->shm, buf, n);
}

static ssize_t conn_ring_writev(struct csni_conn *c, const struct iovec *iov, int n)
{
    return csni_shm_writev(c->shm, iov, n);
}

static const struct csni_link_ops conn_sock_link = {.read = conn_sock_read,
                                                    .writev = conn_sock_writev};
static const struct csni_link_ops conn_ring_link = {.read = conn_ring_read,
                                                    .writev = conn_ring_writev};

/* ---- the list ---- */
void csni_conns_init(struct csni_conns *cs)
{
    csni_mutex_init(&cs->lock, CSNI_RANK_LISTS);
    atomic_init(&cs->head, NULL);
    atomic_init(&cs->rings, NULL);
    atomic_init(&cs->nlive, 0);
    atomic_init(&cs->nshm, 0);
    atomic_init(&cs->nended, 0);
    atomic_init(&cs->ndead_rings, 0);
}

/* A released structure of the list, claimed for reuse, or NULL. Its locks are free (released
 * under both) and nobody else may claim it; pollers that still look at it see a dead
 * connection without a ring until it is published again. */
static struct csni_conn *conn_reuse(struct csni_proc *p)
{
    if (atomic_load_explicit(&p->conns.nretired, memory_order_relaxed) == 0)
        return NULL;
    for (struct csni_conn *c = csni_conns_first(&p->conns); c; c = c->next)
        if (atomic_load_explicit(&c->retired, memory_order_relaxed) &&
            atomic_exchange(&c->retired, false)) {
            atomic_fetch_sub(&p->conns.nretired, 1);
            return c;
        }
    return NULL;
}

void csni_conns_add_ring(struct csni_conns *cs, struct csni_conn *c)
{
    csni_mutex_lock(&cs->lock);
    if (!c->on_rings) {
        c->on_rings = true;
        atomic_store_explicit(&c->next_ring, atomic_load_explicit(&cs->rings, memory_order_relaxed),
                              memory_order_relaxed);
        atomic_store_explicit(&cs->rings, c, memory_order_release);
    }
    csni_mutex_unlock(&cs->lock);
}

/* Pollers walk the list without a lock and may stand on any node, a pruned one too, so nodes
 * are never freed or put back (csni_conn_close retires no connection with a ring), and a
 * link is only ever replaced by one to a node further along the list's order (a kept node's
 * next kept one, or the end): a walk from anywhere still moves forward and ends, seeing every
 * live node ahead of it. New nodes go in at the head, before all. */
void csni_conns_prune_rings(struct csni_conns *cs)
{
    csni_mutex_lock(&cs->lock);
    struct csni_conn *_Atomic *link = &cs->rings; /* the last kept node's link */
    int pruned = 0;
    for (struct csni_conn *c = atomic_load_explicit(&cs->rings, memory_order_relaxed), *n; c;
         c = n) {
        n = atomic_load_explicit(&c->next_ring, memory_order_relaxed);
        if (atomic_load(&c->dead)) {
            /* Its ring is never read again, but a walker may still stand on it: the pages go
             * back, the range stays (a dead child's half megabyte, bench/forkchurn). */
            struct csni_shm *s = atomic_load_explicit(&c->ring, memory_order_relaxed);
            if (s)
                csni_shm_release(s);
            pruned++;
            continue;
        }
        if (atomic_load_explicit(link, memory_order_relaxed) != c)
            atomic_store_explicit(link, c, memory_order_release);
        link = &c->next_ring;
    }
    if (atomic_load_explicit(link, memory_order_relaxed) != NULL)
        atomic_store_explicit(link, NULL, memory_order_release);
    atomic_fetch_sub(&cs->ndead_rings, pruned);
    csni_mutex_unlock(&cs->lock);
}

struct csni_conn *csni_conn_new(struct csni_proc *p, int fd, struct csni_peer *pp, int proc,
                                struct csni_shm *shm)
{
    struct csni_conn *c = pp ? NULL : conn_reuse(p), *old = c;
    int fl;
    if (old) {
        /* Every field back to a new connection's, under both locks (readers of the list may
         * look); dead stays set until the end. */
        csni_conn_rx_lock(c);
        csni_lock(&c->tx_lock);
        c->pp = NULL;
        c->shm = NULL;
        c->tx_pending = false;
        c->ended = false;
        c->epollout = false;
        c->rpos = c->rend = 0;
        c->phase = CSNI_RX_HDR;
        memset(&c->pl, 0, sizeof c->pl);
        c->ring_taken = 0;
        c->owed = 0;
        c->sq_head = c->sq_tail = NULL;
        csni_unlock(&c->tx_lock);
        csni_conn_rx_unlock(c);
    } else if (!(c = calloc(1, sizeof *c))) {
        return NULL;
    } else {
        csni_lock_init(&c->rx_lock, CSNI_RANK_READER);
        csni_lock_init_biased(&c->tx_lock, CSNI_RANK_WRITER);
    }
    if ((fl = fcntl(fd, F_GETFL)) < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0)
        goto fail;
    /* A reused structure is on the list: pollers read these under its locks (csni_conn_arm) */
    if (old) {
        csni_conn_rx_lock(c);
        csni_lock(&c->tx_lock);
    }
    c->rbuf = malloc(CONN_RBUF);
    c->fd = fd;
    c->p = p;
    c->pp = pp;
    c->proc = proc;
    c->shm = shm;
    c->born_ns = pp ? 0 : csni_now_ns();
    if (shm)
        shm->bell_fd = fd;
    atomic_store(&c->ring, shm);
    c->link = shm ? &conn_ring_link : &conn_sock_link;
    c->net = shm ? NULL : csni_net_of_fd(fd);
    c->notsent = p->tun.tcp_notsent;
    if (old) {
        csni_unlock(&c->tx_lock);
        csni_conn_rx_unlock(c);
    }
    if (!c->rbuf)
        goto fail;
    /* ofi: the data moves over the pair's fabric endpoint, the socket keeps the rest */
    if (pp && !shm && csni_ofi_on() && csni_ofi_connect(c) != 0)
        goto fail;
    /* A connection we made is the peer's sending one if it has none yet, from before it can
     * be read: the peer may answer on it at once (both sides connecting at the same moment),
     * and an answer sent through pp->conn while it was still empty was lost. */
    bool sending = false;
    if (pp) {
        csni_lock(&pp->lock);
        if (!pp->conn) {
            pp->conn = c;
            sending = true;
        }
        csni_unlock(&pp->lock);
    }
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = c};
    if (epoll_ctl(p->epfd, EPOLL_CTL_ADD, fd, &ev) != 0) {
        if (sending) {
            csni_lock(&pp->lock);
            if (pp->conn == c)
                pp->conn = NULL;
            csni_unlock(&pp->lock);
        }
        goto fail;
    }
    if (!pp)
        atomic_fetch_add(&p->conns.nstrangers, 1);
    atomic_fetch_add(&p->conns.nlive, 1);
    if (old) { /* an accepted one: its ring, if any, comes with its HELLO (csni_conn_bind) */
        atomic_store(&c->dead, false); /* published: on the list already */
        return c;
    }
    /* Insert-only list: readers walk it without a lock from an acquire load of the head. */
    csni_mutex_lock(&p->conns.lock);
    c->next = atomic_load_explicit(&p->conns.head, memory_order_relaxed);
    atomic_store_explicit(&p->conns.head, c, memory_order_release);
    csni_mutex_unlock(&p->conns.lock);
    if (shm) {
        csni_conns_add_ring(&p->conns, c);
        atomic_fetch_add(&p->conns.nshm, 1);
        csni_kick_epoll(p); /* the progress thread arms the new ring */
    }
    return c;
fail:
    csni_ofi_drop(c);
    free(c->rbuf);
    c->rbuf = NULL;
    if (old) {
        c->fd = -1;
        atomic_fetch_add(&p->conns.nretired, 1);
        atomic_store(&c->retired, true); /* back for the next one */
    } else {
        free(c);
    }
    return NULL;
}

void csni_conn_bind(struct csni_conn *c, struct csni_peer *pp, int proc, struct csni_shm *shm)
{
    csni_lock_assert_held(&c->rx_lock);
    atomic_fetch_sub(&c->p->conns.nstrangers, 1);
    if (shm) {
        /* From now on the socket only rings doorbells: drop what it buffered. */
        c->rpos = c->rend = 0;
        shm->bell_fd = c->fd;
        csni_lock(&c->tx_lock);
        c->shm = shm;
        c->link = &conn_ring_link;
        csni_unlock(&c->tx_lock);
        atomic_store_explicit(&c->ring, shm, memory_order_release);
        csni_conns_add_ring(&c->p->conns, c);
        atomic_fetch_add(&c->p->conns.nshm, 1);
        csni_kick_epoll(c->p);
    }
    c->proc = proc;
    c->pp = pp;
    const char *why = "an ofi connection to a process without CSN_TRANSPORT=ofi";
    if (!shm && csni_ofi_hello_is_ofi(&c->f) && (!csni_ofi_on() || csni_ofi_accept(c, &why) != 0))
        csni_conn_fail(c, why);
}

/* ---- writing ---- */
/* Whether sr may be written now (tx_lock held): nothing before the move's OK but the urgent
 * frames (csni_conn_send_ok, csni_conn_pause). */
static bool conn_writable(const struct csni_conn *c, const struct csni_sendreq *sr)
{
    return sr && (!c->paused || sr->urgent);
}

static void conn_set_out(struct csni_conn *c, bool on)
{
    on = on && conn_writable(c, c->sq_head);
    struct epoll_event ev = {.events = EPOLLIN | (on ? EPOLLOUT : 0u), .data.ptr = c};
    atomic_store_explicit(&c->tx_pending, on, memory_order_relaxed);
    if (c->epollout == on || c->shm) /* a ring has no EPOLLOUT: its reader rings instead */
        return;
    /* Fails only for a descriptor already out of the set (a dead connection's). */
    if (epoll_ctl(c->p->epfd, EPOLL_CTL_MOD, c->fd, &ev) == 0)
        c->epollout = on;
}

/* Lets go of a written (or failed) request. Returns the op to complete (outside tx_lock). */
static struct csni_op *conn_release(struct csni_sendreq *sr)
{
    struct csni_op *op = sr->op;
    bool completes = csni_frame_hdr_completes(sr->hdr);
    if (sr->heap) {
        free(sr);
        return NULL;
    }
    atomic_store_explicit(&sr->queued, false, memory_order_release); /* last access to sr */
    return op && completes ? op : NULL;
}

/* Payload bytes of the frame a request is writing now (a chunk of a chunked DATA). */
static size_t conn_chunk(const struct csni_sendreq *sr)
{
    return sr->chunked ? sr->chunk : sr->paylen - sr->sent;
}

/* The longest next chunk of a DATA on c. On a TCP socket it is the unsent bytes the kernel may
 * hold (refit to 1 ms of the path's rate, conn_refit), at most CONN_CHUNK_MAX: a control frame
 * queued behind a chunk then waits about as long in our queue as behind the kernel's, and a
 * fast path writes megabytes per system call (loopback, 64 MiB messages: 1.9x the bandwidth of
 * 128 KiB chunks, BENCHMARKS.md, issue 21). Elsewhere CSNI_DATA_CHUNK. tx_lock held. */
static size_t conn_chunk_max(const struct csni_conn *c)
{
    if (c->link != &conn_sock_link || c->notsent <= CSNI_DATA_CHUNK)
        return CSNI_DATA_CHUNK;
    return c->notsent < CONN_CHUNK_MAX ? c->notsent : CONN_CHUNK_MAX;
}

static bool conn_is_control(const struct csni_sendreq *sr)
{
    /* A MOVE keeps its place, and so does an RTS (a pushed message's has no op: match.c). */
    uint8_t type = csni_frame_hdr_type(sr->hdr);
    return !sr->op && sr->paylen == 0 && type != CSNI_F_MOVE && type != CSNI_F_RTS;
}

/* A chunk of sr (at the head) is out and more remain: head the next one, and let the control
 * frames queued behind go first (data frames keep their order). */
static void conn_next_chunk(struct csni_conn *c, struct csni_sendreq *sr)
{
    sr->sent += sr->chunk;
    sr->off = 0;
    size_t left = sr->paylen - sr->sent, max = conn_chunk_max(c);
    sr->chunk = left > max ? max : left;
    csni_frame_set_chunk(sr->hdr, sr->chunk, sr->sent);
    struct csni_sendreq *last = NULL;
    for (struct csni_sendreq *n = sr->next; n && conn_is_control(n); n = n->next)
        last = n;
    if (!last)
        return;
    c->sq_head = sr->next;
    sr->next = last->next;
    last->next = sr;
    if (c->sq_tail == last)
        c->sq_tail = sr;
}

/* The socket is full: its kind re-sizes the unsent bytes the kernel may hold to the path's
 * rate (CSN_TCP_HOLD_US of it, at least CSN_TCP_NOTSENT). tx_lock held. */
static void conn_refit(struct csni_conn *c)
{
    const struct csni_tun *tun = &c->p->tun;
    if (c->link == &conn_sock_link && c->net && c->net->refit && tun->tcp_hold_us > 0)
        c->notsent = c->net->refit(c->fd, tun->tcp_notsent, tun->tcp_hold_us);
}

_Thread_local unsigned csni_moved __attribute__((tls_model("initial-exec")));
_Thread_local bool csni_conn_short_ends __attribute__((tls_model("initial-exec")));

/* The link's read, counted in csni_moved when it brought bytes. */
static ssize_t conn_read(struct csni_conn *c, void *buf, size_t n)
{
    ssize_t r = c->link->read(c, buf, n);
    if (r > 0) {
        csni_moved++;
        if ((size_t)r >= CSNI_NET_BULK_READ && c->net && c->net->bulk_read)
            c->net->bulk_read(c->fd);
    }
    return r;
}

/* Writes queued frames until the link is full, or until done[] (CONN_DONE entries) has no
 * room for another batch. tx_lock held. Ops whose frame finished are stored in done[]. Every
 * byte written is accounted before returning. Returns -1 on a link error. */
static int conn_flush_locked(struct csni_conn *c, struct csni_op **done, int *ndone)
{
    while (conn_writable(c, c->sq_head) && *ndone <= CONN_DONE - CONN_BATCH) {
        struct iovec iov[2 * CONN_BATCH];
        int n = 0, k = 0;
        for (struct csni_sendreq *sr = c->sq_head; conn_writable(c, sr) && k < CONN_BATCH;
             sr = sr->next, k++) {
            size_t off = sr->off, plen = conn_chunk(sr);
            if (off < CSNI_FRAME_SIZE) {
                iov[n].iov_base = sr->hdr + off;
                iov[n++].iov_len = CSNI_FRAME_SIZE - off;
                off = 0;
            } else {
                off -= CSNI_FRAME_SIZE;
            }
            if (plen > off) {
                iov[n].iov_base = (uint8_t *)sr->payload + sr->sent + off;
                iov[n++].iov_len = plen - off;
            }
            if (sr->chunked && sr->sent + plen < sr->paylen)
                break; /* its next chunk needs a new header: after this write */
        }
        ssize_t w = c->link->writev(c, iov, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK) {
                conn_refit(c);
                break;
            }
            return -1;
        }
        size_t left = (size_t)w;
        csni_moved++;
        while (c->sq_head) {
            struct csni_sendreq *sr = c->sq_head;
            size_t need = CSNI_FRAME_SIZE + conn_chunk(sr) - sr->off;
            if (left < need) {
                sr->off += left;
                break;
            }
            left -= need;
            if (sr->chunked && sr->sent + conn_chunk(sr) < sr->paylen) {
                conn_next_chunk(c, sr); /* the write ended with this chunk */
                break;
            }
            c->sq_head = sr->next;
            if (!c->sq_head)
                c->sq_tail = NULL;
            struct csni_op *op = conn_release(sr);
            if (op)
                done[(*ndone)++] = op;
        }
    }
    return 0;
}

static void conn_finish(struct csni_op **done, int ndone, csn_status st)
{
    for (int i = 0; i < ndone; i++)
        csni_complete_unlocked(done[i], st);
}

static bool conn_is_urgent(const struct csni_sendreq *sr)
{
    return sr->urgent;
}

/* A control frame goes behind these: the move's OKs, and the control frames before it. */
static bool conn_before_control(const struct csni_sendreq *sr)
{
    return sr->urgent || conn_is_control(sr);
}

/* Inserts sr (tx_lock held, queue not empty) after the frame being written (its bytes are
 * half out) and the run of frames after it for which ahead() holds. */
static void conn_put_ahead(struct csni_conn *c, struct csni_sendreq *sr,
                           bool (*ahead)(const struct csni_sendreq *))
{
    struct csni_sendreq *after = c->sq_head->off > 0 ? c->sq_head : NULL;
    for (struct csni_sendreq *n = after ? after->next : c->sq_head; n && ahead(n); n = n->next)
        after = n;
    if (after) {
        sr->next = after->next;
        after->next = sr;
        if (c->sq_tail == after)
            c->sq_tail = sr;
    } else {
        sr->next = c->sq_head;
        c->sq_head = sr;
    }
}

/* Places sr on the queue (tx_lock held). Control frames (CTS, CREDIT, notes: no op, no
 * payload) overtake queued data: a CTS stuck behind megabytes bound the other way would stall
 * the peer's transfer to us for as long. Only the frame being written stays ahead (its bytes
 * are half out), and the control frames queued before (a split CTS must arrive before its
 * CTS_PULLED). Their order against data does not matter (token-addressed); the data frames
 * keep theirs. A move's OK overtakes everything (csni_conn_send_ok): on a paused connection
 * the writer lets out only the OKs at its head. */
static void conn_enqueue(struct csni_conn *c, struct csni_sendreq *sr)
{
    sr->next = NULL;
    sr->off = 0;
    if (c->sq_head && sr->urgent) {
        conn_put_ahead(c, sr, conn_is_urgent);
    } else if (c->sq_head && conn_is_control(sr)) {
        conn_put_ahead(c, sr, conn_before_control);
    } else if (c->sq_tail) {
        c->sq_tail->next = sr;
        c->sq_tail = sr;
    } else {
        c->sq_head = c->sq_tail = sr;
    }
}

/* Lets a paused connection's queue out: the pollers write it (tx_pending, EPOLLOUT). */
static void conn_resume(struct csni_conn *c)
{
    csni_lock(&c->tx_lock);
    c->paused = false;
    if (!c->dead)
        conn_set_out(c, c->sq_head != NULL);
    csni_unlock(&c->tx_lock);
    csni_kick_epoll(c->p);
}

/* Spends cost of c's credit, refilled from the peer's tun.credit_ahead at a time; false when
 * the peer's has too little. tx_lock held. */
static bool conn_credit_spend(struct csni_conn *c, int64_t cost)
{
    return csni_pool_spend(&c->pp->credit, &c->credit, cost, c->p->tun.credit_ahead);
}

/* What c holds of the peer's credit goes back to it (c dies or moves). tx_lock held. */
static void conn_credit_back(struct csni_conn *c)
{
    if (c->credit && c->pp)
        csni_pool_give(&c->pp->credit, c->credit);
    c->credit = 0;
}

/* Whether a frame may go straight into c's ring, bypassing the queue: c lives, is a ring, sends
 * for the pair (not moved or paused) and has nothing queued (order). tx_lock held. */
static bool conn_direct_ok(const struct csni_conn *c)
{
    return !c->dead && !c->moved && !c->paused && !c->sq_head && c->shm;
}

/* Queues sr on c, or on the connection c moved to (follow), and writes it if the queue was
 * empty (a frame without payload to an idle ring: written, never queued). move_to: sr is c's
 * MOVE LAST, and what comes for c from then on goes there (set under the writer lock that
 * orders sr behind what c already holds). */
static void conn_send(struct csni_conn *c, struct csni_sendreq *sr, bool follow,
                      struct csni_conn *move_to)
{
    struct csni_op *done[CONN_DONE];
    int ndone = 0, err = 0;

    atomic_store_explicit(&sr->queued, true, memory_order_relaxed);
    csni_lock(&c->tx_lock);
    while (follow && c->moved) { /* the pair sends on another connection now */
        struct csni_conn *next = c->moved;
        csni_unlock(&c->tx_lock);
        c = next;
        csni_lock(&c->tx_lock);
    }
    if (move_to) {
        c->moved = move_to;
        conn_credit_back(c);
    }
    if (c->dead) {
        csni_unlock(&c->tx_lock);
        struct csni_op *op = conn_release(sr);
        if (op)
            csni_complete_unlocked(op, CSN_PEER_LOST);
        if (move_to)
            conn_resume(move_to); /* no OK can come: the peer reads nothing more from c */
        return;
    }
    /* A frame without payload (an RTS, an answer, credit) to an idle ring is written straight
     * in, not queued, flushed and released (an RTS 681 instructions that way, 370 so; callgrind,
     * BENCHMARKS.md, issue 19). */
    if (sr->paylen == 0 && sr->off == 0 && conn_direct_ok(c) &&
        csni_shm_write_frame(c->shm, sr->hdr)) {
        csni_unlock(&c->tx_lock);
        csni_moved++;
        struct csni_op *op = conn_release(sr);
        if (op)
            csni_complete_unlocked(op, CSN_OK);
        return;
    }
    bool idle = c->sq_head == NULL;
    conn_enqueue(c, sr);
    if (idle || sr->urgent)
        err = conn_flush_locked(c, done, &ndone);
    if (!err)
        conn_set_out(c, c->sq_head != NULL);
    csni_unlock(&c->tx_lock);
    conn_finish(done, ndone, CSN_OK);
    if (err)
        csni_conn_fail(c, NULL);
}

void csni_conn_send(struct csni_conn *c, struct csni_sendreq *sr)
{
    conn_send(c, sr, true, NULL);
}

void csni_conn_send_here(struct csni_conn *c, struct csni_sendreq *sr)
{
    conn_send(c, sr, false, NULL);
}

void csni_conn_send_ok(struct csni_conn *c, struct csni_sendreq *sr)
{
    sr->urgent = true;
    conn_send(c, sr, false, NULL);
}

bool csni_conn_send_now(struct csni_conn *c, uint64_t dst, uint64_t src, const void *payload,
                        size_t len, int64_t cost)
{
    csni_lock(&c->tx_lock);
    bool ok = conn_direct_ok(c) && (cost == 0 || conn_credit_spend(c, cost));
    if (ok && !csni_shm_write_eager(c->shm, dst, src, payload, len)) {
        c->credit += cost;
        ok = false;
    }
    csni_unlock(&c->tx_lock);
    return ok;
}

bool csni_conn_send_frame_now(struct csni_conn *c, const uint8_t hdr[CSNI_FRAME_SIZE])
{
    csni_lock(&c->tx_lock);
    bool ok = conn_direct_ok(c) && csni_shm_write_frame(c->shm, hdr);
    csni_unlock(&c->tx_lock);
    if (ok)
        csni_moved++;
    return ok;
}

void csni_conn_moved_ok(struct csni_conn *c)
{
    csni_lock(&c->tx_lock);
    struct csni_conn *next = c->moved;
    csni_unlock(&c->tx_lock);
    if (!next)
        return; /* an OK for a move never made: nothing waits */
    conn_resume(next);
    csni_conn_flush(next, false);
}

void csni_conn_pause(struct csni_conn *c)
{
    csni_lock(&c->tx_lock);
    c->paused = true;
    /* What is queued already is no frame of ours that the pair's order binds (c was not
     * the sending connection): answers sent here (csni_conn_send_here), one maybe half out.
     * They still go, or an OK behind them would wait for the pause it is to end. */
    for (struct csni_sendreq *sr = c->sq_head; sr; sr = sr->next)
        sr->urgent = true;
    csni_unlock(&c->tx_lock);
}

void csni_conn_move(struct csni_conn *c, struct csni_sendreq *sr, struct csni_conn *next)
{
    CSNI_ASSERT(!sr->op && csni_frame_hdr_type(sr->hdr) == CSNI_F_MOVE);
    conn_send(c, sr, false, next); /* not a control frame: at the tail */
}

void csni_conn_flush(struct csni_conn *c, bool block_lock)
{
    struct csni_op *done[CONN_DONE];
    int ndone, err;
    do {
        ndone = 0;
        if (block_lock)
            csni_lock(&c->tx_lock);
        else if (!csni_trylock(&c->tx_lock))
            return;
        err = c->dead ? 0 : conn_flush_locked(c, done, &ndone);
        if (!err && !c->dead)
            conn_set_out(c, c->sq_head != NULL);
        csni_unlock(&c->tx_lock);
        conn_finish(done, ndone, CSN_OK);
        if (err) {
            csni_conn_fail(c, NULL);
            return;
        }
    } while (ndone > CONN_DONE - CONN_BATCH); /* stopped for room, not for a full link */
}

/* ---- failure ---- */
static void conn_fail_queue(struct csni_conn *c)
{
    struct csni_op *ops = NULL;
    csni_lock(&c->tx_lock);
    struct csni_sendreq *sr = c->sq_head;
    c->sq_head = c->sq_tail = NULL;
    csni_unlock(&c->tx_lock);
    while (sr) {
        struct csni_sendreq *next = sr->next;
        /* RTS ops sit on the peer's CTS list and are failed with it. */
        struct csni_op *op = conn_release(sr);
        if (op) {
            op->next = ops;
            ops = op;
        }
        sr = next;
    }
    while (ops) {
        struct csni_op *next = ops->next;
        csni_complete_unlocked(ops, CSN_PEER_LOST);
        ops = next;
    }
}

/* One line per dropped connection, at most CONN_LOG_BURST per second: a stranger opening
 * thousands of bad connections must not fill the job's output. */
#define CONN_LOG_BURST 10
static void conn_log(struct csni_proc *p, const struct csni_conn *c, const char *why)
{
    static _Atomic uint64_t second;
    static _Atomic unsigned lines, dropped;
    uint64_t now = csni_now_ns() / 1000000000u, was = atomic_load(&second);
    if (now != was && atomic_compare_exchange_strong(&second, &was, now)) {
        atomic_store(&lines, 0);
        unsigned d = atomic_exchange(&dropped, 0);
        if (d)
            fprintf(stderr, "csn[%d]: %u more connections dropped (lines suppressed)\n", p->me, d);
    }
    if (atomic_fetch_add(&lines, 1) >= CONN_LOG_BURST)
        atomic_fetch_add(&dropped, 1);
    else if (c->proc < 0) /* no hello yet: whose it is is not known */
        fprintf(stderr, "csn[%d]: dropping a connection not yet introduced: %s\n", p->me, why);
    else
        fprintf(stderr, "csn[%d]: dropping connection to process %d: %s\n", p->me, c->proc, why);
}

void csni_conn_fail(struct csni_conn *c, const char *why)
{
    struct csni_proc *p = c->p;
    csni_lock(&c->tx_lock);
    bool was = c->dead;
    c->dead = true;
    conn_credit_back(c);
    if (!was)
        c->broken = why != NULL; /* read by the reaper after ended (seq_cst) */
    struct csni_conn *moved = c->moved;
    csni_unlock(&c->tx_lock);
    if (was)
        return;
    if (moved) /* the move's OK, if still to come, will not: what waits there goes out */
        conn_resume(moved);
    if (why)
        conn_log(p, c, why);
    if (!c->pp)
        atomic_fetch_sub(&p->conns.nstrangers, 1);
    /* Fails only when the descriptor was never added: nothing to undo then. */
    (void)epoll_ctl(p->epfd, EPOLL_CTL_DEL, c->fd, NULL);
    csni_ofi_fail(c);
    /* shutdown, not close: a thread may be about to use the number. The poller that
     * reports the end closes it once this has returned (csni_conn_close). */
    (void)shutdown(c->fd, SHUT_RDWR);
    conn_fail_queue(c);
    atomic_fetch_sub(&p->conns.nlive, 1);
    if (atomic_load_explicit(&c->ring, memory_order_relaxed)) {
        atomic_fetch_sub(&p->conns.nshm, 1);
        atomic_fetch_add(&p->conns.ndead_rings, 1); /* on the list, or soon (ring set first) */
    }
    atomic_store(&c->ended, true);
    atomic_fetch_add(&p->conns.nended, 1);
    csni_kick_epoll(p); /* the poller reports it */
}

bool csni_conn_close(struct csni_conn *c)
{
    struct csni_proc *p = c->p;
    bool stranger = c->pp == NULL; /* a dead connection's owner no longer changes */
    csni_conn_rx_lock(c);
    csni_lock(&c->tx_lock);
    CSNI_ASSERT(c->dead && (!stranger || !c->shm));
    /* The number is cleared before the close: a child forked meanwhile closes the
     * connections' descriptors it sees (proc.c), never a number reused by then. */
    int fd = c->fd;
    c->fd = -1;
    if (c->shm)
        c->shm->bell_fd = -1;
    if (fd >= 0)
        (void)close(fd);
    if (stranger) {
        free(c->rbuf);
        c->rbuf = NULL;
    }
    csni_unlock(&c->tx_lock);
    csni_conn_rx_unlock(c);
    if (stranger) {
        atomic_fetch_add(&p->conns.nretired, 1);
        atomic_store(&c->retired, true);
    }
    return stranger;
}

bool csni_conn_take_ended(struct csni_conn *c)
{
    if (!atomic_load_explicit(&c->ended, memory_order_relaxed) ||
        !atomic_exchange(&c->ended, false))
        return false;
    atomic_fetch_sub(&c->p->conns.nended, 1);
    return true;
}

int csni_conn_bells(struct csni_conn *c, bool block)
{
    char b[64];
    if (block)
        csni_conn_rx_lock(c);
    else if (!csni_conn_rx_trylock(c))
        return 0; /* its reader reads the ring anyway; the bells stay for the next look */
    int rv;
    for (;;) {
        ssize_t r = recv(c->fd, b, sizeof b, MSG_DONTWAIT);
        if (r > 0 || (r < 0 && errno == EINTR))
            continue;
        rv = r == 0 || (errno != EAGAIN && errno != EWOULDBLOCK) ? -1 : 0;
        break;
    }
    csni_conn_rx_unlock(c);
    return rv;
}

int csni_conn_arm(struct csni_conn *c)
{
    if (!csni_conn_rx_trylock(c))
        return -1;
    bool ring = c->shm != NULL && !c->dead;
    int fabric = c->ofi && !c->dead ? csni_ofi_arm(c) : 0;
    csni_conn_rx_unlock(c);
    return fabric || (ring && csni_shm_arm(c->shm, atomic_load(&c->tx_pending))) ? 1 : 0;
}

bool csni_conn_arm_fence(void)
{
    return csni_shm_heavy_fence();
}

/* ---- reading ---- */
/* Places buffered and then link bytes for the current payload. Returns 1 when the payload
 * is complete, 0 when the link is drained, -1 on end of stream or error. */
static int conn_payload(struct csni_conn *c)
{
    struct csni_place *pl = &c->pl;
    for (;;) {
        size_t avail = c->rend - c->rpos;
        if (pl->want) {
            size_t n = avail < pl->want ? avail : pl->want;
            if (n) {
                if (pl->dst) {
                    memcpy(pl->dst, c->rbuf + c->rpos, n);
                    pl->dst += n;
                }
                c->rpos += n;
                pl->want -= n;
                continue;
            }
            if (pl->want >= CONN_DIRECT && pl->dst) {
                ssize_t r = conn_read(c, pl->dst, pl->want);
                if (r > 0) {
                    pl->dst += r;
                    pl->want -= (size_t)r;
                    continue;
                }
                if (r == 0)
                    return -1;
                if (errno == EINTR)
                    continue;
                return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -1;
            }
        } else if (pl->discard) {
            size_t n = avail < pl->discard ? avail : pl->discard;
            if (n) {
                c->rpos += n;
                pl->discard -= n;
                continue;
            }
        } else {
            return 1;
        }
        c->rpos = c->rend = 0;
        ssize_t r = conn_read(c, c->rbuf, CONN_RBUF);
        if (r > 0) {
            c->rend = (size_t)r;
            continue;
        }
        if (r == 0)
            return -1;
        if (errno == EINTR)
            continue;
        return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -1;
    }
}

/* Shared memory, between frames, nothing staged: the next frame decoded in place from the
 * ring record, a whole one or a short EAGER one (csni_frame_decode_short). CONN_PEEK_FRAME: *f
 * decoded, *hdr the bytes its header takes in the record, *body points after it, *avail record
 * bytes follow it. CONN_PEEK_EMPTY: nothing in the ring; CONN_PEEK_OTHER: not in this state, or a
 * header split across records (the general reader takes it); CONN_PEEK_BAD: a corrupt record
 * or header (*why says what). */
enum { CONN_PEEK_BAD = -1, CONN_PEEK_EMPTY, CONN_PEEK_OTHER, CONN_PEEK_FRAME };
static int conn_peek_frame(struct csni_conn *c, struct csni_frame *f, const uint8_t **body,
                           size_t *avail, size_t *hdr, const char **why)
{
    if (!c->shm || c->phase != CSNI_RX_HDR || c->rpos != c->rend || !c->pp)
        return CONN_PEEK_OTHER;
    const uint8_t *v;
    size_t n;
    int k = csni_shm_peek(c->shm, &v, &n);
    if (k < 0) {
        *why = "corrupt shared-memory record";
        return CONN_PEEK_BAD;
    }
    if (k == 0)
        return CONN_PEEK_EMPTY;
    *hdr = k == 2 ? CSNI_SHORT_SIZE : CSNI_FRAME_SIZE;
    if (n < *hdr)
        return CONN_PEEK_OTHER; /* a whole frame's header split across records */
    if (k == 2 ? csni_frame_decode_short(v, n - *hdr, c->p->tun.eager_max, f, why) != 0
               : csni_frame_decode(v, c->p->tun.eager_max, f, why) != 0)
        return CONN_PEEK_BAD;
    *body = v + *hdr;
    *avail = n - *hdr;
    return CONN_PEEK_FRAME;
}

bool csni_conn_peek_eager(struct csni_conn *c, uint32_t tid, struct csni_frame *f,
                          const uint8_t **payload, size_t *take)
{
    const char *why;
    size_t avail, hdr;
    csni_lock_assert_held(&c->rx_lock);
    /* Anything else, a corrupt header too, is left to the general reader. */
    if (c->dead || conn_peek_frame(c, f, payload, &avail, &hdr, &why) != CONN_PEEK_FRAME ||
        f->type != CSNI_F_EAGER || avail < f->len || csni_frame_dst_tport(f) != tid)
        return false;
    *take = hdr + (size_t)f->len;
    return true;
}

void csni_conn_skip(struct csni_conn *c, size_t take)
{
    csni_shm_consume(c->shm, take);
}

/* Fails the connection from the reader and hands back the placement it abandons. */
static enum csni_rx_event conn_failed(struct csni_conn *c, const char *why, struct csni_place *done)
{
    *done = c->pl;
    memset(&c->pl, 0, sizeof c->pl);
    csni_conn_fail(c, why);
    return CSNI_RX_FAILED;
}

/* Reads more bytes into the staging buffer for a header: 1 got some, 0 nothing now, -1 end of
 * stream or error. After a short socket read whose bytes are all served, a reader that will
 * be back at its next turn (csni_conn_short_ends) stops: the kernel had no more then, and a
 * read now would most likely find nothing (a system call, about 0.4 us here, on the latency
 * path of every message). */
static int conn_fill(struct csni_conn *c)
{
    memmove(c->rbuf, c->rbuf + c->rpos, c->rend - c->rpos);
    c->rend -= c->rpos;
    c->rpos = 0;
    if (c->rx_short && c->rend == 0 && csni_conn_short_ends)
        return 0;
    for (;;) {
        size_t room = CONN_RBUF - c->rend;
        ssize_t n = conn_read(c, c->rbuf + c->rend, room);
        if (n > 0) {
            c->rx_short = (size_t)n < room && c->link == &conn_sock_link;
            c->rend += (size_t)n;
            return 1;
        }
        if (n == 0)
            return -1;
        if (errno == EINTR)
            continue;
        return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -1;
    }
}

static bool conn_key_ok(const struct csni_conn *c)
{
    unsigned diff = 0;
    for (int i = 0; i < CSNI_KEY_BYTES; i++)
        diff |= (unsigned)(c->key[i] ^ c->p->key[i]);
    return diff == 0;
}

static enum csni_rx_event conn_next(struct csni_conn *c, const uint8_t **staged,
                                    struct csni_place *done)
{
    const char *why = NULL;
    *staged = NULL;
    while (!c->dead) {
        if (c->phase == CSNI_RX_PAYLOAD) {
            int r = conn_payload(c);
            if (r == 0)
                return CSNI_RX_DRAINED;
            if (r < 0)
                return conn_failed(c, NULL, done);
            c->phase = CSNI_RX_HDR;
            *done = c->pl;
            memset(&c->pl, 0, sizeof c->pl);
            if (c->pp)
                return CSNI_RX_PLACED;
            if (!conn_key_ok(c))
                return conn_failed(c, "connection without the job key refused", done);
            return CSNI_RX_HELLO;
        }
        /* Shared memory, nothing staged: a frame whose payload is whole in the ring's record
         * is served in place, without the copy through the staging buffer. A DATA payload is
         * then read the general way (rendezvous: large); a HELLO is refused below. */
        const uint8_t *body;
        size_t avail, hdr;
        int k = conn_peek_frame(c, &c->f, &body, &avail, &hdr, &why);
        if (k == CONN_PEEK_EMPTY)
            return CSNI_RX_DRAINED;
        if (k == CONN_PEEK_BAD)
            return conn_failed(c, why, done);
        if (k == CONN_PEEK_FRAME && c->f.type != CSNI_F_HELLO) {
            bool eager = c->f.type == CSNI_F_EAGER;
            if (!eager || avail >= c->f.len) {
                c->ring_taken = hdr + (eager ? (size_t)c->f.len : 0);
                *staged = eager ? body : NULL;
                return CSNI_RX_FRAME;
            }
        }
        if (c->rend - c->rpos < CSNI_FRAME_SIZE) {
            int r = conn_fill(c);
            if (r > 0)
                continue;
            return r == 0 ? CSNI_RX_DRAINED : conn_failed(c, NULL, done);
        }
        if (csni_frame_decode(c->rbuf + c->rpos, c->p->tun.eager_max, &c->f, &why) != 0)
            return conn_failed(c, why, done);
        c->rpos += CSNI_FRAME_SIZE;
        if (!c->pp) {
            if (c->f.type != CSNI_F_HELLO)
                return conn_failed(c, "connection without the job key refused", done);
            c->pl = (struct csni_place){.dst = c->key, .want = CSNI_KEY_BYTES};
            c->phase = CSNI_RX_PAYLOAD;
            continue;
        }
        if (c->f.type == CSNI_F_HELLO)
            return conn_failed(c, "second hello", done);
        if (c->f.type == CSNI_F_EAGER && c->rend - c->rpos >= c->f.len) {
            *staged = c->rbuf + c->rpos; /* the whole payload came with the header */
            c->rpos += c->f.len;
        }
        return CSNI_RX_FRAME;
    }
    return CSNI_RX_DRAINED;
}

enum csni_rx_event csni_conn_next(struct csni_conn *c, const uint8_t **staged,
                                  struct csni_place *done)
{
    csni_lock_assert_held(&c->rx_lock);
    enum csni_rx_event ev = conn_next(c, staged, done);
    if (ev == CSNI_RX_DRAINED || ev == CSNI_RX_FAILED)
        c->rx_short = false; /* the pass ends: the next one reads first */
    return ev;
}

void csni_conn_place(struct csni_conn *c, const struct csni_place *pl)
{
    csni_lock_assert_held(&c->rx_lock);
    if (c->ring_taken) {
        csni_shm_consume(c->shm, c->ring_taken); /* the staged payload is copied by now */
        c->ring_taken = 0;
    }
    c->pl = *pl;
    c->phase = CSNI_RX_PAYLOAD;
}

void csni_conns_cancel(struct csni_proc *p, csn_transport *t, struct csni_op **gone)
{
    for (struct csni_conn *c = csni_conns_first(&p->conns); c; c = c->next) {
        csni_conn_rx_lock(c);
        struct csni_place *pl = &c->pl;
        if (pl->t == t) {
            /* An unexpected record being filled is freed with t's others. */
            if (pl->op && !pl->listed) {
                pl->op->next = *gone;
                *gone = pl->op;
            }
            pl->discard += pl->want;
            pl->dst = NULL;
            pl->want = 0;
            pl->op = NULL;
            pl->ux = NULL;
            pl->t = NULL;
        }
        csni_conn_rx_unlock(c);
    }
}

bool csni_conns_sending(struct csni_proc *p, csn_transport *t)
{
    bool busy = false;
    for (struct csni_conn *c = csni_conns_first(&p->conns); c && !busy; c = c->next) {
        csni_lock(&c->tx_lock);
        for (struct csni_sendreq *sr = c->sq_head; sr && !busy; sr = sr->next)
            busy = sr->op && sr->op->t == t && sr->op->kind == CSNI_OP_TX;
        csni_unlock(&c->tx_lock);
    }
    return busy;
}
