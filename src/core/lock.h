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
/* ---- biased ownership (core/bias.c) ----
 * A lock that one thread takes again and again (a transport's lock, a connection's writer lock,
 * in a stream of small messages) is handed to that thread: it then enters by a plain store of
 * the lock's address into its own record (in[]) and a re-check of the owner, with no locked
 * instruction. A locked instruction waits until the previous message's ring record has reached
 * the polling receiver's cache; with three or four per message the sender was about a quarter
 * slower (BENCHMARKS.md, issue 19). Any other thread takes the word (held), clears the owner,
 * runs membarrier (every running thread of the process passes a full barrier: it stands in
 * for the owner's missing fence, the pattern of userspace RCU) and waits until the owner's
 * record no longer names the lock. Either the owner's re-check sees the cleared owner, or the
 * other thread sees the owner's record naming the lock. A thread that took the word
 * CSNI_BIAS_AFTER times in a row is given the bias (again). Off where the kernel has no
 * private expedited membarrier, with CSN_LOCK_BIAS=0, and under ThreadSanitizer, which cannot
 * see the barrier. */
#define CSNI_BIAS_NEST 4 /* locks one thread may hold through its bias at once */

struct csni_bias_rec {
    const void *_Atomic in[CSNI_BIAS_NEST]; /* the locks this thread is inside by its bias */
    struct csni_bias_rec *next_free;        /* records of exited threads, for reuse */
};

/* This thread's record (NULL until it first takes a biasable lock's word). */
extern _Thread_local struct csni_bias_rec *csni_bias_self
    __attribute__((tls_model("initial-exec")));

typedef struct {
    _Atomic int held;
    int rank;      /* enum csni_lock_rank, set once at initialisation */
    bool biasable; /* set once at initialisation */
    /* The thread that enters without held (NULL: none); the thread that took held last, and
     * how many times in a row (both under held). */
    struct csni_bias_rec *_Atomic owner;
    struct csni_bias_rec *last;
    unsigned streak;
} csni_lock_t;

static inline void csni_lock_init(csni_lock_t *l, int rank)
{
    atomic_init(&l->held, 0);
    l->rank = rank;
    l->biasable = false;
    atomic_init(&l->owner, NULL);
    l->last = NULL;
    l->streak = 0;
}

/* A lock that may be handed to the one thread that keeps taking it. */
static inline void csni_lock_init_biased(csni_lock_t *l, int rank)
{
    csni_lock_init(l, rank);
    l->biasable = true;
}

/* Turns the bias on for the process if the kernel offers the barrier it needs and on is
 * true (CSN_LOCK_BIAS); returns whether it is on. Called at every start of the library. */
bool csni_bias_setup(bool on);

/* The owner's way in: true if l is now held by this thread through its bias. The owner is
 * read again after the store that names l in a free slot of our record, in that order for the
 * compiler; the processor may still order the load first, and the revoker's membarrier then
 * stands in for the missing fence. acquire on the re-check: nothing of the critical section
 * is read before it. One store in and one out: on the small-message path the stores queue
 * behind the ring record's, whose line is on its way from the receiver's cache. */
static inline bool csni_bias_enter(csni_lock_t *l)
{
    struct csni_bias_rec *r = csni_bias_self;
    if (!r || atomic_load_explicit(&l->owner, memory_order_relaxed) != r)
        return false;
    for (unsigned i = 0; i < CSNI_BIAS_NEST; i++)
        if (atomic_load_explicit(&r->in[i], memory_order_relaxed) == NULL) {
            atomic_store_explicit(&r->in[i], l, memory_order_relaxed);
            atomic_signal_fence(memory_order_seq_cst);
            if (atomic_load_explicit(&l->owner, memory_order_acquire) == r)
                return true;
            atomic_store_explicit(&r->in[i], NULL, memory_order_release);
            return false;
        }
    return false;
}

/* The owner's way out, if it holds l through its bias: the release store that clears l from
 * its record is what a revoker waits for. */
static inline bool csni_bias_leave(csni_lock_t *l)
{
    struct csni_bias_rec *r = csni_bias_self;
    if (!r)
        return false;
    for (unsigned i = 0; i < CSNI_BIAS_NEST; i++)
        if (atomic_load_explicit(&r->in[i], memory_order_relaxed) == l) {
            atomic_store_explicit(&r->in[i], NULL, memory_order_release);
            return true;
        }
    return false;
}

/* The ways in of a biasable lock other than its owner's (core/bias.c). */
void csni_lock_biased_slow(csni_lock_t *l);
bool csni_trylock_biased_slow(csni_lock_t *l);

static inline bool csni_trylock_raw(csni_lock_t *l)
{
    return atomic_load_explicit(&l->held, memory_order_relaxed) == 0 &&
           atomic_exchange_explicit(&l->held, 1, memory_order_acquire) == 0;
}

static inline bool csni_trylock(csni_lock_t *l)
{
    if (l->biasable) {
        if (csni_bias_enter(l)) {
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
    CSNI_LC_ACQUIRE(l, l->rank,
                    false); /* checked before waiting: a bad order aborts, never hangs */
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
    if (l->biasable) {
        if (csni_bias_enter(l)) {
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
    CSNI_ASSERT(!l->biasable); /* csni_unlock would not know how it was taken */
    csni_lock_wait(l, true);
}

static inline __attribute__((always_inline)) void csni_unlock(csni_lock_t *l)
{
    CSNI_LC_RELEASE(l);
    if (l->biasable && csni_bias_leave(l))
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
