/* stress.c: threads with a transport each, random checked traffic, all call kinds (seed 002). */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "csn.h"

/* The run is a sequence of epochs separated by barriers of all threads of the job. In an
 * epoch every thread sends a planned number of messages to each of its peers and receives
 * the planned number from each; the plan (counts, sizes, payloads) is a function of the seed,
 * so both ends know it, and only the mix of calls is random. Within an epoch a thread goes
 * through four phases:
 *   A  post non-blocking receives: first some from specific peers, then some from any;
 *   B  send everything (mostly csn_tx_nb; csn_tx only for a message that a receive posted
 *      in the receiver's phase A is certain to take), polling completions now and then;
 *   C  receive the rest: blocking and non-blocking, specific and any, polls;
 *   D  wait for every outstanding operation.
 * Nothing in A and B waits for another thread's phase C, so every message is under way
 * before anyone needs it: no deadlock whatever the library's buffering. Posting follows two
 * rules that make every posted receive satisfiable (receives cannot be cancelled):
 *   - a specific receive from p is posted only when no any-source receive is outstanding
 *     and avail[p] >= 1, where avail[p] = planned[p] - reported[p] - outstanding_specific[p];
 *   - an any-source receive only when outstanding_any + 1 <= sum of avail.
 * Since receives are matched in posting order and every outstanding specific receive then
 * precedes every outstanding any-source one, a peer's messages fill that peer's specific
 * receives first; the k-th message from p lands in p's k-th receive in posting order, which
 * gives each received message its sequence number (checked at the end of the epoch). */

#define ST_MAX_PEERS 4
#define ST_MAX_PLAN 4 /* messages per ordered pair per epoch: 0..4, or a burst */
#define ST_BURST_MIN 16
#define ST_BURST_MAX 64
#define ST_MAX_ANY 4 /* outstanding non-blocking any-source receives per thread */
#define ST_MAX_OPS (2 * ST_MAX_PEERS * ST_BURST_MAX + 8)
#define ST_SLACK 64 /* extra capacity of some receive buffers */
#define ST_MIN_EPOCHS 2
#define ST_MAX_THREADS 64
#define ST_COUNT_MAGIC 0x544E554F434E5343ull /* "CSNCOUNT" */

struct st_peer {
    int gid;
    csn_netid id;
    uint64_t send_seq, recv_seq; /* messages sent to / received from it so far */
};

enum st_kind { ST_TX = 1, ST_RX = 2 };

struct st_op {
    int kind;
    int peer; /* TX: destination; RX: required source, or -1 for any */
    int from; /* RX: the peer it got the message from, once reported */
    int reported;
    int blocking;
    unsigned char *buf;
    size_t cap;      /* TX: length; RX: capacity */
    size_t received; /* written by the library at completion */
};

struct st_thread {
    int idx, gid;
    pthread_t th;
    csn_transport *t;
    int npeers;
    struct st_peer peers[ST_MAX_PEERS];
    uint64_t rng;
    /* the epoch being run */
    int epoch;
    int nin[ST_MAX_PEERS], nout[ST_MAX_PEERS], spec_out[ST_MAX_PEERS];
    int reported[ST_MAX_PEERS], out_spec[ST_MAX_PEERS], out_any, reported_total, nin_total;
    struct st_op ops[ST_MAX_OPS];
    int nops;
    /* totals */
    uint64_t msgs_in, bytes_in;
    double phase_s[6]; /* seconds spent in phases A, B, C, D, verify, barrier */
    /* for the watchdog */
    _Atomic int phase;
    _Atomic(const char *) doing;
};

static struct {
    int single, threads, rank, nproc;
    double seconds, timeout;
    uint64_t seed;
    size_t max_size;
    struct st_thread *thr;
    pthread_barrier_t bar;
    int go_on; /* written by thread 0 between two barriers */
    csn_transport *ctl;
    csn_netid ctl_peer;
    double start;
    _Atomic uint64_t progress;
    _Atomic int finished;
} st;

static double st_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void st_fail(struct st_thread *t, const char *fmt, ...)
    __attribute__((format(printf, 2, 3), noreturn));
static void st_fail(struct st_thread *t, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (t != NULL)
        fprintf(stderr, "threads-stress: rank %d thread %d (epoch %d, phase %c): %s\n", st.rank,
                t->idx, t->epoch, atomic_load(&t->phase), msg);
    else
        fprintf(stderr, "threads-stress: rank %d: %s\n", st.rank, msg);
    fflush(stderr);
    _exit(1);
}

static void st_doing(struct st_thread *t, const char *what)
{
    atomic_store_explicit(&t->doing, what, memory_order_relaxed);
}

/* ---- the plan: deterministic functions of the seed ---- */

static uint64_t st_mix(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

static uint64_t st_hash(uint64_t a, uint64_t b, uint64_t c, uint64_t d)
{
    return st_mix(st_mix(st_mix(st_mix(st.seed ^ a) ^ b) ^ c) ^ d);
}

/* One ordered pair in four sends a burst in an epoch: many small messages, which pile up
 * on the connection (the pressure of windowed streaming on the writer). */
static int st_burst(int e, int from, int to)
{
    return st_hash((uint64_t)e, (uint64_t)from, (uint64_t)to, 6) % 4 == 0;
}

/* Messages from gid `from` to gid `to` in epoch e. */
static int st_plan_n(int e, int from, int to)
{
    uint64_t r = st_hash((uint64_t)e, (uint64_t)from, (uint64_t)to, 1);
    if (st_burst(e, from, to))
        return ST_BURST_MIN + (int)(r % (ST_BURST_MAX - ST_BURST_MIN + 1));
    return (int)(r % (ST_MAX_PLAN + 1));
}

/* How many of them `to` receives with specific receives posted in phase A. */
static int st_plan_spec(int e, int from, int to)
{
    return (int)(st_hash((uint64_t)e, (uint64_t)from, (uint64_t)to, 2) %
                 (uint64_t)(st_plan_n(e, from, to) + 1));
}

/* Size of message seq from -> to, sent in epoch e: roughly log-uniform over 0..max_size,
 * both ends included; in a burst uniform over 0..8192 (a burst then fills the 256 KiB
 * shared-memory ring or a socket buffer, and the writer must queue). */
static size_t st_size(int e, int from, int to, uint64_t seq)
{
    uint64_t r = st_hash((uint64_t)from, (uint64_t)to, seq, 3);
    if (st_burst(e, from, to))
        return (size_t)(r % 8193) < st.max_size ? (size_t)(r % 8193) : st.max_size;
    unsigned k = (unsigned)(r % 22);
    if (k == 0)
        return 0;
    if (k == 21)
        return st.max_size;
    size_t s = 1 + (size_t)((r >> 8) % (1ull << k));
    return s > st.max_size ? st.max_size : s;
}

/* Payload: 64-bit words derived from (sender, receiver, sequence number) and the offset. */
static uint64_t st_word(uint64_t key, size_t w)
{
    return key ^ ((uint64_t)(w + 1) * 0x9E3779B97F4A7C15ull);
}

static void st_fill(unsigned char *b, size_t len, int from, int to, uint64_t seq)
{
    uint64_t key = st_hash((uint64_t)from, (uint64_t)to, seq, 4);
    size_t w = 0;
    for (; (w + 1) * 8 <= len; w++) {
        uint64_t v = st_word(key, w);
        memcpy(b + w * 8, &v, 8);
    }
    uint64_t v = st_word(key, w);
    memcpy(b + w * 8, &v, len - w * 8);
}

/* Offset of the first wrong byte, or (size_t)-1 when the payload is right. */
static size_t st_check(const unsigned char *b, size_t len, int from, int to, uint64_t seq)
{
    uint64_t key = st_hash((uint64_t)from, (uint64_t)to, seq, 4);
    for (size_t off = 0; off < len; off += 8) {
        uint64_t v = st_word(key, off / 8);
        size_t n = len - off < 8 ? len - off : 8;
        if (memcmp(b + off, &v, n) != 0) {
            const unsigned char *e = (const unsigned char *)&v;
            size_t k = 0;
            while (b[off + k] == e[k])
                k++;
            return off + k;
        }
    }
    return (size_t)-1;
}

static uint64_t st_rand(struct st_thread *t)
{
    t->rng ^= t->rng << 13;
    t->rng ^= t->rng >> 7;
    t->rng ^= t->rng << 17;
    return t->rng;
}

static unsigned char *st_alloc(struct st_thread *t, size_t n)
{
    unsigned char *p = malloc(n == 0 ? 1 : n); /* distinct pointers: completions name buffers */
    if (p == NULL)
        st_fail(t, "out of memory (%zu bytes)", n);
    return p;
}

static int st_peer_of(struct st_thread *t, csn_netid id)
{
    for (int p = 0; p < t->npeers; p++)
        if (t->peers[p].id == id)
            return p;
    return -1;
}

static struct st_op *st_new_op(struct st_thread *t)
{
    if (t->nops == ST_MAX_OPS)
        st_fail(t, "more than %d operations in one epoch", ST_MAX_OPS);
    struct st_op *op = &t->ops[t->nops++];
    memset(op, 0, sizeof *op);
    op->from = -1;
    return op;
}

/* ---- completions ---- */

/* A receive has been reported (by csn_test or by a blocking csn_rx): account for it. */
static void st_rx_reported(struct st_thread *t, struct st_op *op, csn_netid id)
{
    int p = st_peer_of(t, id);
    if (p < 0)
        st_fail(t, "a receive got a message from netid %#llx, which is none of my peers",
                (unsigned long long)id);
    if (op->peer >= 0 && p != op->peer)
        st_fail(t, "a receive from gid %d got a message from gid %d", t->peers[op->peer].gid,
                t->peers[p].gid);
    if (op->received > op->cap)
        st_fail(t, "a receive of capacity %zu reports %zu bytes", op->cap, op->received);
    op->from = p;
    op->reported = 1;
    if (!op->blocking) {
        if (op->peer >= 0)
            t->out_spec[op->peer]--;
        else
            t->out_any--;
    }
    if (++t->reported[p] > t->nin[p])
        st_fail(t, "more than the %d planned messages from gid %d (a duplicate?)", t->nin[p],
                t->peers[p].gid);
    t->reported_total++;
    atomic_fetch_add_explicit(&st.progress, 1, memory_order_relaxed);
}

/* One csn_test; returns 1 when it reported a completion, 0 on timeout. */
static int st_reap(struct st_thread *t, unsigned flags, uint64_t timeout_us)
{
    csn_netid id = CSN_NULL_NETID;
    void *buf = NULL;
    csn_status opst = CSN_OK;
    csn_status rv = csn_test(t->t, flags, timeout_us, &id, &buf, &opst);
    if (rv == CSN_TIMEOUT)
        return 0;
    if (rv != CSN_TX_READY && rv != CSN_RX_READY)
        st_fail(t, "csn_test: %s", csn_status_string(rv));
    int kind = rv == CSN_TX_READY ? ST_TX : ST_RX;
    if (!(flags & (kind == ST_TX ? CSN_TX : CSN_RX)))
        st_fail(t, "csn_test with flags %u reported a %s", flags,
                kind == ST_TX ? "transmit" : "receive");
    if (opst != CSN_OK)
        st_fail(t, "a %s completed with %s", kind == ST_TX ? "transmit" : "receive",
                csn_status_string(opst));
    struct st_op *op = NULL;
    for (int i = 0; i < t->nops && op == NULL; i++)
        if (t->ops[i].kind == kind && !t->ops[i].blocking && !t->ops[i].reported &&
            t->ops[i].buf == buf)
            op = &t->ops[i];
    if (op == NULL)
        st_fail(t, "csn_test reported a %s of a buffer that has none outstanding",
                kind == ST_TX ? "transmit" : "receive");
    if (kind == ST_RX) {
        st_rx_reported(t, op, id);
        return 1;
    }
    if (id != t->peers[op->peer].id)
        st_fail(t, "a transmit to gid %d completed naming netid %#llx", t->peers[op->peer].gid,
                (unsigned long long)id);
    op->reported = 1;
    free(op->buf);
    op->buf = NULL;
    atomic_fetch_add_explicit(&st.progress, 1, memory_order_relaxed);
    return 1;
}

/* Waits for one completion of the kinds in flags; a long silence is a failure that says
 * what the thread still expects from each peer. */
static void st_reap_wait(struct st_thread *t, unsigned flags, const char *what)
{
    double until = st_now() + st.timeout;
    while (!st_reap(t, flags, 200000)) {
        if (st_now() <= until)
            continue;
        char state[512];
        size_t n = 0;
        for (int p = 0; p < t->npeers && n < sizeof state; p++) {
            int tx = 0;
            for (int i = 0; i < t->nops; i++)
                tx += t->ops[i].kind == ST_TX && t->ops[i].peer == p && !t->ops[i].reported;
            n += (size_t)snprintf(state + n, sizeof state - n,
                                  "; gid %d: got %d of %d, %d one-source posted, %d sends "
                                  "pending",
                                  t->peers[p].gid, t->reported[p], t->nin[p], t->out_spec[p], tx);
        }
        st_fail(t,
                "nothing completed within %.0f s while waiting for %s (flags %u); %d "
                "any-source posted%s",
                st.timeout, what, flags, t->out_any, state);
    }
}

static unsigned st_rand_flags(struct st_thread *t)
{
    static const unsigned f[3] = {CSN_TX, CSN_RX, CSN_TX | CSN_RX};
    return f[st_rand(t) % 3];
}

/* ---- receives ---- */

static int st_avail(struct st_thread *t, int p)
{
    return t->nin[p] - t->reported[p] - t->out_spec[p];
}

static int st_avail_sum(struct st_thread *t)
{
    int s = 0;
    for (int p = 0; p < t->npeers; p++)
        s += st_avail(t, p);
    return s;
}

static int st_can_specific(struct st_thread *t, int p)
{
    return t->out_any == 0 && st_avail(t, p) >= 1;
}

static int st_can_any(struct st_thread *t)
{
    return t->out_any + 1 <= st_avail_sum(t);
}

/* Posts (or, blocking, performs) a receive from peer p (-1: any). A specific receive gets
 * the exact size of the message it will take, sometimes with slack; any-source receives
 * get room for the largest message. */
static void st_receive(struct st_thread *t, int p, int blocking)
{
    struct st_op *op = st_new_op(t);
    op->kind = ST_RX;
    op->peer = p;
    op->blocking = blocking;
    if (p >= 0) {
        struct st_peer *pe = &t->peers[p];
        uint64_t seq = pe->recv_seq + (uint64_t)t->reported[p] + (uint64_t)t->out_spec[p];
        op->cap = st_size(t->epoch, pe->gid, t->gid, seq);
        if (st_rand(t) % 3 == 0)
            op->cap += 1 + st_rand(t) % ST_SLACK;
    } else {
        op->cap = st.max_size + ST_SLACK;
    }
    op->buf = st_alloc(t, op->cap);
    csn_netid want = p >= 0 ? t->peers[p].id : CSN_NULL_NETID;
    if (blocking) {
        csn_netid from = want;
        st_doing(t, p >= 0 ? "csn_rx from one peer" : "csn_rx from any");
        csn_status rv = csn_rx(t->t, &from, op->buf, op->cap, &op->received);
        if (rv != CSN_OK)
            st_fail(t, "csn_rx (%s): %s", p >= 0 ? "one source" : "any source",
                    csn_status_string(rv));
        st_rx_reported(t, op, from);
        return;
    }
    csn_status rv;
    if (p < 0 && st_rand(t) % 2 == 0)
        rv = csn_rx_nb(t->t, op->buf, op->cap, &op->received);
    else
        rv = csn_rx_nb_from(t->t, want, op->buf, op->cap, &op->received);
    if (rv != CSN_OK)
        st_fail(t, "posting a receive: %s", csn_status_string(rv));
    if (p >= 0)
        t->out_spec[p]++;
    else
        t->out_any++;
}

/* ---- one epoch ---- */

static void st_plan(struct st_thread *t, int e)
{
    t->epoch = e;
    t->nops = 0;
    t->out_any = 0;
    t->reported_total = 0;
    t->nin_total = 0;
    for (int p = 0; p < t->npeers; p++) {
        int g = t->peers[p].gid;
        t->nin[p] = st_plan_n(e, g, t->gid);
        t->nout[p] = st_plan_n(e, t->gid, g);
        t->spec_out[p] = st_plan_spec(e, t->gid, g);
        t->reported[p] = 0;
        t->out_spec[p] = 0;
        t->nin_total += t->nin[p];
    }
}

static void st_phase_a(struct st_thread *t)
{
    atomic_store(&t->phase, 'A');
    st_doing(t, "posting receives");
    for (int p = 0; p < t->npeers; p++) {
        int n = st_plan_spec(t->epoch, t->peers[p].gid, t->gid);
        for (int k = 0; k < n; k++)
            st_receive(t, p, 0);
    }
    int room = st_avail_sum(t);
    int n = (int)(st_rand(t) % (uint64_t)((room < ST_MAX_ANY ? room : ST_MAX_ANY) + 1));
    for (int k = 0; k < n; k++)
        st_receive(t, -1, 0);
}

/* All messages are prepared first and then sent back to back, so that they pile up on the
 * connection as a streaming sender's do. */
static void st_phase_b(struct st_thread *t)
{
    struct {
        int p, k;
        unsigned char *buf;
        size_t len;
    } msg[ST_MAX_PEERS * ST_BURST_MAX];
    int left[ST_MAX_PEERS], total = 0;
    atomic_store(&t->phase, 'B');
    st_doing(t, "preparing messages");
    for (int p = 0; p < t->npeers; p++) {
        left[p] = t->nout[p];
        total += left[p];
    }
    for (int m = 0; m < total; m++) {
        int p = (int)(st_rand(t) % (uint64_t)t->npeers);
        while (left[p] == 0)
            p = (p + 1) % t->npeers;
        struct st_peer *pe = &t->peers[p];
        msg[m].p = p;
        msg[m].k = t->nout[p] - left[p]--;
        uint64_t seq = pe->send_seq + (uint64_t)msg[m].k;
        msg[m].len = st_size(t->epoch, t->gid, pe->gid, seq);
        msg[m].buf = st_alloc(t, msg[m].len);
        st_fill(msg[m].buf, msg[m].len, t->gid, pe->gid, seq);
    }
    for (int m = 0; m < total; m++) {
        int p = msg[m].p;
        struct st_peer *pe = &t->peers[p];
        /* Blocking only when the receiver's phase A posted a receive that takes it. */
        if (msg[m].k < t->spec_out[p] && st_rand(t) % 2 == 0) {
            st_doing(t, "csn_tx");
            csn_status rv = csn_tx(t->t, pe->id, msg[m].buf, msg[m].len);
            if (rv != CSN_OK)
                st_fail(t, "csn_tx of %zu bytes to gid %d: %s", msg[m].len, pe->gid,
                        csn_status_string(rv));
            free(msg[m].buf);
            atomic_fetch_add_explicit(&st.progress, 1, memory_order_relaxed);
        } else {
            struct st_op *op = st_new_op(t);
            op->kind = ST_TX;
            op->peer = p;
            op->buf = msg[m].buf;
            op->cap = msg[m].len;
            st_doing(t, "csn_tx_nb");
            csn_status rv = csn_tx_nb(t->t, pe->id, msg[m].buf, msg[m].len);
            if (rv != CSN_OK)
                st_fail(t, "csn_tx_nb of %zu bytes to gid %d: %s", msg[m].len, pe->gid,
                        csn_status_string(rv));
        }
        if (st_rand(t) % 8 == 0) {
            st_doing(t, "polling");
            st_reap(t, st_rand_flags(t), 0);
        }
    }
}

/* Random steps until every planned message is reported; a step the rules forbid falls
 * through to the next kind, and when nothing may be posted the thread waits. */
static void st_phase_c(struct st_thread *t)
{
    atomic_store(&t->phase, 'C');
    while (t->reported_total < t->nin_total) {
        int choice = (int)(st_rand(t) % 10), p = (int)(st_rand(t) % (uint64_t)t->npeers);
        int specific_ok = 0, any_ok = st_can_any(t), rx_out = t->out_any;
        for (int k = 0; k < t->npeers; k++) {
            rx_out += t->out_spec[k];
            if (!specific_ok && st_can_specific(t, (p + k) % t->npeers)) {
                p = (p + k) % t->npeers;
                specific_ok = 1;
            }
        }
        int nb_any_ok = any_ok && t->out_any < ST_MAX_ANY;
        if (choice <= 1 && specific_ok) {
            st_receive(t, p, 1);
        } else if (choice == 2 && any_ok) {
            st_receive(t, -1, 1);
        } else if (choice <= 4 && specific_ok) {
            st_receive(t, p, 0);
        } else if (choice <= 6 && nb_any_ok) {
            st_receive(t, -1, 0);
        } else if (choice <= 8 && (specific_ok || nb_any_ok)) {
            st_doing(t, "polling");
            st_reap(t, st_rand_flags(t), st_rand(t) % 2 ? 0 : 100);
        } else if (rx_out > 0) {
            /* Nothing may be posted now (or the dice said wait): a posted receive is due. */
            st_doing(t, "waiting for receives");
            st_reap_wait(t, CSN_RX | (st_rand(t) % 2 ? CSN_TX : 0), "posted receives");
        }
    }
}

static void st_phase_d(struct st_thread *t)
{
    atomic_store(&t->phase, 'D');
    st_doing(t, "waiting for transmits");
    for (;;) {
        int pending = 0;
        for (int i = 0; i < t->nops; i++)
            pending += !t->ops[i].reported && !t->ops[i].blocking;
        if (pending == 0)
            break;
        st_reap_wait(t, CSN_TX | CSN_RX, "transmits");
    }
}

/* Every receive of the epoch in posting order: the k-th from a peer carries its k-th
 * message of the epoch, which must have the planned size and payload. */
static void st_verify_epoch(struct st_thread *t)
{
    uint64_t next[ST_MAX_PEERS];
    atomic_store(&t->phase, 'V');
    for (int p = 0; p < t->npeers; p++)
        next[p] = t->peers[p].recv_seq;
    for (int i = 0; i < t->nops; i++) {
        struct st_op *op = &t->ops[i];
        if (op->kind != ST_RX)
            continue;
        struct st_peer *pe = &t->peers[op->from];
        uint64_t seq = next[op->from]++;
        size_t want = st_size(t->epoch, pe->gid, t->gid, seq);
        if (op->received != want)
            st_fail(t,
                    "message %llu from gid %d has %zu bytes, expected %zu (%s receive, "
                    "capacity %zu): lost, duplicated or reordered",
                    (unsigned long long)seq, pe->gid, op->received, want,
                    op->peer >= 0 ? "one-source" : "any-source", op->cap);
        size_t bad = st_check(op->buf, want, pe->gid, t->gid, seq);
        if (bad != (size_t)-1)
            st_fail(t, "message %llu from gid %d (%zu bytes, %s %s receive) differs at byte %zu",
                    (unsigned long long)seq, pe->gid, want,
                    op->blocking ? "blocking" : "non-blocking",
                    op->peer >= 0 ? "one-source" : "any-source", bad);
        free(op->buf);
        op->buf = NULL;
        t->msgs_in++;
        t->bytes_in += want;
    }
    for (int p = 0; p < t->npeers; p++) {
        if (next[p] - t->peers[p].recv_seq != (uint64_t)t->nin[p])
            st_fail(t, "got %llu messages from gid %d, planned %d",
                    (unsigned long long)(next[p] - t->peers[p].recv_seq), t->peers[p].gid,
                    t->nin[p]);
        t->peers[p].recv_seq = next[p];
        t->peers[p].send_seq += (uint64_t)t->nout[p];
    }
}

/* ---- synchronisation ---- */

/* Control exchange of the two threads 0 (multi-process mode) on their own transports. */
static void st_ctl_send(uint64_t v)
{
    csn_netid id;
    void *buf;
    csn_status opst;
    if (csn_tx_nb(st.ctl, st.ctl_peer, &v, sizeof v) != CSN_OK)
        st_fail(NULL, "control transmit failed");
    csn_status rv = csn_test(st.ctl, CSN_TX, (uint64_t)(st.timeout * 1e6), &id, &buf, &opst);
    if (rv != CSN_TX_READY || opst != CSN_OK)
        st_fail(NULL, "control transmit: %s / %s", csn_status_string(rv), csn_status_string(opst));
}

static uint64_t st_ctl_recv(void)
{
    uint64_t v = 0;
    size_t got = 0;
    csn_netid id;
    void *buf;
    csn_status opst;
    if (csn_rx_nb_from(st.ctl, st.ctl_peer, &v, sizeof v, &got) != CSN_OK)
        st_fail(NULL, "control receive failed");
    csn_status rv = csn_test(st.ctl, CSN_RX, (uint64_t)(st.timeout * 1e6), &id, &buf, &opst);
    if (rv != CSN_RX_READY || opst != CSN_OK || got != sizeof v)
        st_fail(NULL, "control receive: %s / %s (%zu bytes): the other process is stuck",
                csn_status_string(rv), csn_status_string(opst), got);
    return v;
}

/* Barrier of every thread of the job; returns whether to run another epoch (decided by
 * thread 0 of rank 0 from the clock). */
static int st_sync(struct st_thread *t, int epochs_done)
{
    atomic_store(&t->phase, 'S');
    st_doing(t, "barrier");
    pthread_barrier_wait(&st.bar);
    if (t->idx == 0) {
        int go_on = st_now() - st.start < st.seconds || epochs_done < ST_MIN_EPOCHS;
        if (st.nproc == 2 && st.rank == 1) {
            st_ctl_send(1);
            go_on = (int)st_ctl_recv();
        } else if (st.nproc == 2) {
            if (st_ctl_recv() != 1)
                st_fail(NULL, "bad control message");
            st_ctl_send((uint64_t)go_on);
        }
        st.go_on = go_on;
    }
    pthread_barrier_wait(&st.bar);
    return st.go_on;
}

/* The clean end: each thread tells each peer how many messages it sent it; the peer
 * compares with what it received. */
static void st_final_counts(struct st_thread *t)
{
    uint64_t out[ST_MAX_PEERS][3], in[ST_MAX_PEERS][8];
    size_t got[ST_MAX_PEERS];
    atomic_store(&t->phase, 'F');
    st_doing(t, "final count exchange");
    for (int p = 0; p < t->npeers; p++)
        if (csn_rx_nb_from(t->t, t->peers[p].id, in[p], sizeof in[p], &got[p]) != CSN_OK)
            st_fail(t, "posting the final count receive failed");
    for (int p = 0; p < t->npeers; p++) {
        out[p][0] = ST_COUNT_MAGIC;
        out[p][1] = (uint64_t)t->gid;
        out[p][2] = t->peers[p].send_seq;
        if (csn_tx_nb(t->t, t->peers[p].id, out[p], sizeof out[p]) != CSN_OK)
            st_fail(t, "sending the final count failed");
    }
    int rx = 0, tx = 0;
    while (rx < t->npeers || tx < t->npeers) {
        csn_netid id;
        void *buf;
        csn_status opst;
        csn_status rv =
            csn_test(t->t, CSN_TX | CSN_RX, (uint64_t)(st.timeout * 1e6), &id, &buf, &opst);
        if (rv == CSN_TIMEOUT)
            st_fail(t, "final count exchange: nothing completed within %.0f s", st.timeout);
        if ((rv != CSN_TX_READY && rv != CSN_RX_READY) || opst != CSN_OK)
            st_fail(t, "final count exchange: %s / %s", csn_status_string(rv),
                    csn_status_string(opst));
        if (rv == CSN_TX_READY) {
            tx++;
            continue;
        }
        rx++;
        int p = st_peer_of(t, id);
        if (p < 0 || buf != in[p])
            st_fail(t, "final count from an unexpected sender or into the wrong buffer");
        if (got[p] != sizeof out[p] || in[p][0] != ST_COUNT_MAGIC ||
            in[p][1] != (uint64_t)t->peers[p].gid)
            st_fail(t,
                    "gid %d: the final count message is not one (%zu bytes): a stray "
                    "or duplicated message",
                    t->peers[p].gid, got[p]);
        if (in[p][2] != t->peers[p].recv_seq)
            st_fail(t, "gid %d sent me %llu messages, I received %llu", t->peers[p].gid,
                    (unsigned long long)in[p][2], (unsigned long long)t->peers[p].recv_seq);
    }
}

/* ---- threads ---- */

static void st_add_peer(struct st_thread *t, int gid)
{
    if (gid == t->gid)
        return;
    for (int p = 0; p < t->npeers; p++)
        if (t->peers[p].gid == gid)
            return;
    t->peers[t->npeers++].gid = gid;
}

/* Peers, symmetric: in one process i^1 and i±2; across two processes the threads i and i±1
 * of the other process and i^1 of this one (in-process and remote paths mixed). */
static void st_peers(struct st_thread *t)
{
    int n = st.threads, i = t->idx;
    if (st.nproc == 1) {
        if ((i ^ 1) < n)
            st_add_peer(t, i ^ 1);
        st_add_peer(t, (i + 2) % n);
        st_add_peer(t, (i + n - 2) % n);
    } else {
        int other = (1 - st.rank) * n, mine = st.rank * n;
        st_add_peer(t, other + i);
        st_add_peer(t, other + (i + 1) % n);
        st_add_peer(t, other + (i + n - 1) % n);
        if ((i ^ 1) < n)
            st_add_peer(t, mine + (i ^ 1));
    }
}

static void *st_thread_main(void *arg)
{
    struct st_thread *t = arg;
    char name[64];
    csn_status rv;
    st_doing(t, "opening");
    if ((rv = csn_open(&t->t)) != CSN_OK)
        st_fail(t, "csn_open: %s", csn_status_string(rv));
    snprintf(name, sizeof name, "stress.%d", t->gid);
    if ((rv = csn_register_name(t->t, name)) != CSN_OK)
        st_fail(t, "csn_register_name %s: %s", name, csn_status_string(rv));
    st_peers(t);
    for (int p = 0; p < t->npeers; p++) {
        snprintf(name, sizeof name, "stress.%d", t->peers[p].gid);
        if ((rv = csn_lookup_name(&t->peers[p].id, name)) != CSN_OK)
            st_fail(t, "csn_lookup_name %s: %s", name, csn_status_string(rv));
    }
    int e = 0;
    for (;;) {
        double t0 = st_now(), t1;
        if (!st_sync(t, e))
            break;
        st_plan(t, e);
        t1 = st_now();
        t->phase_s[5] += t1 - t0;
        st_phase_a(t);
        t->phase_s[0] += (t0 = st_now()) - t1;
        st_phase_b(t);
        t->phase_s[1] += (t1 = st_now()) - t0;
        st_phase_c(t);
        t->phase_s[2] += (t0 = st_now()) - t1;
        st_phase_d(t);
        t->phase_s[3] += (t1 = st_now()) - t0;
        st_verify_epoch(t);
        t->phase_s[4] += st_now() - t1;
        e++;
    }
    st_final_counts(t);
    st_sync(t, e);
    t->epoch = e;
    if ((rv = csn_close(&t->t)) != CSN_OK)
        st_fail(t, "csn_close: %s", csn_status_string(rv));
    return NULL;
}

/* Turns a hang (a blocking call or barrier that never returns) into a failure that says
 * where every thread is. */
static void *st_watchdog(void *arg)
{
    (void)arg;
    uint64_t seen = atomic_load(&st.progress);
    double last = st_now();
    while (!atomic_load(&st.finished)) {
        struct timespec ts = {0, 50 * 1000 * 1000};
        nanosleep(&ts, NULL);
        uint64_t now = atomic_load(&st.progress);
        if (now != seen) {
            seen = now;
            last = st_now();
        } else if (st_now() - last > st.timeout) {
            fprintf(stderr, "threads-stress: rank %d: no progress for %.0f s; threads:\n", st.rank,
                    st.timeout);
            for (int i = 0; i < st.threads; i++)
                fprintf(stderr, "  thread %d: phase %c, %s\n", i, atomic_load(&st.thr[i].phase),
                        atomic_load_explicit(&st.thr[i].doing, memory_order_relaxed));
            fflush(stderr);
            _exit(1);
        }
    }
    return NULL;
}

static void st_usage(FILE *f)
{
    fprintf(f, "usage: csnrun -np 2 test_threads_stress [OPTIONS]\n"
               "       test_threads_stress --single [OPTIONS]\n"
               "Threads (one transport each) exchange random-sized (0 B .. max) messages with\n"
               "their peers, mixing blocking and non-blocking, any- and one-source calls;\n"
               "every payload, length, count and per-pair order is checked.\n"
               "  --single        one process: all peers are threads of this process\n"
               "  --threads N     threads per process (default 16)\n"
               "  --seconds S     run about S seconds (default 3; at least 2 epochs)\n"
               "  --seed N        plan seed (default 1)\n"
               "  --max-size B    largest message in bytes (default 1048576)\n"
               "  --timeout S     fail after S seconds without progress (default 30)\n"
               "  --help          this text\n");
}

static void st_bad(const char *what, const char *val)
{
    fprintf(stderr, "test_threads_stress: bad %s '%s' (see --help)\n", what, val);
    exit(2);
}

/* A number in [min, max]; whole when integral is set. */
static double st_parse_num(const char *opt, const char *val, double min, double max, int integral)
{
    char *end;
    errno = 0;
    double v = val == NULL ? 0 : strtod(val, &end);
    if (val == NULL || errno != 0 || end == val || *end != '\0' || !(v >= min) || v > max ||
        (integral && v != (double)(uint64_t)v))
        st_bad(opt, val == NULL ? "" : val);
    return v;
}

int main(int argc, char **argv)
{
    st.threads = 16;
    st.seconds = 3;
    st.seed = 1;
    st.max_size = 1u << 20;
    st.timeout = 30;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--help") == 0) {
            st_usage(stdout);
            return 0;
        } else if (strcmp(a, "--single") == 0) {
            st.single = 1;
        } else if (strcmp(a, "--threads") == 0) {
            st.threads = (int)st_parse_num(a, v, 1, ST_MAX_THREADS, 1);
            i++;
        } else if (strcmp(a, "--seconds") == 0) {
            st.seconds = st_parse_num(a, v, 0, 3600, 0);
            i++;
        } else if (strcmp(a, "--seed") == 0) {
            st.seed = (uint64_t)st_parse_num(a, v, 0, 1e15, 1);
            i++;
        } else if (strcmp(a, "--max-size") == 0) {
            st.max_size = (size_t)st_parse_num(a, v, 0, 64 << 20, 1);
            i++;
        } else if (strcmp(a, "--timeout") == 0) {
            st.timeout = st_parse_num(a, v, 1, 3600, 0);
            i++;
        } else {
            fprintf(stderr, "test_threads_stress: unknown argument '%s' (see --help)\n", a);
            return 2;
        }
    }
    st.rank = csn_job_rank();
    st.nproc = st.single ? 1 : csn_job_size();
    if (st.single && csn_job_size() != 1) {
        fprintf(stderr, "test_threads_stress: --single runs as one process, not under csnrun\n");
        return 2;
    }
    if (!st.single && st.nproc != 2) {
        fprintf(stderr,
                "test_threads_stress: run under csnrun -np 2 (or use --single); "
                "this job has %d process(es)\n",
                st.nproc);
        return 2;
    }
    if (st.threads * st.nproc < 2) {
        fprintf(stderr, "test_threads_stress: --single needs at least 2 threads\n");
        return 2;
    }

    st.thr = calloc((size_t)st.threads, sizeof *st.thr);
    if (st.thr == NULL || pthread_barrier_init(&st.bar, NULL, (unsigned)st.threads) != 0)
        st_fail(NULL, "cannot set up %d threads", st.threads);
    if (st.nproc == 2) {
        char name[32];
        csn_status rv;
        snprintf(name, sizeof name, "stress.ctl.%d", st.rank);
        if ((rv = csn_open(&st.ctl)) != CSN_OK || (rv = csn_register_name(st.ctl, name)) != CSN_OK)
            st_fail(NULL, "control transport: %s", csn_status_string(rv));
        snprintf(name, sizeof name, "stress.ctl.%d", 1 - st.rank);
        if ((rv = csn_lookup_name(&st.ctl_peer, name)) != CSN_OK)
            st_fail(NULL, "csn_lookup_name %s: %s", name, csn_status_string(rv));
    }
    pthread_t wd;
    if (pthread_create(&wd, NULL, st_watchdog, NULL) != 0)
        st_fail(NULL, "cannot create the watchdog thread");
    st.start = st_now();
    for (int i = 0; i < st.threads; i++) {
        struct st_thread *t = &st.thr[i];
        t->idx = i;
        t->gid = st.rank * st.threads + i;
        t->rng = st_hash((uint64_t)t->gid, 77, 0, 5) | 1;
        atomic_init(&t->phase, 'O');
        atomic_init(&t->doing, "starting");
        if (pthread_create(&t->th, NULL, st_thread_main, t) != 0)
            st_fail(NULL, "cannot create thread %d", i);
    }
    uint64_t msgs = 0, bytes = 0;
    double ph[6] = {0};
    for (int i = 0; i < st.threads; i++) {
        pthread_join(st.thr[i].th, NULL);
        msgs += st.thr[i].msgs_in;
        bytes += st.thr[i].bytes_in;
        for (int k = 0; k < 6; k++)
            ph[k] += st.thr[i].phase_s[k] / st.threads;
    }
    atomic_store(&st.finished, 1);
    pthread_join(wd, NULL);
    if (st.ctl != NULL)
        csn_close(&st.ctl);
    printf("threads-stress: rank %d: OK: %d threads, %d epochs in %.1f s, %llu messages "
           "(%.1f MB) received and checked, seed %llu\n",
           st.rank, st.threads, st.thr[0].epoch, st_now() - st.start, (unsigned long long)msgs,
           (double)bytes / 1e6, (unsigned long long)st.seed);
    printf("threads-stress: rank %d: seconds per thread in phase A %.2f, B %.2f, C %.2f, "
           "D %.2f, checks %.2f, barriers %.2f\n",
           st.rank, ph[0], ph[1], ph[2], ph[3], ph[4], ph[5]);
    pthread_barrier_destroy(&st.bar);
    free(st.thr);
    return 0;
}
