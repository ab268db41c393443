/* test_near.c: the eager-or-pull choice of blocking 4-16 KiB transmits over shared memory
 * (src/core/near.h) driven with made-up copy times: eager from the start; a copy at or above
 * CSNI_NEAR_BYTES_PER_NS keeps it eager; a slower one sends exactly the next
 * CSNI_NEAR_FAR_SKIP as rendezvous, then one goes eager again to be timed; a fast time then
 * brings eager back for good. */
#include "../test.h"
#include "core/near.h"

#define LEN 8190u /* a multiple of CSNI_NEAR_BYTES_PER_NS: the threshold is exact */

int main(void)
{
    _Atomic uint32_t far_left = 0;
    uint64_t fast = LEN / CSNI_NEAR_BYTES_PER_NS;     /* exactly the threshold: near */
    uint64_t slow = LEN / CSNI_NEAR_BYTES_PER_NS + 1; /* just below it: far */
    for (int i = 0; i < 1000; i++) {
        CHECK(csni_near_go(&far_left));
        csni_near_timed(&far_left, LEN, fast);
    }
    for (int round = 0; round < 3; round++) {
        CHECK(csni_near_go(&far_left));
        csni_near_timed(&far_left, LEN, slow);
        for (int i = 0; i < CSNI_NEAR_FAR_SKIP; i++)
            CHECK(!csni_near_go(&far_left));
    }
    CHECK(csni_near_go(&far_left)); /* the probe */
    csni_near_timed(&far_left, LEN, fast);
    for (int i = 0; i < 1000; i++)
        CHECK(csni_near_go(&far_left));
    /* A 16 KiB copy at 3.5 bytes a nanosecond (far, here) and at 10 (near). */
    csni_near_timed(&far_left, 2 * LEN, (uint64_t)(2 * LEN / 3.5));
    CHECK(!csni_near_go(&far_left));
    csni_near_timed(&far_left, 2 * LEN, 2 * LEN / 10);
    CHECK(csni_near_go(&far_left));
    return 0;
}
