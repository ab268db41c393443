/* switchcost.c: what handing one CPU between two threads or processes costs, against a 64 KiB
 * memcpy on the same CPU (why pipeline's hand-overs weigh what its copies weigh). */
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "parse_size.h"

#define SWITCHCOST_COPY 65536
#define SWITCHCOST_DEADLINE_S 60.0

/* The turn word: even for the first party, odd for the second; each party adds 1 when it is
 * done with its turn. In a MAP_SHARED mapping, so futexes are the shared kind. */
struct switchcost_shared {
    _Atomic uint32_t turn;
    _Atomic uint32_t failed; /* a party gave up (deadline): the other stops too */
};

static struct switchcost_shared *switchcost_sh;
static long switchcost_n;
static int switchcost_futex;

static double switchcost_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Plays party me (0 or 1) for switchcost_n turns; 0, or -1 past the deadline or when the other
 * party failed. The futex waits are bounded so that a dead partner is noticed. */
static int switchcost_party(int me)
{
    struct switchcost_shared *sh = switchcost_sh;
    double deadline = switchcost_now() + SWITCHCOST_DEADLINE_S;
    for (long i = 0; i < switchcost_n; i++) {
        for (unsigned spins = 0;; spins++) {
            uint32_t t = atomic_load_explicit(&sh->turn, memory_order_acquire);
            if ((t & 1) == (uint32_t)me)
                break;
            if (atomic_load(&sh->failed))
                return -1;
            if ((switchcost_futex || (spins & 63) == 63) && switchcost_now() > deadline) {
                atomic_store(&sh->failed, 1);
                return -1;
            }
            if (switchcost_futex) {
                struct timespec ts = {0, 100 * 1000 * 1000L};
                syscall(SYS_futex, (uint32_t *)&sh->turn, FUTEX_WAIT, t, &ts, NULL, 0);
            } else {
                sched_yield();
            }
        }
        atomic_fetch_add_explicit(&sh->turn, 1, memory_order_release);
        if (switchcost_futex)
            syscall(SYS_futex, (uint32_t *)&sh->turn, FUTEX_WAKE, 1, NULL, NULL, 0);
    }
    return 0;
}

static void *switchcost_thread(void *arg)
{
    (void)arg;
    return (void *)(intptr_t)switchcost_party(1);
}

/* Microseconds per hand-over (two per round trip), or a negative value on failure. */
static double switchcost_run(int processes)
{
    atomic_store(&switchcost_sh->turn, 0);
    atomic_store(&switchcost_sh->failed, 0);
    double t0 = switchcost_now();
    int rc;
    if (processes) {
        pid_t parent = getpid(), pid = fork();
        if (pid < 0)
            return -1;
        if (pid == 0) {
            prctl(PR_SET_PDEATHSIG, SIGKILL);
            _exit(getppid() == parent && switchcost_party(1) == 0 ? 0 : 1);
        }
        rc = switchcost_party(0);
        int st;
        while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
            ;
        if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
            rc = -1;
    } else {
        pthread_t th;
        void *res;
        if (pthread_create(&th, NULL, switchcost_thread, NULL) != 0)
            return -1;
        rc = switchcost_party(0);
        pthread_join(th, &res);
        if (res != NULL)
            rc = -1;
    }
    return rc ? -1 : (switchcost_now() - t0) * 1e6 / (2.0 * (double)switchcost_n);
}

/* Microseconds per 64 KiB memcpy between two buffers that stay in the cache. */
static double switchcost_copy(unsigned char *a, unsigned char *b, long n)
{
    double t0 = switchcost_now();
    for (long i = 0; i < n; i++) {
        memcpy((i & 1) ? a : b, (i & 1) ? b : a, SWITCHCOST_COPY);
        __asm__ volatile("" ::: "memory");
    }
    return (switchcost_now() - t0) * 1e6 / (double)n;
}

static int switchcost_cmp(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

/* argv[i] as a count in lo..hi (the benchmarks' size syntax: 200K is 204800), or def when
 * absent; -1 when malformed or out of range. */
static long switchcost_arg(int argc, char **argv, int i, long def, long lo, long hi)
{
    size_t v = (size_t)def;
    if (i < argc && bench_parse_size(argv[i], (size_t)hi, &v) != 0)
        return -1;
    return (long)v < lo ? -1 : (long)v;
}

int main(int argc, char **argv)
{
    long n = switchcost_arg(argc, argv, 1, 200000, 1, 100000000);
    long rounds = switchcost_arg(argc, argv, 2, 5, 1, 99);
    if (argc > 3 || n < 0 || rounds < 0) {
        fprintf(stderr, "usage: switchcost [HANDOVERS (1..100000000, default 200000) [ROUNDS "
                        "(1..99, default 5)]]\n");
        return 2;
    }
    switchcost_n = n;
    /* Both parties on one CPU: the first this process may use. */
    cpu_set_t set;
    int cpu = -1;
    if (sched_getaffinity(0, sizeof set, &set) == 0)
        for (int c = 0; c < CPU_SETSIZE && cpu < 0; c++)
            if (CPU_ISSET(c, &set))
                cpu = c;
    if (cpu < 0) {
        fprintf(stderr, "switchcost: no CPU in the affinity mask\n");
        return 1;
    }
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (sched_setaffinity(0, sizeof set, &set) != 0) {
        fprintf(stderr, "switchcost: binding to CPU %d: %s\n", cpu, strerror(errno));
        return 1;
    }
    switchcost_sh = mmap(NULL, sizeof *switchcost_sh, PROT_READ | PROT_WRITE,
                         MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    unsigned char *a = aligned_alloc(4096, SWITCHCOST_COPY),
                  *b = aligned_alloc(4096, SWITCHCOST_COPY);
    if (switchcost_sh == MAP_FAILED || !a || !b) {
        fprintf(stderr, "switchcost: out of memory\n");
        return 1;
    }
    memset(a, 1, SWITCHCOST_COPY);
    memset(b, 2, SWITCHCOST_COPY);

    static const char *const names[] = {"64 KiB memcpy (in cache)", "threads, sched_yield",
                                        "processes, sched_yield", "threads, futex wake",
                                        "processes, futex wake"};
    enum { NKIND = 5 };
    double us[NKIND][99];
    /* Rounds alternate the kinds, so that a slow stretch of a shared machine hits them all. */
    for (long r = 0; r < rounds; r++)
        for (int k = 0; k < NKIND; k++) {
            if (k == 0) {
                us[k][r] = switchcost_copy(a, b, n);
                continue;
            }
            switchcost_futex = k >= 3;
            us[k][r] = switchcost_run(k == 2 || k == 4);
            if (us[k][r] < 0) {
                fprintf(stderr, "switchcost: %s: a party failed or passed %.0f s\n", names[k],
                        SWITCHCOST_DEADLINE_S);
                return 1;
            }
        }
    printf("switchcost: one CPU (%d), %ld hand-overs per run, median of %ld alternated rounds\n",
           cpu, n, rounds);
    printf("%-26s %10s %14s\n", "", "us each", "x 64K memcpy");
    double copy = 0;
    for (int k = 0; k < NKIND; k++) {
        qsort(us[k], (size_t)rounds, sizeof us[k][0], switchcost_cmp);
        double m = rounds % 2 ? us[k][rounds / 2] : (us[k][rounds / 2 - 1] + us[k][rounds / 2]) / 2;
        if (k == 0)
            copy = m;
        printf("%-26s %10.3f %14.2f\n", names[k], m, m / copy);
    }
    free(a);
    free(b);
    return 0;
}
