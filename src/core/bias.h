/* bias.h: biased ownership of a lock word (core/bias.c; core/lock.h builds its locks on it).
 * A lock that one thread takes again and again (a transport's lock, a connection's writer lock,
 * in a stream of small messages) is handed to that thread: it then enters by a plain store of
 * the lock's address into its own record (in[]) and a re-check of the owner, with no locked
 * instruction. A locked instruction waits until the previous message's ring record has reached
 * the polling receiver's cache; with three or four per message the sender was about a quarter
 * slower (BENCHMARKS.md, issue 19). Any other thread takes the word, clears the owner, runs
 * membarrier (every running thread of the process passes a full barrier: it stands in for
 * the owner's missing fence, the pattern of userspace RCU) and waits until the owner's record
 * no longer names the lock. Either the owner's re-check sees the cleared owner, or the other
 * thread sees the owner's record naming the lock. A thread that took the word 1024 times in a
 * row is given the bias (again). Off where the kernel has no private expedited membarrier,
 * with CSN_LOCK_BIAS=0, and under ThreadSanitizer, which cannot see the barrier. */
#ifndef CSNI_BIAS_H
#define CSNI_BIAS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#define CSNI_BIAS_NEST 4 /* locks one thread may hold through its bias at once */

/* One per thread that ever took a biasable lock's word. */
struct csni_bias_rec {
    const void *_Atomic in[CSNI_BIAS_NEST]; /* the locks this thread is inside by its bias */
    struct csni_bias_rec *next_free;        /* records of exited threads, for reuse */
};

/* A lock's bias: who may enter without its word; who took the word last and how many times
 * in a row (both only while holding the word). */
struct csni_bias {
    struct csni_bias_rec *_Atomic owner;
    struct csni_bias_rec *last;
    unsigned streak;
    bool on; /* the lock is biasable: set once at initialisation */
};

/* This thread's record (NULL until it first takes a biasable lock's word). */
extern _Thread_local struct csni_bias_rec *csni_bias_self
    __attribute__((tls_model("initial-exec")));

static inline void csni_bias_init(struct csni_bias *b, bool on)
{
    atomic_init(&b->owner, NULL);
    b->last = NULL;
    b->streak = 0;
    b->on = on;
}

/* Turns the bias on for the process if the kernel offers the barrier it needs and on is
 * true (CSN_LOCK_BIAS); returns whether it is on. Called at every start of the library. */
bool csni_bias_setup(bool on);
/* The word of b's lock was just taken by this thread: takes the bias back from another owner
 * (waits until it has left), and hands it to this thread after 1024 takes in a row. */
void csni_bias_taken(struct csni_bias *b);

/* The owner's way in: true if b's lock is now held by this thread through its bias. The owner
 * is read again after the store that names b in a free slot of our record, in that order for
 * the compiler; the processor may still order the load first, and the revoker's membarrier
 * then stands in for the missing fence. acquire on the re-check: nothing of the critical
 * section is read before it. One store in and one out: on the small-message path the stores
 * queue behind the ring record's, whose line is on its way from the receiver's cache. */
static inline bool csni_bias_enter(struct csni_bias *b)
{
    struct csni_bias_rec *r = csni_bias_self;
    if (!r || atomic_load_explicit(&b->owner, memory_order_relaxed) != r)
        return false;
    for (unsigned i = 0; i < CSNI_BIAS_NEST; i++)
        if (atomic_load_explicit(&r->in[i], memory_order_relaxed) == NULL) {
            atomic_store_explicit(&r->in[i], b, memory_order_relaxed);
            atomic_signal_fence(memory_order_seq_cst);
            if (atomic_load_explicit(&b->owner, memory_order_acquire) == r)
                return true;
            atomic_store_explicit(&r->in[i], NULL, memory_order_release);
            return false;
        }
    return false;
}

/* The owner's way out, if it holds b's lock through its bias: the release store that clears b
 * from its record is what a revoker waits for. */
static inline bool csni_bias_leave(struct csni_bias *b)
{
    struct csni_bias_rec *r = csni_bias_self;
    if (!r)
        return false;
    for (unsigned i = 0; i < CSNI_BIAS_NEST; i++)
        if (atomic_load_explicit(&r->in[i], memory_order_relaxed) == b) {
            atomic_store_explicit(&r->in[i], NULL, memory_order_release);
            return true;
        }
    return false;
}

#endif
