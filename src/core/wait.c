/* wait.c: waiting for completions: a short spin that drives progress, then sleep on a futex. */
#include <pthread.h>
#include <sched.h>

#include "core/complete.h"
#include "core/futex.h"
#include "core/poll.h"
#include "core/state.h"
#include "core/progress.h"
#include "core/wait.h"

/* Takes the first completed op of the kinds in flags off t's cq. t->lock held. */
static struct csni_op *wait_take(csn_transport *t, unsigned flags)
{
    for (struct csni_op *op = t->cq.head, *prev = NULL; op; prev = op, op = op->next)
        if (op->kind & flags) {
            csni_oplist_unlink(&t->cq, prev, op);
            return op;
        }
    return NULL;
}

/* csn_test: the result is copied out to res and the op given back under one lock hold. Inlined
 * by force: out of line it cost every csn_test 25 instructions (callgrind, issue 19). */
static inline __attribute__((always_inline)) bool wait_take_copy(csn_transport *t, unsigned flags,
                                                                 struct csni_op *res)
{
    csni_lock(&t->lock);
    struct csni_op *op = wait_take(t, flags);
    if (op)
        csni_complete_hand(t, op, res);
    if (!t->cq.head)
        csni_cq_note_empty(t);
    csni_unlock(&t->lock);
    return op != NULL;
}

static bool wait_ready(csn_transport *t, struct csni_op *want, unsigned flags, struct csni_op **got)
{
    if (want) {
        /* A blocking call's own op: its completion is published by the store of DONE
         * (csni_complete writes status and the received length before it). seq_cst: the
         * sleeper's half of the sleepers/state pairing (csni_complete). */
        *got = want;
        return atomic_load(&want->state) == CSNI_ST_DONE;
    }
    return wait_take_copy(t, flags, *got);
}

/* Leaves the spin phase, noting the time for the progress thread: it takes over by itself if
 * nobody comes back within its park period (computation). The count is a hint ("moved"), so
 * a plain load and store do (a lost increment among racing threads changes nothing). */
static void wait_note_activity(struct csni_proc *p)
{
    atomic_store_explicit(&p->prog.activity,
                          atomic_load_explicit(&p->prog.activity, memory_order_relaxed) + 1,
                          memory_order_relaxed);
}

void csni_wait_spin_begin(struct csni_proc *p)
{
    atomic_fetch_add(&p->prog.spinners, 1);
}

void csni_wait_spin_end(struct csni_proc *p, bool counted)
{
    wait_note_activity(p);
    if (counted)
        atomic_fetch_sub(&p->prog.spinners, 1);
}

/* A look that found its completion at once is activity too: a thread that takes completions
 * as fast as the progress thread delivers them would otherwise never seem to wait, and the
 * progress thread, taking it for one that computes, would go on polling beside it (see
 * csni_busy_begin). Every 16th look only, so that threads testing at once do not pass
 * the counter's line between their CPUs at every look; 16 looks are far shorter than the
 * shortest park (200 us). */
static inline void wait_found_at_once(void)
{
    static _Thread_local unsigned looks __attribute__((tls_model("initial-exec")));
    if ((++looks & 15) == 0)
        wait_note_activity(csni_p);
}

/* ---- threads that wait in the library ----
 * How many threads of this process have waited in the library (and not exited): with the
 * ranks on the host, the estimate of who competes for its CPUs. A thread that waits is
 * counted at its first long wait, until it exits (a key destructor). Spinners alone would
 * miss a partner thread that is busy sending while we wait, and a pure spin beside it on its
 * CPU takes that CPU from it for a whole time slice. Static, not in the process state: a
 * thread may outlive the library's state; a forked child starts at zero. */
static _Atomic int wait_threads;
static pthread_key_t wait_key;
static pthread_once_t wait_once = PTHREAD_ONCE_INIT;
static _Thread_local bool wait_counted __attribute__((tls_model("initial-exec")));

static void wait_thread_exit(void *v)
{
    (void)v;
    atomic_fetch_sub(&wait_threads, 1);
}

static void wait_key_init(void)
{
    if (pthread_key_create(&wait_key, wait_thread_exit) != 0)
        wait_key = (pthread_key_t)-1;
}

static void wait_count_thread(void)
{
    pthread_once(&wait_once, wait_key_init);
    wait_counted = true;
    if (wait_key != (pthread_key_t)-1 && pthread_setspecific(wait_key, &wait_threads) == 0)
        atomic_fetch_add(&wait_threads, 1);
}

void csni_wait_forked(void)
{
    atomic_store(&wait_threads, wait_counted ? 1 : 0);
}

/* Whether a spinner's next turn will find something: its op is done, or a completion was
 * queued since it last looked (seen: done_seq then). */
static bool wait_arrived(csn_transport *t, struct csni_op *want, uint32_t seen)
{
    return want ? atomic_load_explicit(&want->state, memory_order_acquire) == CSNI_ST_DONE
                : atomic_load_explicit(&t->done_seq, memory_order_acquire) != seen;
}

/* Whether the sleeper on t has cause to look: its op is done, or a completion was queued. */
static bool wait_woken(csn_transport *t, struct csni_op *want, uint32_t sleep_seq)
{
    return atomic_load(&t->wake_seq) != sleep_seq ||
           (want && atomic_load(&want->state) == CSNI_ST_DONE);
}

/* The sleep of a waiter (t->sleepers already counted). The first sleeper of the process
 * becomes the poller: it waits in epoll with the rings armed and moves everyone's data
 * until it has cause to look, so a message for it wakes it directly. The others sleep on
 * t's futex; a poller that leaves while they sleep hands over to the progress thread.
 * Handing over pairs the poller's release of the role before its look at nsleepers with a
 * sleeper's count before its try for the role (seq_cst): one of them sees the other. */
static void wait_sleep_polling(struct csni_proc *p, csn_transport *t, struct csni_op *want,
                               uint32_t sleep_seq, uint64_t nap)
{
    atomic_fetch_add(&p->prog.nsleepers, 1);
    if (!atomic_exchange(&p->prog.poller, true)) {
        atomic_store(&p->prog.poller_t, t);
        csni_polling = true;
        uint64_t end = csni_now_ns() + nap;
        while (!wait_woken(t, want, sleep_seq)) {
            uint64_t now = csni_now_ns();
            if (now >= end)
                break;
            csni_poll_sleep(p, end - now);
        }
        csni_polling = false;
        atomic_store(&p->prog.poller_t, NULL);
        atomic_store(&p->prog.poller, false);
        if (atomic_fetch_sub(&p->prog.nsleepers, 1) > 1)
            csni_progress_kick(p);
        else
            csni_progress_nudge(p);
        return;
    }
    if (!csni_arm_rings(p, false))
        (void)csni_futex_wait(&t->wake_seq, sleep_seq, nap);
    atomic_fetch_sub(&p->prog.nsleepers, 1);
}

/* How much longer than the usual spin a blocking transmit's wait spins: a message beyond the
 * eager size ends when the receiver's copy of it ends (a single-copy pull, at 8-20 GB/s here),
 * and a sleep taken meanwhile adds a futex wake-up and the switches to every large message
 * (1 MiB: a copy of about 100 us against the 50 us spin; measured: half round trip at 1-2 MiB
 * 0.5-0.7x with the spin as long as the copy, BENCHMARKS.md, issue 19). The copy's time is
 * taken at a floor rate of 2 GB/s (len / 2 ns), at most 10 ms: a receiver that has not posted
 * costs the sender at most that spin, as a message of that size would take to copy. */
static uint64_t wait_transfer_ns(const struct csni_proc *p, csn_transport *t,
                                 const struct csni_op *want)
{
    if (p->tun.spin_ns == 0) /* CSN_SPIN_US=0: no spin */
        return 0;
    /* A wait for any completion (csn_test) spins while the receivers copy the transmits of
     * ours they were asked to pull: sleeping, it paid the sleeper's membarrier, an interrupt
     * to the copying CPU, and a wake-up per message (a pulled 1 MiB stream one way 5.8
     * against 9.1 GB/s with the spin, BENCHMARKS.md, issue 19). */
    uint64_t ns = want ? (want->kind == CSNI_OP_TX ? want->len / 2 : 0)
                       : atomic_load_explicit(&t->pulled_tx, memory_order_relaxed) / 2;
    return ns < 10000000 ? ns : 10000000;
}

/* A receive's wait reads its messages from the rings itself (csni_poll_direct). */
static bool wait_direct(struct csni_proc *p, const struct csni_op *want, unsigned flags)
{
    return (want ? want->kind == CSNI_OP_RX : (flags & CSN_RX) != 0) &&
           atomic_load_explicit(&p->conns.nshm, memory_order_relaxed) > 0;
}

/* The spin and sleep of a wait whose first look found nothing; seen: done_seq as read
 * before that look. Not inlined: the looks that succeed at once stay short. */
static __attribute__((noinline)) csn_status wait_loop(csn_transport *t, struct csni_op *want,
                                                      unsigned flags, uint64_t timeout_us,
                                                      struct csni_op **got, uint32_t seen)
{
    struct csni_proc *p = csni_p;
    /* The clock is read lazily, at the loop's first look at it (at once for a zero timeout,
     * else after 256 turns of a pure spin, a few microseconds): the deadline and the spin's
     * end are set then, when it is known whether the spin is polite (longer). A timed wait
     * thus lasts those turns longer than asked; most waits end before them and never read
     * the clock (about 30 ns here, a system call where the clock source is not the TSC). */
    bool forever = timeout_us == CSN_FOREVER || timeout_us > UINT64_MAX / 2000;
    uint64_t now, deadline = 0, spin_end = 0;
    bool net = p->epfd >= 0;
    /* Every waiter spins first; beyond the host's CPUs it spins politely (below), yielding at
     * each turn: a thread whose messages are delivered meanwhile by whoever polls continues
     * at its next turn, where a futex sleep would cost the deliverer a wake-up system call
     * and the sleeper two context switches (many threads sharing one process). */
    bool spinning = net;
    /* In p->prog.spinners: only once a wait lasts (short ones need no atomic). */
    bool counted = false;
    bool direct = wait_direct(p, want, flags);
    unsigned moved = csni_moved;
    for (unsigned turn = 0;; turn++) {
        /* A blocking call looks at its op; csn_test at the completion queue, under the lock
         * but only when done_seq, which moves at every queued completion, moved. */
        if (want) {
            if (atomic_load_explicit(&want->state, memory_order_acquire) == CSNI_ST_DONE) {
                *got = want;
                break;
            }
        } else {
            uint32_t seq = atomic_load_explicit(&t->done_seq, memory_order_acquire);
            if (seq != seen) {
                seen = seq;
                if (wait_ready(t, want, flags, got))
                    break;
            }
        }
        if (spinning && !counted && turn == 63) {
            csni_wait_spin_begin(p);
            counted = true;
            if (!wait_counted)
                wait_count_thread();
        }
        /* All rings empty: the general poll (sockets, deaths, new connections) only now and
         * then; its own counter makes every 1024th of its calls an epoll look. */
        int d = direct ? csni_poll_direct(p, t, want, want ? NULL : *got) : -1;
        if (d == 2)
            break; /* csn_test's result written by the poll */
        if (d == 1)
            continue; /* it completed our op, or queued a receive's completion: the look above
                       * takes it at once, without this turn's bookkeeping (a blocking receive's
                       * turnaround, about 30 instructions) */
        if (net && (d < 0 || (d == 0 && (turn & 15) == 15)))
            csni_poll(p);
        /* Threads of all the ranks on our CPUs that wait in the library (ours times the
         * ranks, an estimate) beyond those CPUs: spin politely, yielding the CPU at every turn to
         * whoever has work, and longer (a yield costs the others little, a sleep costs a
         * wake-up). */
        /* The progress thread copying a message (a pull it took while we were away): a pure
         * spin beside it on its CPU took half that CPU from the copy, and a sleep has the
         * poller's look at the connection wait for its reader lock, in naps that interrupt
         * the copy as often: we yield at every turn until the copy ends (both ways at 64 MiB,
         * the pulls the progress thread made took 22-25 ms against 13, BENCHMARKS.md). */
        bool bg = atomic_load_explicit(&p->prog.bg_copying, memory_order_relaxed) > 0;
        bool polite = bg || p->tun.oversubscribed ||
                      p->tun.cpu_share * atomic_load_explicit(&wait_threads, memory_order_relaxed) >
                          (uint32_t)p->tun.ncpu;
        /* A polite spin yields at every turn, but where ranks outnumber CPUs at every fourth
         * (below). The clock is read at those turns, and every 256th turn of a pure spin (a
         * few microseconds). */
        bool yield_turn = polite && (bg || !p->tun.oversubscribed || (turn & 3) == 3);
        if (timeout_us != 0 && spinning && (polite ? !yield_turn : (turn & 255) != 255))
            continue;
        now = csni_now_ns();
        if (spin_end == 0) {
            spin_end = now + (polite ? p->tun.polite_spin_ns
                                     : p->tun.spin_ns + wait_transfer_ns(p, t, want));
            deadline = forever ? UINT64_MAX : now + timeout_us * 1000;
        }
        if (now >= deadline) {
            if (spinning)
                csni_wait_spin_end(p, counted);
            return CSN_TIMEOUT;
        }
        /* Our own polls moved data since the spin's end was set: a transfer is under way (a
         * large message streams through the ring in chunks, each a wake-up if a side slept
         * between them): the spin goes on, as it does while the progress thread copies. A
         * wait for data that does not come still ends. */
        if (spinning && now >= spin_end && (csni_moved != moved || bg)) {
            moved = csni_moved;
            spin_end = now + (polite ? p->tun.polite_spin_ns : p->tun.spin_ns);
        }
        if (spinning && now < spin_end) {
            /* Yield only after a turn that brought nothing for us: a poll that delivered our
             * completion would otherwise hand the CPU away with the result in hand (a
             * context switch per completion among oversubscribed ranks). Where ranks outnumber
             * CPUs, at every fourth turn only: most yields found no other thread to run, each
             * a system call (nettest, 4 ranks on 2 CPUs: 500937 yields and 110335 context
             * switches, Open MPI 195994 and 197488; its 1-16 KiB cells 1.0-1.8x with this,
             * BENCHMARKS.md). Threads of one rank beyond its CPUs still yield at every turn
             * (threadtest, 8 threads: 8 B half round trip 8-15 % longer at every fourth). */
            if (yield_turn && !wait_arrived(t, want, seen))
                sched_yield();
            continue;
        }
        if (spinning) {
            spinning = false;
            csni_wait_spin_end(p, counted);
            counted = false;
        }
        /* Sleep. The increment of sleepers comes before our look at the completion queue
         * (wait_ready), which takes t->lock as a completer does: either the look finds the
         * completion, or the completer sees the count and bumps wake_seq (csni_complete). A
         * blocking call's op: the increment before reading the op's state pairs with its
         * completer's store of the state before reading sleepers (both seq_cst). */
        atomic_fetch_add(&t->sleepers, 1);
        uint32_t sleep_seq = atomic_load(&t->wake_seq);
        if (wait_ready(t, want, flags, got)) {
            atomic_fetch_sub(&t->sleepers, 1);
            return CSN_OK;
        }
        uint64_t nap = deadline - now;
        if (nap > p->tun.nap_ns)
            nap = p->tun.nap_ns; /* look again now and then: no lost wake-up can hang us */
        if (net)
            wait_sleep_polling(p, t, want, sleep_seq, nap);
        else
            (void)csni_futex_wait(&t->wake_seq, sleep_seq, nap);
        atomic_fetch_sub(&t->sleepers, 1);
    }
    if (spinning)
        csni_wait_spin_end(p, counted);
    return CSN_OK;
}

csn_status csni_wait(csn_transport *t, struct csni_op *want, unsigned flags, uint64_t timeout_us,
                     struct csni_op **got)
{
    if (want && atomic_load_explicit(&want->state, memory_order_acquire) == CSNI_ST_DONE) {
        *got = want; /* done already (an eager transmit written at once) */
        wait_found_at_once();
        return CSN_OK;
    }
    /* done_seq moves at every queued completion: read before the first look, a later
     * completion is seen by the loop. */
    uint32_t seen = atomic_load_explicit(&t->done_seq, memory_order_acquire);
    if (!want && wait_ready(t, NULL, flags, got)) {
        wait_found_at_once();
        return CSN_OK; /* a completion is queued: no clock, no spin bookkeeping */
    }
    return wait_loop(t, want, flags, timeout_us, got, seen);
}

/* csn_test's first look, before the loop's bookkeeping: t's completion queue and, for a
 * receive, one direct look at the rings (in a stream of small messages the next one is mostly
 * there already, and a message read there is handed over: csni_poll_direct). When nothing was
 * queued since the queue was last seen empty (seen is empty_seq), the rings come first and the
 * queue only if the look queued something: no lock hold per message to find it empty. A stale
 * empty_seq costs nothing: done_seq has moved past seen, and the loop's first turn sees it. */
static bool wait_test_first(csn_transport *t, unsigned flags, struct csni_op *res, uint32_t seen)
{
    struct csni_proc *p = csni_p;
    bool direct = wait_direct(p, NULL, flags);
    bool rings_first = direct && seen == atomic_load_explicit(&t->empty_seq, memory_order_relaxed);
    if (rings_first) {
        int d = csni_poll_direct(p, t, NULL, res);
        if (d == 2 || d == 0)
            return d == 2; /* handed over; or nothing in the rings and nothing queued */
    }
    if (wait_take_copy(t, flags, res))
        return true;
    return direct && !rings_first && csni_poll_direct(p, t, NULL, res) == 2;
}

csn_status csni_test_wait(csn_transport *t, unsigned flags, uint64_t timeout_us,
                          struct csni_op *res)
{
    uint32_t seen = atomic_load_explicit(&t->done_seq, memory_order_acquire);
    if (wait_test_first(t, flags, res, seen)) {
        wait_found_at_once();
        return CSN_OK;
    }
    return wait_loop(t, NULL, flags, timeout_us, &res, seen);
}
