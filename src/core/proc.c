/* proc.c: the process's start-up: tunables (read once, each checked), identity, the network
 * (listening sockets, the published endpoint), the progress thread; fork. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "core/debug.h"
#include "core/errors.h"
#include "core/poll.h"
#include "core/proc.h"
#include "core/state.h"
#include "core/progress.h"
#include "core/wait.h"
#include "names/names.h"
#include "transport/ofi/ofi.h"
#include "transport/shm/shm.h"

static pthread_mutex_t proc_init_lock = PTHREAD_MUTEX_INITIALIZER;
static bool proc_forked; /* this process was forked from one that had loaded the library */
/* The environment's tunables were refused once (the line naming the variable is out): later
 * calls (csn_job_rank, csn_job_size, csn_open) fail the same way without repeating it. */
static bool proc_env_refused;

/* ---- tunables ---- */
/* Reads an unsigned tunable in [min, max] into *out (def when unset or empty); bytes: a count
 * of bytes, with the benchmarks' rule (bench/common/parse_size.h): K, M or G in either case,
 * always binary, an optional i and B (4K = 4Ki = 4KiB = 4KB = 4096). A malformed or out-of-range
 * value is refused with a line naming the variable and what it accepts. */
static csn_status proc_env_num(const char *name, bool bytes, uint64_t def, uint64_t min,
                               uint64_t max, uint64_t *out)
{
    const char *s = getenv(name);
    char *end;
    *out = def;
    if (!s || !*s)
        return CSN_OK;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    unsigned shift = 0;
    if (bytes && end != s && *end) {
        const char *u = strchr("KMG", toupper((unsigned char)*end));
        shift = u ? 10u * (unsigned)(u - "KMG" + 1) : 0;
        end += shift != 0;
        end += shift != 0 && *end == 'i';
        end += *end == 'B' || *end == 'b';
    }
    bool over = shift && v > (UINT64_MAX >> shift);
    if (!over)
        v <<= shift;
    if (errno || end == s || *end || s[0] == '-' || s[0] == '+' || over || v < min || v > max) {
        fprintf(stderr, "csn: %s=%s: expected %s from %llu to %llu%s\n", name, s,
                bytes ? "a number of bytes" : "an integer", (unsigned long long)min,
                (unsigned long long)max, bytes ? " (K, M, G: times 2^10, 2^20, 2^30)" : "");
        return CSN_INVALID_ARGUMENT;
    }
    *out = v;
    return CSN_OK;
}

static csn_status proc_env_u64(const char *name, uint64_t def, uint64_t min, uint64_t max,
                               uint64_t *out)
{
    return proc_env_num(name, false, def, min, max, out);
}

static csn_status proc_env_bytes(const char *name, uint64_t def, uint64_t min, uint64_t max,
                                 uint64_t *out)
{
    return proc_env_num(name, true, def, min, max, out);
}

/* The default nap (CSN_NAP_MS), the longest sleep of a waiter before it looks by itself: a
 * bound on a lost wake-up. Every idle rank's waiter and progress thread wake at each nap's end,
 * so with many ranks per CPU those wake-ups become the machine's load (1024 ranks on 2 CPUs:
 * 20 000 a second, and the tiny nettest took 60 s against 31 s with a 1 s nap, BENCHMARKS.md,
 * issue 17). The default is 100 ms, and 2 ms per rank sharing a CPU beyond 50 of them (at most
 * 2 s): the wake-ups per CPU then stay at about 1000 a second whatever the job's size. */
static uint64_t proc_default_nap_ms(uint64_t share, int ncpu)
{
    uint64_t per_cpu = share / (uint64_t)(ncpu > 0 ? ncpu : 1);
    return per_cpu <= 50 ? 100 : per_cpu >= 1000 ? 2000 : 2 * per_cpu;
}

/* Reads the tunables of the library itself (the network's in proc_network). */
static csn_status proc_tunables(struct csni_tun *tun, const struct csni_boot *b)
{
    uint64_t v[8];
    csn_status rv;
    if ((rv = proc_env_u64("CSN_LOOKUP_TIMEOUT", 60, 0, 86400 * 365, &v[0])) != CSN_OK ||
        (rv = proc_env_bytes("CSN_EAGER_MAX", 65536, 0, 1u << 20, &v[1])) != CSN_OK ||
        (rv = proc_env_bytes("CSN_UNEXPECTED_LIMIT", 64u << 20, 4096, (uint64_t)1 << 40, &v[2])) !=
            CSN_OK ||
        (rv = proc_env_u64("CSN_MAX_OPS", 65536, 1, 1u << 30, &v[3])) != CSN_OK ||
        (rv = proc_env_u64("CSN_CONN_PER_TRANSPORT", 0, 0, 1, &v[4])) != CSN_OK ||
        (rv = proc_env_u64("CSN_DEBUG", 0, 0, 3, &v[5])) != CSN_OK ||
        (rv = proc_env_u64("CSN_LOCK_BIAS", 1, 0, 1, &v[6])) != CSN_OK)
        return rv;
    tun->lock_bias = csni_bias_setup(v[6] != 0);
    atomic_store_explicit(&csni_debug_level, (int)v[5], memory_order_relaxed);
    tun->lookup_timeout_ms = v[0] * 1000;
    tun->eager_max = v[1];
    tun->unexpected_limit = v[2];
    tun->window = (int64_t)(v[2] / (uint64_t)(b->size > 1 ? b->size - 1 : 1));
    tun->credit_ahead = tun->window / 64 < (16 << 10) ? tun->window / 64 : (16 << 10);
    tun->max_ops = (unsigned)v[3];
    tun->conn_per_transport = v[4] != 0;
    /* More ranks on our CPUs than CPUs to run them: a pure spin only steals the CPU from
     * the process we wait for. Then the spin phase yields the CPU at every turn (the peer
     * runs at once, about 1 us per hand-over) and lasts 1 ms before sleeping. The ranks on
     * our CPUs: those csnrun --bind-to core counts in CSN_CPU_SHARE, else all of the host's.
     * Processes forked by ranks (pipeline stages) are not counted by the launcher: assume
     * they share the CPUs with more processes than there are. */
    cpu_set_t set;
    int ncpu = 1;
    if (sched_getaffinity(0, sizeof set, &set) == 0)
        ncpu = CPU_COUNT(&set);
    if ((rv = proc_env_u64("CSN_CPU_SHARE", (uint64_t)b->local_size, 1, 1u << 24, &v[0])) !=
            CSN_OK ||
        (rv = proc_env_u64("CSN_NAP_MS", proc_default_nap_ms(v[0], ncpu), 0, 60000, &v[2])) !=
            CSN_OK)
        return rv;
    tun->cpu_share = (uint32_t)v[0];
    tun->oversubscribed = tun->cpu_share > (uint32_t)ncpu || proc_forked;
    tun->ncpu = ncpu;
    if ((rv = proc_env_u64("CSN_SPIN_US", tun->oversubscribed ? 1000 : 50, 0, 60000000, &v[1])) !=
        CSN_OK)
        return rv;
    tun->spin_ns = v[1] * 1000;
    tun->polite_spin_ns = getenv("CSN_SPIN_US") ? tun->spin_ns : 1000000;
    tun->nap_ns = v[2] ? v[2] * 1000000 : 1000000;
    return CSN_OK;
}

/* CSN_SHM_MEMBARRIER's default. Off where ranks far outnumber CPUs (more than
 * CSNI_MEMBARRIER_SHARE a CPU) or a process forked from a rank may share them: there nearly
 * every wait sleeps, and a sleep's membarrier costs more than the fences it saves (start-up of
 * 256-1024 ranks on 2 CPUs 10-15 % slower, BENCHMARKS.md). A few ranks a CPU (nettest's 4 on
 * 2) wait in polite spins that seldom end in a sleep (55 membarriers in a 4.5 s nettest run),
 * and the fence per message is the sender's wait for its record's lines to reach the other
 * CPU's cache: nettest 1-16 KiB rows 1.06-1.40x without it where the vCPUs sat apart, 64 KiB-1
 * MiB 0.96-1.12x (BENCHMARKS.md, issue 19). */
static bool proc_membarrier_default(const struct csni_tun *tun)
{
    return !proc_forked && tun->cpu_share <= CSNI_MEMBARRIER_SHARE * (uint32_t)tun->ncpu;
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

#define PROC_POPULATE_MAX 64

/* The network's tunables: the kind within the host and the shared memory over it. */
static csn_status proc_net_tunables(struct csni_proc *p)
{
    struct csni_tun *tun = &p->tun;
    uint64_t v[15];
    csn_status rv;
    const char *tr = getenv("CSN_TRANSPORT");
    if (!tr || !*tr)
        tr = "shm";
    tun->use_shm = strcmp(tr, "shm") == 0; /* rings over the Unix-socket connections */
    /* ofi: TCP connections for the handshake and death, data over libfabric (transport/ofi) */
    bool ofi = strcmp(tr, "ofi") == 0;
    if (!(tun->net = csni_net_by_name(tun->use_shm ? "unix" : ofi ? "tcp" : tr))) {
        fprintf(stderr, "csn: CSN_TRANSPORT=%s: expected shm, unix, tcp or ofi\n", tr);
        return CSN_INVALID_ARGUMENT;
    }
    if (ofi && ((rv = proc_env_bytes("CSN_OFI_RNDV", CSNI_OFI_RNDV_DEFAULT, 0, (uint64_t)1 << 48,
                                     &v[0])) != CSN_OK ||
                (rv = csni_ofi_init((size_t)v[0])) != CSN_OK))
        return rv;
    tun->own_sends = ofi && csni_ofi_rndv_min() && !tun->conn_per_transport;
    const char *dir = getenv("CSN_SHM_DIR");
    snprintf(tun->shm_dir, sizeof tun->shm_dir, "%s", dir && *dir ? dir : "/dev/shm");
    if (tun->use_shm && access(tun->shm_dir, W_OK | X_OK) != 0) {
        fprintf(stderr, "csn: CSN_SHM_DIR=%s: not a writable directory (%s)\n", tun->shm_dir,
                strerror(errno));
        return CSN_INVALID_ARGUMENT;
    }
    if ((rv = proc_env_bytes("CSN_SHM_RING", 256u << 10, 4096, (uint64_t)1 << 40, &v[0])) !=
            CSN_OK ||
        (rv = proc_env_bytes("CSN_SHM_EAGER", tun->oversubscribed ? 65536 : 4096, 0, 1u << 20,
                             &v[1])) != CSN_OK ||
        (rv = proc_env_bytes("CSN_SHM_SPLIT", tun->oversubscribed ? 8u << 20 : 32768, 0,
                             (uint64_t)1 << 48, &v[2])) != CSN_OK ||
        (rv = proc_env_bytes("CSN_TCP_NOTSENT", 128u << 10, 0, 1u << 30, &v[3])) != CSN_OK ||
        (rv = proc_env_u64("CSN_CMA", 1, 0, 1, &v[4])) != CSN_OK ||
        (rv = proc_env_u64("CSN_TCP_HOLD_US", 1000, 0, 1000000, &v[5])) != CSN_OK ||
        (rv = proc_env_u64("CSN_SHM_MEMBARRIER", proc_membarrier_default(tun), 0, 1, &v[6])) !=
            CSN_OK ||
        (rv = proc_env_bytes("CSN_SHM_PULL", 0, 0, CSNI_PULL_NEVER, &v[7])) != CSN_OK ||
        (rv = proc_env_bytes("CSN_SHM_PULL_MAX", CSNI_PULL_NEVER, 0, CSNI_PULL_NEVER, &v[8])) !=
            CSN_OK ||
        (rv = proc_env_u64("CSN_HOST_BARRIER", 1, 0, 1, &v[9])) != CSN_OK ||
        (rv = proc_env_u64("CSN_SHM_POPULATE", p->boot.local_size <= PROC_POPULATE_MAX, 0, 1,
                           &v[10])) != CSN_OK ||
        (rv = proc_env_u64("CSN_SHM_PULL_BATCH", CSNI_PULL_BATCH_MAX, 1, CSNI_PULL_BATCH_MAX,
                           &v[11])) != CSN_OK ||
        (rv = proc_env_bytes("CSN_SHM_COMPACT", tun->oversubscribed ? 0 : 8192, 0,
                             (uint64_t)1 << 40, &v[12])) != CSN_OK ||
        (rv = proc_env_bytes("CSN_SHM_EAGER_BLOCKING", 0, 0, 1u << 20, &v[13])) != CSN_OK ||
        (rv = proc_env_bytes("CSN_SHM_EAGER_NEAR", getenv("CSN_SHM_EAGER") ? 0 : 16384, 0, 1u << 20,
                             &v[14])) != CSN_OK)
        return rv;
    tun->host_barrier = v[9] != 0 && tun->use_shm && p->boot.launched && p->boot.size > 1 &&
                        p->boot.local_size == p->boot.size && p->boot.jobid[0] != '\0' &&
                        !p->forked;
    /* Up to PROC_POPULATE_MAX ranks on the host: a rank's rings to its peers are mapped whole
     * when the pair connects (shm.c, shm_map_flags); beyond, where start-up at scale makes
     * many pairs that each carry a message or two, page by page as they are touched. */
    tun->shm_populate = v[10] != 0;
    if ((v[0] & (v[0] - 1)) != 0) {
        fprintf(stderr, "csn: CSN_SHM_RING=%llu: expected a power of two from 4096\n",
                (unsigned long long)v[0]);
        return CSN_INVALID_ARGUMENT;
    }
    tun->shm_ring = v[0];
    /* Records kept to the first 8 KiB of a ring while its consumer keeps up: lines the two
     * CPUs handed back and forth a moment ago, still in their first-level caches (shm.c,
     * "Compact"): a 1 KiB half round trip 0.21 us against 0.27, 256 B 0.15 against 0.20, one
     * way and both ways unchanged (BENCHMARKS.md, issue 19); 4 KiB gained less, 16 KiB
     * nothing. Off where ranks share CPUs: a rank that waits gives its CPU away, and its cache
     * with it. */
    tun->shm_compact = csni_shm_compact_bytes(v[0], v[12]);
    tun->shm_eager = v[1] > tun->eager_max ? tun->eager_max : v[1];
    /* Not below 4 KiB: both ways at once, two copies of a message that small beat a pull's
     * system call (4 KiB eager 12.3 GB/s against 6.7 pulled, BENCHMARKS.md, issue 19). */
    tun->shm_half_eager = tun->shm_eager / 2 >= 4096 ? tun->shm_eager / 2 : tun->shm_eager;
    tun->split_min = v[2];
    /* A blocking transmit waits for its message anyway: eager, it is done once in the ring
     * and the receiver copies it out without a system call, where a rendezvous waits for the
     * receiver's pull (1.8 us for 8 KiB here) and its answer. Where the two CPUs share a cache
     * that halves an 8 KiB half round trip (1.28-1.41 us against 2.5-2.9 pulled, 16 KiB
     * 2.4-2.7 against 3.2-3.7); where they do not, two copies through the ring cost far more
     * than one pull from memory (8 KiB 4.9-5.3 against 3.0-3.5, 16 KiB 9.1-10.3 against
     * 3.8-4.3; BENCHMARKS.md, issue 19). CSN_SHM_EAGER_BLOCKING sets such a limit for every
     * placement; above it, up to CSN_SHM_EAGER_NEAR (16 KiB; off where CSN_SHM_EAGER is set,
     * which tests and users set to choose the protocol), a blocking transmit goes the way that
     * costs less on its connection, as timed (core/match.c, "Near"). */
    v[13] = v[13] > tun->eager_max ? tun->eager_max : v[13];
    tun->shm_eager_blocking = v[13] > tun->shm_eager ? v[13] : tun->shm_eager;
    v[14] = v[14] > tun->eager_max ? tun->eager_max : v[14];
    tun->shm_eager_near = v[14] > tun->shm_eager_blocking ? v[14] : tun->shm_eager_blocking;
    /* Every rendezvous is pulled by the receiver, and where every rank has a CPU, from 32 KiB
     * on, copied by both processes at once (the receiver pulls the first half, the sender
     * writes the second), with the eager size 4 KiB: one copy of each byte, by two CPUs. On
     * this project's Intel Xeon machine that was 0.57-0.6x the half round trip of the stream
     * through the ring from 64 KiB to 16 MiB, 1.5-2.5x its one-way bandwidth from 64 KiB to 64
     * MiB, and 0.43-0.88x Open MPI's latency from 8 KiB to 64 MiB (BENCHMARKS.md, issue 19;
     * CSN_SHM_PULL_MAX streams from a size on). Where ranks share CPUs, one copy is half the
     * CPU time, and a half for the sender waits for its turn on the CPU: pulled whole, eager
     * up to 64 KiB, split from 8 MiB as before (4 KiB eager and split from 32 KiB: nettest's
     * cells 0.82x, BENCHMARKS.md). */
    tun->pull_min = v[7];
    tun->pull_max = v[8];
    /* Messages whose RTSs a reader finds one after the other are pulled in one
     * process_vm_readv: both ways at once 1.2x the floor of one call each at 64 KiB, 1.1x at
     * 128 KiB, nothing from 4 MiB (bench/cma-batch.sh, BENCHMARKS.md, issue 19). */
    tun->pull_batch = (unsigned)v[11];
    tun->tcp_notsent = v[3];
    tun->tcp_hold_us = v[5];
    tun->shm_membarrier = v[6] != 0;
    p->cma = v[4] != 0;
    return CSN_OK;
}

/* Listens, publishes this process's endpoint, starts the progress thread. */
static csn_status proc_network(struct csni_proc *p)
{
    csn_status rv;
    char key[32];
    struct epoll_event ev = {.events = EPOLLIN};
    if ((rv = proc_net_tunables(p)) != CSN_OK) {
        proc_env_refused = rv == CSN_INVALID_ARGUMENT;
        return rv;
    }
    if ((rv = proc_key(p)) != CSN_OK)
        return rv;
    if ((p->epfd = epoll_create1(EPOLL_CLOEXEC)) < 0 ||
        (p->evfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) < 0)
        return csni_errno_status(errno);
    if ((rv = p->tun.net->listen(p->boot.jobdir, p->me, &p->listen_fd, p->addr, sizeof p->addr)) !=
        CSN_OK)
        return rv;
    ev.data.u64 = CSNI_EV_LISTEN;
    if (epoll_ctl(p->epfd, EPOLL_CTL_ADD, p->listen_fd, &ev) != 0)
        return csni_errno_status(errno);
    /* A job that spans hosts (the agent sets CSN_ADDR, the address reaching the other hosts):
     * also listen on a kind that reaches across hosts, for the ranks of other hosts. */
    const char *a = getenv("CSN_ADDR");
    if (p->tun.net->host_local && a && *a) {
        char addr2[128];
        p->listen2_net = csni_net_remote();
        if ((rv = p->listen2_net->listen(p->boot.jobdir, p->me, &p->listen_tcp, addr2,
                                         sizeof addr2)) != CSN_OK)
            return rv;
        ev.data.u64 = CSNI_EV_LISTEN2;
        if (epoll_ctl(p->epfd, EPOLL_CTL_ADD, p->listen_tcp, &ev) != 0)
            return csni_errno_status(errno);
        size_t n = strlen(p->addr);
        snprintf(p->addr + n, sizeof p->addr - n, "|%s", addr2);
    }
    size_t n = strlen(p->addr);
    snprintf(p->addr + n, sizeof p->addr - n, "|h=%s", p->boot.host);
    ev.data.u64 = CSNI_EV_KICK;
    if (epoll_ctl(p->epfd, EPOLL_CTL_ADD, p->evfd, &ev) != 0)
        return csni_errno_status(errno);
    snprintf(key, sizeof key, "ep.%d", p->me);
    if ((rv = csni_kv_put(key, p->addr)) != CSN_OK)
        return rv;
    return csni_progress_start(p);
}

/* ---- fork ---- */
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
    for (struct csni_conn *c = csni_conns_first(&p->conns); c; c = c->next)
        if (c->fd >= 0)
            close(c->fd);
    proc_close_fds(p);
    csni_p = NULL;
}

/* Registered when the library is loaded, so a fork before the first csn call is seen too. */
__attribute__((constructor)) static void proc_register_atfork(void)
{
    CSNI_ASSERT(pthread_atfork(proc_atfork_prepare, proc_atfork_parent, proc_atfork_child) == 0);
}

/* ---- start-up ---- */
static csn_status proc_init(struct csni_proc **out)
{
    struct csni_proc *p = calloc(1, sizeof *p);
    bool forked = proc_forked;
    csn_status rv;
    if (!p)
        return CSN_NO_HEAP;
    p->listen_fd = p->listen_tcp = p->epfd = p->evfd = -1;
    csni_table_init(&p->tab);
    csni_peers_init(&p->peers);
    csni_conns_init(&p->conns);
    csni_store_init(&p->store);
    csni_mutex_init(&p->barrier_lock, CSNI_RANK_BARRIER);
    csni_mutex_init(&p->accept_lock, CSNI_RANK_ACCEPT);
    csni_lock_init(&p->pulls_lock, CSNI_RANK_LISTS);
    atomic_init(&p->next_token, 1);
    p->pid = getpid();
    if ((rv = csni_boot_init(&p->boot)) != CSN_OK)
        goto fail;
    p->me = p->boot.rank;
    p->forked = forked;
    if (proc_env_refused) {
        rv = CSN_INVALID_ARGUMENT;
        goto fail;
    }
    if ((rv = proc_tunables(&p->tun, &p->boot)) != CSN_OK) {
        proc_env_refused = rv == CSN_INVALID_ARGUMENT;
        goto fail;
    }
    if ((rv = csni_names_init(&p->boot)) != CSN_OK)
        goto fail;
    if (p->boot.launched && forked && (rv = csni_names_alloc_proc(&p->me)) != CSN_OK)
        goto fail;
    csni_p = p;
    /* The system transport exists before our address is published: a peer's first barrier
     * message may arrive as soon as it can reach us. */
    if ((rv = csni_tport_create(&p->tab, p->me, &p->sys)) != CSN_OK)
        goto fail;
    if (p->boot.launched && (rv = proc_network(p)) != CSN_OK)
        goto fail;
    csni_debug_open(p);
    *out = p;
    return CSN_OK;
fail:
    /* A failed start leaves nothing half-built behind for the next attempt. */
    csni_p = NULL;
    csni_progress_stop(p);
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
