/* lock.c: the out-of-line ways into a biasable lock (core/lock.h): the word, then the bias. */
#include "core/lock.h"

void csni_lock_biased_slow(csni_lock_t *l)
{
    csni_lock_wait(l, false);
    csni_bias_taken(&l->bias);
}

bool csni_trylock_biased_slow(csni_lock_t *l)
{
    if (!csni_trylock_raw(l))
        return false;
    CSNI_LC_ACQUIRE(l, l->rank, true);
    csni_bias_taken(&l->bias);
    return true;
}
