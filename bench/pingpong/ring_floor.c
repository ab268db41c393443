/* ring_floor.c: the floor of a stream of small messages between two processes on this host,
 * with no library in between: a single-producer ring of one-line records in shared memory,
 * pingpong's bandwidth pattern (a window of messages, then an ack), measured with 0, 1 and 4
 * locked instructions per message on the producer's side. A thread-safe send path pays at least
 * one (a lock, or an atomic count of its completion); the record's store is still on its way
 * to the polling consumer's cache when the next locked instruction waits for it.
 *
 * usage: ring-floor [WINDOWS [SIZE]]   (default 20000 windows of 64 messages, 8 bytes)
 * Prints, for each mode, the median of 7 samples (the modes alternate within each sample):
 * million messages per second and MB/s (1e6 B/s) of payload. */
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define RF_LINE 64
#define RF_SLOTS 4096 /* records in the ring (one line each) */
#define RF_WINDOW 64
#define RF_SAMPLES 7
#define RF_MODES 3
#define RF_MAXPAY (RF_LINE - 8)

struct rf_rec {
    _Atomic uint64_t seq; /* the message's number + 1: 0 or older is not yet written */
    uint8_t pay[RF_MAXPAY];
};

struct rf_shared {
    struct rf_rec ring[RF_SLOTS];
    _Alignas(RF_LINE) _Atomic uint64_t head; /* consumer: records taken */
    _Alignas(RF_LINE) _Atomic uint64_t ack;  /* consumer: windows taken */
    _Alignas(RF_LINE) _Atomic int go;        /* producer: the mode of the next run, -1: stop */
    _Alignas(RF_LINE) _Atomic uint64_t done; /* consumer: runs finished */
};

static const int rf_locked[RF_MODES] = {0, 1, 4};

static double rf_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void rf_pause(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

/* The consumer: windows x RF_WINDOW records, each copied out, the space handed back every 16,
 * an ack after every window. */
static void rf_consume(struct rf_shared *s, uint64_t *next, long windows, size_t size)
{
    uint8_t buf[RF_MAXPAY];
    for (long w = 0; w < windows; w++) {
        for (int i = 0; i < RF_WINDOW; i++) {
            struct rf_rec *r = &s->ring[*next % RF_SLOTS];
            while (atomic_load_explicit(&r->seq, memory_order_acquire) != *next + 1)
                rf_pause();
            memcpy(buf, r->pay, size);
            ++*next;
            if ((*next & 15) == 0)
                atomic_store_explicit(&s->head, *next, memory_order_release);
        }
        atomic_store_explicit(&s->head, *next, memory_order_release);
        atomic_store_explicit(&s->ack, atomic_load_explicit(&s->ack, memory_order_relaxed) + 1,
                              memory_order_release);
    }
    __asm__ volatile("" : : "r"(buf) : "memory");
}

/* One run of the producer with `locked` locked instructions per message: seconds. */
static double rf_produce(struct rf_shared *s, uint64_t *next, long windows, size_t size, int locked,
                         _Atomic int *lock, _Atomic uint64_t *count)
{
    uint8_t msg[RF_MAXPAY];
    memset(msg, 0xa5, sizeof msg);
    uint64_t acked = atomic_load_explicit(&s->ack, memory_order_relaxed);
    double t0 = rf_now();
    for (long w = 0; w < windows; w++) {
        for (int i = 0; i < RF_WINDOW; i++) {
            while (*next - atomic_load_explicit(&s->head, memory_order_acquire) >= RF_SLOTS)
                rf_pause();
            /* As a thread-safe send path: a lock around the write (an exchange), a count taken
             * from a shared budget, a second lock (the connection's), then the completion's
             * count after the write. Mode 1 keeps only the last. */
            if (locked >= 4) {
                while (atomic_exchange_explicit(lock, 1, memory_order_acquire))
                    rf_pause();
                atomic_fetch_sub(count + 1, 1);
                while (atomic_exchange_explicit(lock + 16, 1, memory_order_acquire))
                    rf_pause();
            }
            struct rf_rec *r = &s->ring[*next % RF_SLOTS];
            memcpy(r->pay, msg, size);
            atomic_store_explicit(&r->seq, *next + 1, memory_order_release);
            ++*next;
            if (locked >= 4)
                atomic_store_explicit(lock + 16, 0, memory_order_release);
            if (locked >= 1)
                atomic_fetch_add(count, 1);
            if (locked >= 4)
                atomic_store_explicit(lock, 0, memory_order_release);
        }
        while (atomic_load_explicit(&s->ack, memory_order_acquire) == acked + (uint64_t)w)
            rf_pause();
    }
    return rf_now() - t0;
}

static int rf_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    char *end = NULL;
    long windows = argc > 1 ? strtol(argv[1], &end, 10) : 20000;
    if (argc > 1 && (*end != '\0' || windows <= 0 || windows > 100000000)) {
        fprintf(stderr, "ring-floor: bad WINDOWS '%s' (usage: ring-floor [WINDOWS [SIZE]])\n",
                argv[1]);
        return 2;
    }
    long size = argc > 2 ? strtol(argv[2], &end, 10) : 8;
    if (argc > 3 || (argc > 2 && (*end != '\0' || size < 1 || size > RF_MAXPAY))) {
        fprintf(stderr, "ring-floor: SIZE must be 1..%d (usage: ring-floor [WINDOWS [SIZE]])\n",
                RF_MAXPAY);
        return 2;
    }
    struct rf_shared *s =
        mmap(NULL, sizeof *s, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (s == MAP_FAILED) {
        perror("ring-floor: mmap");
        return 1;
    }
    atomic_store(&s->go, 0);
    pid_t child = fork();
    if (child < 0) {
        perror("ring-floor: fork");
        return 1;
    }
    if (child == 0) {
        uint64_t next = 0, runs = 0;
        for (;;) {
            int g;
            while ((g = atomic_load_explicit(&s->go, memory_order_acquire)) == 0)
                rf_pause();
            if (g < 0)
                _exit(0);
            rf_consume(s, &next, windows, (size_t)size);
            atomic_store_explicit(&s->go, 0, memory_order_relaxed);
            atomic_store_explicit(&s->done, ++runs, memory_order_release);
        }
    }
    /* The producer's private lines: locks and counts, as a library's own would be. */
    static _Alignas(RF_LINE) _Atomic int lock[32];
    static _Alignas(RF_LINE) _Atomic uint64_t count[2];
    double secs[RF_MODES][RF_SAMPLES];
    uint64_t next = 0, runs = 0;
    for (int k = -1; k < RF_SAMPLES; k++) { /* k = -1: a warm-up of every mode */
        for (int m = 0; m < RF_MODES; m++) {
            atomic_store_explicit(&s->go, 1, memory_order_release);
            double t = rf_produce(s, &next, windows, (size_t)size, rf_locked[m], lock, count);
            while (atomic_load_explicit(&s->done, memory_order_acquire) != runs + 1)
                rf_pause();
            runs++;
            if (k >= 0)
                secs[m][k] = t;
        }
    }
    atomic_store_explicit(&s->go, -1, memory_order_release);
    int st;
    if (waitpid(child, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        fprintf(stderr, "ring-floor: the consumer process failed\n");
        return 1;
    }
    double msgs = (double)windows * RF_WINDOW;
    printf("# ring-floor: %ld windows of %d messages of %ld B per sample, median of %d samples\n",
           windows, RF_WINDOW, size, RF_SAMPLES);
    printf("# %-28s %10s %10s %8s\n", "producer, per message", "Mmsg/s", "MB/s", "vs 0");
    double base = 0;
    for (int m = 0; m < RF_MODES; m++) {
        qsort(secs[m], RF_SAMPLES, sizeof secs[m][0], rf_cmp);
        double rate = msgs / secs[m][RF_SAMPLES / 2];
        if (m == 0)
            base = rate;
        printf("  %d locked %-21s %10.2f %10.1f %8.2f\n", rf_locked[m], "", rate / 1e6,
               rate * (double)size / 1e6, rate / base);
    }
    return 0;
}
