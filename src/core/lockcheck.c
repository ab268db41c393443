/* lockcheck.c: the lock-order checker of debug builds (CSN_LOCKCHECK) and the internal
 * assertion's failure path. Each thread keeps the locks it holds with their ranks; taking a
 * lock whose rank is not above all of them aborts with both named (lock.h has the order). */
#include <stdio.h>
#include <stdlib.h>

#include "core/lock.h"

void csni_assert_fail(const char *what, const char *file, int line)
{
    fprintf(stderr, "csn: internal error at %s:%d: %s\n", file, line, what);
    abort();
}

#ifdef CSN_LOCKCHECK
#define LOCKCHECK_MAX 16

static const char *lockcheck_name(int rank)
{
    static const char *const names[] = {"?",    "barrier",   "connecting", "reader", "table",
                                        "transport", "peer", "writer",     "lists"};
    return rank > 0 && rank <= CSNI_RANK_LISTS ? names[rank] : names[0];
}

static _Thread_local struct {
    int n;
    const void *lock[LOCKCHECK_MAX];
    int rank[LOCKCHECK_MAX];
} lockcheck_held;

void csni_lockcheck_acquire(const void *lock, int rank, bool trylock)
{
    CSNI_ASSERT(rank >= CSNI_RANK_BARRIER && rank <= CSNI_RANK_LISTS);
    for (int i = 0; i < lockcheck_held.n && !trylock; i++)
        if (lockcheck_held.rank[i] >= rank) {
            fprintf(stderr, "csn: lock order violated: taking a %s lock (%p) while holding a %s lock (%p)\n",
                    lockcheck_name(rank), lock, lockcheck_name(lockcheck_held.rank[i]),
                    lockcheck_held.lock[i]);
            abort();
        }
    CSNI_ASSERT(lockcheck_held.n < LOCKCHECK_MAX);
    lockcheck_held.lock[lockcheck_held.n] = lock;
    lockcheck_held.rank[lockcheck_held.n++] = rank;
}

void csni_lockcheck_release(const void *lock)
{
    for (int i = lockcheck_held.n - 1; i >= 0; i--)
        if (lockcheck_held.lock[i] == lock) {
            for (int j = i + 1; j < lockcheck_held.n; j++) {
                lockcheck_held.lock[j - 1] = lockcheck_held.lock[j];
                lockcheck_held.rank[j - 1] = lockcheck_held.rank[j];
            }
            lockcheck_held.n--;
            return;
        }
    fprintf(stderr, "csn: releasing a lock (%p) this thread does not hold\n", lock);
    abort();
}

bool csni_lockcheck_held(const void *lock)
{
    for (int i = 0; i < lockcheck_held.n; i++)
        if (lockcheck_held.lock[i] == lock)
            return true;
    return false;
}
#endif
