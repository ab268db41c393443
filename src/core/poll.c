/* poll.c: the progress engine: reading connections (the reader's events to the protocol),
 * accepting, the epoll set and the rings, and the end of connections. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/complete.h"
#include "core/conn.h"
#include "core/match.h"
#include "core/peer.h"
#include "core/poll.h"
#include "core/rndv.h"
#include "core/state.h"
#include "core/teardown.h"
#include "transport/ofi/ofi.h"

static void poll_accept(struct csni_proc *p, int lfd, const struct csni_net_ops *kind, bool wait);

/* A descriptor kept in reserve for taking in a peer's HELLO: mapping its shared-memory segment
 * opens one more file, and a rank at its descriptor limit (strangers holding the rest) would
 * otherwise drop its real peer for want of it. Released just before csni_peer_accept, taken
 * again after (and at every accept while missing). */
static _Atomic int poll_spare = -1;

static void poll_spare_take(void)
{
    if (atomic_load_explicit(&poll_spare, memory_order_relaxed) >= 0)
        return;
    int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    int none = -1;
    if (fd >= 0 && !atomic_compare_exchange_strong(&poll_spare, &none, fd))
        close(fd);
}

static void poll_spare_give(void)
{
    int fd = atomic_exchange(&poll_spare, -1);
    if (fd >= 0)
        close(fd);
}

/* Serves every accepted connection still waiting for its HELLO, waiting for a reader already
 * at work on one: a peer's last connection may be one accepted a moment ago whose HELLO and
 * messages are in, unread (another thread accepted it before they came). No lock held. */
static void poll_hear_strangers(struct csni_proc *p)
{
    if (atomic_load_explicit(&p->conns.nstrangers, memory_order_relaxed) == 0)
        return;
    for (struct csni_conn *c = csni_conns_first(&p->conns); c; c = c->next) {
        if (atomic_load(&c->dead))
            continue;
        csni_conn_rx_lock(c);
        bool stranger = !c->pp && !atomic_load(&c->dead);
        csni_conn_rx_unlock(c);
        if (stranger)
            csni_poll_serve(p, c, true);
    }
}

/* A pair may keep two connections (both ends connected at once; over a fabric each end's
 * large messages on its own), and the peer stays while either lives. One that this process
 * failed for a reason (a frame out of protocol, memory or a provider queue short) would
 * leave the operations it carried waiting for ever: the others to that peer end too, here
 * and, by their end, at the peer, which so learns of it as of any loss. No lock held. */
static void poll_break_pair(struct csni_proc *p, struct csni_conn *broken)
{
    for (struct csni_conn *c = csni_conns_first(&p->conns); c; c = c->next)
        if (c != broken && c->pp == broken->pp && !atomic_load(&c->dead))
            csni_conn_fail(c, NULL);
}

/* Waits out the readers of dead connections before a peer's loss fails its receives: one
 * may still be copying a DATA chunk into a receive on the peer's lists (its connection failed
 * by another thread, a writer's, in the middle of that copy), and the receive's buffer is its
 * owner's again once it fails. Each dead connection's reader lock, taken and let go, waits for
 * that copy; a dead connection's reader places nothing more (conn_next). No lock held. */
static void poll_quiesce_dead(struct csni_proc *p)
{
    for (struct csni_conn *c = csni_conns_first(&p->conns); c; c = c->next) {
        if (!atomic_load(&c->dead))
            continue;
        csni_conn_rx_lock(c);
        csni_conn_rx_unlock(c);
    }
}

/* Reports the connections that ended since the last look to their peers: a peer whose last
 * connection ended is lost. A connection it made just before dying may still wait in our
 * listen queue, or be accepted and not yet heard, with a message it counted as sent: that is
 * taken in first. No lock held. */
static void poll_reap(struct csni_proc *p)
{
    if (atomic_load_explicit(&p->conns.nended, memory_order_relaxed) == 0)
        return;
    for (struct csni_conn *c = csni_conns_first(&p->conns); c; c = c->next) {
        if (!csni_conn_take_ended(c))
            continue;
        /* The descriptor goes back; a stranger's buffer and structure too, which a new
         * connection may take at once. */
        if (csni_conn_close(c))
            continue;
        if (c->broken)
            poll_break_pair(p, c);
        if (!csni_peer_conn_ended(c->pp))
            continue;
        if (p->listen_fd >= 0)
            poll_accept(p, p->listen_fd, p->tun.net, true);
        if (p->listen_tcp >= 0)
            poll_accept(p, p->listen_tcp, p->listen2_net, true);
        poll_hear_strangers(p);
        if (!csni_peer_has_conns(c->pp)) {
            poll_quiesce_dead(p);
            csni_peer_lost(p, c->pp);
        }
    }
    if (atomic_load_explicit(&p->conns.ndead_rings, memory_order_relaxed) >= CSNI_DEAD_RINGS_MAX)
        csni_conns_prune_rings(&p->conns);
}

/* Whether a frame of this type may be served while pulls wait in the connection's batch. */
static bool poll_batch_passes(uint8_t type)
{
    return type == CSNI_F_RTS || type == CSNI_F_CTS || type == CSNI_F_CREDIT;
}

/* Drives c's reader until it has nothing more (block: wait for the reader lock, else leave
 * it to the thread that holds it). Sleepers of the transports it completes operations on are
 * woken once at the end, not once per message. */
void csni_poll_serve(struct csni_proc *p, struct csni_conn *c, bool block)
{
    if (block)
        csni_conn_rx_lock(c);
    else if (!csni_conn_rx_trylock(c))
        return;
    csni_defer_wakes(true);
    for (;;) {
        const uint8_t *staged;
        struct csni_place done;
        enum csni_rx_event ev = csni_conn_next(c, &staged, &done);
        /* The pulls batched from the RTSs before (csni_rndv_pull_later) end before anything
         * read after them that could complete a receive (or move the connection) is served,
         * and before the reader stops: the answers to our own transmits (CTS) and credit,
         * which come between the RTSs both ways at once, complete none; a placement ends a
         * frame already let through or already preceded by the batch's pull. */
        if (c->pullb.n > 0 && (ev == CSNI_RX_FRAME ? !poll_batch_passes(csni_conn_frame(c)->type)
                                                   : ev != CSNI_RX_PLACED))
            csni_rndv_pull_batch(c);
        if (ev == CSNI_RX_FRAME) {
            struct csni_place pl = {0};
            csni_proto_frame(c, csni_conn_frame(c), staged, &pl);
            csni_conn_place(c, &pl);
        } else if (ev == CSNI_RX_PLACED) {
            csni_proto_placed(c, csni_conn_frame(c), &done);
        } else if (ev == CSNI_RX_HELLO) {
            poll_spare_give();
            csni_peer_accept(p, c);
            poll_spare_take();
        } else {
            if (ev == CSNI_RX_FAILED)
                csni_proto_abandon(&done);
            break;
        }
    }
    if (c->ofi) { /* what the fabric provider moved itself */
        struct csni_ofi_fab d[16];
        int n;
        while ((n = csni_ofi_fab_take(c, d, 16)) > 0)
            for (int i = 0; i < n; i++)
                csni_rndv_fabric_done(c, &d[i]);
    }
    csni_conn_rx_unlock(c);
    csni_defer_wakes(false);
    poll_reap(p);
}

/* Connections that have not proved the key within POLL_HELLO_NS are dropped, and at most
 * poll_stranger_cap() wait at a time (the oldest goes first): idle or garbage connections from
 * outside the job hold neither descriptors nor memory for long. A peer's HELLO comes right
 * after its connect, so it is seldom the one waiting. */
#define POLL_HELLO_NS (5 * 1000000000ull)
#define POLL_STRANGERS 256
/* The cap is at least the job's size: every rank of a job may connect to one process at once
 * (Star's centre, a gather to rank 0), and a TCP peer's HELLO may still be on its way when its
 * connect is accepted. With 256 for every job, 1024 ranks of hello over 4 netns hosts at
 * 200 Mbit/s lost peers to it in 1 run of 4 (each drop a "peer lost" at the sender). */
static int poll_stranger_cap(const struct csni_proc *p)
{
    return p->boot.size > POLL_STRANGERS ? p->boot.size : POLL_STRANGERS;
}
/* When c is a live connection still waiting for its HELLO: its birth time, else 0. Its
 * fields are the reader's (csni_conn_bind writes pp under the reader lock): a connection whose
 * reader is at work is not looked at now. */
static uint64_t poll_stranger_born(struct csni_conn *c)
{
    uint64_t born = 0;
    if (atomic_load(&c->dead) || !csni_conn_rx_trylock(c))
        return 0;
    if (!c->pp && !atomic_load(&c->dead))
        born = c->born_ns;
    csni_conn_rx_unlock(c);
    return born;
}

/* Drops strangers past the handshake deadline; over: a reason to drop the oldest of the others
 * too (NULL: none). */
static void poll_strangers(struct csni_proc *p, const char *over)
{
    if (atomic_load_explicit(&p->conns.nstrangers, memory_order_relaxed) == 0)
        return;
    uint64_t now = csni_now_ns(), oldest_born = 0;
    struct csni_conn *oldest = NULL;
    for (struct csni_conn *c = csni_conns_first(&p->conns); c; c = c->next) {
        uint64_t born = poll_stranger_born(c);
        if (born == 0)
            continue;
        if (now - born > POLL_HELLO_NS)
            csni_conn_fail(c, "no hello within the handshake deadline");
        else if (!oldest || born < oldest_born) {
            oldest = c;
            oldest_born = born;
        }
    }
    /* still a stranger (its HELLO may have come meanwhile) */
    if (over && oldest && poll_stranger_born(oldest) == oldest_born)
        csni_conn_fail(oldest, over);
    poll_reap(p);
}

/* Out of descriptors (EMFILE): the listeners leave the epoll set for POLL_PAUSE_NS instead of
 * waking everyone at once for ever; released strangers meanwhile free descriptors. */
#define POLL_PAUSE_NS 50000000ull
static void poll_listeners(struct csni_proc *p, bool on)
{
    struct epoll_event ev = {.events = on ? EPOLLIN : 0u, .data.u64 = CSNI_EV_LISTEN};
    if (p->listen_fd >= 0)
        (void)epoll_ctl(p->epfd, EPOLL_CTL_MOD, p->listen_fd, &ev); /* fails only if closed */
    ev.data.u64 = CSNI_EV_LISTEN2;
    if (p->listen_tcp >= 0)
        (void)epoll_ctl(p->epfd, EPOLL_CTL_MOD, p->listen_tcp, &ev);
}

/* Every wait in epoll passes here: listeners back after a pause, strangers past their
 * deadline dropped. Returns the longest the caller may sleep (ns). */
static uint64_t poll_timers(struct csni_proc *p, uint64_t nap_ns)
{
    uint64_t until = atomic_load_explicit(&p->accept_paused, memory_order_relaxed);
    if (until) {
        uint64_t now = csni_now_ns();
        if (now >= until && atomic_compare_exchange_strong(&p->accept_paused, &until, 0))
            poll_listeners(p, true);
        else if (nap_ns > POLL_PAUSE_NS)
            nap_ns = POLL_PAUSE_NS;
    }
    if (atomic_load_explicit(&p->conns.nstrangers, memory_order_relaxed) > 0) {
        poll_strangers(p, NULL);
        if (nap_ns > POLL_HELLO_NS / 5)
            nap_ns = POLL_HELLO_NS / 5;
    }
    return nap_ns;
}

/* Out of descriptors with no stranger to drop: a rank whose connection waits in our queue
 * waits until we close something, which may be never (live peers hold the rest; a dead one's
 * goes back when its end is reported). After POLL_NOFD_REFUSE_NS of that, the spare descriptor
 * takes the waiting connection and closes it at once: its rank sees us lost and fails with a
 * status, where it waited for ever (4 ranks of hello under ulimit -n 11). Said once. */
#define POLL_NOFD_REFUSE_NS 10000000000ull
static void poll_no_fds(struct csni_proc *p, int lfd)
{
    static atomic_bool said;
    /* While it lasts the listener comes back every POLL_PAUSE_NS to fail again: a gap of a
     * second means the shortage ended meanwhile (descriptors freed, nobody connected). */
    uint64_t now = csni_now_ns(), since = atomic_load(&p->no_fds_since);
    uint64_t last = atomic_exchange(&p->no_fds_last, now);
    if (since == 0 || now - last > 20 * POLL_PAUSE_NS) {
        atomic_store(&p->no_fds_since, now);
        return;
    }
    if (now - since < POLL_NOFD_REFUSE_NS || !csni_mutex_trylock(&p->accept_lock))
        return;
    poll_spare_give();
    int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
    if (fd >= 0)
        close(fd);
    poll_spare_take();
    csni_mutex_unlock(&p->accept_lock);
    if (fd < 0 || atomic_exchange(&said, true))
        return;
    struct rlimit rl;
    unsigned long long lim =
        getrlimit(RLIMIT_NOFILE, &rl) == 0 ? (unsigned long long)rl.rlim_cur : 0;
    fprintf(stderr,
            "csn[%d]: out of file descriptors (ulimit -n %llu) for %llu s: refusing other ranks' "
            "connections\n",
            p->me, lim, (unsigned long long)(POLL_NOFD_REFUSE_NS / 1000000000u));
}

/* Takes in the connections waiting in lfd's queue. wait: the reaper's call (poll_reap), which
 * waits for another thread's accept under way; otherwise a thread finding one under way leaves
 * the queue to it (it accepts until the queue is empty; the listener stays readable for a
 * connection that comes after its last look). */
static void poll_accept(struct csni_proc *p, int lfd, const struct csni_net_ops *kind, bool wait)
{
    poll_spare_take();
    for (;;) {
        /* One thread at a time from accept4 until the connection is on the list, counted as
         * a stranger: a reaper that comes here for a dying peer's last connection (poll_reap)
         * then waits for one another thread has just taken from the queue, instead of finding
         * the queue empty and the peer without connections. */
        if (wait)
            csni_mutex_lock(&p->accept_lock);
        else if (!csni_mutex_trylock(&p->accept_lock))
            return;
        int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC), e = errno;
        struct csni_conn *c = NULL;
        if (fd >= 0) {
            if (atomic_load_explicit(&p->conns.nstrangers, memory_order_relaxed) >=
                poll_stranger_cap(p))
                poll_strangers(p, "too many connections waiting for their hello");
            kind->tune(fd, p->tun.tcp_notsent);
            if (!(c = csni_conn_new(p, fd, NULL, -1, NULL)))
                close(fd);
        }
        csni_mutex_unlock(&p->accept_lock);
        if (fd < 0) {
            if (e == EINTR || e == ECONNABORTED)
                continue;
            if (e == EMFILE || e == ENFILE || e == ENOBUFS || e == ENOMEM) {
                uint64_t zero = 0;
                if (atomic_compare_exchange_strong(&p->accept_paused, &zero,
                                                   csni_now_ns() + POLL_PAUSE_NS))
                    poll_listeners(p, false);
                poll_strangers(p, e == EMFILE || e == ENFILE ? "out of file descriptors (ulimit -n)"
                                                             : "out of memory");
                if ((e == EMFILE || e == ENFILE) &&
                    atomic_load_explicit(&p->conns.nstrangers, memory_order_relaxed) == 0)
                    poll_no_fds(p, lfd);
            }
            return;
        }
        if (c)
            csni_poll_serve(p, c, false); /* its HELLO (and what follows) is usually there */
    }
}

/* A shared-memory connection's doorbells; a closed socket means the peer is gone, but what it
 * published in the ring before dying is still ours: a socket delivers its data before the end,
 * so must a ring. */
static void poll_bells(struct csni_proc *p, struct csni_conn *c, bool block)
{
    if (csni_conn_bells(c, block) < 0) {
        csni_poll_serve(p, c, true);
        csni_conn_fail(c, NULL);
        poll_reap(p);
    }
}

static void poll_handle(struct csni_proc *p, struct epoll_event *ev, bool block)
{
    if (ev->data.u64 == CSNI_EV_LISTEN) {
        poll_accept(p, p->listen_fd, p->tun.net, false);
    } else if (ev->data.u64 == CSNI_EV_LISTEN2) {
        poll_accept(p, p->listen_tcp, p->listen2_net, false);
    } else if (ev->data.u64 == CSNI_EV_KICK) {
        /* A kick while a user thread polls is that poller's wake-up (complete.c: its op
         * completed by another thread): only the poller takes it. Taken by a spinner's look
         * or the progress thread in the moment between the poller's last look at its op and
         * its epoll_wait, it left the poller asleep until its nap ended (threads_no_lost_wakeup
         * under ThreadSanitizer: "nothing completed within 30 s"). Left readable, it wakes
         * the poller; the others pass it by. */
        if (!csni_polling && atomic_load(&p->prog.poller))
            return;
        uint64_t v;
        if (read(p->evfd, &v, sizeof v) < 0)
            return; /* another thread took the count */
        poll_reap(p);
    } else {
        struct csni_conn *c = ev->data.ptr;
        bool pending = atomic_load_explicit(&c->tx_pending, memory_order_relaxed);
        bool ring = atomic_load_explicit(&c->ring, memory_order_acquire) != NULL;
        if (ring && (ev->events & (EPOLLIN | EPOLLERR | EPOLLHUP)))
            poll_bells(p, c, block);
        if (ev->events & (EPOLLIN | EPOLLERR | EPOLLHUP))
            csni_poll_serve(p, c, block);
        if ((ev->events & EPOLLOUT) || (ring && pending))
            csni_conn_flush(c, block);
    }
}

/* A look at a shared-memory connection: read what the ring holds, write what waits. No lock
 * unless there is something to do: the rings' indices are atomics. A payload half read always
 * comes with the ring not yet empty or a frame still staged, which the reader that left it
 * finishes; a new byte makes the ring readable. */
static void poll_ring(struct csni_proc *p, struct csni_conn *c)
{
    struct csni_shm *s = atomic_load_explicit(&c->ring, memory_order_acquire);
    if (!s)
        return;
    if (csni_shm_has_data(s, 0))
        csni_poll_serve(p, c, false);
    if (atomic_load_explicit(&c->tx_pending, memory_order_relaxed))
        csni_conn_flush(c, false);
}

/* The bytes of a record a blocking receive prefetches: a 1 KiB message's 17 lines. Beyond
 * them the hardware's own prefetcher follows the copy (2 KiB: no gain from 32 lines). */
#define POLL_PREFETCH_MAX 1088u

int csni_poll_direct(struct csni_proc *p, csn_transport *t, struct csni_op *own,
                     struct csni_op *res)
{
    if (atomic_load_explicit(&p->conns.nshm, memory_order_relaxed) !=
            atomic_load_explicit(&p->conns.nlive, memory_order_relaxed) ||
        atomic_load_explicit(&p->npulls, memory_order_relaxed) > 0)
        return -1; /* sockets too, or pulls to make: the general poll */
    for (struct csni_conn *c = csni_conns_rings(&p->conns); c; c = csni_conn_next_ring(c)) {
        struct csni_shm *s = atomic_load_explicit(&c->ring, memory_order_acquire);
        if (atomic_load_explicit(&c->tx_pending, memory_order_relaxed))
            return -1;
        /* Waited for: the payload's lines come while we lock and decode. */
        if (!s || !csni_shm_has_data(s, own ? POLL_PREFETCH_MAX : 0))
            continue;
        if (!csni_conn_rx_trylock(c))
            return -1;
        struct csni_frame f;
        const uint8_t *body;
        size_t take;
        int m = csni_conn_peek_eager(c, t->tid, &f, &body, &take)
                    ? csni_match_direct(c, t, own, res, &f, body)
                    : CSNI_MATCH_NONE;
        if (m != CSNI_MATCH_NONE)
            csni_conn_skip(c, take);
        csni_conn_rx_unlock(c);
        return m == CSNI_MATCH_HANDED ? 2 : m == CSNI_MATCH_DONE ? 1 : -1;
    }
    return 0;
}

/* Serves the connections read directly at every poll: a fabric's (fabric: true), else every
 * live socket-only one (no ring), as a reader that will be back at its next turn: a short read
 * ends its pass (conn.c). */
static void poll_direct_conns(struct csni_proc *p, bool fabric)
{
    csni_conn_short_ends = !fabric;
    for (struct csni_conn *c = csni_conns_first(&p->conns); c; c = c->next) {
        if (atomic_load_explicit(&c->dead, memory_order_relaxed))
            continue;
        if (fabric) {
            if (atomic_load_explicit(&c->ofi, memory_order_acquire))
                csni_poll_serve(p, c, false);
            continue;
        }
        if (atomic_load_explicit(&c->ring, memory_order_acquire))
            continue;
        csni_poll_serve(p, c, false);
        if (atomic_load_explicit(&c->tx_pending, memory_order_relaxed))
            csni_conn_flush(c, false);
    }
    csni_conn_short_ends = false;
}

/* Sockets read directly by every poll when at most this many (see csni_poll); with them, or
 * over a fabric, the epoll set is looked at once in POLL_DIRECT_EPOLL polls. */
#define POLL_SOCK_DIRECT 2u
#define POLL_DIRECT_EPOLL 16u

void csni_poll(struct csni_proc *p)
{
    struct epoll_event ev[16];
    if (p->epfd < 0)
        return;
    if (atomic_load_explicit(&p->npulls, memory_order_relaxed) > 0)
        (void)csni_rndv_run_pulls(p, NULL);
    /* Rings are looked at directly (no system call); the epoll set, for sockets, new
     * connections and deaths, on every poll when sockets carry data, else every 1024th (a
     * spin turn is about 20 ns: a death is still seen within tens of microseconds, and the
     * system call, about 0.3 us, no longer costs a ping-pong 40 ns per message). */
    if (atomic_load_explicit(&p->conns.nshm, memory_order_relaxed) > 0) {
        for (struct csni_conn *c = csni_conns_rings(&p->conns); c; c = csni_conn_next_ring(c))
            poll_ring(p, c);
        /* initial-exec: no __tls_get_addr call on this hot path (4 bytes of static TLS) */
        static _Thread_local unsigned poll_count __attribute__((tls_model("initial-exec")));
        if ((++poll_count & 1023) != 0 &&
            atomic_load_explicit(&p->conns.nshm, memory_order_relaxed) ==
                atomic_load_explicit(&p->conns.nlive, memory_order_relaxed))
            return;
    }
    /* Connections read directly at every poll, the epoll set (new connections, kicks, room to
     * write, deaths) looked at once in POLL_DIRECT_EPOLL polls only:
     * - A fabric's completion queues: most providers progress only when read
     *   (FI_PROGRESS_MANUAL), so their descriptor would not become readable by itself. The
     *   sockets then carry a HELLO, the endpoints' addresses and a peer's end. A turn over the
     *   fabric costs a provider pass (1-2 us), so a look at the set is still within tens of
     *   microseconds; a system call on every turn made every turn longer (with the link's own
     *   savings, ofi.c: small-message stream 1.4-2.0x, 8 B half round trip about 1.1x;
     *   BENCHMARKS.md, issue 20). A process reached over plain TCP by a peer without ofi keeps
     *   working, its frames seen at those looks.
     * - One or two sockets and no fabric: a read that finds nothing costs what epoll_wait
     *   does (about 0.4 us here), and one that finds data saves epoll_wait's turn before it
     *   (loopback TCP 8 B half round trip 1.23x, BENCHMARKS.md, issue 21). With more sockets a
     *   turn of reads would cost more than one epoll_wait. */
    bool fabric = csni_ofi_on();
    unsigned live = atomic_load_explicit(&p->conns.nlive, memory_order_relaxed);
    unsigned shm = atomic_load_explicit(&p->conns.nshm, memory_order_relaxed);
    if (fabric || (live > shm && live - shm <= POLL_SOCK_DIRECT)) {
        poll_direct_conns(p, fabric);
        static _Thread_local unsigned poll_direct_count __attribute__((tls_model("initial-exec")));
        if (++poll_direct_count % POLL_DIRECT_EPOLL != 0)
            return;
    }
    int n = epoll_wait(p->epfd, ev, 16, 0);
    for (int i = 0; i < n; i++)
        poll_handle(p, &ev[i], false);
    /* The doorbells just taken may have been rung for a thread asleep in epoll: it then
     * stays asleep (the event is gone), with the flags cleared by their producers. */
    if (n > 0 && atomic_load(&p->prog.nepoll) > 0)
        csni_arm_rings(p, true);
    poll_reap(p);
}

/* One pass of csni_arm_rings: arms and looks at every connection. */
static bool poll_arm_pass(struct csni_proc *p, bool handle)
{
    bool work = false;
    for (struct csni_conn *c = csni_conns_first(&p->conns); c; c = c->next) {
        int k = csni_conn_arm(c);
        if (k == 0)
            continue;
        if (k > 0 && handle) {
            csni_poll_serve(p, c, true);
            csni_conn_flush(c, true);
        }
        work = true;
    }
    return work;
}

/* A second pass after the heavy fence, when the process is registered for it (transport/shm:
 * the producers that ring us may have left their fences out): it arms again, which is
 * harmless, and its looks are the ones that count. */
bool csni_arm_rings(struct csni_proc *p, bool handle)
{
    if (atomic_load(&p->conns.nshm) == 0 && !csni_ofi_on())
        return false;
    if (poll_arm_pass(p, handle))
        return true;
    return atomic_load(&p->conns.nshm) > 0 && csni_conn_arm_fence() && poll_arm_pass(p, handle);
}

void csni_poll_sleep(struct csni_proc *p, uint64_t nap_ns)
{
    struct epoll_event ev[64];
    atomic_fetch_add(&p->prog.nepoll, 1);
    /* Counted in nepoll first: a pull deferred after this look kicks us (csni_rndv_defer_pull).
     * The progress thread leaves at once when a user thread came back (csni_bg_users_back). */
    if (csni_bg_users_back(p) || csni_rndv_run_pulls(p, NULL) || csni_arm_rings(p, true)) {
        atomic_fetch_sub(&p->prog.nepoll, 1);
        return;
    }
    nap_ns = poll_timers(p, nap_ns);
    if (nap_ns > CSNI_OFI_NAP_NS && csni_ofi_on())
        nap_ns = CSNI_OFI_NAP_NS;
    int n = epoll_wait(p->epfd, ev, 64, (int)((nap_ns + 999999u) / 1000000u));
    for (int i = 0; i < n; i++)
        poll_handle(p, &ev[i], true);
    if (!csni_bg_users_back(p))
        (void)csni_rndv_run_pulls(p, NULL);
    /* Rings stay armed after a wake-up (a producer clears the flag when it rings): a disarm
     * here would silence the rings under another thread still in epoll (the poller and the
     * progress thread may both be there). The doorbells we took cleared their flags under
     * the others too, and epoll wakes one waiter per event: arm again for them. The count
     * pairs with theirs (seq_cst): one that comes later arms for itself. */
    if (atomic_fetch_sub(&p->prog.nepoll, 1) > 1)
        csni_arm_rings(p, true);
}
