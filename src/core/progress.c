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

static void *progress_main(void *arg)
{
    struct csni_proc *p = arg;
    uint64_t seen = atomic_load(&p->prog.activity) - 1; /* counts as active at first */
    uint64_t park_ns = 200000;
    while (!atomic_load(&p->prog.stopping)) {
        /* Users polling in the library, or in and out of it during the last park period (a
         * communication loop): stay parked, so that nobody competes with them for a message
         * and senders need not ring. A user thread polling for everyone in its sleep does
         * our job meanwhile. A departing poller kicks us; users that did not wait at all for
         * a whole park period compute: then we move their data. The park period doubles
         * while users stay active (200 us to 3.2 ms): each look is a wake-up that preempts
         * a spinning rank on a small host. */
        if ((!atomic_exchange(&p->prog.kicked, false) && progress_users_active(p, &seen)) ||
            atomic_load(&p->prog.poller)) {
            uint32_t w = atomic_load(&p->prog.bg_word);
            atomic_store(&p->prog.bg_parked, true);
            if (!atomic_load(&p->prog.kicked)) /* pairs with the kicker's store, then its load */
                (void)csni_futex_wait(&p->prog.bg_word, w, park_ns);
            atomic_store(&p->prog.bg_parked, false);
            if (park_ns < 3200000)
                park_ns *= 2;
            continue;
        }
        park_ns = 200000;
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
