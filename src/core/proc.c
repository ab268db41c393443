/* proc.c: the per-process state: start-up, tunables, transport table, peers, the progress thread,
 * fork. */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "core/core.h"
#include "names/names.h"

struct csni_proc *csni_p;
static pthread_mutex_t proc_init_lock = PTHREAD_MUTEX_INITIALIZER;
static bool proc_forked; /* this process was forked from one that had loaded the library */

#define PROC_EV_LISTEN ((uint64_t)1)
#define PROC_EV_KICK ((uint64_t)2)
#define PROC_EV_LISTEN_TCP ((uint64_t)3)

uint64_t csni_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Reads an unsigned tunable; a malformed value is reported once and the default kept. */
static uint64_t proc_env_u64(const char *name, uint64_t def)
{
    const char *s = getenv(name);
    char *end;
    if (!s || !*s)
        return def;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end || s[0] == '-') {
        fprintf(stderr, "csn: ignoring %s=%s (not a non-negative integer)\n", name, s);
        return def;
    }
    return v;
}

static int proc_hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

static void proc_cpus(struct csni_proc *p)
{
    cpu_set_t set;
    int ncpu = 1;
    if (sched_getaffinity(0, sizeof set, &set) == 0)
        ncpu = CPU_COUNT(&set);
    /* More ranks on our CPUs than CPUs to run them: a pure spin only steals the CPU from
     * the process we wait for. Then the spin phase yields the CPU at every turn (the peer
     * runs at once, about 1 us per hand-over) and lasts 1 ms before sleeping. The ranks on
     * our CPUs: those csnrun --bind-to core counts in CSN_CPU_SHARE, else all of the host's.
     * Processes forked by ranks (pipeline stages) are not counted by the launcher: assume
     * they share the CPUs with more processes than there are. */
    p->cpu_share = (uint32_t)proc_env_u64("CSN_CPU_SHARE", (uint64_t)p->boot.local_size);
    p->oversubscribed = p->cpu_share > (uint32_t)ncpu || proc_forked;
    p->ncpu = ncpu;
    p->spin_ns = proc_env_u64("CSN_SPIN_US", p->oversubscribed ? 1000 : 50) * 1000;
    p->polite_spin_ns = getenv("CSN_SPIN_US") ? p->spin_ns : 1000000;
    p->nap_ns = proc_env_u64("CSN_NAP_MS", 100) * 1000000;
    if (p->nap_ns == 0)
        p->nap_ns = 1000000;
}

void csni_conn_add(struct csni_proc *p, struct csni_conn *c)
{
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = c};
    bool shm = c->shm != NULL; /* read before publishing: a HELLO may set it at once after */
    /* Insert-only list: readers walk it without a lock from an acquire load of the head. */
    pthread_mutex_lock(&p->lock);
    c->next = atomic_load_explicit(&p->conns, memory_order_relaxed);
    atomic_store_explicit(&p->conns, c, memory_order_release);
    pthread_mutex_unlock(&p->lock);
    if (shm)
        atomic_fetch_add(&p->nshm, 1);
    atomic_fetch_add(&p->nconns, 1);
    epoll_ctl(p->epfd, EPOLL_CTL_ADD, c->fd, &ev);
    if (shm)
        csni_kick_epoll(p);
}

/* Wakes the progress thread out of epoll_wait, so it arms a ring that appeared meanwhile. */
void csni_kick_epoll(struct csni_proc *p)
{
    uint64_t one = 1;
    if (write(p->evfd, &one, sizeof one) < 0)
        return; /* the counter is saturated: a wake-up is pending anyway */
}

static void proc_accept(struct csni_proc *p, int lfd)
{
    for (;;) {
        int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EINTR)
                continue;
            return;
        }
        csni_tcp_tune(p, fd);
        struct csni_conn *c = csni_conn_new(p, fd, NULL, NULL);
        if (!c)
            close(fd);
        else
            csni_conn_rx(c, false); /* its HELLO (and what follows) is usually there already */
    }
}

static struct csni_conn *proc_conns(struct csni_proc *p)
{
    return atomic_load_explicit(&p->conns, memory_order_acquire);
}

/* Takes in every connection waiting in the listen queues, and reads the HELLO of those
 * accepted but not yet introduced: a dead process's last writes are all in our kernel by
 * now, so after this every connection it made is known. */
void csni_accept_pending(struct csni_proc *p)
{
    if (p->listen_fd >= 0)
        proc_accept(p, p->listen_fd);
    if (p->listen_tcp >= 0)
        proc_accept(p, p->listen_tcp);
    for (struct csni_conn *c = proc_conns(p); c; c = c->next) {
        csni_lock(&c->rx_lock);
        bool unknown = c->pp == NULL && !c->dead;
        csni_unlock(&c->rx_lock);
        if (unknown)
            csni_conn_rx(c, true);
    }
}

static void proc_handle(struct csni_proc *p, struct epoll_event *ev, bool block)
{
    if (ev->data.u64 == PROC_EV_LISTEN) {
        proc_accept(p, p->listen_fd);
    } else if (ev->data.u64 == PROC_EV_LISTEN_TCP) {
        proc_accept(p, p->listen_tcp);
    } else if (ev->data.u64 == PROC_EV_KICK) {
        uint64_t v;
        if (read(p->evfd, &v, sizeof v) < 0)
            return;
    } else {
        struct csni_conn *c = ev->data.ptr;
        bool pending = atomic_load_explicit(&c->tx_pending, memory_order_relaxed);
        bool ring = atomic_load_explicit(&c->ring, memory_order_acquire) != NULL;
        if (ring && (ev->events & (EPOLLIN | EPOLLERR | EPOLLHUP)))
            csni_conn_doorbells(c);
        if (ev->events & (EPOLLIN | EPOLLERR | EPOLLHUP))
            csni_conn_rx(c, block);
        if ((ev->events & EPOLLOUT) || (ring && pending))
            csni_conn_flush(c, block);
    }
}

int csni_poll_direct(struct csni_proc *p, csn_transport *t, struct csni_op *own)
{
    if (atomic_load_explicit(&p->nshm, memory_order_relaxed) !=
        atomic_load_explicit(&p->nconns, memory_order_relaxed))
        return -1; /* sockets too: the general poll */
    for (struct csni_conn *c = proc_conns(p); c; c = c->next) {
        struct csni_shm *s = atomic_load_explicit(&c->ring, memory_order_acquire);
        if (atomic_load_explicit(&c->tx_pending, memory_order_relaxed))
            return -1;
        if (s && csni_shm_has_data(s))
            return csni_conn_rx_direct(c, t, own) ? 1 : -1;
    }
    return 0;
}

void csni_poll(struct csni_proc *p)
{
    struct epoll_event ev[16];
    if (p->epfd < 0)
        return;
    /* Rings are looked at directly (no system call); the epoll set, for sockets, new
     * connections and deaths, on every poll when sockets carry data, else every 1024th (a
     * spin turn is about 20 ns: a death is still seen within tens of microseconds, and the
     * system call, about 0.3 us, no longer costs a ping-pong 40 ns per message). */
    if (atomic_load_explicit(&p->nshm, memory_order_relaxed) > 0) {
        for (struct csni_conn *c = proc_conns(p); c; c = c->next)
            csni_conn_poll(c);
        /* initial-exec: no __tls_get_addr call on this hot path (4 bytes of static TLS) */
        static _Thread_local unsigned proc_polls __attribute__((tls_model("initial-exec")));
        if ((++proc_polls & 1023) != 0 &&
            atomic_load_explicit(&p->nshm, memory_order_relaxed) ==
                atomic_load_explicit(&p->nconns, memory_order_relaxed))
            return;
    }
    int n = epoll_wait(p->epfd, ev, 16, 0);
    for (int i = 0; i < n; i++)
        proc_handle(p, &ev[i], false);
    /* The doorbells just taken may have been rung for a thread asleep in epoll: it then
     * stays asleep (the event is gone), with the flags cleared by their producers. */
    if (n > 0 && atomic_load(&p->nepoll) > 0)
        csni_arm_rings(p, true);
}

/* Before a thread sleeps: arm every ring's doorbell, so that a peer publishing into it
 * wakes the progress thread's epoll. True when a ring turned out to have work already (the
 * caller must then not sleep). The user thread arms too before its own sleep: the progress
 * thread may sit in an epoll_wait that began before a ring existed. */
bool csni_arm_rings(struct csni_proc *p, bool handle)
{
    bool work = false;
    if (atomic_load(&p->nshm) == 0)
        return false;
    for (struct csni_conn *c = proc_conns(p); c; c = c->next) {
        if (!csni_trylock(&c->rx_lock)) {
            work = true;
            continue;
        }
        bool ring = c->shm != NULL && !c->dead;
        csni_unlock(&c->rx_lock);
        if (ring && csni_shm_arm(c, atomic_load(&c->tx_pending))) {
            if (handle) {
                csni_conn_rx(c, true);
                csni_conn_flush(c, true);
            }
            work = true;
        }
    }
    return work;
}

void csni_kick_progress(struct csni_proc *p)
{
    atomic_store(&p->kicked, true); /* a sleeper needs the progress thread now */
    if (atomic_load(&p->bg_parked)) {
        atomic_fetch_add(&p->bg_word, 1);
        csni_futex_wake(&p->bg_word);
    }
}

/* The progress thread: while user threads poll in their spin phase it stays parked (waking
 * every 200 us to look), so it never competes with them for a message; otherwise it sleeps
 * in epoll and moves data for everyone: overlap of communication with computation. */
/* Whether user threads are in the library or were within the last park period (their
 * wait count moved). seen: the count at the previous look, updated. */
static bool proc_users_active(struct csni_proc *p, uint64_t *seen)
{
    uint64_t a = atomic_load_explicit(&p->activity, memory_order_relaxed);
    bool moved = a != *seen;
    *seen = a;
    return atomic_load(&p->spinners) > 0 || moved;
}

static void *proc_progress_main(void *arg)
{
    struct csni_proc *p = arg;
    uint64_t seen = atomic_load(&p->activity) - 1; /* counts as active at first */
    uint64_t park_ns = 200000;
    while (!atomic_load(&p->stopping)) {
        /* Users polling in the library, or in and out of it during the last park period (a
         * communication loop): stay parked, so that nobody competes with them for a message
         * and senders need not ring. A user thread polling for everyone in its sleep does
         * our job meanwhile. A departing poller kicks us; users that did not wait at all for
         * a whole park period compute: then we move their data. The park period doubles
         * while users stay active (200 us to 3.2 ms): each look is a wake-up that preempts
         * a spinning rank on a small host. */
        if ((!atomic_exchange(&p->kicked, false) && proc_users_active(p, &seen)) ||
            atomic_load(&p->poller)) {
            uint32_t w = atomic_load(&p->bg_word);
            atomic_store(&p->bg_parked, true);
            if (!atomic_load(&p->kicked)) /* pairs with the kicker's store, then its load */
                csni_futex_wait(&p->bg_word, w, park_ns);
            atomic_store(&p->bg_parked, false);
            if (park_ns < 3200000)
                park_ns *= 2;
            continue;
        }
        park_ns = 200000;
        csni_poll_sleep(p, 1000000000u);
    }
    return NULL;
}

void csni_poll_sleep(struct csni_proc *p, uint64_t nap_ns)
{
    struct epoll_event ev[64];
    atomic_fetch_add(&p->nepoll, 1);
    if (csni_arm_rings(p, true)) {
        atomic_fetch_sub(&p->nepoll, 1);
        return;
    }
    int n = epoll_wait(p->epfd, ev, 64, (int)((nap_ns + 999999u) / 1000000u));
    for (int i = 0; i < n; i++)
        proc_handle(p, &ev[i], true);
    /* Rings stay armed after a wake-up (a producer clears the flag when it rings): a disarm
     * here would silence the rings under another thread still in epoll (the poller and the
     * progress thread may both be there). The doorbells we took cleared their flags under
     * the others too, and epoll wakes one waiter per event: arm again for them. The count
     * pairs with theirs (seq_cst): one that comes later arms for itself. */
    if (atomic_fetch_sub(&p->nepoll, 1) > 1)
        csni_arm_rings(p, true);
}

/* ---- transports table ---- */
static csn_transport *proc_tport_slot(struct csni_proc *p, uint32_t tid)
{
    csn_transport *_Atomic *tab = atomic_load_explicit(&p->tports, memory_order_acquire);
    return tab && tid < atomic_load_explicit(&p->ntports, memory_order_acquire)
               ? atomic_load(&tab[tid])
               : NULL;
}

/* Without the table lock. csn_close empties the slot before its drain takes t->lock, so a
 * finder that still sees t in its slot once it holds t->lock runs before the drain (which
 * then cleans up after it), and one that locks after the drain sees the slot empty. A
 * structure reused from the graveyard has a new id, never this one. */
csn_transport *csni_tport_find(struct csni_proc *p, uint32_t tid)
{
    csn_transport *t = proc_tport_slot(p, tid);
    if (!t)
        return NULL;
    csni_lock(&t->lock);
    if (proc_tport_slot(p, tid) != t) {
        csni_unlock(&t->lock);
        return NULL;
    }
    return t;
}

/* Whether transport tid is open, without taking its lock (callers may hold another). */
bool csni_tport_exists(struct csni_proc *p, uint32_t tid)
{
    return proc_tport_slot(p, tid) != NULL;
}

/* ---- peers ---- */
/* Chooses, in a published endpoint "ADDR[|tcp:IP:PORT]|h=HOST" (split in place), the
 * address to use: the first (Unix socket, shared memory) when the peer is on our host,
 * else its TCP address. NULL when none fits. */
static const char *proc_pick_addr(struct csni_proc *p, char *ep)
{
    char *first = ep, *tcp = NULL, *host = NULL;
    for (char *bar = strchr(ep, '|'); bar; bar = strchr(bar + 1, '|')) {
        *bar = 0;
        if (strncmp(bar + 1, "tcp:", 4) == 0)
            tcp = bar + 1;
        else if (strncmp(bar + 1, "h=", 2) == 0)
            host = bar + 3;
    }
    bool local = !host || strcmp(host, p->boot.host) == 0;
    if (local && (strncmp(first, "unix:", 5) != 0 || p->ops == &csni_unix_ops))
        return first;
    if (strncmp(first, "tcp:", 4) == 0)
        return first;
    return tcp;
}

/* Makes a connection to pp: HELLO, and its shared-memory segment when on this host. lane 0
 * is the connection the process shares among its transports; with CSN_CONN_PER_TRANSPORT a
 * transport's own connection carries its id as lane. The caller stores *out. */
static csn_status proc_connect(struct csni_proc *p, struct csni_peer *pp, uint32_t lane,
                               struct csni_conn **out)
{
    char key[32], addr[512];
    int fd = -1;
    csn_status rv;
    /* Ranks of the job come up in their own time: wait for their address as for a name.
     * Forked processes publish theirs before any netid of theirs can be known. */
    uint64_t wait = pp->proc < p->boot.size ? p->lookup_timeout_ms : 0;
    snprintf(key, sizeof key, "ep.%d", pp->proc);
    if ((rv = csni_kv_get(key, wait, addr, sizeof addr)) != CSN_OK)
        return rv == CSN_NOT_FOUND ? (pp->proc < p->boot.size ? CSN_PEER_LOST : CSN_ILLEGAL_NETID)
                                   : rv;
    const char *use = proc_pick_addr(p, addr);
    if (!use)
        return CSN_PEER_LOST;
    const struct csni_transport_ops *ops =
        strncmp(use, "tcp:", 4) == 0 ? &csni_tcp_ops : &csni_unix_ops;
    if ((rv = ops->connect(use, &fd)) != CSN_OK)
        return rv;
    csni_tcp_tune(p, fd);
    struct csni_shm *shm = NULL;
    if (p->use_shm && ops == &csni_unix_ops &&
        (rv = csni_shm_create(p, pp->proc, lane, &shm)) != CSN_OK) {
        close(fd);
        return rv;
    }
    uint8_t hello[CSNI_FRAME_SIZE + CSNI_KEY_BYTES];
    struct csni_frame f = {.type = CSNI_F_HELLO,
                           .dst = shm ? 1u : 0u,
                           .src = lane,
                           .aux = CSNI_PROTO_VERSION,
                           .len = CSNI_KEY_BYTES,
                           .cookie = (uint64_t)p->me};
    csni_frame_encode(&f, hello);
    memcpy(hello + CSNI_FRAME_SIZE, p->key, CSNI_KEY_BYTES);
    size_t off = 0;
    while (off < sizeof hello) {
        ssize_t w = send(fd, hello + off, sizeof hello - off, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            rv = CSN_PEER_LOST;
            goto fail;
        }
        off += (size_t)w;
    }
    struct csni_conn *c = csni_conn_new(p, fd, pp, shm);
    if (!c) {
        rv = CSN_NO_HEAP;
        goto fail;
    }
    csni_lock(&pp->lock);
    pp->nconns++;
    if (shm)
        pp->eager_max = p->shm_eager;
    csni_unlock(&pp->lock);
    *out = c;
    return CSN_OK;
fail:
    close(fd);
    if (shm) {
        char path[512];
        csni_shm_path(p, p->me, pp->proc, lane, path, sizeof path);
        unlink(path);
        munmap(shm->base, shm->size);
        free(shm);
    }
    return rv;
}

struct csni_peer *csni_peer_lookup(struct csni_proc *p, int proc)
{
    struct csni_peer *pp;
    /* Fast path, no lock: peers are never freed; the table entry is published last. */
    if (proc < CSNI_PEER_TAB &&
        (pp = atomic_load_explicit(&p->peer_tab[proc], memory_order_acquire)) != NULL)
        return pp;
    pthread_mutex_lock(&p->lock);
    for (pp = p->peers; pp; pp = pp->next)
        if (pp->proc == proc)
            break;
    if (!pp && (pp = calloc(1, sizeof *pp)) != NULL) {
        pp->proc = proc;
        atomic_init(&pp->credit, p->window);
        pthread_mutex_init(&pp->conn_lock, NULL);
        pp->eager_max = p->eager_max;
        pp->next = p->peers;
        p->peers = pp;
        if (proc < CSNI_PEER_TAB)
            atomic_store_explicit(&p->peer_tab[proc], pp, memory_order_release);
    }
    pthread_mutex_unlock(&p->lock);
    return pp;
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
    csni_lock(&pp->lock);
    bool ready = pp->conn || pp->lost;
    csni_unlock(&pp->lock);
    if (ready) {
        atomic_store_explicit(&pp->ready, true, memory_order_release);
        return pp;
    }
    /* Connecting may wait for the peer to publish its address: only callers that want
     * the same peer wait behind it. */
    pthread_mutex_lock(&pp->conn_lock);
    csni_lock(&pp->lock);
    ready = pp->conn || pp->lost;
    csni_unlock(&pp->lock);
    struct csni_conn *c = NULL;
    csn_status r = ready ? CSN_OK : proc_connect(p, pp, 0, &c);
    if (c) {
        csni_lock(&pp->lock);
        if (!pp->conn)
            pp->conn = c;
        csni_unlock(&pp->lock);
    }
    pthread_mutex_unlock(&pp->conn_lock);
    if (r == CSN_PEER_LOST) {
        csni_peer_lost(p, pp);
    } else if (r != CSN_OK) {
        *rv = r;
        return NULL;
    }
    return pp;
}

/* ---- start-up ---- */
static void proc_atfork_prepare(void)
{
    pthread_mutex_lock(&proc_init_lock);
}

static void proc_atfork_parent(void)
{
    pthread_mutex_unlock(&proc_init_lock);
}

static void proc_close_fds(struct csni_proc *p)
{
    int fds[4] = {p->listen_fd, p->listen_tcp, p->epfd, p->evfd};
    for (int i = 0; i < 4; i++)
        if (fds[i] >= 0)
            close(fds[i]);
}

/* The child of a fork starts with a clean library: the parent's transports are not its own,
 * its threads are gone, and its descriptors must not keep the parent's connections alive
 * (a peer must see EOF when the parent dies). The child's first csn_open builds a new
 * identity. The old state is abandoned (its locks may be held by threads that no longer exist). */
static void proc_atfork_child(void)
{
    struct csni_proc *p = csni_p;
    pthread_mutex_init(&proc_init_lock, NULL);
    proc_forked = true;
    csni_wait_forked();
    if (!p)
        return;
    for (struct csni_conn *c = p->conns; c; c = c->next)
        close(c->fd);
    proc_close_fds(p);
    csni_p = NULL;
}

static csn_status proc_key(struct csni_proc *p)
{
    const char *k = p->boot.jobkey;
    for (int i = 0; i < CSNI_KEY_BYTES; i++) {
        int hi = proc_hexval(k[2 * i]), lo = hi < 0 ? -1 : proc_hexval(k[2 * i + 1]);
        if (hi < 0 || lo < 0) {
            fprintf(stderr, "csn: CSN_JOBKEY is not 32 hex digits\n");
            return CSN_INVALID_ARGUMENT;
        }
        p->key[i] = (uint8_t)(hi << 4 | lo);
    }
    return CSN_OK;
}

static csn_status proc_network(struct csni_proc *p)
{
    csn_status rv;
    char key[32];
    const char *tr = getenv("CSN_TRANSPORT");
    if (!tr || !*tr || strcmp(tr, "shm") == 0) {
        p->ops = &csni_unix_ops;
        p->use_shm = true;
    } else if (strcmp(tr, "unix") == 0) {
        p->ops = &csni_unix_ops;
    } else if (strcmp(tr, "tcp") == 0) {
        p->ops = &csni_tcp_ops;
    } else {
        fprintf(stderr, "csn: CSN_TRANSPORT=%s: expected shm, unix or tcp\n", tr);
        return CSN_INVALID_ARGUMENT;
    }
    const char *dir = getenv("CSN_SHM_DIR");
    snprintf(p->shm_dir, sizeof p->shm_dir, "%s", dir && *dir ? dir : "/dev/shm");
    p->shm_ring = proc_env_u64("CSN_SHM_RING", 256u << 10);
    if (p->shm_ring < 4096 || (p->shm_ring & (p->shm_ring - 1)) != 0) {
        fprintf(stderr, "csn: CSN_SHM_RING=%llu: expected a power of two >= 4096\n",
                (unsigned long long)p->shm_ring);
        return CSN_INVALID_ARGUMENT;
    }
    p->shm_eager = proc_env_u64("CSN_SHM_EAGER", 65536);
    p->split_min = proc_env_u64("CSN_SHM_SPLIT", 8u << 20);
    p->tcp_notsent = proc_env_u64("CSN_TCP_NOTSENT", 128u << 10);
    if (p->tcp_notsent > (1u << 30))
        p->tcp_notsent = 1u << 30;
    if (p->shm_eager > p->eager_max)
        p->shm_eager = p->eager_max;
    p->cma = proc_env_u64("CSN_CMA", 1) != 0;
    if ((rv = proc_key(p)) != CSN_OK)
        return rv;
    if ((p->epfd = epoll_create1(EPOLL_CLOEXEC)) < 0 ||
        (p->evfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) < 0)
        return csni_errno_status(errno);
    if ((rv = p->ops->listen(p, &p->listen_fd, p->addr, sizeof p->addr)) != CSN_OK)
        return rv;
    struct epoll_event ev = {.events = EPOLLIN, .data.u64 = PROC_EV_LISTEN};
    epoll_ctl(p->epfd, EPOLL_CTL_ADD, p->listen_fd, &ev);
    /* A job that spans hosts (the agent sets CSN_ADDR, the address reaching the other
     * hosts): also listen on TCP there, for the ranks of other hosts. */
    const char *a = getenv("CSN_ADDR");
    if (p->ops != &csni_tcp_ops && a && *a) {
        char tcp[128];
        if ((rv = csni_tcp_ops.listen(p, &p->listen_tcp, tcp, sizeof tcp)) != CSN_OK)
            return rv;
        ev.data.u64 = PROC_EV_LISTEN_TCP;
        epoll_ctl(p->epfd, EPOLL_CTL_ADD, p->listen_tcp, &ev);
        size_t n = strlen(p->addr);
        snprintf(p->addr + n, sizeof p->addr - n, "|%s", tcp);
    }
    size_t n = strlen(p->addr);
    snprintf(p->addr + n, sizeof p->addr - n, "|h=%s", p->boot.host);
    ev.data.u64 = PROC_EV_KICK;
    epoll_ctl(p->epfd, EPOLL_CTL_ADD, p->evfd, &ev);
    snprintf(key, sizeof key, "ep.%d", p->me);
    if ((rv = csni_kv_put(key, p->addr)) != CSN_OK)
        return rv;
    if (pthread_create(&p->progress_thread, NULL, proc_progress_main, p) != 0)
        return CSN_SYSTEM_ERROR;
    p->progress_running = true;
    return CSN_OK;
}

/* Registered when the library is loaded, so a fork before the first csn call is seen too. */
__attribute__((constructor)) static void proc_register_atfork(void)
{
    pthread_atfork(proc_atfork_prepare, proc_atfork_parent, proc_atfork_child);
}

static csn_status proc_init(struct csni_proc **out)
{
    struct csni_proc *p = calloc(1, sizeof *p);
    bool forked = proc_forked;
    csn_status rv;
    if (!p)
        return CSN_NO_HEAP;
    p->listen_fd = p->listen_tcp = p->epfd = p->evfd = -1;
    pthread_rwlock_init(&p->tlock, NULL);
    pthread_mutex_init(&p->lock, NULL);
    pthread_mutex_init(&p->barrier_lock, NULL);
    atomic_init(&p->next_token, 1);
    p->pid = getpid();
    if ((rv = csni_boot_init(&p->boot)) != CSN_OK)
        goto fail;
    p->me = p->boot.rank;
    p->forked = forked;
    p->lookup_timeout_ms = proc_env_u64("CSN_LOOKUP_TIMEOUT", 60) * 1000;
    p->eager_max = proc_env_u64("CSN_EAGER_MAX", 65536);
    if (p->eager_max > (1u << 20))
        p->eager_max = 1u << 20;
    p->unexpected_limit = proc_env_u64("CSN_UNEXPECTED_LIMIT", 64u << 20);
    p->window = (int64_t)(p->unexpected_limit / (size_t)(p->boot.size > 1 ? p->boot.size - 1 : 1));
    p->max_ops = (unsigned)proc_env_u64("CSN_MAX_OPS", 65536);
    p->conn_per_transport = proc_env_u64("CSN_CONN_PER_TRANSPORT", 0) != 0;
    proc_cpus(p);
    if ((rv = csni_names_init(&p->boot)) != CSN_OK)
        goto fail;
    if (p->boot.launched && forked && (rv = csni_names_alloc_proc(&p->me)) != CSN_OK)
        goto fail;
    csni_p = p;
    /* The system transport exists before our address is published: a peer's first barrier
     * message may arrive as soon as it can reach us. */
    if ((rv = csni_tport_create(p, &p->sys)) != CSN_OK)
        goto fail;
    if (p->boot.launched && (rv = proc_network(p)) != CSN_OK)
        goto fail;
    *out = p;
    return CSN_OK;
fail:
    /* A failed start leaves nothing half-built behind for the next attempt. */
    csni_p = NULL;
    if (p->progress_running) {
        atomic_store(&p->stopping, true);
        pthread_join(p->progress_thread, NULL);
    }
    proc_close_fds(p);
    free(p);
    return rv;
}

csn_status csni_proc_get(struct csni_proc **out)
{
    struct csni_proc *p =
        atomic_load_explicit((_Atomic(struct csni_proc *) *)&csni_p, memory_order_acquire);
    csn_status rv = CSN_OK;
    if (p) {
        *out = p;
        return CSN_OK;
    }
    pthread_mutex_lock(&proc_init_lock);
    if (csni_p)
        *out = csni_p;
    else
        rv = proc_init(out);
    pthread_mutex_unlock(&proc_init_lock);
    return rv;
}

/* The connection t sends to pp on: the process's shared one, or, with
 * CSN_CONN_PER_TRANSPORT=1, one of t's own (made at first use; the seed's alternative of a
 * device per thread, kept for comparison). NULL when it cannot be made (peer lost). */
struct csni_conn *csni_send_conn(csn_transport *t, struct csni_peer *pp)
{
    struct csni_proc *p = csni_p;
    struct csni_conn *c = NULL;
    if (!p->conn_per_transport)
        return pp->conn;
    csni_lock(&t->lock);
    for (unsigned i = 0; i < t->nlanes && !c; i++)
        if (t->lanes[i].proc == pp->proc)
            c = t->lanes[i].conn;
    csni_unlock(&t->lock);
    if (c)
        return c;
    if (proc_connect(p, pp, t->tid, &c) != CSN_OK)
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
