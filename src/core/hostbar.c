/* hostbar.c: the host barrier (see hostbar.h): a counter and a generation in one segment of
 * the host's shared memory.
 *
 * Protocol. A rank reads the generation g, then adds one to the counter; the rank that
 * brings it to N sets it back to 0 and then stores g + 1; the others wait until the
 * generation is no longer g. The generation cannot move between a rank's read and its add
 * (that needs all N adds, its own among them), and a rank adds for the next barrier only
 * after it saw the new generation, so after the reset. All seq_cst: the reset is seen before
 * the new generation by whoever sees the latter.
 * Sleep. A waiter that will sleep counts itself in sleepers and then reads the generation
 * again before its futex wait (which also compares); the last arriver stores the generation
 * and then reads sleepers: one of the two always sees the other (both seq_cst), and the
 * futex's own compare closes the gap between the waiter's look and its sleep.
 * Death. A rank that dies before it arrives would hold everyone forever: a waiter that has
 * waited 100 ms looks, every 100 ms, at the ranks not yet arrived (each writes its arrival
 * count into its own slot before it adds): a process that is gone, a zombie, or one that
 * started at another time than the slot says (its pid reused) is dead. The waiter then marks
 * the segment broken and wakes everyone: all return CSN_PEER_LOST, now and at every later
 * barrier. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/futex.h"
#include "core/hostbar.h"
#include "core/poll.h"
#include "core/state.h"
#include "core/wait.h"

#define HOSTBAR_MAGIC UINT64_C(0x31307261626e7363) /* "csnbar01", little-endian */
#define HOSTBAR_LOOK_NS UINT64_C(100000000)        /* the first look for the dead, then each */

struct hostbar_slot {
    _Alignas(64) _Atomic uint64_t arrived; /* barriers this rank has arrived at (its own line) */
    int32_t pid;
    uint64_t start; /* field 22 of /proc/pid/stat: the process's start, in clock ticks */
};

struct hostbar_seg {
    _Alignas(64) _Atomic uint64_t magic; /* stored last by rank 0 (release) */
    uint32_t size;
    uint64_t pidns; /* inode of rank 0's pid namespace: the slots' pids are of that one */
    char jobkey[33];
    _Alignas(64) _Atomic uint32_t count;
    _Alignas(64) _Atomic uint32_t gen;
    _Alignas(64) _Atomic uint32_t sleepers;
    _Atomic uint32_t broken; /* a rank died: every barrier fails from now on */
    struct hostbar_slot slot[];
};

struct csni_hostbar {
    struct hostbar_seg *seg;
    size_t len;
    uint32_t n;
    int me;
    uint64_t arrivals; /* barriers this rank arrived at through the segment */
};

static size_t hostbar_len(uint32_t n)
{
    return sizeof(struct hostbar_seg) + (size_t)n * sizeof(struct hostbar_slot);
}

static int hostbar_path(const struct csni_proc *p, char *path, size_t cap)
{
    int w = snprintf(path, cap, "%s/csn.%s." CSNI_HOSTBAR_NAME, p->tun.shm_dir, p->boot.jobid);
    return w > 0 && (size_t)w < cap ? 0 : -1;
}

/* Field 22 of /proc/<pid>/stat (the start time) and field 3 (the state), or -1 when there is
 * no such process. The command name (field 2) may hold spaces and parentheses: the fields
 * after it start after the last ')'. */
static int hostbar_stat(int pid, uint64_t *start, char *state)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t got = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (got <= 0)
        return -1;
    buf[got] = '\0';
    char *s = strrchr(buf, ')');
    if (!s || s[1] != ' ' || s[2] == '\0')
        return -1;
    *state = s[2];
    s += 2;
    for (int field = 3; field < 22; field++) {
        s = strchr(s, ' ');
        if (!s)
            return -1;
        s++;
    }
    *start = strtoull(s, NULL, 10);
    return 0;
}

static uint64_t hostbar_pidns(void)
{
    struct stat st;
    return stat("/proc/self/ns/pid", &st) == 0 ? (uint64_t)st.st_ino : 0;
}

/* Fills in our slot; -1 when our own /proc entry cannot be read. */
static int hostbar_fill_slot(struct csni_hostbar *h, const struct csni_proc *p)
{
    struct hostbar_slot *s = &h->seg->slot[h->me];
    char state;
    if (hostbar_stat(p->pid, &s->start, &state) != 0)
        return -1;
    s->pid = p->pid; /* arrived: 0, as posix_fallocate left it */
    return 0;
}

static struct csni_hostbar *hostbar_new(const struct csni_proc *p, int fd)
{
    struct csni_hostbar *h = calloc(1, sizeof *h);
    if (!h)
        return NULL;
    h->n = (uint32_t)p->boot.size;
    h->me = p->boot.rank;
    h->len = hostbar_len(h->n);
    h->seg = mmap(NULL, h->len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (h->seg == MAP_FAILED) {
        free(h);
        return NULL;
    }
    return h;
}

struct csni_hostbar *csni_hostbar_create(const struct csni_proc *p)
{
    char path[PATH_MAX];
    struct csni_hostbar *h = NULL;
    if (hostbar_path(p, path, sizeof path) != 0)
        return NULL;
    /* O_EXCL: a file that is there already (another user's squat, a job's leftover) is not ours
     * to use; the job keeps the message barrier. */
    int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0)
        return NULL;
    /* Allocated now: a full shared-memory directory is a refusal here, never a SIGBUS later. */
    if (posix_fallocate(fd, 0, (off_t)hostbar_len((uint32_t)p->boot.size)) != 0 ||
        !(h = hostbar_new(p, fd)))
        goto fail;
    struct hostbar_seg *seg = h->seg;
    seg->size = h->n;
    seg->pidns = hostbar_pidns();
    memcpy(seg->jobkey, p->boot.jobkey, sizeof seg->jobkey);
    if (seg->pidns == 0 || hostbar_fill_slot(h, p) != 0)
        goto fail;
    atomic_store_explicit(&seg->magic, HOSTBAR_MAGIC, memory_order_release);
    close(fd);
    return h;
fail:
    csni_hostbar_close(h);
    close(fd);
    unlink(path);
    return NULL;
}

struct csni_hostbar *csni_hostbar_open(const struct csni_proc *p)
{
    char path[PATH_MAX];
    struct stat st;
    struct csni_hostbar *h = NULL;
    if (hostbar_path(p, path, sizeof path) != 0)
        return NULL;
    int fd = open(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    /* Ours and of the size this job's segment has, before it is mapped (a shorter file
     * would fault past its end). */
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
        (uint64_t)st.st_size != hostbar_len((uint32_t)p->boot.size) || !(h = hostbar_new(p, fd)))
        goto fail;
    struct hostbar_seg *seg = h->seg;
    if (atomic_load_explicit(&seg->magic, memory_order_acquire) != HOSTBAR_MAGIC ||
        seg->size != h->n || seg->pidns != hostbar_pidns() ||
        memcmp(seg->jobkey, p->boot.jobkey, sizeof seg->jobkey) != 0 ||
        hostbar_fill_slot(h, p) != 0)
        goto fail;
    close(fd);
    return h;
fail:
    csni_hostbar_close(h);
    close(fd);
    return NULL;
}

void csni_hostbar_unlink(const struct csni_proc *p)
{
    char path[PATH_MAX];
    if (hostbar_path(p, path, sizeof path) == 0)
        (void)unlink(path); /* ENOENT: rank 0 could not make it */
}

void csni_hostbar_close(struct csni_hostbar *h)
{
    if (!h)
        return;
    (void)munmap(h->seg, h->len);
    free(h);
}

/* Whether a rank that has not arrived at barrier `want` is dead (see the top of the file). */
static bool hostbar_someone_dead(const struct csni_hostbar *h, uint64_t want)
{
    for (uint32_t r = 0; r < h->n; r++) {
        const struct hostbar_slot *s = &h->seg->slot[r];
        if (atomic_load_explicit(&s->arrived, memory_order_relaxed) >= want)
            continue;
        uint64_t start;
        char state;
        if (hostbar_stat(s->pid, &start, &state) != 0 || state == 'Z' || state == 'X' ||
            start != s->start)
            return true;
    }
    return false;
}

csn_status csni_hostbar_wait(struct csni_proc *p, struct csni_hostbar *h)
{
    struct hostbar_seg *seg = h->seg;
    if (atomic_load(&seg->broken))
        return CSN_PEER_LOST;
    uint64_t want = ++h->arrivals;
    uint32_t g = atomic_load(&seg->gen);
    atomic_store_explicit(&seg->slot[h->me].arrived, want, memory_order_relaxed);
    bool net = p->epfd >= 0;
    csn_status rv = CSN_OK;
    if (atomic_fetch_add(&seg->count, 1) == h->n - 1) {
        atomic_store(&seg->count, 0);
        atomic_store(&seg->gen, g + 1);
        if (atomic_load(&seg->sleepers) != 0)
            csni_futex_wake_shared(&seg->gen);
        return CSN_OK;
    }
    /* Where ranks outnumber CPUs the ones we wait for may need our CPU: yield at every turn (a
     * counter barrier of 4 processes on 2 CPUs without the library: 1.2 us per barrier, the
     * same with a yield at every fourth turn; a pure spin holds the CPU for a time slice). */
    bool polite = p->tun.oversubscribed;
    uint64_t spin_end = 0, look = 0;
    /* Counted as a spinner while it spins, as any wait of the library: a progress thread
     * that took the thread for one that computes would poll beside it and take the next
     * large messages' pulls, two copies on one rank's CPU (both ways at 1-4 MiB 0.6x with
     * that, BENCHMARKS.md, issue 19). */
    bool counted = true;
    csni_wait_spin_begin(p);
    for (unsigned turn = 0; atomic_load(&seg->gen) == g; turn++) {
        if ((turn & 15) == 15 && atomic_load(&seg->broken)) {
            rv = CSN_PEER_LOST;
            break;
        }
        /* A wait that lasts moves the user's transfers, as any wait of the library does; not
         * at once: a message a peer sent after it left the barrier, read now, would find its
         * receive not yet posted and be copied twice more, into the unexpected store and out
         * (nettest's 16-64 KiB cells: 2.7 % of the time in those copies, read by the poll this
         * barrier made at every 16th turn and at its end). */
        if (net && (turn & 255) == 255)
            csni_poll(p);
        if (polite)
            sched_yield();
#if defined(__x86_64__) || defined(__i386__)
        else
            __builtin_ia32_pause();
#endif
        if (!polite && (turn & 63) != 63)
            continue;
        uint64_t now = csni_now_ns();
        if (spin_end == 0) {
            spin_end = now + (polite ? p->tun.polite_spin_ns : p->tun.spin_ns);
            look = now + HOSTBAR_LOOK_NS;
        }
        if (now >= look) {
            look = now + HOSTBAR_LOOK_NS;
            if (hostbar_someone_dead(h, want)) {
                atomic_store(&seg->broken, 1);
                csni_futex_wake_shared(&seg->gen);
                rv = CSN_PEER_LOST;
                break;
            }
        }
        if (now < spin_end)
            continue;
        if (counted) { /* asleep, it moves nothing: the progress thread may */
            csni_wait_spin_end(p, true);
            counted = false;
        }
        atomic_fetch_add(&seg->sleepers, 1);
        if (atomic_load(&seg->gen) == g) {
            uint64_t nap = look - now < p->tun.nap_ns ? look - now : p->tun.nap_ns;
            (void)csni_futex_wait_shared(&seg->gen, g, nap); /* a hint */
        }
        atomic_fetch_sub(&seg->sleepers, 1);
    }
    csni_wait_spin_end(p, counted);
    return rv;
}
