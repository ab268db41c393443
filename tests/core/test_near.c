/* test_near.c: the eager-or-rendezvous choice of blocking 4-16 KiB transmits over shared
 * memory (src/core/near.h) driven with made-up times: each cycle opens with an epoch eager and
 * one as rendezvous, then keeps to the way whose median time over it and the cycle before was
 * the lower; a cycle that keeps the way runs twice as long as the one before (up to
 * CSNI_NEAR_CYCLE_MAX), one that turns runs CSNI_NEAR_CYCLE; the choice follows a move of the
 * vCPUs within two cycles; a pause of the program in an epoch, or a stray slow or fast time,
 * does not turn it. */
#include "../test.h"
#include "core/near.h"

#define E CSNI_NEAR_EPOCH
#define CYCLE ((int)CSNI_NEAR_CYCLE)
#define MAX ((int)CSNI_NEAR_CYCLE_MAX)

static uint64_t now = 1000000;

/* n transmits, each followed by the next after eager_ns (if it went eager) or rndv_ns.
 * Returns how many went eager. */
static int near_run(struct csni_near *nr, int n, uint64_t eager_ns, uint64_t rndv_ns)
{
    int eager = 0;
    for (int i = 0; i < n; i++) {
        bool e = csni_near_eager(nr, now);
        now += e ? eager_ns : rndv_ns;
        eager += e;
    }
    return eager;
}

int main(void)
{
    struct csni_near nr = {0};
    /* The first cycle: E eager, E rendezvous (timed), then the cheaper: eager here. */
    CHECK(near_run(&nr, E, 4000, 5000) == E);
    CHECK(near_run(&nr, E, 4000, 5000) == 0);
    CHECK(near_run(&nr, CYCLE - 2 * E, 4000, 5000) == CYCLE - 2 * E);
    /* Far: the rendezvous costs less; the next cycle turns (its medians over the two cycles)
     * and is one of CYCLE. */
    CHECK(near_run(&nr, CYCLE, 5600, 4600) == E);
    /* The way stands: cycles of 2, 4, 8, 16 and 32 CYCLEs, then MAX (64 CYCLEs): over 64
     * CYCLEs of transmits, the probes of 6 cycles instead of 64. */
    CHECK(MAX == 64 * CYCLE);
    CHECK(near_run(&nr, 64 * CYCLE, 5600, 4600) == 6 * E);
    CHECK(near_run(&nr, 62 * CYCLE, 5600, 4600) == 0); /* the rest of that cycle of MAX */
    CHECK(near_run(&nr, MAX, 5600, 4600) == E);        /* and no longer ones */
    /* And back: the cycle after the move still weighs the one before (one near cycle is no
     * reason to turn); the next turns, within CYCLE, and the cycles grow again. */
    CHECK(near_run(&nr, MAX, 3000, 4600) == E);
    CHECK(near_run(&nr, CYCLE, 3000, 4600) == CYCLE - E);
    CHECK(near_run(&nr, 2 * CYCLE, 3000, 4600) == 2 * CYCLE - E);
    CHECK(near_run(&nr, 4 * CYCLE, 3000, 4600) == 4 * CYCLE - E);
    /* A pause of the program (1 s) in each epoch, and a stray fast rendezvous: the medians
     * stand (the cycles of 8, 16 and 32 CYCLEs go on eager). */
    for (int c = 8; c <= 32; c *= 2) {
        CHECK(near_run(&nr, E - 1, 3000, 4600) == E - 1);
        CHECK(near_run(&nr, 1, 1000000000, 4600) == 1);
        CHECK(near_run(&nr, 1, 3000, 100) == 0);
        CHECK(near_run(&nr, E - 2, 3000, 4600) == 0);
        CHECK(near_run(&nr, 1, 3000, 1000000000) == 0);
        CHECK(near_run(&nr, c * CYCLE - 2 * E, 3000, 4600) == c * CYCLE - 2 * E);
    }
    /* A clock that does not move, or the first transmit ever: no time (taken as slow). */
    struct csni_near z = {0};
    for (int i = 0; i < 2 * E; i++)
        csni_near_eager(&z, 5);
    CHECK(csni_near_eager(&z, 5) == true); /* all equal: eager */
    return 0;
}
