/* near.h: the choice of core/match.c's "Near" policy, apart so that its test can drive it with
 * made-up times. A blocking transmit over shared memory between CSN_SHM_EAGER_BLOCKING and
 * CSN_SHM_EAGER_NEAR goes eager and times its copy into the ring; one slower than
 * CSNI_NEAR_BYTES_PER_NS (the lines came from a cache far away: a far eager 8 KiB half round
 * trip of 4.9-5.3 us, two such copies, puts that near 3.5 bytes a nanosecond here, where copies
 * timed with a shared cache ran 7-14) has the next CSNI_NEAR_FAR_SKIP go as rendezvous
 * before another is tried. *far_left is a hint that any sender writes without a lock: senders
 * racing on it may send one more or one less of either kind. */
#ifndef CSNI_NEAR_H
#define CSNI_NEAR_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CSNI_NEAR_BYTES_PER_NS 6
#define CSNI_NEAR_FAR_SKIP 127

/* Whether the next such transmit goes eager (and is to be timed: csni_near_timed). */
static inline bool csni_near_go(_Atomic uint32_t *far_left)
{
    uint32_t left = atomic_load_explicit(far_left, memory_order_relaxed);
    if (left == 0)
        return true;
    atomic_store_explicit(far_left, left - 1, memory_order_relaxed);
    return false;
}

/* One that went eager took ns to write its len bytes into the ring. */
static inline void csni_near_timed(_Atomic uint32_t *far_left, size_t len, uint64_t ns)
{
    atomic_store_explicit(far_left, ns * CSNI_NEAR_BYTES_PER_NS > len ? CSNI_NEAR_FAR_SKIP : 0,
                          memory_order_relaxed);
}

#endif
