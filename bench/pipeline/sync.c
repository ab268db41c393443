/* sync.c: futex waits on the shared counters, with their ways out (abort, timeout, death). */
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "pipeline.h"

/* How long one futex sleep lasts before the ways out are checked again. */
#define PL_SLICE_NS (50 * 1000 * 1000L)
/* sched_yield turns a waiter takes before it sleeps on the futex. */
#ifndef PL_YIELDS
#define PL_YIELDS 4
#endif

volatile sig_atomic_t pl_got_signal;
static struct pl_shared *pl_sig_sh;
static int pl_sig_nphase;

double pl_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

unsigned char *pl_buf(const struct pl_node *n, int phase, int k)
{
    return n->bufs + (size_t)(2 * phase + k) * n->buf_stride;
}

/* The mapping is MAP_SHARED, so the futexes must be the shared (non-private) kind. The
 * bitset kind lets a waiter say which wakes concern it (a sender: only its own block's);
 * plain FUTEX_WAKE still wakes every waiter whatever its bits (abort). */
static void pl_futex_wait(_Atomic uint32_t *w, uint32_t seen, long ns, uint32_t bits)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts); /* FUTEX_WAIT_BITSET takes an absolute time */
    ts.tv_nsec += ns;
    ts.tv_sec += ts.tv_nsec / 1000000000L;
    ts.tv_nsec %= 1000000000L;
    syscall(SYS_futex, (uint32_t *)w, FUTEX_WAIT_BITSET, seen, &ts, NULL, bits);
}

static void pl_futex_wake(_Atomic uint32_t *w)
{
    syscall(SYS_futex, (uint32_t *)w, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

void pl_add_wake(_Atomic uint32_t *w, uint32_t v)
{
    atomic_fetch_add_explicit(w, v, memory_order_release);
    pl_futex_wake(w);
}

/* The increment and the read of sleepers are sequentially consistent, as are a waiter's
 * increment of sleepers and its read of the count (pl_wait_count): either the waiter sees
 * the new count, or this sees the waiter and wakes it (FUTEX_WAIT also returns at once when
 * the count moved after the waiter read it). */
void pl_count_add(struct pl_count *cnt, uint32_t bits, uint32_t every)
{
    uint32_t now = atomic_fetch_add(&cnt->v, 1) + 1;
    if (now % every == 0 && atomic_load(&cnt->sleepers) > 0)
        syscall(SYS_futex, (uint32_t *)&cnt->v, FUTEX_WAKE_BITSET, INT_MAX, NULL, NULL, bits);
}

void pl_abort(struct pl_shared *sh, int nphase)
{
    atomic_store(&sh->abort, 1);
    pl_futex_wake(&sh->abort);
    pl_futex_wake(&sh->ready);
    pl_futex_wake(&sh->start);
    pl_futex_wake(&sh->done);
    for (int p = 0; p < nphase; p++)
        for (int k = 0; k < 2; k++) {
            pl_futex_wake(&sh->phase[p].filled[k].v);
            pl_futex_wake(&sh->phase[p].drained[k].v);
        }
}

static void pl_on_signal(int sig)
{
    pl_got_signal = sig;
    if (pl_sig_sh)
        pl_abort(pl_sig_sh, pl_sig_nphase);
}

void pl_install_signals(struct pl_shared *sh, int nphase)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    pl_sig_sh = sh;
    pl_sig_nphase = nphase;
    sa.sa_handler = pl_on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
}

static void pl_describe(int st, char *out, size_t cap)
{
    if (WIFEXITED(st))
        snprintf(out, cap, "exited with status %d", WEXITSTATUS(st));
    else if (WIFSIGNALED(st))
        snprintf(out, cap, "was killed by signal %d (%s)", WTERMSIG(st), strsignal(WTERMSIG(st)));
    else
        snprintf(out, cap, "ended with wait status %#x", st);
}

/* Where the kernel sees process pid wait ("waiting in futex_wait_queue"), for a line about
 * a straggler; "running" when it is on a CPU, "state unknown" when /proc does not say. */
static void pl_wchan(pid_t pid, char *out, size_t cap)
{
    char path[64], w[48] = "";
    snprintf(path, sizeof path, "/proc/%d/wchan", (int)pid);
    FILE *f = fopen(path, "r");
    if (f != NULL) {
        if (fgets(w, sizeof w, f) == NULL)
            w[0] = '\0';
        fclose(f);
    }
    if (w[0] == '\0')
        snprintf(out, cap, "state unknown");
    else if (strcmp(w, "0") == 0)
        snprintf(out, cap, "running");
    else
        snprintf(out, cap, "waiting in %s", w);
}

/* Accounts for one reaped child; -1 (and the node aborts) when it failed. */
static int pl_account(struct pl_ctx *c, pid_t pid, int st)
{
    for (int i = 0; i < c->nkids; i++) {
        if (c->kids[i] != pid)
            continue;
        c->kids[i] = 0;
        c->kids_left--;
        if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
            return 0;
        /* Only the first failure of a node is worth a line, the rest follow from it; but
         * a death by a signal we did not send is always the news (it may be the cause of
         * an abort that another node saw first). */
        if (!atomic_load(&c->n->sh->abort) || (WIFSIGNALED(st) && !c->killed)) {
            char how[96];
            pl_describe(st, how, sizeof how);
            fprintf(stderr, "pipeline: %s: %s (pid %d) %s\n", c->who, c->kid_name[i], (int)pid,
                    how);
        }
        pl_abort(c->n->sh, c->n->o->nphase);
        return -1;
    }
    return 0; /* not one of ours (cannot happen: we only fork our kids) */
}

int pl_reap(struct pl_ctx *c)
{
    int rc = 0;
    while (c->kids_left > 0) {
        int st;
        pid_t pid = waitpid(-1, &st, WNOHANG);
        if (pid <= 0)
            break;
        if (pl_account(c, pid, st))
            rc = -1;
    }
    return rc;
}

int pl_reap_all(struct pl_ctx *c, double grace_s)
{
    int rc = 0;
    double deadline = pl_now() + grace_s;
    int killed = 0;
    while (c->kids_left > 0) {
        int st;
        pid_t pid = waitpid(-1, &st, WNOHANG);
        if (pid > 0) {
            if (pl_account(c, pid, st))
                rc = -1;
            continue;
        }
        if (pid < 0 && errno == ECHILD)
            break;
        if (!killed && pl_now() > deadline) {
            /* Stragglers (e.g. stuck in a name lookup) are ended so that nothing outlives us,
             * each with a line saying where the kernel saw it wait: a child that ignores the
             * abort is a bug worth the evidence. */
            for (int i = 0; i < c->nkids; i++) {
                if (c->kids[i] <= 0)
                    continue;
                char where[64];
                pl_wchan(c->kids[i], where, sizeof where);
                kill(c->kids[i], SIGKILL);
                fprintf(stderr,
                        "pipeline: %s: %s (pid %d) still running %.0f s after it was due; killed "
                        "(%s)\n",
                        c->who, c->kid_name[i], (int)c->kids[i], grace_s, where);
            }
            killed = 1;
            c->killed = 1;
            rc = -1;
        }
        struct timespec ts = {0, 2 * 1000 * 1000L};
        nanosleep(&ts, NULL);
    }
    return rc;
}

/* Waits until *w >= target; `sleepers` (NULL: none) counts this waiter while it may sleep. */
static int pl_wait(struct pl_ctx *c, _Atomic uint32_t *w, _Atomic uint32_t *sleepers,
                   uint32_t target, uint32_t bits, const char *what)
{
    struct pl_shared *sh = c->n->sh;
    double t0 = 0;
    int yields = 0;
    for (;;) {
        uint32_t v = atomic_load_explicit(w, memory_order_acquire);
        if (v >= target)
            return 0;
        if (atomic_load(&sh->abort))
            return -1;
        /* A few turns of the CPU to whoever is runnable before sleeping: the buffer is
         * often handed over within them, and a hand-over seen this way costs neither side
         * a futex wake-up. */
        if (yields < PL_YIELDS) {
            yields++;
            sched_yield();
            continue;
        }
        if (c->kids_left > 0 && pl_reap(c))
            return -1;
        if (c->parent && getppid() != c->parent) {
            fprintf(stderr, "pipeline: %s: parent process died\n", c->who);
            pl_abort(sh, c->n->o->nphase);
            return -1;
        }
        double now = pl_now();
        if (t0 == 0)
            t0 = now;
        else if (!c->no_timeout && now - t0 > c->n->o->timeout_s) {
            fprintf(stderr, "pipeline: %s: timed out after %u s waiting for %s\n", c->who,
                    c->n->o->timeout_s, what);
            pl_abort(sh, c->n->o->nphase);
            return -1;
        }
        if (!sleepers) {
            pl_futex_wait(w, v, PL_SLICE_NS, bits);
            continue;
        }
        atomic_fetch_add(sleepers, 1);
        v = atomic_load(w);
        if (v < target && !atomic_load(&sh->abort))
            pl_futex_wait(w, v, PL_SLICE_NS, bits);
        atomic_fetch_sub(sleepers, 1);
    }
}

int pl_wait_ge(struct pl_ctx *c, _Atomic uint32_t *w, uint32_t target, const char *what)
{
    return pl_wait(c, w, NULL, target, FUTEX_BITSET_MATCH_ANY, what);
}

int pl_wait_count(struct pl_ctx *c, struct pl_count *cnt, uint32_t target, uint32_t bits,
                  const char *what)
{
    return pl_wait(c, &cnt->v, &cnt->sleepers, target, bits, what);
}

int pl_child_setup(pid_t parent)
{
    /* The child dies with its parent, so a killed node leaves nothing behind. */
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0)
        return -1;
    return getppid() == parent ? 0 : -1;
}
