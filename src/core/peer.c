/* peer.c: the peer table and connecting: finding a peer's published address, making the
 * connection (and its shared-memory rings), and taking in connections peers made to us. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/conn.h"
#include "core/debug.h"
#include "core/errors.h"
#include "core/netid.h"
#include "core/peer.h"
#include "core/state.h"
#include "names/book.h"
#include "transport/ofi/ofi.h"

void csni_peers_init(struct csni_peers *ps)
{
    csni_mutex_init(&ps->lock, CSNI_RANK_LISTS);
    ps->list = NULL;
    for (int i = 0; i < CSNI_PEER_TAB; i++)
        atomic_init(&ps->tab[i], NULL);
    atomic_init(&ps->nlost, 0);
}

/* The name of the segment of the pair (from, to, lane): the nonce makes it unguessable, so no
 * other local user can take the name first. */
static void peer_shm_path(const struct csni_proc *p, int from, int to, uint32_t lane,
                          uint64_t nonce, char *out, size_t cap)
{
    snprintf(out, cap, "%s/csn.%s.%d.%d.%u.%016llx", p->tun.shm_dir, p->boot.jobid, from, to, lane,
             (unsigned long long)nonce);
}

/* Chooses, in a published endpoint "ADDR[|ADDR2]|h=HOST" (split in place), the address to
 * use: the first when the peer is on our host and its kind is ours or reaches across hosts,
 * else the first of a kind that reaches across hosts. NULL when none fits. */
static const char *peer_pick_addr(struct csni_proc *p, char *ep)
{
    char *items[8];
    int n = 0;
    const char *host = NULL;
    items[n++] = ep;
    for (char *bar = strchr(ep, '|'); bar; bar = strchr(bar + 1, '|')) {
        *bar = 0;
        if (strncmp(bar + 1, "h=", 2) == 0)
            host = bar + 3;
        else if (n < 8)
            items[n++] = bar + 1;
    }
    bool local = !host || strcmp(host, p->boot.host) == 0;
    for (int i = 0; i < n; i++) {
        const struct csni_net_ops *k = csni_net_of_addr(items[i]);
        if (!k)
            continue;
        if (!k->host_local || (local && i == 0 && k == p->tun.net))
            return items[i];
    }
    return NULL;
}

/* Sends the whole HELLO (blocking socket, before it is made non-blocking). */
static csn_status peer_send_hello(struct csni_proc *p, int fd, const struct csni_frame *f)
{
    uint8_t hello[CSNI_FRAME_SIZE + CSNI_KEY_BYTES];
    csni_frame_encode(f, hello);
    memcpy(hello + CSNI_FRAME_SIZE, p->key, CSNI_KEY_BYTES);
    size_t off = 0;
    while (off < sizeof hello) {
        ssize_t w = send(fd, hello + off, sizeof hello - off, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return CSN_PEER_LOST;
        off += (size_t)w;
    }
    return CSN_OK;
}

/* Makes a connection to pp: HELLO, and its shared-memory segment when on this host. lane 0
 * is the connection the process shares among its transports; with CSN_CONN_PER_TRANSPORT a
 * transport's own connection carries its id as lane. The caller stores *out. */
static csn_status peer_connect(struct csni_proc *p, struct csni_peer *pp, uint32_t lane,
                               struct csni_conn **out)
{
    char addr[512], path[512];
    int fd = -1;
    struct csni_shm *shm = NULL;
    uint64_t nonce = 0;
    csn_status rv;
    /* Ranks of the job come up in their own time: wait for their address as for a name.
     * Forked processes publish theirs before any netid of theirs can be known. */
    uint64_t wait = pp->proc < p->boot.size ? p->tun.lookup_timeout_ms : 0;
    if ((rv = csni_book_get(p->boot.size, pp->proc, wait, addr, sizeof addr)) != CSN_OK)
        return rv == CSN_NOT_FOUND ? (pp->proc < p->boot.size ? CSN_PEER_LOST : CSN_ILLEGAL_NETID)
                                   : rv;
    const char *use = peer_pick_addr(p, addr);
    const struct csni_net_ops *kind = use ? csni_net_of_addr(use) : NULL;
    if (!kind)
        return CSN_PEER_LOST;
    unsigned tmo = p->tun.lookup_timeout_ms > 60000 ? 60000u : (unsigned)p->tun.lookup_timeout_ms;
    if ((rv = kind->connect(use, tmo, &fd)) != CSN_OK)
        return rv;
    kind->tune(fd, p->tun.tcp_notsent);
    if (p->tun.use_shm && kind->host_local) {
        if (getrandom(&nonce, sizeof nonce, 0) != sizeof nonce) {
            rv = csni_errno_status(errno);
            goto fail;
        }
        peer_shm_path(p, p->me, pp->proc, lane, nonce, path, sizeof path);
        if ((rv = csni_shm_create(path, p->tun.shm_ring, p->tun.shm_membarrier, p->tun.shm_populate,
                                  &shm)) != CSN_OK)
            goto fail;
        csni_shm_set_compact(shm, p->tun.shm_compact);
    }
    struct csni_frame f =
        csni_frame_hello((uint64_t)p->me, shm != NULL, lane, shm ? nonce : csni_ofi_hello_nonce());
    if ((rv = peer_send_hello(p, fd, &f)) != CSN_OK)
        goto fail;
    struct csni_conn *c = csni_conn_new(p, fd, pp, pp->proc, shm);
    if (!c) {
        rv = CSN_NO_HEAP;
        goto fail;
    }
    csni_lock(&pp->lock);
    pp->nconns++;
    if (shm)
        pp->eager_max = p->tun.shm_eager;
    csni_unlock(&pp->lock);
    *out = c;
    return CSN_OK;
fail:
    close(fd);
    if (shm) {
        unlink(path); /* the peer never mapped it */
        csni_shm_unmap(shm);
    }
    return rv;
}

/* ---- which connection a pair sends on ----
 * Both ends connected at once: each then sends on the connection it made, and over TCP every
 * message gets an acknowledgement segment of its own (nothing goes back on that connection to
 * carry it): measured, the 8 B half round trip over loopback 9-10 us against 5.7 us on one
 * connection, each process pair landing on one or the other at random. The pair settles on
 * the connection the lower process id made (peer_canonical): an end that sends on the other
 * one moves, once. Its LAST frame goes on the old connection behind all it queued there; what
 * it sends from then on is queued on the new one, unwritten, until the peer's OK comes back on
 * the old one: the peer has read everything before, and the pair's order holds. The wait is
 * one round trip, at the start of the pair. With a connection per transport the connections
 * stay.
 *
 * Over a fabric the opposite holds, when its provider moves large messages itself
 * (CSN_OFI_RNDV; p->tun.own_sends, decided at open): an end that sends such messages moves to
 * a connection it made (csni_peer_own). With the tcp provider each connection is a TCP
 * connection of its own, whose way back then carries only what answers the messages it brings
 * (the CTS, csni_rndv_send_cts, and the provider's read requests). With both ends' large
 * messages on one connection each answer waited behind up to a whole message of the other
 * end's, and the transfers took turns: on the testbed's 200 Mbit/s links nettest's both-ways
 * tests got 26-33 MB/s of the 47.8 known answer, 46-47 this way (DESIGN.md, "Large
 * messages"). Small messages, and answers, use whichever connection came first (one that
 * cannot be made, to a stopped peer, must not hold up a reply). Without the provider's
 * protocol the connections over a fabric stay as they came: the canonical move measured
 * slower there (bench/ab.sh, 2 runs: 1 MiB latency 0.70x and 0.80x, both ways 0.71-0.95x;
 * BENCHMARKS.md, issue 20), the provider's sockets not being csn's to tune (tcp.c, quick
 * acknowledgements). */
static bool peer_canonical(const struct csni_proc *p, int proc, bool made_by_us)
{
    return !p->tun.conn_per_transport && !csni_ofi_on() &&
           (made_by_us ? p->me < proc : proc < p->me);
}

static void peer_move(struct csni_proc *p, struct csni_peer *pp, struct csni_conn *next)
{
    struct csni_frame f = csni_frame_move(CSNI_MOVE_LAST);
    struct csni_sendreq *last = csni_sendreq_new(&f);
    if (!last)
        return; /* the pair keeps both connections: slower, not wrong */
    csni_lock(&pp->lock);
    struct csni_conn *old = pp->conn;
    if (pp->lost || !old || old == next) {
        csni_unlock(&pp->lock);
        free(last);
        return;
    }
    /* Paused before a sender can see it; a sender that still takes old meanwhile queues
     * ahead of the LAST, or behind it and is forwarded. */
    csni_conn_pause(next);
    pp->conn = next;
    csni_unlock(&pp->lock);
    csni_conn_move(old, last, next);
    csni_debug_move(p, pp->proc);
}

void csni_peer_on_move(struct csni_conn *c, const struct csni_frame *f)
{
    if (csni_frame_move_kind(f) == CSNI_MOVE_OK) {
        csni_conn_moved_ok(c);
        return;
    }
    struct csni_frame ok = csni_frame_move(CSNI_MOVE_OK);
    struct csni_sendreq *sr = csni_sendreq_new(&ok);
    if (!sr) {
        csni_conn_fail(c, "no memory to answer a move"); /* the peer waits: end it */
        return;
    }
    csni_conn_send_ok(c, sr);
}

struct csni_peer *csni_peer_lookup(struct csni_proc *p, int proc)
{
    struct csni_peer *pp;
    /* Fast path, no lock: peers are never freed; the table entry is published last. */
    if (proc < CSNI_PEER_TAB &&
        (pp = atomic_load_explicit(&p->peers.tab[proc], memory_order_acquire)) != NULL)
        return pp;
    csni_mutex_lock(&p->peers.lock);
    for (pp = p->peers.list; pp; pp = pp->next)
        if (pp->proc == proc)
            break;
    if (!pp && (pp = calloc(1, sizeof *pp)) != NULL) {
        pp->proc = proc;
        csni_lock_init(&pp->lock, CSNI_RANK_PEER);
        atomic_init(&pp->credit, p->tun.window);
        csni_mutex_init(&pp->connecting, CSNI_RANK_CONNECTING);
        pp->eager_max = p->tun.eager_max;
        pp->next = p->peers.list;
        p->peers.list = pp;
        if (proc < CSNI_PEER_TAB)
            atomic_store_explicit(&p->peers.tab[proc], pp, memory_order_release);
    }
    csni_mutex_unlock(&p->peers.lock);
    return pp;
}

/* Whether pp is connected or lost (final), under its lock. */
static bool peer_final(struct csni_peer *pp)
{
    csni_lock(&pp->lock);
    bool ready = pp->conn || pp->lost;
    csni_unlock(&pp->lock);
    return ready;
}

struct csni_peer *csni_peer_get(struct csni_proc *p, int proc, csn_status *rv)
{
    struct csni_peer *pp;
    *rv = CSN_OK;
    if (!p->boot.launched || proc < 0) {
        *rv = CSN_ILLEGAL_NETID;
        return NULL;
    }
    if (!(pp = csni_peer_lookup(p, proc))) {
        *rv = CSN_NO_HEAP;
        return NULL;
    }
    if (atomic_load_explicit(&pp->ready, memory_order_acquire))
        return pp; /* connected or lost: both are final */
    if (peer_final(pp)) {
        atomic_store_explicit(&pp->ready, true, memory_order_release);
        return pp;
    }
    /* Connecting may wait for the peer to publish its address: only callers that want
     * the same peer wait behind it. */
    csni_mutex_lock(&pp->connecting);
    struct csni_conn *c = NULL;
    csn_status r = peer_final(pp) ? CSN_OK : peer_connect(p, pp, 0, &c);
    bool move = false;
    if (c) {
        csni_lock(&pp->lock);
        if (!pp->conn)
            pp->conn = c;
        else /* the peer's connection came in meanwhile */
            move = pp->conn != c && (peer_canonical(p, pp->proc, true) || p->tun.own_sends);
        csni_unlock(&pp->lock);
    }
    if (move)
        peer_move(p, pp, c);
    if (c) /* after the move: see own */
        atomic_store_explicit(&pp->own, true, memory_order_release);
    csni_mutex_unlock(&pp->connecting);
    if (r == CSN_PEER_LOST) {
        *rv = CSN_PEER_LOST; /* the caller declares it lost (csni_peer_lost) */
    } else if (r != CSN_OK) {
        *rv = r;
        return NULL;
    }
    return pp;
}

void csni_peer_own(struct csni_proc *p, struct csni_peer *pp, size_t len)
{
    if (atomic_load_explicit(&pp->own, memory_order_relaxed) || len <= pp->eager_max ||
        len < csni_ofi_rndv_min())
        return;
    csni_mutex_lock(&pp->connecting);
    struct csni_conn *c = NULL;
    bool move = false;
    if (!atomic_load_explicit(&pp->own, memory_order_relaxed) &&
        peer_connect(p, pp, 0, &c) == CSN_OK) {
        csni_lock(&pp->lock);
        move = pp->conn != c; /* csni_conn_new made it the sending one if there was none */
        csni_unlock(&pp->lock);
    }
    if (move)
        peer_move(p, pp, c);
    /* Once, made or not: a peer that cannot be reached now is lost soon, or keeps the
     * connection it made (slower, not wrong). After the move: see own. */
    atomic_store_explicit(&pp->own, true, memory_order_release);
    csni_mutex_unlock(&pp->connecting);
}

struct csni_conn *csni_peer_send_conn(csn_transport *t, struct csni_peer *pp)
{
    struct csni_proc *p = csni_p;
    struct csni_conn *c = NULL;
    if (!p->tun.conn_per_transport)
        return pp->conn;
    csni_lock(&t->lock);
    for (unsigned i = 0; i < t->nlanes && !c; i++)
        if (t->lanes[i].proc == pp->proc)
            c = t->lanes[i].conn;
    csni_unlock(&t->lock);
    if (c)
        return c;
    if (peer_connect(p, pp, t->tid, &c) != CSN_OK)
        return pp->conn;
    csni_lock(&t->lock);
    struct csni_lane *l = realloc(t->lanes, (t->nlanes + 1) * sizeof *l);
    if (l) {
        t->lanes = l;
        t->lanes[t->nlanes].proc = pp->proc;
        t->lanes[t->nlanes++].conn = c;
    }
    csni_unlock(&t->lock);
    return c;
}

void csni_peer_accept(struct csni_proc *p, struct csni_conn *c)
{
    const struct csni_frame *f = csni_conn_frame(c);
    uint64_t proc = csni_frame_hello_proc(f);
    struct csni_shm *shm = NULL;
    char path[512];
    if (proc >= (1u << 24) || (int)proc == p->me) {
        csni_conn_fail(c, "hello with an impossible process id");
        return;
    }
    struct csni_peer *pp = csni_peer_lookup(p, (int)proc);
    if (!pp) {
        csni_conn_fail(c, "no memory for a peer");
        return;
    }
    if (csni_frame_hello_ring(f)) {
        peer_shm_path(p, (int)proc, p->me, csni_frame_hello_lane(f), csni_frame_hello_nonce(f),
                      path, sizeof path);
        if (csni_shm_attach(path, p->tun.shm_membarrier, p->tun.shm_populate, &shm) != CSN_OK) {
            char why[160]; /* errno says why: out of descriptors, of memory, ... */
            snprintf(why, sizeof why, "cannot map the shared-memory segment of the connection: %s",
                     strerror(errno));
            csni_conn_fail(c, why);
            return;
        }
        csni_shm_set_compact(shm, p->tun.shm_compact);
    }
    /* Counted before it stops counting as a stranger (csni_conn_bind): a reaper that finds
     * the peer's other connections ended (core/poll.c) must see this one in one count or the
     * other, or it declares the peer lost with this connection's messages still unread. */
    csni_lock(&pp->lock);
    pp->nconns++;
    csni_unlock(&pp->lock);
    csni_conn_bind(c, pp, (int)proc, shm);
    csni_lock(&pp->lock);
    pp->eager_max = shm ? p->tun.shm_eager : p->tun.eager_max;
    /* The first connection either side made becomes the sending one; the lower id's once
     * both exist. */
    bool move = pp->conn && peer_canonical(p, (int)proc, false);
    if (!pp->conn)
        pp->conn = c;
    csni_unlock(&pp->lock);
    if (move)
        peer_move(p, pp, c);
}

bool csni_peer_send_frame(struct csni_peer *pp, const struct csni_frame *f)
{
    /* Mostly the connection is a ring with nothing queued: the frame goes straight in, with no
     * request allocated (the answer to a pulled message: 832 instructions the queued way, 308 of
     * them the allocation and its free, 203 so; callgrind, BENCHMARKS.md, issue 19). */
    uint8_t hdr[CSNI_FRAME_SIZE];
    csni_frame_encode(f, hdr);
    csni_lock(&pp->lock);
    struct csni_conn *c = pp->lost ? NULL : pp->conn;
    bool sent = c && csni_conn_send_frame_now(c, hdr);
    csni_unlock(&pp->lock);
    if (sent)
        return true;
    if (!c)
        return false;
    struct csni_sendreq *sr = csni_sendreq_new(f);
    if (!sr)
        return false;
    csni_lock(&pp->lock);
    c = pp->lost ? NULL : pp->conn;
    if (c)
        csni_conn_send(c, sr); /* no op attached: completes nothing, takes no transport lock */
    csni_unlock(&pp->lock);
    if (!c)
        free(sr);
    return c != NULL;
}

bool csni_peer_conn_ended(struct csni_peer *pp)
{
    csni_lock(&pp->lock);
    bool last = --pp->nconns <= 0;
    csni_unlock(&pp->lock);
    return last;
}

bool csni_peer_has_conns(struct csni_peer *pp)
{
    csni_lock(&pp->lock);
    bool some = pp->nconns > 0;
    csni_unlock(&pp->lock);
    return some;
}

bool csni_peer_is_lost(struct csni_peer *pp)
{
    csni_lock(&pp->lock);
    bool lost = pp->lost;
    csni_unlock(&pp->lock);
    return lost;
}
