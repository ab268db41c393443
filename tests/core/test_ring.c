/* test_ring.c: the shared-memory ring alone (src/transport/shm): records wrap around the end of
 * the ring intact, in laps that reuse every line as a header and as the inside of a record, a full
 * ring refuses and takes again once space is handed back, a lap that ends at the ring's end
 * exactly brings the compact part back, records arrive whole and in order under a concurrent
 * producer, a sleeping consumer is always rung (also where the producer leaves its fence out and
 * the consumer runs membarrier), short records take a line each and only in place, and corrupt
 * record headers written by a hostile peer are refused instead of read. */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../test.h"
#include "transport/shm/shm.h"
#include "wire/frame.h"

#define RING 4096u
#define SHM_TEST_LINE 64u /* shm.c's line: records take whole lines */

static struct csni_shm *tx, *rx;

static void ring_open_size(uint64_t size)
{
    char path[128];
    snprintf(path, sizeof path, "/dev/shm/csn-test-ring.%d", (int)getpid());
    CHECK_OK(csni_shm_create(path, size, true, true, &tx));
    CHECK_OK(csni_shm_attach(path, true, true, &rx)); /* unlinks it */
    CHECK(access(path, F_OK) != 0);
}

static void ring_open(void)
{
    ring_open_size(RING);
}

static void ring_close(void)
{
    csni_shm_unmap(tx);
    csni_shm_unmap(rx);
}

/* A record's payload: len bytes of pattern. The record's EAGER frame header carries seq (as
 * its destination) and len (wr). */
static void make(uint8_t *pay, uint32_t seq, size_t len)
{
    for (size_t i = 0; i < len; i++)
        pay[i] = (uint8_t)(seq * 31 + i);
}

static bool wr(struct csni_shm *s, uint32_t seq, const uint8_t *pay, size_t len)
{
    return csni_shm_write_eager(s, seq, 0, pay, len);
}

/* The seq and len of the encoded header at at (little-endian: dst at 4, len at 16). */
static uint32_t rec_seq(const uint8_t *at)
{
    return (uint32_t)at[4] | (uint32_t)at[5] << 8 | (uint32_t)at[6] << 16 | (uint32_t)at[7] << 24;
}

static size_t rec_len(const uint8_t *at)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | at[16 + i];
    return (size_t)v;
}

/* A record csni_shm_peek returned (k, at, n): its seq, payload length and header bytes. A short
 * record (k 2) holds dst (the seq) in its first word's low half and the payload after it. */
static void rec_parse(int k, const uint8_t *at, size_t n, uint32_t *seq, size_t *len, size_t *hdr)
{
    if (k == 2) {
        *seq =
            (uint32_t)at[0] | (uint32_t)at[1] << 8 | (uint32_t)at[2] << 16 | (uint32_t)at[3] << 24;
        *hdr = CSNI_SHORT_SIZE;
        *len = n - CSNI_SHORT_SIZE;
    } else {
        *seq = rec_seq(at);
        *hdr = CSNI_FRAME_SIZE;
        *len = rec_len(at);
    }
}

/* Takes one whole record and checks it is record seq. */
static int take(uint32_t seq)
{
    const uint8_t *at;
    size_t n;
    int k = csni_shm_peek(rx, &at, &n);
    if (k <= 0)
        return k;
    uint32_t s;
    size_t len, hdr;
    rec_parse(k, at, n, &s, &len, &hdr);
    CHECK(s == seq);
    CHECK(n == hdr + len);
    for (size_t i = 0; i < len; i++)
        CHECK(at[hdr + i] == (uint8_t)(seq * 31 + i));
    csni_shm_consume(rx, n);
    return 1;
}

static void test_wrap(void)
{
    uint8_t pay[1500];
    uint32_t w = 0, r = 0;
    ring_open();
    /* Sizes that do not divide the ring: records land at every offset and wrap many times. */
    while (w < 2000) {
        size_t len = (w * 97u) % sizeof pay;
        make(pay, w, len);
        if (wr(tx, w, pay, len)) {
            w++;
            continue;
        }
        CHECK(take(r) == 1); /* full: the oldest record must be there, whole */
        r++;
    }
    while (r < w)
        CHECK(take(r++) == 1);
    CHECK(take(r) == 0);
    ring_close();
    printf("wrap: %u records through a %u-byte ring\n", w, RING);
}

/* The header slot after the last record reads 0 however the lines were used before: the
 * consumer zeroes the slots it took, the producer the slots that held the inside of an older
 * record (shm.c). Runs of one-line records alternate with runs of records many lines long
 * whose lengths do not divide the ring, so every line is by turns a header and the inside of
 * a record; taken with csni_shm_read, which crosses records and wrap markers in one call.
 * In a ring of more than 64 lines records up to max bytes also span several words of the
 * producer's map of the lines (and start and end at every bit of them). */
#define LAPS_MAX 9000u
static size_t laps_len(uint32_t k, size_t max)
{
    return (k / 7) % 2 ? (k * 211u) % max : k % 17;
}

static void test_laps_read(uint64_t size, size_t max, uint64_t compact)
{
    static uint8_t pay[LAPS_MAX], got[CSNI_FRAME_SIZE + LAPS_MAX];
    uint32_t w = 0, r = 0, drains = 0;
    CHECK(max <= LAPS_MAX);
    ring_open_size(size);
    csni_shm_set_compact(tx, compact);
    csni_shm_set_short(tx, false); /* whole frames: the byte interface takes no short record */
    while (w < 6000) {
        /* A burst of 1-23 records (fewer when the ring fills), then all of them read back
         * through the byte interface, and the ring must read empty again. */
        for (uint32_t burst = 1 + drains % 23; burst > 0 && w < 6000; burst--, w++) {
            make(pay, w, laps_len(w, max));
            if (!wr(tx, w, pay, laps_len(w, max)))
                break;
        }
        for (; r < w; r++) {
            size_t len = laps_len(r, max);
            CHECK(csni_shm_read(rx, got, CSNI_FRAME_SIZE + len) ==
                  (ssize_t)(CSNI_FRAME_SIZE + len));
            CHECK(rec_seq(got) == r);
            for (size_t i = 0; i < len; i++)
                CHECK(got[CSNI_FRAME_SIZE + i] == (uint8_t)(r * 31 + i));
        }
        errno = 0;
        CHECK(csni_shm_read(rx, got, sizeof got) == -1 && errno == EAGAIN);
        drains++;
    }
    ring_close();
    printf("laps: %u records of 0-16 and 0-%zu bytes in %u bursts through a %llu-byte ring "
           "(compact %llu), read back across records\n",
           r, max - 1, drains, (unsigned long long)size, (unsigned long long)compact);
}

/* Compact: while the consumer keeps up, every record ends within the ring's first bytes; a
 * burst the consumer lags behind still fills the whole ring, and once it is taken the records
 * keep to the first bytes again; a stream the consumer follows closely keeps to the stream
 * part (4 x the compact part). */
#define COMPACT_RING 32768u
#define COMPACT 4096u
static unsigned compact_burst(uint8_t *pay, size_t len, uint32_t *w)
{
    unsigned k = 0;
    make(pay, *w, len);
    while (wr(tx, *w, pay, len)) {
        make(pay, ++*w, len);
        k++;
    }
    return k;
}

static void test_compact(void)
{
    uint8_t pay[1000];
    uint32_t w = 0, r = 0;
    unsigned whole, burst = 0;
    /* The whole ring without compact: how many such records a burst leaves room for. */
    ring_open_size(COMPACT_RING);
    whole = compact_burst(pay, sizeof pay, &w);
    ring_close();
    ring_open_size(COMPACT_RING);
    csni_shm_set_compact(tx, COMPACT);
    const uint8_t *at, *start = NULL;
    size_t n;
    w = 0;
    for (int phase = 0; phase < 2; phase++) {
        /* One by one, each taken before the next is written: the first lap may run on (after
         * the burst), then every record ends within the first COMPACT bytes. */
        unsigned outside = 0;
        for (unsigned i = 0; i < 3 * COMPACT_RING / sizeof pay; i++, w++, r++) {
            make(pay, w, sizeof pay);
            CHECK(wr(tx, w, pay, sizeof pay));
            CHECK(csni_shm_peek(rx, &at, &n) == 1);
            if (!start)
                start = at;                     /* the first record: at the ring's start */
            if (i >= COMPACT_RING / sizeof pay) /* a lap on */
                outside += at + n > start + COMPACT;
            CHECK(take(r) == 1);
        }
        CHECK(outside == 0);
        if (phase == 0) {
            /* Then a burst nobody takes: the whole ring holds it. (Its first record does not
             * go back to the start: 3 records of 1088 bytes fit the 4096, 98 were written.) */
            burst = compact_burst(pay, sizeof pay, &w);
            CHECK(burst + 1 >= whole);
            while (r < w)
                CHECK(take(r++) == 1);
            CHECK(take(r) == 0);
        }
    }
    /* A stream the consumer follows a record behind: after a lap, every record ends within
     * the stream part (4 x COMPACT), not the whole ring; unless the peer streams to us as
     * well (both = 1): then the laps run through the whole ring. */
    unsigned beyond[2] = {0, 0};
    for (int both = 0; both < 2; both++) {
        make(pay, w, sizeof pay);
        CHECK(wr(tx, w++, pay, sizeof pay));
        for (unsigned i = 0; i < 3 * COMPACT_RING / sizeof pay; i++, w++, r++) {
            make(pay, w, sizeof pay);
            CHECK(wr(tx, w, pay, sizeof pay));
            CHECK(csni_shm_peek(rx, &at, &n) == 1);
            if (i >= COMPACT_RING / sizeof pay)
                beyond[both] += at + n > start + 4 * COMPACT;
            CHECK(take(r) == 1);
            if (both) {
                /* A record the other way, taken at once (tx's in ring). */
                CHECK(wr(rx, i, pay, sizeof pay));
                CHECK(csni_shm_peek(tx, &at, &n) == 1);
                csni_shm_consume(tx, n);
            }
        }
        CHECK(take(r++) == 1);
        CHECK(take(r) == 0);
    }
    CHECK(beyond[0] == 0);
    CHECK(beyond[1] > 0);
    ring_close();
    printf("compact: records kept to the first %u bytes of a %u-byte ring one by one, to the "
           "first %u a record behind (%u records past it with a stream back); a burst of %u "
           "records (%u without compact) in between\n",
           COMPACT, COMPACT_RING, 4 * COMPACT, beyond[1], burst, whole);
}

/* Records of one line each lap exactly at the ring's end, with no wrap marker: after a burst
 * ran a lap on to the end, a consumer that keeps up gets the records within the compact part
 * again from the next lap on (its first record, at the ring's start, brings the compact mark
 * back as a wrap marker's would). */
static void test_lap_end(void)
{
    enum { LEN = SHM_TEST_LINE - 8 - CSNI_FRAME_SIZE };
    uint8_t pay[LEN];
    uint32_t w = 0, r = 0;
    unsigned burst, outside = 0;
    const uint8_t *at, *start;
    size_t n;
    ring_open_size(COMPACT_RING);
    csni_shm_set_compact(tx, COMPACT);
    make(pay, w, LEN);
    CHECK(wr(tx, w++, pay, LEN));
    CHECK(csni_shm_peek(rx, &at, &n) > 0);
    start = at;
    burst = 1 + compact_burst(pay, LEN, &w);
    CHECK(burst == COMPACT_RING / SHM_TEST_LINE - 1);
    while (r < w)
        CHECK(take(r++) == 1);
    for (unsigned i = 0; i < 2 * COMPACT_RING / SHM_TEST_LINE; i++, w++, r++) {
        make(pay, w, LEN);
        CHECK(wr(tx, w, pay, LEN));
        CHECK(csni_shm_peek(rx, &at, &n) > 0);
        if (i >= COMPACT_RING / SHM_TEST_LINE) /* a lap on */
            outside += at + n > start + COMPACT;
        CHECK(take(r) == 1);
    }
    CHECK(outside == 0);
    CHECK(take(r) == 0);
    ring_close();
    printf("lap end: after a burst of %u one-line records, records one by one keep to the first "
           "%u bytes of a %u-byte ring again\n",
           burst, COMPACT, COMPACT_RING);
}

/* A one-way stream of 1000-byte records whose consumer works but lags (it took one record since
 * the compact mark): at the middle of the stream part (2 x COMPACT) the producer waits for room
 * at the start instead of running on into the rest of the ring. The write is refused with
 * most of the ring free, arming for space says "not yet" until the consumer passed the room
 * the record needs, and then the record goes to the start, after all the others in order.
 * back: bytes the peer writes to the producer meanwhile. An ack (8) does not make it a stream
 * both ways; 1000 does, and then the lap runs on past the mark. */
static void test_stall(size_t back)
{
    uint8_t pay[1000];
    uint32_t w = 0, r = 0;
    const uint8_t *at, *start;
    size_t n;
    ring_open_size(COMPACT_RING);
    csni_shm_set_compact(tx, COMPACT);
    make(pay, w, sizeof pay);
    CHECK(wr(tx, w++, pay, sizeof pay));
    CHECK(csni_shm_peek(rx, &at, &n) == 1);
    start = at;
    for (; w * 1088u < COMPACT + 1088u; w++) { /* past the compact mark, none taken */
        make(pay, w, sizeof pay);
        CHECK(wr(tx, w, pay, sizeof pay));
    }
    CHECK(take(r++) == 1);
    if (back) {
        CHECK(wr(rx, 0, pay, back));
        CHECK(csni_shm_peek(tx, &at, &n) > 0);
        csni_shm_consume(tx, n);
    }
    for (;; w++) {
        make(pay, w, sizeof pay);
        if (!wr(tx, w, pay, sizeof pay))
            break;
    }
    if (back > 4 * SHM_TEST_LINE) {
        CHECK(w * 1088u > 2 * COMPACT); /* ran on */
        while (r < w)
            CHECK(take(r++) == 1);
        ring_close();
        printf("stall: not with %zu bytes the other way, the lap ran on to byte %u\n", back,
               w * 1088u);
        return;
    }
    CHECK(w * 1088u <= 2 * COMPACT && w * 1088u + 1088u > 2 * COMPACT);
    CHECK(!csni_shm_arm(tx, true));
    CHECK(take(r++) == 1);
    CHECK(csni_shm_arm(tx, true));
    CHECK(wr(tx, w++, pay, sizeof pay));
    while (r + 1 < w)
        CHECK(take(r++) == 1);
    CHECK(csni_shm_peek(rx, &at, &n) == 1 && at == start);
    CHECK(take(r++) == 1);
    CHECK(take(r) == 0);
    ring_close();
    printf("stall: a lagging one-way stream (%zu bytes the other way) waits at byte %u of a "
           "%u-byte ring, then goes back\n",
           back, 2 * COMPACT, COMPACT_RING);
}

static void test_full(void)
{
    uint8_t pay[512];
    uint32_t w = 0;
    ring_open();
    make(pay, 0, sizeof pay);
    while (wr(tx, w, pay, sizeof pay))
        make(pay, ++w, sizeof pay);
    CHECK(w >= 4 && w < RING / sizeof pay);
    CHECK(!wr(tx, w, pay, sizeof pay)); /* still full */
    /* Space handed back: a record that must wrap (the end of the ring is too short for it)
     * fits once two are taken (the one slot after the last record stays free). */
    CHECK(take(0) == 1);
    CHECK(take(1) == 1);
    CHECK(wr(tx, w, pay, sizeof pay)); /* record w fits now */
    for (uint32_t i = 2; i <= w; i++)
        CHECK(take(i) == 1);
    CHECK(take(w + 1) == 0);
    ring_close();
    printf("full: %u records of %zu bytes fill it; two taken, one more fits\n", w, sizeof pay);
}

#define ORDER_N 200000u
static void *producer(void *arg)
{
    uint8_t pay[300];
    (void)arg;
    for (uint32_t w = 0; w < ORDER_N;) {
        size_t len = (w * 13u) % sizeof pay;
        make(pay, w, len);
        if (wr(tx, w, pay, len))
            w++;
        else
            sched_yield();
    }
    return NULL;
}

static void test_order(void)
{
    pthread_t th;
    ring_open();
    CHECK(pthread_create(&th, NULL, producer, NULL) == 0);
    for (uint32_t r = 0; r < ORDER_N;) {
        int k = take(r);
        CHECK(k >= 0);
        if (k)
            r++;
        else
            sched_yield();
    }
    CHECK(pthread_join(th, NULL) == 0);
    CHECK(take(ORDER_N) == 0);
    ring_close();
    printf("order: %u records from a concurrent producer, whole and in order\n", ORDER_N);
}

/* The doorbell between two processes, each with its own mapping: the child (producer)
 * publishes record k as soon as the parent acknowledged k-1 (on the other ring, which the
 * child watches by spinning); the parent, after a pause of 0-0.5 us, finds its ring empty or
 * not; empty, it arms it, looks again (after the heavy fence, as csni_arm_rings does) and sleeps on
 * the bell socket. Every record so races the consumer's arming; a lost wake-up is a sleep
 * that ends in the timeout with the record there. CSN_SHM_MEMBARRIER's two settings: both
 * sides fenced (false), and the ringer without its fence (true, where the kernel has it). */
#define BELL_N 40000u
static void bell_child(const char *path, bool membarrier, int bell)
{
    struct csni_shm *me;
    uint8_t pay[8];
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() == 1)
        _exit(2); /* a parent that failed leaves no spinning child */
    if (csni_shm_attach(path, membarrier, false, &me) != CSN_OK)
        _exit(3);
    me->bell_fd = bell;
    for (uint32_t k = 0; k < BELL_N; k++) {
        make(pay, k, sizeof pay);
        if (!wr(me, k, pay, sizeof pay))
            _exit(4);
        for (;;) { /* the ack */
            const uint8_t *at;
            size_t n;
            int got = csni_shm_peek(me, &at, &n);
            if (got < 0)
                _exit(5);
            if (got > 0) {
                csni_shm_consume(me, n);
                break;
            }
        }
    }
    _exit(0);
}

static void test_doorbell(bool membarrier)
{
    char path[128];
    int sv[2], status;
    unsigned sleeps = 0;
    snprintf(path, sizeof path, "/dev/shm/csn-test-bell.%d", (int)getpid());
    CHECK_OK(csni_shm_create(path, RING, membarrier, false, &tx));
    CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0)
        bell_child(path, membarrier, sv[1]);
    close(sv[1]);
    rx = tx; /* take() reads rx: here the creator's own inbound ring */
    for (uint32_t k = 0; k < BELL_N;) {
        int got = take(k);
        CHECK(got >= 0);
        if (got) {
            CHECK(wr(tx, 0, NULL, 0));
            k++;
            for (volatile unsigned spin = (k * 7919u) % 256u; spin > 0; spin--)
                ;
            continue;
        }
        if (csni_shm_arm(tx, false) || (csni_shm_heavy_fence() && csni_shm_arm(tx, false)))
            continue;
        struct pollfd pf = {.fd = sv[0], .events = POLLIN};
        int n = poll(&pf, 1, 2000);
        if (n == 0 && csni_shm_has_data(tx, 0)) {
            fprintf(stderr, "doorbell: record %u was there, nobody rang (membarrier %d)\n", k,
                    (int)membarrier);
            CHECK(0);
        }
        char b[64];
        if (n > 0)
            CHECK(recv(sv[0], b, sizeof b, MSG_DONTWAIT) > 0);
        sleeps++;
    }
    CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0);
    close(sv[0]);
    csni_shm_unmap(tx);
    printf("doorbell (membarrier %s): %u records, %u sleeps, every one rung\n",
           membarrier ? (csni_shm_heavy_fence() ? "on" : "not in this kernel") : "off", BELL_N,
           sleeps);
}

/* The layout the test pokes at (shm.c): a 4096-byte segment header, then ring 0 (the
 * creator's outbound): head, tail and the doorbell flags each on their own cache line, the
 * data from byte 192. A record starts with its header word: pad << 56 | byte count. */
static void poke_first_record(uint64_t word)
{
    memcpy((uint8_t *)tx->base + 4096 + 192, &word, sizeof word);
}

static void test_corrupt(void)
{
    uint8_t pay[64], buf[256];
    const uint64_t bad[] = {(uint64_t)RING * 4,       /* longer than the ring */
                            RING,                     /* runs past the end of the ring */
                            (uint64_t)200 << 56 | 40, /* a pad beyond a cache line */
                            UINT64_MAX};              /* a wrap marker at offset 0 */
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const uint8_t *at;
        size_t n;
        ring_open();
        make(pay, 1, sizeof pay);
        CHECK(wr(tx, 1, pay, sizeof pay));
        poke_first_record(bad[i]);
        CHECK(csni_shm_peek(rx, &at, &n) == -1);
        errno = 0;
        CHECK(csni_shm_read(rx, buf, sizeof buf) == -1 && errno == EPROTO);
        ring_close();
    }
    printf("corrupt: %zu kinds of bad record header refused\n", sizeof bad / sizeof bad[0]);
}

/* A hostile peer's ring: a whole lap of empty padded records with no end (the reader looped
 * for ever), and a consumer index (in the shared segment too) off a cache line (its header
 * slot was read past the ring's end). Both are corrupt rings: refused. */
static void test_hostile(void)
{
    uint8_t buf[256];
    const uint8_t *at;
    size_t n;
    ring_open();
    alarm(20); /* a loop for ever fails the test instead of hanging it */
    uint64_t empty = (uint64_t)8 << 56;
    for (size_t off = 0; off < RING; off += 64)
        memcpy((uint8_t *)tx->base + 4096 + 192 + off, &empty, sizeof empty);
    errno = 0;
    CHECK(csni_shm_read(rx, buf, sizeof buf) == -1 && errno == EPROTO);
    alarm(0);
    ring_close();
    ring_open();
    uint64_t head = RING - 1, word = 40;
    memcpy((uint8_t *)tx->base + 4096, &head, sizeof head);
    memcpy((uint8_t *)tx->base + 4096 + 192 + RING - 8, &word, sizeof word); /* not "empty" */
    CHECK(csni_shm_peek(rx, &at, &n) == -1);
    errno = 0;
    CHECK(csni_shm_read(rx, buf, sizeof buf) == -1 && errno == EPROTO);
    ring_close();
    printf("hostile: a lap of endless empty records and an unaligned consumer index refused\n");
}

/* Short records: a small message written by write_eager leaves its frame header out where
 * that saves a line (17-48 bytes, 81-112, ...), peek says so (2), and the byte interface takes
 * no short record: it stops before one after whole-frame bytes, and refuses one where a frame's
 * bytes are due. A short header word with a pad, or too short for its ids, is a corrupt record. */
static void test_short(void)
{
    static const uint32_t lens[] = {0, 8, 16, 17, 32, 48, 49, 64, 80, 81, 100, 112, 113, 480};
    enum { NLENS = sizeof lens / sizeof lens[0] };
    uint8_t pay[512], buf[256];
    const uint8_t *at, *prev = NULL;
    size_t n, prev_lines = 0;
    ring_open_size(32768);
    for (uint32_t i = 0; i < NLENS; i++) {
        make(pay, i + 1, lens[i]);
        CHECK(wr(tx, i + 1, pay, lens[i]));
    }
    for (uint32_t i = 0; i < NLENS; i++) {
        bool shrt = lens[i] % 64 > 16 && lens[i] % 64 <= 48;
        size_t hdr = shrt ? CSNI_SHORT_SIZE : CSNI_FRAME_SIZE;
        CHECK(csni_shm_peek(rx, &at, &n) == (shrt ? 2 : 1));
        CHECK(n == hdr + lens[i]);
        if (prev) /* records start on lines: the previous one took the lines it needs */
            CHECK(at == prev + prev_lines * SHM_TEST_LINE);
        prev = at;
        prev_lines = (8 + hdr + lens[i] + SHM_TEST_LINE - 1) / SHM_TEST_LINE;
        CHECK(take(i + 1) == 1);
    }
    /* A whole frame (writev), then a short record: read takes the frame's bytes and stops. */
    uint8_t hdr[CSNI_FRAME_SIZE];
    csni_frame_put_eager(hdr, 7, 1, 8);
    make(pay, 7, 8);
    struct iovec iov[2] = {{hdr, sizeof hdr}, {pay, 8}};
    CHECK(csni_shm_writev(tx, iov, 2) == (ssize_t)sizeof hdr + 8);
    CHECK(wr(tx, 8, pay, 32));
    CHECK(csni_shm_read(rx, buf, sizeof buf) == (ssize_t)sizeof hdr + 8);
    CHECK(rec_seq(buf) == 7);
    errno = 0;
    CHECK(csni_shm_read(rx, buf, sizeof buf) == -1 && errno == EPROTO);
    CHECK(csni_shm_peek(rx, &at, &n) == 2);
    ring_close();
    const uint64_t bad[] = {(uint64_t)0x40 << 56 | 4,   /* shorter than its ids */
                            (uint64_t)0x41 << 56 | 16,  /* a short record with a pad */
                            (uint64_t)0x80 << 56 | 16}; /* an unknown kind */
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ring_open();
        CHECK(wr(tx, 1, pay, 32));
        poke_first_record(bad[i]);
        CHECK(csni_shm_peek(rx, &at, &n) == -1);
        errno = 0;
        CHECK(csni_shm_read(rx, buf, sizeof buf) == -1 && errno == EPROTO);
        ring_close();
    }
    printf("short: messages whose frame header would cost a line go without it, taken whole; "
           "the byte reader stops before them; %zu bad short headers refused\n",
           sizeof bad / sizeof bad[0]);
}

int main(void)
{
    test_wrap();
    test_laps_read(RING, 1500, 0);
    test_laps_read(32768, LAPS_MAX, 0);
    test_laps_read(32768, LAPS_MAX, 4096);
    test_compact();
    test_lap_end();
    test_stall(0);
    test_stall(8);
    test_stall(1000);
    test_full();
    test_order();
    test_doorbell(false);
    test_doorbell(true);
    test_corrupt();
    test_short();
    test_hostile();
    return 0;
}
