/* lock.h: the short internal lock of transports, peers and connections: one exchange to take,
 * one plain store to release. */
#ifndef CSNI_LOCK_H
#define CSNI_LOCK_H

#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>

/* Held only across a few non-blocking steps (list edits, a copy, a non-blocking write),
 * never across a sleep, so a waiter spins a little, then yields its CPU (the holder may be
 * preempted on an oversubscribed host). Release is a plain store: an uncontended lock and
 * unlock cost one atomic instruction, where a futex mutex's unlock needs a second one to
 * learn whether anyone sleeps. Acquire/release order what the lock protects. */
typedef struct {
    _Atomic int held;
} csni_lock_t;

#define CSNI_LOCK_INIT                                                                             \
    {                                                                                              \
        0                                                                                          \
    }

static inline bool csni_trylock(csni_lock_t *l)
{
    return atomic_load_explicit(&l->held, memory_order_relaxed) == 0 &&
           atomic_exchange_explicit(&l->held, 1, memory_order_acquire) == 0;
}

static inline void csni_lock(csni_lock_t *l)
{
    for (unsigned spin = 0; !csni_trylock(l); spin++) {
        if (spin < 64) {
#if defined(__x86_64__) || defined(__i386__)
            __builtin_ia32_pause();
#endif
        } else {
            sched_yield();
        }
    }
}

static inline void csni_unlock(csni_lock_t *l)
{
    atomic_store_explicit(&l->held, 0, memory_order_release);
}

#endif
