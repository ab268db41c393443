/* wait.c: waiting for completions: a short spin that drives progress, then sleep on a futex. */
#include <errno.h>
#include <linux/futex.h>
#include <sched.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "core/core.h"

void csni_futex_wake(_Atomic uint32_t *w)
{
    syscall(SYS_futex, (uint32_t *)w, FUTEX_WAKE_PRIVATE, 0x7fffffff, NULL, NULL, 0);
}

int csni_futex_wait(_Atomic uint32_t *w, uint32_t val, uint64_t timeout_ns)
{
    struct timespec ts = {.tv_sec = (time_t)(timeout_ns / 1000000000u),
                          .tv_nsec = (long)(timeout_ns % 1000000000u)};
    return (int)syscall(SYS_futex, (uint32_t *)w, FUTEX_WAIT_PRIVATE, val, &ts, NULL, 0);
}

/* Takes the first completed op of the kinds in flags off t's cq. t->lock held. */
static struct csni_op *wait_take(csn_transport *t, unsigned flags)
{
    struct csni_op *prev = NULL;
    for (struct csni_op *op = t->cq.head; op; prev = op, op = op->next) {
        if (!(op->kind & flags))
            continue;
        if (prev)
            prev->next = op->next;
        else
            t->cq.head = op->next;
        if (t->cq.tail == op)
            t->cq.tail = prev;
        op->next = NULL;
        return op;
    }
    return NULL;
}

static bool wait_ready(csn_transport *t, struct csni_op *want, unsigned flags, struct csni_op **got)
{
    bool ok;
    if (want) {
        /* A blocking call's own op: its completion is published by the store of DONE
         * (csni_complete writes status and the received length before it). seq_cst: the
         * sleeper's half of the sleepers/state pairing (csni_complete). */
        *got = want;
        return atomic_load(&want->state) == CSNI_ST_DONE;
    }
    csni_lock(&t->lock);
    ok = (*got = wait_take(t, flags)) != NULL;
    csni_unlock(&t->lock);
    return ok;
}

/* Leaves the spin phase. Only a thread about to sleep hands the progress thread the work at
 * once (kick); one that leaves with its completion just notes the time: the progress thread
 * takes over by itself if nobody comes back within its park period (computation). */
static void wait_unspin(struct csni_proc *p, bool sleeping)
{
    atomic_fetch_add_explicit(&p->activity, 1, memory_order_relaxed);
    if (atomic_fetch_sub(&p->spinners, 1) == 1 && sleeping)
        csni_kick_progress(p);
}

csn_status csni_wait(csn_transport *t, struct csni_op *want, unsigned flags, uint64_t timeout_us,
                     struct csni_op **got)
{
    struct csni_proc *p = csni_p;
    if (want && atomic_load_explicit(&want->state, memory_order_acquire) == CSNI_ST_DONE) {
        *got = want; /* done already (an eager transmit written at once) */
        return CSN_OK;
    }
    /* The clock is read lazily: a wait without limit needs it only to end its spin. */
    bool forever = timeout_us == CSN_FOREVER || timeout_us > UINT64_MAX / 2000;
    uint64_t now = forever ? 0 : csni_now_ns();
    uint64_t deadline = forever ? UINT64_MAX : now + timeout_us * 1000;
    uint64_t spin_end = forever ? 0 : now + p->spin_ns;
    bool net = p->epfd >= 0;
    /* Spin only while there are CPUs for it: threads beyond the CPU count that spin only
     * delay those that have the messages (many threads sharing one process). */
    bool spinning = net && atomic_fetch_add(&p->spinners, 1) < p->ncpu;
    if (net && !spinning)
        wait_unspin(p, true);
    uint32_t seen = atomic_load(&t->wake_seq) - 1; /* look under the lock at least once */
    for (unsigned turn = 0;; turn++) {
        /* A blocking call looks at its op; csn_test at the completion queue, under the lock
         * but only when wake_seq, which moves at every queued completion, moved. */
        if (want) {
            if (atomic_load_explicit(&want->state, memory_order_acquire) == CSNI_ST_DONE) {
                *got = want;
                break;
            }
        } else {
            uint32_t seq = atomic_load_explicit(&t->wake_seq, memory_order_acquire);
            if (seq != seen) {
                seen = seq;
                if (wait_ready(t, want, flags, got))
                    break;
            }
        }
        if (net)
            csni_poll(p);
        if (timeout_us != 0 && (turn & 15) != 15 && spinning && !p->oversubscribed)
            continue; /* the clock, every 16th turn of a pure spin */
        now = csni_now_ns();
        if (spin_end == 0)
            spin_end = now + p->spin_ns;
        if (now >= deadline) {
            if (spinning)
                wait_unspin(p, false);
            return CSN_TIMEOUT;
        }
        if (spinning && now < spin_end) {
            if (p->oversubscribed)
                sched_yield();
            continue;
        }
        if (spinning) {
            spinning = false;
            wait_unspin(p, true); /* from here on the progress thread moves our data */
        }
        /* Sleep. The increment of sleepers before reading wake_seq pairs with csni_wake's
         * increment of wake_seq before reading sleepers (both seq_cst). */
        atomic_fetch_add(&t->sleepers, 1);
        uint32_t sleep_seq = atomic_load(&t->wake_seq);
        if (wait_ready(t, want, flags, got)) {
            atomic_fetch_sub(&t->sleepers, 1);
            return CSN_OK;
        }
        if (net && csni_arm_rings(p, false)) {
            atomic_fetch_sub(&t->sleepers, 1);
            continue; /* a ring has data: read it instead of sleeping */
        }
        uint64_t nap = deadline - now;
        if (nap > 100000000u)
            nap = 100000000u; /* look again now and then: no lost wake-up can hang us */
        csni_futex_wait(&t->wake_seq, sleep_seq, nap);
        atomic_fetch_sub(&t->sleepers, 1);
    }
    if (spinning)
        wait_unspin(p, false);
    return CSN_OK;
}
