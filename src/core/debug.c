/* debug.c: the CSN_DEBUG trace (debug.h): one line per decision on stderr, each starting with
 * "csn[RANK pid PID]:" so that the lines of many ranks can be told apart. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/debug.h"
#include "core/netid.h"
#include "core/state.h"
#include "transport/ofi/ofi.h"
#include "transport/shm/shm.h"
#include "names/hosts.h"

_Atomic int csni_debug_level;

/* The peers already named (level 2): one flag per rank of the job, made at open. */
static _Atomic unsigned char *debug_seen;
static int debug_nseen;

static void debug_line(const struct csni_proc *p, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void debug_line(const struct csni_proc *p, const char *fmt, ...)
{
    char line[512];
    va_list ap;
    int n = snprintf(line, sizeof line, "csn[%d pid %ld]: ", p->me, (long)p->pid);
    if (n < 0 || (size_t)n >= sizeof line)
        return;
    va_start(ap, fmt);
    vsnprintf(line + n, sizeof line - (size_t)n, fmt, ap);
    va_end(ap);
    fprintf(stderr, "%s\n", line); /* one call: the lines of threads do not mix */
}

void csni_debug_open(const struct csni_proc *p)
{
    const struct csni_tun *t = &p->tun;
    int level = atomic_load_explicit(&csni_debug_level, memory_order_relaxed);
    if (level < 1)
        return;
    if (level >= 2 && p->boot.size > 0 && (debug_seen = calloc((size_t)p->boot.size, 1)) != NULL)
        debug_nseen = p->boot.size;
    debug_line(p, "CSN_DEBUG=%d: rank %d of %d on host '%s' (%d of the job's ranks here)%s", level,
               p->boot.rank, p->boot.size, p->boot.host, p->boot.local_size,
               p->forked ? ", a process forked by a rank" : "");
    if (!t->net) {
        debug_line(p, "transports: none (not launched: messages stay in this process)");
    } else {
        debug_line(p, "transports: within this host %s; between hosts %s",
                   t->use_shm ? "shm" : t->net->name,
                   p->listen2_net ? p->listen2_net->name : "none (the job runs on one host)");
        if (t->use_shm)
            debug_line(
                p,
                "shm: rings of %llu bytes (records kept to the first %llu while the "
                "receiver keeps up, to the first %llu while it follows a one-way stream) in %s "
                "over %s connections, mapped %s",
                (unsigned long long)t->shm_ring, (unsigned long long)t->shm_compact,
                (unsigned long long)csni_shm_stream_bytes(t->shm_ring, t->shm_compact), t->shm_dir,
                t->net->name,
                t->shm_populate ? "whole when a pair connects (CSN_SHM_POPULATE=1)"
                                : "page by page as they are touched (CSN_SHM_POPULATE=0)");
        debug_line(p, "barrier: %s",
                   t->host_barrier
                       ? "a counter in shared memory from the third (all ranks on this host)"
                       : "messages (CSN_HOST_BARRIER=0, no shm, or ranks on other hosts)");
    }
    if (t->net) {
        char pull[256] = "shm: streamed through the ring";
        if (p->cma && t->pull_min < t->pull_max && t->pull_max < CSNI_PULL_NEVER)
            snprintf(pull, sizeof pull,
                     "shm: the receiver pulls with process_vm_readv from %zu bytes, streamed "
                     "through the ring from %zu",
                     t->pull_min, t->pull_max);
        else if (p->cma && t->pull_min < t->pull_max)
            snprintf(pull, sizeof pull,
                     "shm: the receiver pulls with process_vm_readv from %zu bytes", t->pull_min);
        if (p->cma && t->pull_min < t->pull_max && t->pull_batch > 1)
            snprintf(pull + strlen(pull), sizeof pull - strlen(pull),
                     ", up to %u at a time in one call (CSN_SHM_PULL_BATCH)", t->pull_batch);
        if (csni_ofi_on() && csni_ofi_rndv_min())
            snprintf(pull + strlen(pull), sizeof pull - strlen(pull),
                     "; ofi: the provider moves the payload from %zu bytes", csni_ofi_rndv_min());
        debug_line(
            p,
            "protocols: eager up to %zu bytes over shm (a blocking transmit up to %zu, "
            "and up to %zu where that costs less than a rendezvous, as timed), %zu over sockets; "
            "rendezvous beyond (%s); split copies (both sides copy) from %zu bytes%s",
            t->use_shm ? t->shm_eager : 0, t->use_shm ? t->shm_eager_blocking : 0,
            t->use_shm ? t->shm_eager_near : 0, t->eager_max, pull, t->split_min,
            t->split_min ? "" : " (never: CSN_SHM_SPLIT=0)");
    }
    if (t->oversubscribed)
        debug_line(p,
                   "waiting: yield-spin %llu us then sleep (oversubscribed: %u ranks share our %d "
                   "CPUs%s), naps up to %llu ms",
                   (unsigned long long)(t->polite_spin_ns / 1000), t->cpu_share, t->ncpu,
                   p->forked ? ", or forked" : "", (unsigned long long)(t->nap_ns / 1000000));
    else
        debug_line(p,
                   "waiting: spin %llu us then sleep (%u ranks on our %d CPUs; a yield-spin of "
                   "%llu us while more threads wait than CPUs), naps up to %llu ms",
                   (unsigned long long)(t->spin_ns / 1000), t->cpu_share, t->ncpu,
                   (unsigned long long)(t->polite_spin_ns / 1000),
                   (unsigned long long)(t->nap_ns / 1000000));
    if (t->use_shm && t->shm_membarrier)
        debug_line(p, "shm doorbells: a sender leaves out its fence, a sleeper runs membarrier "
                      "instead (where the kernel has it)");
    else if (t->use_shm)
        debug_line(p,
                   "shm doorbells: a fence on both sides (CSN_SHM_MEMBARRIER=0, or more than %d "
                   "ranks a CPU, or forked)",
                   CSNI_MEMBARRIER_SHARE);
    debug_line(p, "locks: %s",
               t->lock_bias ? "biased (a transport or writer lock one thread keeps taking is "
                              "taken without an atomic instruction)"
                            : "plain spin locks (CSN_LOCK_BIAS=0, or no membarrier here)");
}

void csni_debug_move(const struct csni_proc *p, int proc)
{
    if (atomic_load_explicit(&csni_debug_level, memory_order_relaxed) < 2)
        return;
    if (p->tun.own_sends)
        debug_line(p, "peer rank %d: large messages over ofi; sending on a connection of our own",
                   proc);
    else
        debug_line(p,
                   "peer rank %d: both connected at once; sending on the connection rank %d made",
                   proc, proc < p->me ? proc : p->me);
}

void csni_debug_tx(struct csni_proc *p, csn_netid to, size_t len, bool blocking)
{
    int level = atomic_load_explicit(&csni_debug_level, memory_order_relaxed);
    int rank = csni_netid_rank(to);
    const char *tp;
    if (rank == p->me) {
        tp = "self";
    } else if (rank >= 0 && rank < p->boot.size) {
        tp = csni_pair_transport(p, p->me, rank);
        if (!tp)
            tp = "unknown (no published address yet)";
    } else {
        tp = csni_within_name(p);
    }
    if (rank >= 0 && rank < debug_nseen && debug_seen &&
        atomic_exchange_explicit(&debug_seen[rank], 1, memory_order_relaxed) == 0)
        debug_line(p, "peer rank %d: %s", rank, tp);
    if (level < 3)
        return;
    bool shm = strcmp(tp, "shm") == 0;
    size_t eager = !shm       ? p->tun.eager_max
                   : blocking ? p->tun.shm_eager_blocking /* as match_send decides */
                              : p->tun.shm_eager;
    bool pulled = shm && p->cma && len >= p->tun.pull_min &&
                  len < p->tun.pull_max; /* as match_send gives its address */
    const char *how;
    if (rank == p->me)
        how = "copied within this process";
    else if (shm && blocking && len > eager && len <= p->tun.shm_eager_near)
        how = "eager or a rendezvous the receiver pulls, whichever the connection's recent "
              "transmits of this range, timed, say costs less (eager where the CPUs share a cache)";
    else if (len <= eager)
        how =
            shm && p->cma && len > eager / 2
                ? "eager (rendezvous when the peer's credit is spent; pulled by the receiver "
                  "while we have receives this long of our own outstanding, or a rendezvous to it "
                  "unanswered: both ways at once)"
                : "eager (rendezvous when the peer's credit is spent)";
    else if (pulled && !p->tun.conn_per_transport && p->tun.split_min && len >= p->tun.split_min)
        how = "rendezvous, split copy (both sides copy)";
    else if (pulled)
        how = "rendezvous, the receiver pulls it (process_vm_readv)";
    else if (shm && p->cma)
        how = "rendezvous, streamed through the ring (pulled by the receiver while we have "
              "large receives of our own outstanding: both ways at once)";
    else if (shm)
        how = "rendezvous, streamed through the ring";
    else if (csni_ofi_on() && csni_ofi_rndv_min() && len >= csni_ofi_rndv_min())
        how = "rendezvous, the payload moved by the fabric provider (handed to it with the "
              "RTS while fewer than 8 are under way, else when the receiver asks)";
    else
        how = "rendezvous";
    debug_line(p, "tx to rank %d transport %u: %zu bytes over %s: %s", rank,
               (unsigned)csni_netid_tid(to), len, tp, how);
}
