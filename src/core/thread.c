/* thread.c: csni_thread_start (see thread.h). */
#include "core/thread.h"

#include <stdatomic.h>
#include <stdint.h>

#include "core/futex.h"

/* Lives on the creator's stack until `running` is set; the new thread copies what it needs
 * first and reads nothing of it after the store (release: the creator's acquire load sees
 * the copy done, so its return may end the struct's life). The futex wake that follows the
 * store may then name an address the creator has left: it wakes nobody, or spuriously a
 * later wait on that spot, and every futex wait of the library looks again after waking. */
struct thread_start {
    void *(*fn)(void *);
    void *arg;
    _Atomic uint32_t running;
};

static void *thread_trampoline(void *p)
{
    struct thread_start *s = p;
    void *(*fn)(void *) = s->fn;
    void *arg = s->arg;

    atomic_store_explicit(&s->running, 1, memory_order_release);
    csni_futex_wake(&s->running);
    return fn(arg);
}

int csni_thread_start(pthread_t *th, bool detached, size_t stack, void *(*fn)(void *), void *arg)
{
    struct thread_start s = {.fn = fn, .arg = arg};
    pthread_attr_t attr;
    int rc;

    atomic_init(&s.running, 0);
    if ((rc = pthread_attr_init(&attr)) != 0)
        return rc;
    if (detached)
        rc = pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    if (rc == 0 && stack != 0)
        rc = pthread_attr_setstacksize(&attr, stack);
    if (rc == 0)
        rc = pthread_create(th, &attr, thread_trampoline, &s);
    pthread_attr_destroy(&attr);
    if (rc != 0)
        return rc;
    /* The thread's first act is to set the flag: no way out is needed (the wait ends when
     * it runs; the 100 ms slices only guard against a lost wake-up). */
    while (atomic_load_explicit(&s.running, memory_order_acquire) == 0)
        (void)csni_futex_wait(&s.running, 0, 100000000u);
    return 0;
}
