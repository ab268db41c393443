/* near.h: the choice of core/match.c's "Near" policy, apart so that its test can drive it with
 * made-up times. A blocking transmit over shared memory between CSN_SHM_EAGER_BLOCKING and
 * CSN_SHM_EAGER_NEAR goes eager (copied into the ring, done once there) or as a rendezvous
 * (pulled by the receiver, done at its answer), whichever costs less on its connection now.
 * Where the CPUs share a cache the ring wins (session 40: 8 KiB 1.36 us a half round trip
 * eager, 2.59 pulled); where they do not it may lose (session 40: 5.37 against 3.37; session
 * 44: 2.37 against 2.01, 16 KiB 3.63 against 2.47), and a VM's vCPUs move between the two.
 *
 * The sender cannot see an eager message's cost by itself: its copy into the ring is done
 * long before the receiver's copy out. Timing that copy alone (the choice before) no longer
 * told near from far on a host whose far copies ran at 7-11 bytes a nanosecond (session 44),
 * and a rendezvous timed from its call to its end left out the eager message's other copy. So
 * a transmit's cost is the time from its start to the start of the next such transmit on the
 * connection: in a ping-pong the round trip, in a stream the rate. Compared one by one,
 * alternating, these were as noisy as the difference (the peer's own choice and the program's
 * pauses fall in them), so the choice works in cycles (see below for their length): the first
 * CSNI_NEAR_EPOCH go eager, the next as many as rendezvous, and the rest the way whose median
 * time over this cycle and the one before was the lower (with one cycle's medians, 15-40 % of
 * the cycles of a loaded run chose eager where rendezvous was faster). Probing costs more than
 * its 8 slow transmits (session 45, vCPUs apart, cycles of 256: always pulled took 0.87-0.93x
 * the time of the choice at 8-16 KiB; cycles of 4096 0.96x and 0.84x the time of those of 256),
 * so a cycle that keeps the way of the one before runs twice as long as that one, up to
 * CSNI_NEAR_CYCLE_MAX, and one that turns runs CSNI_NEAR_CYCLE (always pulled then 0.99-1.07x):
 * a move of the vCPUs is seen within two cycles of at most that many transmits. The fields are
 * hints that any sender writes without a lock: senders racing on them may send one more or one
 * less of either kind, or time one interval wrongly. */
#ifndef CSNI_NEAR_H
#define CSNI_NEAR_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CSNI_NEAR_EPOCH 8
#define CSNI_NEAR_CYCLE 256u
#define CSNI_NEAR_DOUBLINGS 6u /* the longest cycle: CSNI_NEAR_CYCLE << 6, 16384 */
#define CSNI_NEAR_CYCLE_MAX (CSNI_NEAR_CYCLE << CSNI_NEAR_DOUBLINGS)

struct csni_near {
    _Atomic uint64_t last_at; /* when the last such transmit started */
    _Atomic uint32_t step;    /* the next transmit's place in its cycle */
    _Atomic uint32_t doubled; /* the cycle is CSNI_NEAR_CYCLE << doubled transmits long */
    _Atomic uint32_t cycles;  /* cycles begun: the cycle's times go to t[cycles % 2] */
    _Atomic uint32_t eager;   /* the way chosen for the rest of the cycle (1: eager) */
    /* The timed transmits of this cycle and the one before (the caller's clock units): [c][0,
     * EPOCH) eager, [c][EPOCH, 2 x EPOCH) rendezvous (a cycle not yet run: zeros, as for
     * either way). */
    _Atomic uint32_t t[2][2 * CSNI_NEAR_EPOCH];
};

/* The median (the upper of the middle two) of a way's times over the two cycles: off = 0
 * eager, CSNI_NEAR_EPOCH rendezvous. */
static inline uint32_t csni_near_median(const struct csni_near *nr, int off)
{
    uint32_t v[2 * CSNI_NEAR_EPOCH];
    int n = 0;
    for (int c = 0; c < 2; c++) {
        for (int i = off; i < off + CSNI_NEAR_EPOCH; i++) {
            uint32_t x = atomic_load_explicit(&nr->t[c][i], memory_order_relaxed);
            int j = n++;
            for (; j > 0 && v[j - 1] > x; j--)
                v[j] = v[j - 1];
            v[j] = x;
        }
    }
    return v[n / 2];
}

/* A transmit starts at now (a clock whose units are only compared with each other): whether
 * it goes eager (true) or as a rendezvous. */
static inline bool csni_near_eager(struct csni_near *nr, uint64_t now)
{
    uint32_t s = atomic_load_explicit(&nr->step, memory_order_relaxed);
    uint32_t doubled = atomic_load_explicit(&nr->doubled, memory_order_relaxed);
    uint32_t cycles = atomic_load_explicit(&nr->cycles, memory_order_relaxed), c = cycles % 2;
    if (s >= 1 && s <= 2 * CSNI_NEAR_EPOCH) {
        /* The cycle's transmit s - 1, timed. */
        uint64_t last = atomic_load_explicit(&nr->last_at, memory_order_relaxed);
        uint64_t d = now > last ? now - last : UINT32_MAX;
        atomic_store_explicit(&nr->t[c][s - 1], d > UINT32_MAX ? UINT32_MAX : (uint32_t)d,
                              memory_order_relaxed);
    }
    bool eager;
    if (s < CSNI_NEAR_EPOCH) {
        eager = true;
    } else if (s < 2 * CSNI_NEAR_EPOCH) {
        eager = false;
    } else {
        eager = atomic_load_explicit(&nr->eager, memory_order_relaxed);
        if (s == 2 * CSNI_NEAR_EPOCH) {
            bool was = eager;
            eager = csni_near_median(nr, 0) <= csni_near_median(nr, CSNI_NEAR_EPOCH);
            atomic_store_explicit(&nr->eager, eager, memory_order_relaxed);
            if (cycles == 0 || eager != was)
                doubled = 0;
            else if (doubled < CSNI_NEAR_DOUBLINGS)
                doubled++;
            atomic_store_explicit(&nr->doubled, doubled, memory_order_relaxed);
        }
    }
    if (++s >= CSNI_NEAR_CYCLE << doubled) { /* >=: a racing sender may have shortened it */
        s = 0;
        atomic_store_explicit(&nr->cycles, cycles + 1, memory_order_relaxed);
    }
    atomic_store_explicit(&nr->step, s, memory_order_relaxed);
    atomic_store_explicit(&nr->last_at, now, memory_order_relaxed);
    return eager;
}

#endif
