/* stream.c: the stream core shared by the Unix-domain and TCP transports: framing, reading,
 * writing, failure. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/core.h"

#define STREAM_RBUF 65536u   /* staging buffer: many small frames per recv */
#define STREAM_DIRECT 16384u /* payload remainders this large are read straight in place */
#define STREAM_BATCH 32      /* frames gathered into one sendmsg */
#define STREAM_DONE (2 * STREAM_BATCH) /* completions collected per flush call */

static ssize_t sock_read(struct csni_conn *c, void *buf, size_t n)
{
    return recv(c->fd, buf, n, MSG_DONTWAIT);
}

static ssize_t sock_writev(struct csni_conn *c, const struct iovec *iov, int n)
{
    struct msghdr mh = {.msg_iov = (struct iovec *)iov, .msg_iovlen = (size_t)n};
    return sendmsg(c->fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT); /* EPIPE, not SIGPIPE */
}

const struct csni_link_ops csni_sock_link = {
    .read = sock_read,
    .writev = sock_writev,
};

struct csni_conn *csni_conn_new(struct csni_proc *p, int fd, struct csni_peer *pp,
                                struct csni_shm *shm)
{
    struct csni_conn *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    if (!(c->rbuf = malloc(STREAM_RBUF))) {
        free(c);
        return NULL;
    }
    c->fd = fd;
    c->p = p;
    c->pp = pp;
    c->shm = shm;
    atomic_init(&c->ring, shm);
    c->link = shm ? &csni_shm_link : &csni_sock_link;
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    csni_conn_add(p, c);
    return c;
}

static void stream_set_out(struct csni_conn *c, bool on)
{
    struct epoll_event ev = {.events = EPOLLIN | (on ? EPOLLOUT : 0u), .data.ptr = c};
    atomic_store_explicit(&c->tx_pending, on, memory_order_relaxed);
    if (c->epollout == on || c->shm) /* a ring has no EPOLLOUT: its reader rings instead */
        return;
    c->epollout = on;
    epoll_ctl(c->p->epfd, EPOLL_CTL_MOD, c->fd, &ev);
}

/* Finishes a written request. Returns the op to complete (outside tx_lock), or NULL. */
static struct csni_op *stream_written(struct csni_sendreq *sr)
{
    struct csni_op *op = sr->op;
    uint8_t type = sr->hdr[2];
    if (sr->heap) {
        free(sr);
        return NULL;
    }
    atomic_store_explicit(&sr->queued, false, memory_order_release); /* last access to sr */
    return op && (type == CSNI_F_EAGER || type == CSNI_F_DATA) ? op : NULL;
}

/* Payload bytes of the frame a request is writing now (a chunk of a chunked DATA). */
static size_t stream_chunk(const struct csni_sendreq *sr)
{
    size_t left = sr->paylen - sr->sent;
    return sr->chunked && left > CSNI_DATA_CHUNK ? (size_t)CSNI_DATA_CHUNK : left;
}

/* A chunk of sr (at the head) is out and more remain: head the next one, and let the control
 * frames queued behind go first (data frames keep their order). */
static void stream_next_chunk(struct csni_conn *c, struct csni_sendreq *sr)
{
    sr->sent += stream_chunk(sr);
    sr->off = 0;
    csni_frame_set_chunk(sr->hdr, stream_chunk(sr), sr->sent);
    struct csni_sendreq *last = NULL;
    for (struct csni_sendreq *n = sr->next; n && !n->op && n->paylen == 0; n = n->next)
        last = n;
    if (!last)
        return;
    c->sq_head = sr->next;
    sr->next = last->next;
    last->next = sr;
    if (c->sq_tail == last)
        c->sq_tail = sr;
}

/* Writes queued frames until the socket is full, or until done[] (STREAM_DONE entries) has
 * no room for another batch. tx_lock held. Ops whose frame finished are stored in done[].
 * Every byte written is accounted before returning. Returns -1 on a socket error. */
static int stream_flush_locked(struct csni_conn *c, struct csni_op **done, int *ndone)
{
    while (c->sq_head && *ndone <= STREAM_DONE - STREAM_BATCH) {
        struct iovec iov[2 * STREAM_BATCH];
        int n = 0, k = 0;
        for (struct csni_sendreq *sr = c->sq_head; sr && k < STREAM_BATCH; sr = sr->next, k++) {
            size_t off = sr->off, plen = stream_chunk(sr);
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
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                break;
            return -1;
        }
        size_t left = (size_t)w;
        while (c->sq_head) {
            struct csni_sendreq *sr = c->sq_head;
            size_t need = CSNI_FRAME_SIZE + stream_chunk(sr) - sr->off;
            if (left < need) {
                sr->off += left;
                break;
            }
            left -= need;
            if (sr->chunked && sr->sent + stream_chunk(sr) < sr->paylen) {
                stream_next_chunk(c, sr); /* the write ended with this chunk */
                break;
            }
            c->sq_head = sr->next;
            if (!c->sq_head)
                c->sq_tail = NULL;
            struct csni_op *op = stream_written(sr);
            if (op)
                done[(*ndone)++] = op;
        }
    }
    return 0;
}

static void stream_finish(struct csni_op **done, int ndone)
{
    for (int i = 0; i < ndone; i++)
        csni_sent(done[i], done[i]->sr.hdr);
}

static void stream_fail_queue(struct csni_conn *c)
{
    struct csni_op *ops = NULL;
    csni_lock(&c->tx_lock);
    struct csni_sendreq *sr = c->sq_head;
    c->sq_head = c->sq_tail = NULL;
    csni_unlock(&c->tx_lock);
    while (sr) {
        struct csni_sendreq *next = sr->next;
        struct csni_op *op = sr->op;
        uint8_t type = sr->hdr[2];
        if (sr->heap) {
            free(sr);
        } else {
            atomic_store_explicit(&sr->queued, false, memory_order_release);
            /* RTS ops sit on the peer's CTS list and are failed with it. */
            if (op && (type == CSNI_F_EAGER || type == CSNI_F_DATA)) {
                op->next = ops;
                ops = op;
            }
        }
        sr = next;
    }
    while (ops) {
        struct csni_op *next = ops->next;
        csni_lock(&ops->t->lock);
        csni_complete(ops->t, ops, CSN_PEER_LOST);
        csni_unlock(&ops->t->lock);
        ops = next;
    }
}

void csni_conn_send(struct csni_conn *c, struct csni_sendreq *sr)
{
    struct csni_op *done[STREAM_DONE];
    int ndone = 0, err = 0;

    atomic_store_explicit(&sr->queued, true, memory_order_relaxed);
    csni_lock(&c->tx_lock);
    sr->next = NULL;
    sr->off = 0;
    if (c->dead) {
        csni_unlock(&c->tx_lock);
        struct csni_op *op = sr->op;
        uint8_t type = sr->hdr[2];
        if (stream_written(sr) && (type == CSNI_F_EAGER || type == CSNI_F_DATA)) {
            csni_lock(&op->t->lock);
            csni_complete(op->t, op, CSN_PEER_LOST);
            csni_unlock(&op->t->lock);
        }
        return;
    }
    bool idle = c->sq_head == NULL;
    /* Control frames (CTS, CREDIT, notes: no op, no payload) overtake queued data: a CTS
     * stuck behind megabytes bound the other way would stall the peer's transfer to us for
     * as long. Only the frame being written stays ahead (its bytes are half out), and the
     * control frames queued before (a split CTS must arrive before its CTS_PULLED). Their
     * order against data does not matter (token-addressed); the data frames keep theirs. */
    if (!idle && !sr->op && sr->paylen == 0) {
        struct csni_sendreq *after = c->sq_head->off > 0 ? c->sq_head : NULL;
        for (struct csni_sendreq *n = after ? after->next : c->sq_head;
             n && !n->op && n->paylen == 0; n = n->next)
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
    } else if (c->sq_tail) {
        c->sq_tail->next = sr;
        c->sq_tail = sr;
    } else {
        c->sq_head = c->sq_tail = sr;
    }
    if (idle)
        err = stream_flush_locked(c, done, &ndone);
    if (!err)
        stream_set_out(c, c->sq_head != NULL);
    csni_unlock(&c->tx_lock);
    stream_finish(done, ndone);
    if (err)
        csni_conn_fail(c, NULL);
}

bool csni_conn_send_now(struct csni_conn *c, const uint8_t *hdr, const void *payload, size_t len)
{
    csni_lock(&c->tx_lock);
    bool ok = !c->dead && !c->sq_head && c->shm && csni_shm_write_frame(c, hdr, payload, len);
    csni_unlock(&c->tx_lock);
    return ok;
}

void csni_conn_flush(struct csni_conn *c, bool block_lock)
{
    struct csni_op *done[STREAM_DONE];
    int ndone, err;
    do {
        ndone = 0;
        if (block_lock)
            csni_lock(&c->tx_lock);
        else if (!csni_trylock(&c->tx_lock))
            return;
        err = c->dead ? 0 : stream_flush_locked(c, done, &ndone);
        if (!err && !c->dead)
            stream_set_out(c, c->sq_head != NULL);
        csni_unlock(&c->tx_lock);
        stream_finish(done, ndone);
        if (err) {
            csni_conn_fail(c, NULL);
            return;
        }
    } while (ndone > STREAM_DONE - STREAM_BATCH); /* stopped for room, not for a full socket */
}

void csni_conn_fail(struct csni_conn *c, const char *why)
{
    struct csni_proc *p = c->p;
    csni_lock(&c->tx_lock);
    bool was = c->dead;
    c->dead = true;
    csni_unlock(&c->tx_lock);
    if (was)
        return;
    if (why)
        fprintf(stderr, "csn[%d]: dropping connection to process %d: %s\n", p->me,
                c->pp ? c->pp->proc : -1, why);
    epoll_ctl(p->epfd, EPOLL_CTL_DEL, c->fd, NULL);
    /* shutdown, not close: the descriptor number stays ours until the process ends, so a
     * thread still holding it can never touch someone else's file. */
    shutdown(c->fd, SHUT_RDWR);
    stream_fail_queue(c);
    if (c->pp) {
        /* Its other connections may still hold what it sent before dying (data ahead of
         * their end of stream): the peer is lost when the last of them ends. */
        csni_lock(&c->pp->lock);
        bool last = --c->pp->nconns <= 0;
        csni_unlock(&c->pp->lock);
        if (last) {
            /* A connection it made just before dying may still wait in our listen queue,
             * with a message it counted as sent: take it in before giving up on it. */
            csni_accept_pending(p);
            csni_lock(&c->pp->lock);
            last = c->pp->nconns <= 0;
            csni_unlock(&c->pp->lock);
        }
        if (last)
            csni_peer_lost(p, c->pp);
    }
}

/* The accepted side's first frame: the peer's process id and the job key. rx_lock held. */
static void stream_on_hello(struct csni_conn *c)
{
    struct csni_proc *p = c->p;
    unsigned diff = 0;
    for (int i = 0; i < CSNI_KEY_BYTES; i++)
        diff |= (unsigned)(c->key[i] ^ p->key[i]);
    if (diff) {
        csni_conn_fail(c, "connection without the job key refused");
        return;
    }
    if (c->f.cookie >= (1u << 24) || (int)c->f.cookie == p->me) {
        csni_conn_fail(c, "hello with an impossible process id");
        return;
    }
    struct csni_peer *pp = csni_peer_lookup(p, (int)c->f.cookie);
    if (!pp) {
        csni_conn_fail(c, "no memory for a peer");
        return;
    }
    if (c->f.dst == 1) {
        /* From now on the socket only rings doorbells: drop what it buffered. */
        struct csni_shm *shm;
        if (csni_shm_attach(p, (int)c->f.cookie, c->f.src, &shm) != CSN_OK) {
            csni_conn_fail(c, "cannot map the shared-memory segment of the connection");
            return;
        }
        c->rpos = c->rend = 0;
        csni_lock(&c->tx_lock);
        c->shm = shm;
        c->link = &csni_shm_link;
        csni_unlock(&c->tx_lock);
        atomic_store_explicit(&c->ring, shm, memory_order_release);
        atomic_fetch_add(&p->nshm, 1);
        csni_kick_epoll(p);
    }
    csni_lock(&pp->lock);
    c->pp = pp;
    pp->nconns++;
    pp->eager_max = c->shm ? p->shm_eager : p->eager_max;
    if (!pp->conn)
        pp->conn = c; /* the first connection either side made becomes the sending one */
    csni_unlock(&pp->lock);
}

/* A poller's look at a shared-memory connection: read what the ring holds, write what waits. */
void csni_conn_poll(struct csni_conn *c)
{
    /* No lock unless there is something to do: the rings' indices are atomics. A payload
     * half read (phase) always comes with the ring not yet empty or a frame still in rbuf,
     * which the reader that left it finishes; a new byte makes the ring readable. */
    struct csni_shm *s = atomic_load_explicit(&c->ring, memory_order_acquire);
    if (!s)
        return;
    if (csni_shm_has_data(s))
        csni_conn_rx(c, false);
    if (atomic_load_explicit(&c->tx_pending, memory_order_relaxed))
        csni_conn_flush(c, false);
}

/* Shared memory, between frames, nothing staged (rx_lock held): the next frame decoded in
 * place from the ring record. STREAM_PEEK_FRAME: *f decoded, *body points after its header,
 * *avail record bytes follow it. STREAM_PEEK_EMPTY: nothing in the ring; STREAM_PEEK_OTHER: not
 * in this state, or a header split across records (the general reader takes it);
 * STREAM_PEEK_BAD: a corrupt header (*why says what). */
enum { STREAM_PEEK_BAD = -1, STREAM_PEEK_EMPTY, STREAM_PEEK_OTHER, STREAM_PEEK_FRAME };
static int stream_peek_frame(struct csni_conn *c, struct csni_frame *f, const uint8_t **body,
                             size_t *avail, const char **why)
{
    if (!c->shm || c->phase != CSNI_RX_HDR || c->rpos != c->rend || !c->pp)
        return STREAM_PEEK_OTHER;
    const uint8_t *v;
    size_t n = csni_shm_peek(c->shm, &v);
    if (n == 0)
        return STREAM_PEEK_EMPTY;
    if (n < CSNI_FRAME_SIZE)
        return STREAM_PEEK_OTHER;
    if (csni_frame_decode(v, c->p->eager_max, f, why) != 0)
        return STREAM_PEEK_BAD;
    *body = v + CSNI_FRAME_SIZE;
    *avail = n - CSNI_FRAME_SIZE;
    return STREAM_PEEK_FRAME;
}

bool csni_conn_rx_direct(struct csni_conn *c, csn_transport *t, struct csni_op *own)
{
    const uint8_t *body;
    const char *why;
    struct csni_frame f;
    size_t avail;
    bool done = false;
    if (!csni_trylock(&c->rx_lock))
        return false;
    /* Anything else, a corrupt header too, is left to the general reader. */
    if (!c->dead && stream_peek_frame(c, &f, &body, &avail, &why) == STREAM_PEEK_FRAME &&
        f.type == CSNI_F_EAGER && avail >= f.len && f.dst == t->tid &&
        csni_match_direct(c, t, own, &f, body)) {
        csni_shm_consume(c, CSNI_FRAME_SIZE + (size_t)f.len);
        done = true;
    }
    csni_unlock(&c->rx_lock);
    return done;
}

void csni_conn_doorbells(struct csni_conn *c)
{
    char b[64];
    for (;;) {
        ssize_t r = recv(c->fd, b, sizeof b, MSG_DONTWAIT);
        if (r > 0)
            continue;
        if (r < 0 && errno == EINTR)
            continue;
        if (r == 0 || (errno != EAGAIN && errno != EWOULDBLOCK)) {
            /* The peer is gone, but what it published in the ring before dying is
             * still ours: a socket delivers its data before the end, so must a ring. */
            csni_conn_rx(c, true);
            csni_conn_fail(c, NULL);
        }
        return;
    }
}

/* Places buffered and then socket bytes for the current payload. Returns 1 when the payload
 * is complete, 0 when the socket is drained, -1 on EOF or error. */
static int stream_payload(struct csni_conn *c)
{
    for (;;) {
        size_t avail = c->rend - c->rpos;
        if (c->want) {
            size_t n = avail < c->want ? avail : c->want;
            if (n) {
                if (c->dst)
                    memcpy(c->dst, c->rbuf + c->rpos, n);
                if (c->dst)
                    c->dst += n;
                c->rpos += n;
                c->want -= n;
                continue;
            }
            if (c->want >= STREAM_DIRECT && c->dst) {
                ssize_t r = c->link->read(c, c->dst, c->want);
                if (r > 0) {
                    c->dst += r;
                    c->want -= (size_t)r;
                    continue;
                }
                if (r == 0)
                    return -1;
                if (errno == EINTR)
                    continue;
                return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -1;
            }
        } else if (c->discard) {
            size_t n = avail < c->discard ? avail : c->discard;
            if (n) {
                c->rpos += n;
                c->discard -= n;
                continue;
            }
        } else {
            return 1;
        }
        c->rpos = c->rend = 0;
        ssize_t r = c->link->read(c, c->rbuf, STREAM_RBUF);
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

static void stream_rx(struct csni_conn *c, bool block_lock);

/* Reads what is there. Sleepers of the transports it completes operations on are woken once
 * at the end, not once per message: a burst for a thread costs it one wake-up. */
void csni_conn_rx(struct csni_conn *c, bool block_lock)
{
    csni_defer_wakes(true);
    stream_rx(c, block_lock);
    csni_defer_wakes(false);
}

static void stream_rx(struct csni_conn *c, bool block_lock)
{
    struct csni_proc *p = c->p;
    const char *why = NULL;
    int r;

    if (block_lock)
        csni_lock(&c->rx_lock);
    else if (!csni_trylock(&c->rx_lock))
        return;
    while (!c->dead) {
        /* Shared memory, nothing staged: a frame whose payload is whole in the ring's record
         * is served in place, without the copy through the staging buffer. A DATA payload is
         * then read by the general path below (rendezvous: large); a HELLO is refused there. */
        const uint8_t *body;
        size_t avail;
        int k = stream_peek_frame(c, &c->f, &body, &avail, &why);
        if (k == STREAM_PEEK_EMPTY) {
            r = 0;
            goto drained;
        }
        if (k == STREAM_PEEK_BAD) {
            csni_unlock(&c->rx_lock);
            csni_conn_fail(c, why);
            return;
        }
        bool eager = c->f.type == CSNI_F_EAGER;
        if (k == STREAM_PEEK_FRAME && c->f.type != CSNI_F_HELLO && (!eager || avail >= c->f.len)) {
            csni_on_frame(c, eager ? body : NULL);
            csni_shm_consume(c, CSNI_FRAME_SIZE + (eager ? (size_t)c->f.len : 0));
            if (eager && !c->dead)
                csni_on_payload_done(c); /* placed already */
            else
                c->phase = CSNI_RX_PAYLOAD; /* a DATA payload is still to come */
            continue;
        }
        if (c->phase == CSNI_RX_PAYLOAD) {
            if ((r = stream_payload(c)) <= 0)
                goto drained;
            c->phase = CSNI_RX_HDR;
            if (!c->pp)
                stream_on_hello(c);
            else
                csni_on_payload_done(c);
            continue;
        }
        if (c->rend - c->rpos < CSNI_FRAME_SIZE) {
            memmove(c->rbuf, c->rbuf + c->rpos, c->rend - c->rpos);
            c->rend -= c->rpos;
            c->rpos = 0;
            ssize_t n = c->link->read(c, c->rbuf + c->rend, STREAM_RBUF - c->rend);
            if (n > 0) {
                c->rend += (size_t)n;
                continue;
            }
            r = n == 0 ? -1
                       : (errno == EINTR                              ? 1
                          : (errno == EAGAIN || errno == EWOULDBLOCK) ? 0
                                                                      : -1);
            if (r > 0)
                continue;
            goto drained;
        }
        if (csni_frame_decode(c->rbuf + c->rpos, p->eager_max, &c->f, &why) != 0) {
            csni_unlock(&c->rx_lock);
            csni_conn_fail(c, why);
            return;
        }
        c->rpos += CSNI_FRAME_SIZE;
        c->phase = CSNI_RX_PAYLOAD;
        if (!c->pp) {
            if (c->f.type != CSNI_F_HELLO) {
                csni_unlock(&c->rx_lock);
                csni_conn_fail(c, "connection without the job key refused");
                return;
            }
            c->dst = c->key;
            c->want = CSNI_KEY_BYTES;
            c->discard = 0;
        } else if (c->f.type == CSNI_F_HELLO) {
            csni_unlock(&c->rx_lock);
            csni_conn_fail(c, "second hello");
            return;
        } else {
            const uint8_t *staged = NULL;
            if (c->f.type == CSNI_F_EAGER && c->rend - c->rpos >= c->f.len) {
                staged = c->rbuf + c->rpos; /* the whole payload came with the header */
                c->rpos += c->f.len;
            }
            csni_on_frame(c, staged);
        }
    }
    csni_unlock(&c->rx_lock);
    return;
drained:
    if (r < 0) {
        struct csni_op *op = c->rxop;
        csn_transport *t = c->rxt;
        c->rxop = NULL;
        c->rxux = NULL;
        c->rxt = NULL;
        csni_unlock(&c->rx_lock);
        if (op) {
            csni_lock(&t->lock);
            csni_complete(t, op, CSN_PEER_LOST);
            csni_unlock(&t->lock);
        }
        csni_conn_fail(c, NULL);
        return;
    }
    csni_unlock(&c->rx_lock);
}
