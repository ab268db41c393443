/* lock.h: the library's locks and their one order.
 *
 * Lock order (the one list; csni_lock_rank below encodes it). A thread holding a lock may only
 * take a lock of a higher rank:
 *   barrier (p->barrier) -> connecting (pp->connecting) -> accept (p->accept_lock)
 *   -> reader (c->rx_lock) -> transport table (p->table) -> transport (t->lock)
 *   -> peer (pp->lock) -> writer (c->tx_lock) -> process lists (p->lists)
 * Two locks of one rank are never held together (two transports, two peers, two readers):
 * completions found under one are deferred until it is released. A trylock may be taken out
 * of order (it cannot wait), and is recorded like any other.
 *
 * Checked: with CSN_LOCKCHECK (a debug build, and the sanitizer builds of CI) every
 * acquisition records its rank in a per-thread list and aborts, naming both locks, when it
 * is not above every rank the thread holds; csni_lock_assert_held() aborts when the caller
 * does not hold the lock. Without it both cost nothing. */
#ifndef CSNI_LOCK_H
#define CSNI_LOCK_H

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <time.h>

#include "core/assert.h"
#include "core/bias.h"

enum csni_lock_rank {
    CSNI_RANK_BARRIER = 1,
    CSNI_RANK_CONNECTING,
    CSNI_RANK_ACCEPT,
    CSNI_RANK_READER,
    CSNI_RANK_TABLE,
    CSNI_RANK_TPORT,
    CSNI_RANK_PEER,
    CSNI_RANK_WRITER,
    CSNI_RANK_LISTS,
};

#ifdef CSN_LOCKCHECK
void csni_lockcheck_acquire(const void *lock, int rank, bool trylock);
void csni_lockcheck_release(const void *lock);
bool csni_lockcheck_held(const void *lock);
#define CSNI_LC_ACQUIRE(l, r, try) csni_lockcheck_acquire(l, r, try)
#define CSNI_LC_RELEASE(l) csni_lockcheck_release(l)
#else
#define CSNI_LC_ACQUIRE(l, r, try) ((void)(l), (void)(r), (void)(try))
#define CSNI_LC_RELEASE(l) ((void)(l))
#endif

/* ---- the short spin lock of transports, peers and connections ----
 * Held only across a few non-blocking steps (list edits, a copy, a non-blocking write),
 * never across a sleep, so a waiter spins a little, then yields its CPU (the holder may be
 * preempted on an oversubscribed host). Release is a plain store: an uncontended lock and
 * unlock cost one atomic instruction, where a futex mutex's unlock needs a second one to
 * learn whether anyone sleeps. Acquire/release order what the lock protects. */
typedef struct {
    _Atomic int held;
    int rank;              /* enum csni_lock_rank, set once at initialisation */
    struct csni_bias bias; /* the thread that may enter without held (core/bias.h) */
} csni_lock_t;

static inline void csni_lock_init(csni_lock_t *l, int rank)
{
    atomic_init(&l->held, 0);
    l->rank = rank;
    csni_bias_init(&l->bias, false);
}

/* A lock that may be handed to the one thread that keeps taking it (core/bias.h): a
 * transport's lock and a connection's writer lock. */
static inline void csni_lock_init_biased(csni_lock_t *l, int rank)
{
    csni_lock_init(l, rank);
    csni_bias_init(&l->bias, true);
}

/* The ways in of a biasable lock other than its owner's (core/lock.c): take the word, then let
 * the bias follow (csni_bias_taken). */
void csni_lock_biased_slow(csni_lock_t *l);
bool csni_trylock_biased_slow(csni_lock_t *l);

static inline bool csni_trylock_raw(csni_lock_t *l)
{
    return atomic_load_explicit(&l->held, memory_order_relaxed) == 0 &&
           atomic_exchange_explicit(&l->held, 1, memory_order_acquire) == 0;
}

/* A biasable lock whose bias another thread holds is taken back even here: the trylock then
 * waits for that thread to leave its critical section (a few steps), so, like any wait, it
 * must respect the lock order (every trylock of a biasable lock does). */
static inline bool csni_trylock(csni_lock_t *l)
{
    if (l->bias.on) {
        if (csni_bias_enter(&l->bias)) {
            CSNI_LC_ACQUIRE(l, l->rank, true);
            return true;
        }
        return csni_trylock_biased_slow(l);
    }
    if (!csni_trylock_raw(l))
        return false;
    CSNI_LC_ACQUIRE(l, l->rank, true);
    return true;
}

/* Waits for l: a short spin, then yields; a waiter for a lock held long (naps) sleeps 20 us at
 * a time once 64 yields have not brought it. */
static inline void csni_lock_wait(csni_lock_t *l, bool naps)
{
    /* Checked before waiting: a bad order aborts, never hangs. */
    CSNI_LC_ACQUIRE(l, l->rank, false);
    for (unsigned spin = 0; !csni_trylock_raw(l); spin++) {
        if (spin < 64) {
#if defined(__x86_64__) || defined(__i386__)
            __builtin_ia32_pause();
#endif
        } else if (!naps || spin < 128) {
            sched_yield();
        } else {
            struct timespec nap = {.tv_sec = 0, .tv_nsec = 20000};
            (void)nanosleep(&nap, NULL); /* EINTR: the lock is looked at again at once */
        }
    }
}

/* Inlined by force: out of line, the call's own stores (the return address, saved
 * registers) queued behind the ring record's on the small-message path (BENCHMARKS.md,
 * issue 19). The other ways in are out of line. */
static inline __attribute__((always_inline)) void csni_lock(csni_lock_t *l)
{
    if (l->bias.on) {
        if (csni_bias_enter(&l->bias)) {
            CSNI_LC_ACQUIRE(l, l->rank, false);
            return;
        }
        csni_lock_biased_slow(l);
        return;
    }
    csni_lock_wait(l, false);
}

/* csni_lock for the one lock held long: a connection's reader lock is held across a
 * single-copy pull of a whole message (64 MiB: 20-40 ms here). After the spin and a few
 * yields (about 30 us when nothing else wants the CPU) the waiter naps: a waiter that kept
 * yielding took its CPU share from the copy it waited for (both ways at once at 64 MiB, two
 * pulls on two CPUs beside two woken progress threads: each pull about half as fast,
 * BENCHMARKS.md, issue 19). */
static inline void csni_lock_long(csni_lock_t *l)
{
    CSNI_ASSERT(!l->bias.on); /* csni_unlock would not know how it was taken */
    csni_lock_wait(l, true);
}

static inline __attribute__((always_inline)) void csni_unlock(csni_lock_t *l)
{
    CSNI_LC_RELEASE(l);
    if (l->bias.on && csni_bias_leave(&l->bias))
        return;
    atomic_store_explicit(&l->held, 0, memory_order_release);
}

/* ---- blocking locks (start-up, connecting, lists, the table): pthread's, with a rank ---- */
typedef struct {
    pthread_mutex_t m;
    int rank;
} csni_mutex_t;

static inline void csni_mutex_init(csni_mutex_t *m, int rank)
{
    CSNI_ASSERT(pthread_mutex_init(&m->m, NULL) == 0);
    m->rank = rank;
}

static inline void csni_mutex_lock(csni_mutex_t *m)
{
    CSNI_LC_ACQUIRE(m, m->rank, false);
    CSNI_ASSERT(pthread_mutex_lock(&m->m) == 0);
}

static inline bool csni_mutex_trylock(csni_mutex_t *m)
{
    if (pthread_mutex_trylock(&m->m) != 0)
        return false;
    CSNI_LC_ACQUIRE(m, m->rank, true);
    return true;
}

static inline void csni_mutex_unlock(csni_mutex_t *m)
{
    CSNI_LC_RELEASE(m);
    CSNI_ASSERT(pthread_mutex_unlock(&m->m) == 0);
}

typedef struct {
    pthread_rwlock_t rw;
    int rank;
} csni_rwlock_t;

static inline void csni_rwlock_init(csni_rwlock_t *l, int rank)
{
    CSNI_ASSERT(pthread_rwlock_init(&l->rw, NULL) == 0);
    l->rank = rank;
}

static inline void csni_rdlock(csni_rwlock_t *l)
{
    CSNI_LC_ACQUIRE(l, l->rank, false);
    CSNI_ASSERT(pthread_rwlock_rdlock(&l->rw) == 0);
}

static inline void csni_wrlock(csni_rwlock_t *l)
{
    CSNI_LC_ACQUIRE(l, l->rank, false);
    CSNI_ASSERT(pthread_rwlock_wrlock(&l->rw) == 0);
}

static inline void csni_rwunlock(csni_rwlock_t *l)
{
    CSNI_LC_RELEASE(l);
    CSNI_ASSERT(pthread_rwlock_unlock(&l->rw) == 0);
}

/* For functions that require their caller to hold a lock. */
#ifdef CSN_LOCKCHECK
#define csni_lock_assert_held(l) CSNI_ASSERT(csni_lockcheck_held(l))
#else
#define csni_lock_assert_held(l) ((void)(l))
#endif

#endif
