/* bias.c: biased ownership of a lock word (see core/bias.h): the per-thread records, taking
 * the bias back, handing it on, and the barrier that makes it safe. */
#include <errno.h>
#include <linux/membarrier.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/assert.h"
#include "core/bias.h"

/* A thread that took a lock's word this many times in a row, nobody else between, is given
 * the bias: a lock two threads take by turns never is, and a lock whose bias was taken back
 * costs its owner this many ordinary takes before it is handed back. The barrier of a
 * take-back costs a system call with interrupts to the CPUs running our threads (a few us),
 * so one take-back per 1024 takes of another thread costs each of them a few ns. */
#define CSNI_BIAS_AFTER 1024

_Thread_local struct csni_bias_rec *csni_bias_self __attribute__((tls_model("initial-exec")));

/* On once the process registered for MEMBARRIER_CMD_PRIVATE_EXPEDITED; never off again while
 * a bias may exist (off in a forked child until it registers: it uses no lock of the
 * parent's). */
static _Atomic bool bias_on;

/* Records of exited threads: never freed (a lock's owner may still point at one), handed to
 * the next new thread, which then holds whatever bias the dead one had, safely: the dead
 * one is inside no lock. */
static pthread_mutex_t bias_free_lock = PTHREAD_MUTEX_INITIALIZER;
static struct csni_bias_rec *bias_free;
static pthread_key_t bias_key;
static pthread_once_t bias_once = PTHREAD_ONCE_INIT;
static bool bias_key_ok;

static void bias_thread_exit(void *v)
{
    struct csni_bias_rec *r = v;
    for (unsigned i = 0; i < CSNI_BIAS_NEST; i++) /* exiting inside a lock: a bug elsewhere */
        CSNI_ASSERT(atomic_load_explicit(&r->in[i], memory_order_relaxed) == NULL);
    csni_bias_self = NULL;
    CSNI_ASSERT(pthread_mutex_lock(&bias_free_lock) == 0);
    r->next_free = bias_free;
    bias_free = r;
    CSNI_ASSERT(pthread_mutex_unlock(&bias_free_lock) == 0);
}

/* A fork while another thread holds bias_free_lock would leave the child's copy locked for
 * good: the fork waits for it, and both sides let it go after. The child registers for the
 * barrier again when its library starts (csni_bias_setup): harmless where the kernel carries
 * the registration over (this one does), and a child whose kernel did not would otherwise
 * abort at its first take-back. */
static void bias_fork_prepare(void)
{
    CSNI_ASSERT(pthread_mutex_lock(&bias_free_lock) == 0);
}

static void bias_fork_parent(void)
{
    CSNI_ASSERT(pthread_mutex_unlock(&bias_free_lock) == 0);
}

static void bias_fork_child(void)
{
    atomic_store(&bias_on, false);
    CSNI_ASSERT(pthread_mutex_unlock(&bias_free_lock) == 0);
}

static void bias_key_init(void)
{
    bias_key_ok = pthread_key_create(&bias_key, bias_thread_exit) == 0 &&
                  pthread_atfork(bias_fork_prepare, bias_fork_parent, bias_fork_child) == 0;
}

/* This thread's record, made on first need; NULL when there is no memory (no bias then). */
static struct csni_bias_rec *bias_self(void)
{
    struct csni_bias_rec *r = csni_bias_self;
    if (r)
        return r;
    pthread_once(&bias_once, bias_key_init);
    if (!bias_key_ok)
        return NULL;
    CSNI_ASSERT(pthread_mutex_lock(&bias_free_lock) == 0);
    if ((r = bias_free) != NULL)
        bias_free = r->next_free;
    CSNI_ASSERT(pthread_mutex_unlock(&bias_free_lock) == 0);
    if (!r && !(r = calloc(1, sizeof *r)))
        return NULL;
    r->next_free = NULL;
    if (pthread_setspecific(bias_key, r) != 0) {
        bias_thread_exit(r);
        return NULL;
    }
    return csni_bias_self = r;
}

bool csni_bias_setup(bool on)
{
#if defined(__SANITIZE_THREAD__)
    on = false;
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
    on = false;
#endif
#endif
    pthread_once(&bias_once, bias_key_init); /* the fork handlers first */
    if (!on || !bias_key_ok || atomic_load(&bias_on))
        return atomic_load(&bias_on);
    long q = syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
    if (q >= 0 && (q & MEMBARRIER_CMD_PRIVATE_EXPEDITED) &&
        syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0)
        atomic_store(&bias_on, true);
    return atomic_load(&bias_on);
}

/* Every running thread of the process passes a full barrier (threads not running pass one
 * when they are switched in). Registered before any bias was given: cannot fail then. */
static void bias_barrier(void)
{
    long rc;
    while ((rc = syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0)) != 0 &&
           errno == EINTR)
        ;
    CSNI_ASSERT(rc == 0);
}

/* Waits until o names b in none of its slots (it left, or never came in). */
static void bias_wait_out(const struct csni_bias_rec *o, const struct csni_bias *b)
{
    for (unsigned i = 0; i < CSNI_BIAS_NEST; i++)
        for (unsigned spin = 0; atomic_load_explicit(&o->in[i], memory_order_acquire) == b;
             spin++) {
            if (spin < 64) {
#if defined(__x86_64__) || defined(__i386__)
                __builtin_ia32_pause();
#endif
            } else {
                sched_yield(); /* the owner may have been switched out inside */
            }
        }
}

void csni_bias_taken(struct csni_bias *b)
{
    struct csni_bias_rec *o = atomic_load_explicit(&b->owner, memory_order_relaxed);
    struct csni_bias_rec *me = csni_bias_self;
    if (o && o != me) {
        /* Take it back: after the barrier, the owner either sees the cleared owner at its
         * re-check or is seen here naming b; then wait for it to leave. */
        atomic_store_explicit(&b->owner, NULL, memory_order_relaxed);
        bias_barrier();
        bias_wait_out(o, b);
        o = NULL;
    }
    if (o || !atomic_load_explicit(&bias_on, memory_order_relaxed) || (!me && !(me = bias_self())))
        return;
    if (b->last != me) {
        b->last = me;
        b->streak = 1;
    } else if (++b->streak >= CSNI_BIAS_AFTER) {
        atomic_store_explicit(&b->owner, me, memory_order_relaxed);
    }
}
