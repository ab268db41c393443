/* test_bias.c: biased locks alone (src/core/bias.c, core/lock.c): a thread that keeps taking a
 * biasable lock is given it; mutual exclusion holds while other threads take it back at random
 * moments (a lost take-back shows as two threads inside at once, or a lost increment); two
 * biased locks held at once and released out of order; more biased locks at once than a
 * thread's record has slots, let go in a scrambled order (its record empties); trylock from another
 * thread gets a lock whose owner is outside; an exited owner's record passes to a new thread; a
 * forked child's own lock is biased and taken back. Without the kernel's barrier (or CSN_LOCK_BIAS
 * off) the locks stay plain and the same checks run. */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../test.h"
#include "core/lock.h"

static csni_lock_t outer, inner; /* a transport's lock and a writer lock: that order */
static bool bias;                /* the barrier is there: bias is given */

/* Shared state, touched only inside outer. */
static long counter;
static _Atomic int inside;

static void critical(void)
{
    CHECK(atomic_fetch_add_explicit(&inside, 1, memory_order_relaxed) == 0);
    counter++;
    atomic_fetch_sub_explicit(&inside, 1, memory_order_relaxed);
}

static bool owned_by_me(const csni_lock_t *l)
{
    return csni_bias_self != NULL && atomic_load(&l->bias.owner) == csni_bias_self;
}

static void test_given(void)
{
    for (int i = 0; i < 2000; i++) {
        csni_lock(&outer);
        critical();
        csni_unlock(&outer);
    }
    CHECK(owned_by_me(&outer) == bias);
    /* Two at once, released out of order. */
    for (int i = 0; i < 2000; i++) {
        csni_lock(&outer);
        csni_lock(&inner);
        critical();
        csni_unlock(&outer);
        csni_unlock(&inner);
    }
    CHECK(owned_by_me(&inner) == bias);
    CHECK(atomic_load(&inner.held) == 0 && atomic_load(&outer.held) == 0);
    printf("given: %s after 2000 takes in a row (two held at once, released out of order)\n",
           bias ? "biased" : "not biased (no barrier here)");
}

/* CSNI_BIAS_NEST + 1 biased locks of rising rank, all given to this thread, taken together
 * (the last by its word: the record is full) and let go in a scrambled order, the word's lock
 * among them: every slot of the record must be empty after, and each lock free. */
static void test_stack(void)
{
    static const int ranks[CSNI_BIAS_NEST + 1] = {CSNI_RANK_TABLE, CSNI_RANK_TPORT, CSNI_RANK_PEER,
                                                  CSNI_RANK_WRITER, CSNI_RANK_LISTS};
    static const int release[CSNI_BIAS_NEST + 1] = {2, 0, 4, 1, 3};
    csni_lock_t l[CSNI_BIAS_NEST + 1];
    for (int k = 0; k <= CSNI_BIAS_NEST; k++) {
        csni_lock_init_biased(&l[k], ranks[k]);
        for (int i = 0; i < 1100; i++) {
            csni_lock(&l[k]);
            csni_unlock(&l[k]);
        }
        CHECK(owned_by_me(&l[k]) == bias);
    }
    for (int round = 0; round < 1000; round++) {
        for (int k = 0; k <= CSNI_BIAS_NEST; k++)
            csni_lock(&l[k]);
        critical();
        CHECK(!bias || atomic_load(&l[CSNI_BIAS_NEST].held) != 0);
        for (int k = 0; k <= CSNI_BIAS_NEST; k++)
            csni_unlock(&l[release[k]]);
        for (int k = 0; bias && k < CSNI_BIAS_NEST; k++)
            CHECK(atomic_load(&csni_bias_self->in[k]) == NULL);
        for (int k = 0; k <= CSNI_BIAS_NEST; k++)
            CHECK(atomic_load(&l[k].held) == 0);
    }
    printf("stack: %d locks at once (one more than the record holds), let go scrambled\n",
           CSNI_BIAS_NEST + 1);
}

#define RACE_TAKES 2000 /* by each of the two others */
static _Atomic int race_done;
static _Atomic long race_biased; /* main's takes that found itself the owner */

/* Takes outer at random moments, 0-400 us apart: long enough for the main thread to be given
 * the bias again in between (1024 takes), short enough to catch it inside most of the time
 * (its critical section is long, its time outside short), so that the take-back races the
 * owner's way in and out. Every third take is a trylock (its own way to take the bias back). */
static void *intruder(void *arg)
{
    long *mine = arg;
    unsigned seed = (unsigned)(uintptr_t)arg;
    for (; *mine < RACE_TAKES; ++*mine) {
        struct timespec nap = {0, (long)(rand_r(&seed) % 400) * 1000};
        nanosleep(&nap, NULL);
        if (*mine % 3 == 0) {
            while (!csni_trylock(&outer))
                sched_yield();
        } else {
            csni_lock(&outer);
        }
        critical();
        csni_unlock(&outer);
    }
    atomic_fetch_add(&race_done, 1);
    return NULL;
}

static void test_race(void)
{
    pthread_t th[2];
    long theirs[2] = {0, 0}, mine = 0;
    counter = 0;
    for (int i = 0; i < 2; i++)
        CHECK(pthread_create(&th[i], NULL, intruder, &theirs[i]) == 0);
    while (atomic_load(&race_done) < 2) {
        csni_lock(&outer);
        if (owned_by_me(&outer))
            race_biased++;
        critical();
        for (volatile int spin = 0; spin < 50; spin++)
            ; /* inside most of the time */
        csni_unlock(&outer);
        mine++;
    }
    for (int i = 0; i < 2; i++)
        CHECK(pthread_join(th[i], NULL) == 0);
    CHECK(counter == mine + theirs[0] + theirs[1]);
    CHECK(!bias || race_biased > mine / 4); /* the bias was given back again and again */
    printf("race: %ld takes (%ld through the bias) against %ld and %ld by two others, none "
           "lost, never two inside\n",
           mine, (long)race_biased, theirs[0], theirs[1]);
}

/* A thread takes the bias and exits; the next new thread (which gets its record) and the
 * main thread both take the lock afterwards. */
static void *take_many(void *arg)
{
    (void)arg;
    for (int i = 0; i < 3000; i++) {
        csni_lock(&inner);
        critical();
        csni_unlock(&inner);
    }
    return owned_by_me(&inner) == bias ? &outer : NULL;
}

static void test_exit(void)
{
    pthread_t th;
    void *ok;
    for (int round = 0; round < 2; round++) {
        CHECK(pthread_create(&th, NULL, take_many, NULL) == 0);
        CHECK(pthread_join(th, &ok) == 0 && ok == &outer);
    }
    csni_lock(&inner); /* the owner is gone: taken back from its record */
    critical();
    csni_unlock(&inner);
    CHECK(atomic_load(&inner.bias.owner) == NULL); /* and not given to us after one take */
    printf("exit: an owner that exited hands its lock on\n");
}

/* In a forked child (whose library starts afresh): its own lock is biased and taken back by
 * another of its threads, so the child's barrier must work (it registers again). */
static void *take_once(void *arg)
{
    csni_lock(arg);
    critical();
    csni_unlock(arg);
    return NULL;
}

static void test_fork(void)
{
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        csni_lock_t l;
        pthread_t th;
        bool on = csni_bias_setup(true);
        csni_lock_init_biased(&l, CSNI_RANK_TPORT);
        for (int i = 0; i < 2000; i++) {
            csni_lock(&l);
            critical();
            csni_unlock(&l);
        }
        if (owned_by_me(&l) != on || pthread_create(&th, NULL, take_once, &l) != 0 ||
            pthread_join(th, NULL) != 0 || atomic_load(&l.bias.owner) != NULL)
            _exit(1);
        _exit(0);
    }
    int status;
    CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0);
    printf("fork: a child's own lock biased and taken back\n");
}

int main(void)
{
    bias = csni_bias_setup(true);
    csni_lock_init_biased(&outer, CSNI_RANK_TPORT);
    csni_lock_init_biased(&inner, CSNI_RANK_WRITER);
    test_given();
    test_stack();
    test_race();
    test_exit();
    test_fork();
    return 0;
}
