/* pool.h: a count that threads draw from without a lock (a peer's eager credit), and a share
 * of it one taker holds to spend without an atomic. */
#ifndef CSNI_POOL_H
#define CSNI_POOL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

/* Takes n from pool; false when there is not enough (two racing takers may both give back
 * and fail: harmless where a failed take has another way, as a rendezvous). */
static inline bool csni_pool_take(_Atomic int64_t *pool, int64_t n)
{
    if (atomic_load_explicit(pool, memory_order_relaxed) < n)
        return false;
    if (atomic_fetch_sub(pool, n) >= n)
        return true;
    atomic_fetch_add(pool, n);
    return false;
}

static inline void csni_pool_give(_Atomic int64_t *pool, int64_t n)
{
    atomic_fetch_add(pool, n);
}

/* Spends n from *share, a part of pool one taker holds (under its own lock), refilled ahead
 * (at least n) at a time: one atomic per refill instead of one per spend. false: pool has not
 * even n left. */
static inline bool csni_pool_spend(_Atomic int64_t *pool, int64_t *share, int64_t n, int64_t ahead)
{
    if (*share >= n) {
        *share -= n;
        return true;
    }
    if (ahead <= n || !csni_pool_take(pool, ahead)) {
        if (!csni_pool_take(pool, n))
            return false;
        ahead = n;
    }
    *share += ahead - n;
    return true;
}

#endif
