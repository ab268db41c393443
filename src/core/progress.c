/* progress.c: the progress thread: while user threads poll in their spin phase it stays parked
 * (waking now and then to look), so it never competes with them for a message; otherwise it
 * sleeps in epoll and moves data for everyone. */
#include <pthread.h>

#include "core/futex.h"
#include "core/poll.h"
#include "core/state.h"
#include "core/progress.h"
#include "core/thread.h"

void csni_progress_kick(struct csni_proc *p)
{
    atomic_store(&p->prog.kicked, true); /* a sleeper needs the progress thread now */
    if (atomic_load(&p->prog.bg_parked)) {
        atomic_fetch_add(&p->prog.bg_word, 1);
        csni_futex_wake(&p->prog.bg_word);
    }
}

/* Whether user threads are in the library or were within the last park period (their wait
 * count moved). seen: the count at the previous look, updated. */
static bool progress_users_active(struct csni_proc *p, uint64_t *seen)
{
    uint64_t a = atomic_load_explicit(&p->prog.activity, memory_order_relaxed);
    bool moved = a != *seen;
    *seen = a;
    return atomic_load(&p->prog.spinners) > 0 || moved;
}

/* The park periods. While user threads are active, the look doubles from MIN to ACTIVE: each
 * look is a wake-up that preempts a spinning rank on a small host. While a user thread is the
 * poller it moves everyone's data and hands over when it leaves (a kick when others sleep, a
 * nudge otherwise), so the park grows to the waiters' nap (tun.nap_ns), which only bounds a
 * lost hand-over: a look every 3.2 ms per idle rank was, with 512 ranks on 2 CPUs, most of the
 * machine's time (tiny nettest: 41 s median against 10 s with the long park, BENCHMARKS.md,
 * issue 17). */
#define PROGRESS_PARK_MIN_NS 200000u
#define PROGRESS_PARK_ACTIVE_NS 3200000u

void csni_progress_nudge(struct csni_proc *p)
{
    if (atomic_load(&p->prog.deep_parked)) { /* seq_cst: pairs with progress_park's check */
        atomic_fetch_add(&p->prog.bg_word, 1);
        csni_futex_wake(&p->prog.bg_word);
    }
}

/* One park of at most ns, ended early by a kick (or, when deep, a nudge). A deep park is
 * announced before the last look at the poller role, and the leaving poller clears the role
 * before it looks at deep_parked (both seq_cst): either we see the role gone and do not park,
 * or it sees us parked and nudges; bg_word, read first, makes a nudge between our look and
 * the futex call end that call at once. */
static void progress_park(struct csni_proc *p, uint64_t ns, bool deep)
{
    uint32_t w = atomic_load(&p->prog.bg_word);
    if (deep) {
        atomic_store(&p->prog.deep_parked, true);
        if (!atomic_load(&p->prog.poller)) {
            atomic_store(&p->prog.deep_parked, false);
            return;
        }
    }
    atomic_store(&p->prog.bg_parked, true);
    if (!atomic_load(&p->prog.kicked)) /* pairs with the kicker's store, then its load */
        (void)csni_futex_wait(&p->prog.bg_word, w, ns);
    atomic_store(&p->prog.bg_parked, false);
    atomic_store(&p->prog.deep_parked, false);
}

static void *progress_main(void *arg)
{
    struct csni_proc *p = arg;
    csni_in_progress_thread = true;                     /* csni_bg_users_back */
    uint64_t seen = atomic_load(&p->prog.activity) - 1; /* counts as active at first */
    uint64_t park_ns = PROGRESS_PARK_MIN_NS;
    while (!atomic_load(&p->prog.stopping)) {
        /* Users polling in the library, or in and out of it during the last park period (a
         * communication loop): stay parked, so that nobody competes with them for a message
         * and senders need not ring. A user thread polling for everyone in its sleep does
         * our job meanwhile. A departing poller kicks us; users that did not wait at all for
         * a whole park period compute: then we move their data. The kick is taken before
         * the look at the poller role: a leaving poller clears the role before it kicks
         * (seq_cst), so a kick seen here comes with the role seen free, and we poll. */
        bool kicked = atomic_exchange(&p->prog.kicked, false);
        bool polled = atomic_load(&p->prog.poller);
        if ((!kicked && progress_users_active(p, &seen)) || polled) {
            /* The long park only where its looks cost (more ranks than CPUs) and only while
             * the poller is the one sleeper: other sleepers depend on the hand-over, which
             * keeps the short looks it had (a rare lost wake-up with the long park there,
             * threads_no_lost_wakeup under load: 2 of 104 runs, old looks 0 of 80). */
            bool deep_ok = polled && p->tun.oversubscribed && atomic_load(&p->prog.nsleepers) <= 1;
            uint64_t cap = deep_ok && p->tun.nap_ns > PROGRESS_PARK_ACTIVE_NS
                               ? p->tun.nap_ns
                               : PROGRESS_PARK_ACTIVE_NS;
            if (park_ns > cap) /* the poller left: look again soon, as after any activity */
                park_ns = PROGRESS_PARK_MIN_NS;
            progress_park(p, park_ns, park_ns > PROGRESS_PARK_ACTIVE_NS);
            park_ns = 2 * park_ns < cap ? 2 * park_ns : cap;
            continue;
        }
        park_ns = PROGRESS_PARK_MIN_NS;
        p->prog.bg_seen = seen; /* csni_bg_users_back */
        csni_poll_sleep(p, 1000000000u);
    }
    return NULL;
}

csn_status csni_progress_start(struct csni_proc *p)
{
    if (csni_thread_start(&p->prog.thread, false, 0, progress_main, p) != 0)
        return CSN_SYSTEM_ERROR;
    p->prog.running = true;
    return CSN_OK;
}

void csni_progress_stop(struct csni_proc *p)
{
    if (!p->prog.running)
        return;
    atomic_store(&p->prog.stopping, true);
    csni_kick_epoll(p);
    csni_progress_kick(p);
    CSNI_ASSERT(pthread_join(p->prog.thread, NULL) == 0);
    p->prog.running = false;
}
