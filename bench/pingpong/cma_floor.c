/* cma_floor.c: the floor of a single-copy (CMA) transfer on this host, one way and both ways
 * at once: two processes, no library in between. "One way" has process A pull B's source with
 * one process_vm_readv per message while B waits; "both ways" has A and B pull each other's
 * source at the same time (what two simultaneous rendezvous transfers do).
 *
 * usage: cma-floor [REPS [SIZE...]]   (default 5 reps; sizes 64K 512K 1M 4M 16M 64M)
 *   Each process owns one SIZE-byte source and one SIZE-byte destination (in cache again and
 *   again); prints GB/s (1e9 B/s) of bytes delivered, best of REPS, per size; the both-ways
 *   figure counts both directions.
 * usage: cma-floor --test LIST [OPTIONS]   (pingpong's bw and bibw, without any library)
 *   The bytes pingpong moves: per message one pull from the peer's one send buffer into the
 *   next of the window's receive buffers (one per message, as pingpong's default), medians of
 *   timed batches in MB/s (1e6 B/s), printed and written (--json) as pingpong's are, so that
 *   bench/shm-vs-mpi.sh sets the floor beside csn's and Open MPI's figures. As pingpong, the
 *   sources are filled before each batch and the receive buffers checked after it (untimed;
 *   --no-check: not): a source just written is pulled at another pace than a cold one (16 MiB
 *   both ways, 3.8 against 4.5 GB/s a direction, BENCHMARKS.md). Both ways, a window begins
 *   when both sides have finished the one before (--free: each side goes on at once), as
 *   pingpong's bibw posts its next window only when its last one completed. --test split: one
 *   way, each message copied by both processes at once (A pulls the first half, B writes the
 *   second into A's buffer with process_vm_writev): the floor of csn's split copies. --test
 *   lat: a ping-pong of pulled messages, each announced by a counter in shared memory, pulled
 *   whole by its receiver, whose own announcement answers it: the floor of a rendezvous
 *   ping-pong's half round trip (pingpong --test lat from CSN_SHM_EAGER up). See --help. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ppcommon.h"

#define FLOOR_MAX_SIZES 16

static const char floor_usage[] =
    "usage: cma-floor [REPS [SIZE...]]\n"
    "       cma-floor --test LIST [OPTIONS]\n"
    "The floor of single-copy transfers (process_vm_readv) between two processes, no library.\n"
    "First form: one buffer each way, in cache; GB/s (1e9 B/s), best of REPS (default 5) per\n"
    "SIZE (default 64K 512K 1M 4M 16M 64M), one way and both ways at once.\n"
    "Second form: the bytes of pingpong's bw and bibw: each message pulled from the peer's one\n"
    "send buffer into the next of a window of receive buffers; MB/s (1e6 B/s), median and max\n"
    "of timed batches (sizes below --from are left out; --iters counts windows per batch,\n"
    "by default enough for 128 MiB; for lat, round trips, by default enough for 10 ms).\n"
    "Options:\n"
    "  --test LIST        any of bw (A pulls, B waits), bibw (both pull at once), split\n"
    "                     (one way, A pulls the first half of each message while B writes\n"
    "                     the second into A's buffer with process_vm_writev: csn's split\n"
    "                     copy) and lat (a ping-pong: each message announced by a counter\n"
    "                     in shared memory and pulled whole by its receiver, whose own\n"
    "                     message answers it; half round trip in us, median and min),\n"
    "                     comma-separated\n"
    "  --from SIZE        leave out sizes below SIZE (default 1)\n"
    "  --bind             A on the first CPU it may use, B on the second (as csnrun\n"
    "                     --bind-to core and mpirun's default place two ranks)\n"
    "  --reuse-buffer     every message of a window into one receive buffer\n"
    "  --free             bibw: each side goes on to its next window at once (default: a\n"
    "                     window begins when both sides have finished the one before, as\n"
    "                     pingpong's bibw, which posts a window when its last completed)\n"
    "  --no-check         bw, bibw, split: do not fill the source before a batch and check the\n"
    "                     receive buffers after it (as pingpong --no-check; both untimed, but\n"
    "                     a source just written is pulled at another pace than a cold one)\n"
    "  --batch N          N messages per process_vm_readv (default 1, at most 64): what a\n"
    "                     layer pulling several announced messages at once could "
    "reach\n" PP_COMMON_HELP "  --help             this text\n";

/* One phase of work for B, set by A before A publishes its number in go. */
struct floor_sync {
    _Atomic int go;   /* phase number to start (A writes; -1: B exits) */
    _Atomic int done; /* phase number B finished */
    _Atomic int ready;
    int mode;     /* FLOOR_BW, FLOOR_BIBW (B pulls too), FLOOR_SPLIT (B writes half), FLOOR_LAT */
    size_t size;  /* message size */
    int window;   /* receive buffers, used in turn */
    int batch;    /* messages per process_vm_readv */
    long n;       /* messages */
    int lockstep; /* FLOOR_BIBW: messages per window, each window begun by both sides at once
                   * (floor_window); 0: the windows run free */
    int check;    /* senders fill their source before a phase, receivers check after it */
    _Atomic int filled; /* phase number whose source B has filled */
    double b_secs;      /* B's time, or -1 */
    long b_bad;         /* B's check: the first wrong byte of its receive buffers, or -1 */
    /* FLOOR_LAT: the messages A and B announced in this phase; FLOOR_BIBW in lockstep: the
     * windows each side finished (each side writes its own and reads the other's: a line
     * each). */
    struct {
        _Alignas(64) _Atomic long n;
    } sent[2];
};

#define FLOOR_BATCH_MAX 64
enum { FLOOR_BW, FLOOR_BIBW, FLOOR_SPLIT, FLOOR_LAT, FLOOR_MODES };

/* Where a split message of size bytes divides: half, on a page (as csn's csni_split_at). */
static size_t floor_split_at(size_t size)
{
    return size / 2 & ~(size_t)4095;
}

/* Waits until the other side's count (s->sent[1 - me]) reaches w. Returns 0, or -1 when pid
 * is gone or the other side announced a failure (LONG_MAX). */
static int floor_wait_peer(struct floor_sync *s, int me, pid_t pid, long w)
{
    long peer;
    for (unsigned spin = 1;
         (peer = atomic_load_explicit(&s->sent[1 - me].n, memory_order_acquire)) < w; spin++)
        if ((spin & 0xfffff) == 0 && kill(pid, 0) != 0)
            return -1;
    return peer == LONG_MAX ? -1 : 0;
}

/* Side me has finished w windows: tells the other side and waits until it has too (s in
 * lockstep). Returns 0 or -1 as floor_wait_peer. */
static int floor_window(struct floor_sync *s, int me, pid_t pid, long w)
{
    atomic_store_explicit(&s->sent[me].n, w, memory_order_release);
    return floor_wait_peer(s, me, pid, w);
}

/* Copies bytes [from, from + len) of n messages of size bytes between pid's src and the next
 * of cycle buffers from dst on (both at the same addresses in both processes): pulled with
 * process_vm_readv into our dst, or (write) from our src into pid's dst with
 * process_vm_writev; batch messages per call (a short count goes on from the byte it stopped
 * at). With s (side me) in lockstep, every window of s->lockstep messages ends with
 * floor_window: a window begins when both sides have finished the one before, as pingpong's
 * bibw posts its next window only when its last completed (its receives pulled, and its sends
 * pulled by the peer). A failure is announced there (LONG_MAX), so that the peer does not
 * wait for it. Returns seconds, or -1. */
static double floor_copy(pid_t pid, unsigned char *dst, const unsigned char *src, size_t size,
                         size_t from, size_t len, int cycle, int batch, long n, int write,
                         struct floor_sync *s, int me)
{
    struct iovec l[FLOOR_BATCH_MAX], r[FLOOR_BATCH_MAX];
    bool lock = s != NULL && s->lockstep > 0;
    long per = lock ? s->lockstep : n; /* messages a window */
    double t0 = pp_now();
    long i = 0;    /* the message the next call starts in */
    size_t at = 0; /* and the byte of its part */
    while (i < n && len > 0) {
        int k = 0;
        long end = (i / per + 1) * per; /* a call stays within its window */
        for (long j = i; j < n && j < end && k < batch; j++, k++) {
            size_t off = from + (j == i ? at : 0);
            void *d = dst + (size_t)(j % cycle) * size + off, *sp = (void *)(src + off);
            l[k].iov_base = write ? sp : d;
            r[k].iov_base = write ? d : sp;
            l[k].iov_len = r[k].iov_len = len - (j == i ? at : 0);
        }
        ssize_t got = write ? process_vm_writev(pid, l, (unsigned long)k, r, (unsigned long)k, 0)
                            : process_vm_readv(pid, l, (unsigned long)k, r, (unsigned long)k, 0);
        if (got <= 0) {
            if (lock)
                atomic_store_explicit(&s->sent[me].n, LONG_MAX, memory_order_release);
            return -1.0;
        }
        for (size_t left = (size_t)got; left > 0;) {
            size_t step = len - at < left ? len - at : left;
            left -= step;
            at += step;
            if (at == len) {
                i++;
                at = 0;
            }
        }
        if (lock && at == 0 && i % per == 0 && floor_window(s, me, pid, i / per) != 0)
            return -1.0;
    }
    return pp_now() - t0;
}

/* FLOOR_LAT, side me (0: A, who sends first; 1: B): n round trips of a size-byte message
 * announced by s->sent[me], pulled whole from pid's src into our dst, answered by our own. A
 * failed pull is announced as done (the peer must not wait) and returns -1. Returns seconds. */
static double floor_pingpong(struct floor_sync *s, int me, pid_t pid, unsigned char *dst,
                             const unsigned char *src, size_t size, long n)
{
    int bad = 0;
    double t0 = pp_now();
    for (long i = 1; i <= n; i++) {
        if (me == 0)
            atomic_store_explicit(&s->sent[0].n, i, memory_order_release);
        if (floor_wait_peer(s, me, pid, i) != 0)
            return -1.0;
        struct iovec l = {.iov_base = dst, .iov_len = size};
        struct iovec r = {.iov_base = (void *)src, .iov_len = size};
        bad |= process_vm_readv(pid, &l, 1, &r, 1, 0) != (ssize_t)size;
        if (me == 1)
            atomic_store_explicit(&s->sent[1].n, i, memory_order_release);
    }
    return bad ? -1.0 : pp_now() - t0;
}

/* The payload of side's (0: A, 1: B) source in phase. */
static uint64_t floor_seed(int phase, int side)
{
    return 2 * (uint64_t)phase + (uint64_t)side + 1;
}

/* Checks the receive buffers from dst on that n messages went to, in turn through cycle of
 * them, against the sender's payload: the first wrong byte (counted from dst), or -1. */
static long floor_check(const unsigned char *dst, size_t size, long n, int cycle, uint64_t seed)
{
    for (long b = 0; b < n && b < cycle; b++) {
        size_t bad = pp_check(dst + (size_t)b * size, size, seed);
        if (bad != (size_t)-1)
            return (long)((size_t)b * size + bad);
    }
    return -1;
}

/* B: its own copies of the buffers (touched: copy-on-write pages become its own), then the
 * phases A asks for, until go is -1. With s->check, as pingpong: the source is filled before
 * the phase (then filled says so), the receive buffers are checked after it, both untimed. */
static void floor_child(struct floor_sync *s, pid_t parent, unsigned char *src, size_t srclen,
                        unsigned char *dst, size_t dstlen)
{
    memset(src, 0x5b, srclen);
    memset(dst, 0, dstlen);
    atomic_store(&s->ready, 1);
    for (int phase = 1;; phase++) {
        int g;
        while ((g = atomic_load(&s->go)) < phase && g >= 0)
            ;
        if (g < 0)
            _exit(0);
        if (s->check && s->mode != FLOOR_LAT)
            pp_fill(src, s->size, floor_seed(phase, 1));
        atomic_store(&s->filled, phase);
        size_t half = floor_split_at(s->size);
        s->b_secs = s->mode == FLOOR_LAT    ? floor_pingpong(s, 1, parent, dst, src, s->size, s->n)
                    : s->mode == FLOOR_BIBW ? floor_copy(parent, dst, src, s->size, 0, s->size,
                                                         s->window, s->batch, s->n, 0, s, 1)
                    : s->mode == FLOOR_SPLIT
                        ? floor_copy(parent, dst, src, s->size, half, s->size - half, s->window,
                                     s->batch, s->n, 1, NULL, 1)
                        : 0.0;
        s->b_bad = s->check && s->mode == FLOOR_BIBW && s->b_secs >= 0
                       ? floor_check(dst, s->size, s->n, s->window, floor_seed(phase, 0))
                       : -1;
        atomic_store(&s->done, phase);
    }
}

/* A: waits until B's count reaches phase. Returns 0, or -1 after a line on stderr when B
 * ended (when: where in the phase). */
static int floor_wait_child(pid_t child, _Atomic int *count, int phase, const char *when)
{
    for (unsigned spin = 1; atomic_load(count) < phase; spin++)
        if ((spin & 0xfffff) == 0 && waitpid(child, NULL, WNOHANG) == child) {
            fprintf(stderr, "cma-floor: the second process ended %s\n", when);
            return -1;
        }
    return 0;
}

/* A: runs one phase of mode (FLOOR_BIBW: B pulls too; FLOOR_SPLIT: A pulls the first part of
 * each message, B writes the rest; FLOOR_LAT: n round trips) and returns the bytes per second
 * delivered (FLOOR_LAT: the seconds of a half round trip), or -1 after a failed copy. */
static double floor_phase(struct floor_sync *s, pid_t child, unsigned char *src, unsigned char *dst,
                          size_t size, int window, int batch, long n, int mode, int lockstep)
{
    s->mode = mode;
    s->lockstep = mode == FLOOR_BIBW ? lockstep : 0;
    s->size = size;
    s->window = window;
    s->batch = batch;
    s->n = n;
    atomic_store(&s->sent[0].n, 0);
    atomic_store(&s->sent[1].n, 0);
    int phase = atomic_load(&s->go) + 1;
    if (s->check && mode == FLOOR_BIBW)
        pp_fill(src, size, floor_seed(phase, 0));
    atomic_store(&s->go, phase); /* seq_cst: B reads the fields above after it sees this */
    if (floor_wait_child(child, &s->filled, phase, "before a phase") != 0)
        return -1.0;
    double t = mode == FLOOR_LAT ? floor_pingpong(s, 0, child, dst, src, size, n)
                                 : floor_copy(child, dst, src, size, 0,
                                              mode == FLOOR_SPLIT ? floor_split_at(size) : size,
                                              window, batch, n, 0, s, 0);
    if (floor_wait_child(child, &s->done, phase, "in the middle of a phase") != 0)
        return -1.0;
    if (t < 0 || s->b_secs < 0) {
        fprintf(stderr, "cma-floor: process_vm_readv failed: %s\n", strerror(errno));
        return -1.0;
    }
    long bad = s->check && mode != FLOOR_LAT
                   ? floor_check(dst, size, n, window, floor_seed(phase, 1))
                   : -1;
    if (bad >= 0 || s->b_bad >= 0) {
        fprintf(stderr, "cma-floor: payload mismatch: size %zu, %s's byte %ld of its buffers\n",
                size, bad >= 0 ? "A" : "B", bad >= 0 ? bad : s->b_bad);
        return -1.0;
    }
    double bytes = (double)size * (double)n, slower = t > s->b_secs ? t : s->b_secs;
    if (mode == FLOOR_LAT)
        return t / (2.0 * (double)n);
    return mode == FLOOR_BIBW ? 2 * bytes / slower : bytes / slower;
}

/* Options of the second form. */
struct floor_opts {
    struct pp_common c;
    int test[FLOOR_MODES]; /* the tests asked for: bw, bibw, split */
    size_t from;
    int bind;
    int reuse; /* every message of a window into one buffer (--reuse-buffer) */
    int batch; /* messages per process_vm_readv (--batch) */
    int free;  /* bibw: the windows run free, not in lockstep (--free) */
    int check; /* fill and check the payload, as pingpong does (--no-check: not) */
};

static const char *const floor_test_name[FLOOR_MODES] = {"bw", "bibw", "split", "lat"};

/* Parses --test's comma-separated list into o->test. Returns 0 or -1. */
static int floor_tests_parse(const char *v, struct floor_opts *o)
{
    int any = 0;
    memset(o->test, 0, sizeof o->test);
    while (*v) {
        size_t n = strcspn(v, ",");
        int m = 0;
        while (m < FLOOR_MODES &&
               !(strlen(floor_test_name[m]) == n && strncmp(v, floor_test_name[m], n) == 0))
            m++;
        if (m == FLOOR_MODES)
            return -1;
        o->test[m] = any = 1;
        v += n + (v[n] == ',');
    }
    return any ? 0 : -1;
}

/* Parses argv (second form) into o; 0, or 2 after one line on stderr, or 1 after --help. */
static int floor_parse(int argc, char **argv, struct floor_opts *o)
{
    pp_common_defaults(&o->c);
    o->from = 1;
    o->batch = 1;
    o->check = 1;
    for (int i = 1; i < argc; i++) {
        const char *v = NULL;
        int r = pp_common_arg(argc, argv, &i, &o->c, "cma-floor");
        if (r < 0)
            return 2;
        if (r > 0)
            continue;
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            fputs(floor_usage, stdout);
            return 1;
        }
        if (strcmp(argv[i], "--bind") == 0) {
            o->bind = 1;
        } else if (strcmp(argv[i], "--reuse-buffer") == 0) {
            o->reuse = 1;
        } else if (strcmp(argv[i], "--free") == 0) {
            o->free = 1;
        } else if (strcmp(argv[i], "--no-check") == 0) {
            o->check = 0;
        } else if ((r = pp_opt(argc, argv, &i, "--test", &v)) != 0) {
            if (r < 0 || floor_tests_parse(v, o) != 0) {
                fprintf(stderr,
                        "cma-floor: --test takes bw, bibw, split, lat or a list of them, not "
                        "'%s'\n",
                        v ? v : "");
                return 2;
            }
        } else if ((r = pp_opt(argc, argv, &i, "--batch", &v)) != 0) {
            char *end = NULL;
            long b = r < 0 ? 0 : strtol(v, &end, 10);
            if (r < 0 || end == v || *end != '\0' || b < 1 || b > FLOOR_BATCH_MAX) {
                fprintf(stderr, "cma-floor: --batch takes a number from 1 to %d, not '%s'\n",
                        FLOOR_BATCH_MAX, v ? v : "");
                return 2;
            }
            o->batch = (int)b;
        } else if ((r = pp_opt(argc, argv, &i, "--from", &v)) != 0) {
            if (r < 0 || pp_parse_size(v, &o->from) != 0) {
                fprintf(stderr, "cma-floor: --from takes a size such as 64K, not '%s'\n",
                        v ? v : "");
                return 2;
            }
        } else {
            fprintf(stderr, "cma-floor: unknown argument '%s' (see --help)\n", argv[i]);
            return 2;
        }
    }
    if (!o->test[FLOOR_BW] && !o->test[FLOOR_BIBW] && !o->test[FLOOR_SPLIT] &&
        !o->test[FLOOR_LAT]) {
        fprintf(stderr, "cma-floor: the second form needs --test bw, bibw, split, lat or a list\n");
        return 2;
    }
    return pp_common_finish(&o->c, "cma-floor") != 0 ? 2 : 0;
}

static void floor_json_pair(FILE *f, const char *name, double med, double best, long iters,
                            int window)
{
    if (isnan(med))
        return;
    fprintf(f, ", \"%s\": {\"median\": %.6g, \"max\": %.6g, \"iters\": %ld, \"window\": %d}", name,
            med, best, iters, window);
}

/* FLOOR_LAT at size: median and min of o's batches of round trips (--iters, or as many as
 * take --sample-ms by a calibration run of up to 1000 that is the warm-up), us a half round
 * trip. Returns the round trips per batch, or -1. */
static long floor_lat(struct floor_sync *s, pid_t child, unsigned char *src, unsigned char *dst,
                      const struct floor_opts *o, size_t size, double *med, double *best)
{
    long n = o->c.iters, n0 = (long)(((size_t)4 << 20) / size);
    n0 = n0 < 1 ? 1 : n0 > 1000 ? 1000 : n0;
    double t = floor_phase(s, child, src, dst, size, 1, 1, n ? n : n0, FLOOR_LAT, 0);
    if (t < 0)
        return -1;
    if (n == 0) {
        double k = o->c.sample_ms * 1e-3 / (2 * t);
        n = k < 100 ? 100 : k > 1e7 ? 10000000 : (long)k;
    }
    double v[PP_MAX_SAMPLES];
    for (int k = 0; k < o->c.samples; k++) {
        double x = floor_phase(s, child, src, dst, size, 1, 1, n, FLOOR_LAT, 0);
        if (x < 0)
            return -1;
        v[k] = x * 1e6;
    }
    *best = pp_min(v, o->c.samples);
    *med = pp_median(v, o->c.samples);
    return n;
}

/* One size of the second form: median and max MB/s of o's batches of each test asked for
 * into med[test], best[test] (NAN where not asked; FLOOR_LAT: us, median and min, and its
 * round trips per batch in *lat_iters). Returns 0 or -1. */
static int floor_size(struct floor_sync *s, pid_t child, unsigned char *src, unsigned char *dst,
                      const struct floor_opts *o, size_t size, int window, long windows,
                      double *med, double *best, long *lat_iters)
{
    for (int m = 0; m < FLOOR_MODES; m++) {
        med[m] = best[m] = NAN;
        if (!o->test[m])
            continue;
        if (m == FLOOR_LAT) {
            if ((*lat_iters = floor_lat(s, child, src, dst, o, size, &med[m], &best[m])) < 0)
                return -1;
            continue;
        }
        long n = windows * window;
        int cycle = o->reuse ? 1 : window; /* receive buffers used in turn */
        int lockstep = o->free ? 0 : window;
        double v[PP_MAX_SAMPLES];
        if (floor_phase(s, child, src, dst, size, cycle, o->batch, n, m, lockstep) <
            0) /* warm-up */
            return -1;
        for (int k = 0; k < o->c.samples; k++) {
            double x = floor_phase(s, child, src, dst, size, cycle, o->batch, n, m, lockstep);
            if (x < 0)
                return -1;
            v[k] = x / 1e6;
        }
        best[m] = pp_max(v, o->c.samples);
        med[m] = pp_median(v, o->c.samples);
    }
    return 0;
}

/* The second form, in A, B forked: the table and the JSON file. */
static int floor_tests(struct floor_sync *s, pid_t child, unsigned char *src, unsigned char *dst,
                       const struct floor_opts *o)
{
    int rc = 1;
    FILE *json = NULL;
    s->check = o->check;
    if (o->c.json != NULL && (json = fopen(o->c.json, "w")) == NULL) {
        perror(o->c.json);
        return 1;
    }
    char wb[32];
    printf("# cma-floor: process_vm_readv between two processes, no library; MB/s (1e6 B/s), "
           "median and max of %d batches; window of %d messages (at most %s bytes), each into "
           "%s receive buffer; %d message%s per call%s%s%s\n",
           o->c.samples, o->c.window, pp_size_str(o->c.window_bytes, wb, sizeof wb),
           o->reuse ? "one (--reuse-buffer)" : "its own", o->batch, o->batch > 1 ? "s" : "",
           o->bind ? "; A and B bound to one CPU each" : "",
           o->check ? "; payload filled and checked as pingpong's" : "; no payload check",
           o->test[FLOOR_BIBW] && o->free ? "; bibw's windows run free" : "");
    printf("%10s %10s %10s %10s %10s", "size", "bw_med", "bw_max", "bibw_med", "bibw_max");
    if (o->test[FLOOR_SPLIT])
        printf(" %10s %10s", "split_med", "split_max");
    printf(" %9s %7s", "iters", "window");
    if (o->test[FLOOR_LAT])
        printf(" %10s %10s %9s", "lat_med", "lat_min", "lat_iters");
    printf("\n");
    if (json != NULL)
        fprintf(json,
                "{\n\"benchmark\": \"cma-floor\",\n\"samples\": %d,\n\"window\": %d,\n"
                "\"window_bytes\": %zu,\n\"batch\": %d,\n\"units\": {\"bw\": \"MB/s (1e6 B/s)\", "
                "\"lat\": \"us a half round trip\"},\n"
                "\"results\": [\n",
                o->c.samples, o->c.window, o->c.window_bytes, o->batch);
    const char *sep = "";
    for (int i = 0; i < o->c.sizes.n; i++) {
        size_t size = o->c.sizes.v[i];
        if (size == 0 || size < o->from)
            continue;
        int window = pp_window_for(size, o->c.window, o->c.window_bytes);
        long windows = o->c.iters;
        if (windows == 0) {
            size_t per = size * (size_t)window;
            windows = (long)(((size_t)128 << 20) + per - 1) / (long)per;
        }
        double med[FLOOR_MODES], best[FLOOR_MODES];
        long lat_iters = 0;
        if (floor_size(s, child, src, dst, o, size, window, windows, med, best, &lat_iters) != 0)
            goto fail;
        printf("%10zu %10.1f %10.1f %10.1f %10.1f", size, med[0], best[0], med[1], best[1]);
        if (o->test[FLOOR_SPLIT])
            printf(" %10.1f %10.1f", med[FLOOR_SPLIT], best[FLOOR_SPLIT]);
        printf(" %9ld %7d", windows, window);
        if (o->test[FLOOR_LAT])
            printf(" %10.3f %10.3f %9ld", med[FLOOR_LAT], best[FLOOR_LAT], lat_iters);
        printf("\n");
        fflush(stdout);
        if (json != NULL) {
            fprintf(json, "%s{\"size\": %zu", sep, size);
            floor_json_pair(json, "bw_MBps", med[0], best[0], windows, window);
            floor_json_pair(json, "bibw_MBps", med[1], best[1], windows, window);
            floor_json_pair(json, "split_MBps", med[FLOOR_SPLIT], best[FLOOR_SPLIT], windows,
                            window);
            if (!isnan(med[FLOOR_LAT]))
                fprintf(json, ", \"lat_us\": {\"median\": %.6g, \"min\": %.6g, \"iters\": %ld}",
                        med[FLOOR_LAT], best[FLOOR_LAT], lat_iters);
            fputc('}', json);
            sep = ",\n";
        }
    }
    if (json != NULL) {
        fprintf(json, "\n]\n}\n");
        int bad = ferror(json);
        FILE *f = json;
        json = NULL;
        if (fclose(f) != 0 || bad) {
            perror(o->c.json);
            goto fail;
        }
    }
    rc = 0;
fail:
    if (json != NULL)
        fclose(json);
    return rc;
}

/* The first form, in A, B forked. */
static int floor_reps(struct floor_sync *s, pid_t child, unsigned char *src, unsigned char *dst,
                      long reps, const struct pp_sizes *sz)
{
    printf("# cma-floor: process_vm_readv between two processes, %ld reps, best; GB/s = 1e9 B/s\n",
           reps);
    printf("%10s %12s %12s %8s\n", "size", "one_way", "both_ways", "both/one");
    for (int i = 0; i < sz->n; i++) {
        size_t size = sz->v[i];
        long n = (long)((64u << 20) / size) + 1;
        double best[2] = {0, 0};
        for (long r = 0; r < reps; r++) {
            for (int both = 0; both < 2; both++) {
                double x =
                    floor_phase(s, child, src, dst, size, 1, 1, n, both ? FLOOR_BIBW : FLOOR_BW, 0);
                if (x < 0)
                    return 1;
                best[both] = x / 1e9 > best[both] ? x / 1e9 : best[both];
            }
        }
        char b[32];
        printf("%10s %12.2f %12.2f %8.2f\n", pp_size_str(size, b, sizeof b), best[0], best[1],
               best[1] / best[0]);
        fflush(stdout);
    }
    return 0;
}

int main(int argc, char **argv)
{
    long reps = 5;
    struct pp_sizes sz = {.n = 0};
    struct floor_opts o;
    memset(&o, 0, sizeof o);
    int second = argc > 1 && argv[1][0] == '-';
    if (second) {
        int r = floor_parse(argc, argv, &o);
        if (r != 0)
            return r == 1 ? 0 : 2;
        sz = o.c.sizes;
    } else {
        if (argc > 1 && (pp_parse_long(argv[1], 1, 1000, &reps) != 0)) {
            fprintf(stderr, "cma-floor: usage: cma-floor [REPS [SIZE...]] (bad REPS '%s')\n",
                    argv[1]);
            return 2;
        }
        for (int i = 2; i < argc; i++) {
            if (sz.n == FLOOR_MAX_SIZES || pp_parse_size(argv[i], &sz.v[sz.n]) != 0 ||
                sz.v[sz.n] == 0) {
                fprintf(stderr, "cma-floor: usage: cma-floor [REPS [SIZE...]] (bad SIZE '%s')\n",
                        argv[i]);
                return 2;
            }
            sz.n++;
        }
        if (sz.n == 0) {
            size_t d[] = {64 << 10, 512 << 10, 1 << 20, 4 << 20, 16 << 20, 64 << 20};
            for (size_t i = 0; i < sizeof d / sizeof d[0]; i++)
                sz.v[sz.n++] = d[i];
        }
    }
    /* The source holds the largest message, the destination the largest window. */
    size_t max = 0, arena = 0;
    for (int i = 0; i < sz.n; i++) {
        size_t w = second ? (size_t)pp_window_for(sz.v[i], o.c.window, o.c.window_bytes) : 1;
        max = sz.v[i] > max ? sz.v[i] : max;
        arena = sz.v[i] * w > arena ? sz.v[i] * w : arena;
    }
    max = max ? max : 1;
    arena = arena ? arena : 1;
    int cpu[2];
    if (o.bind && pp_two_cpus(cpu) != 0) {
        fprintf(stderr, "cma-floor: --bind needs two CPUs to run on: %s\n", strerror(errno));
        return 1;
    }
    struct floor_sync *s =
        mmap(NULL, sizeof *s, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (s == MAP_FAILED) {
        perror("cma-floor: mmap");
        return 1;
    }
    memset(s, 0, sizeof *s);
    /* Both processes allocate (touched) before the fork: the same addresses in both. */
    unsigned char *src = pp_alloc(max), *dst = pp_alloc(arena);
    if (!src || !dst) {
        fprintf(stderr, "cma-floor: out of memory (%zu + %zu bytes)\n", max, arena);
        return 1;
    }
    pid_t parent = getpid();
    pid_t child = fork();
    if (child < 0) {
        perror("cma-floor: fork");
        return 1;
    }
    if (child == 0) {
        /* B spins while it waits for A: it must not outlive A (killed, or a reader of its
         * output gone: SIGPIPE), or it spins on, orphaned, holding A's stderr open. */
        if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent)
            _exit(1);
        if (o.bind && pp_bind_cpu(cpu[1]) != 0) {
            fprintf(stderr, "cma-floor: --bind: CPU %d: %s\n", cpu[1], strerror(errno));
            _exit(1);
        }
        floor_child(s, parent, src, max, dst, arena);
    }
    if (o.bind && pp_bind_cpu(cpu[0]) != 0) {
        fprintf(stderr, "cma-floor: --bind: CPU %d: %s\n", cpu[0], strerror(errno));
        kill(child, SIGKILL);
        return 1;
    }
    memset(src, 0xa5, max);
    int rc = 0;
    while (!atomic_load(&s->ready)) {
        if (waitpid(child, NULL, WNOHANG) == child) {
            fprintf(stderr, "cma-floor: the second process ended before it started\n");
            return 1;
        }
    }
    rc = second ? floor_tests(s, child, src, dst, &o) : floor_reps(s, child, src, dst, reps, &sz);
    atomic_store(&s->go, -1);
    int st;
    waitpid(child, &st, 0);
    pp_free(src);
    pp_free(dst);
    return rc;
}
