/* threadtest.c: T threads per process, partners ping-ponging and streaming (seed 002). */
#include "tool.h"
#include "parse_size.h"
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ttcomm.h"
#include "json.h"
#include "jsonl.h"

#ifdef TT_MPI
#define TT_PROG "threadtest-mpi"
#else
#define TT_PROG "threadtest"
#endif

#define TT_MAX_LIST 32
/* Each thread has its own endpoint and connection set-up; beyond this a run on a few CPUs
 * spends minutes in set-up alone. */
#define TT_MAX_THREADS 256
#define TT_MAX_SIZE (16u << 20)
#define TT_MAX_WINDOW 4096
#define TT_ACK_LEN 4

struct tt_opts {
    int threads[TT_MAX_LIST];
    int nthreads;
    size_t sizes[TT_MAX_LIST];
    int nsizes;
    int window;
    int iters;     /* ping-pong round trips per thread, at most */
    int windows;   /* streaming windows per thread, at most */
    double budget; /* seconds per timed measurement (fewer iterations when exceeded); 0: none */
    int check;
    int conn_per_thread;
    const char *json;
};

struct tt_result {
    int threads;
    size_t size;
    double lat_avg_us, lat_max_us; /* one-way (half round trip), per thread */
    double msg_rate;               /* aggregate streaming messages per second */
    int iters, windows;            /* timed per thread, on average */
};

/* One per thread; written by its thread, read by thread 0 after a barrier. */
struct tt_worker {
    int idx;
    pthread_t th;
    tt_ep *ep;
    int iters, windows; /* timed round trips and windows (rank 0) */
    double lat_us;
    double t0, t1; /* streaming start and end */
};

static struct tt_opts tt_o = {
    .threads = {1, 2, 4, 8, 16},
    .nthreads = 5,
    .sizes = {8, 4096},
    .nsizes = 2,
    .window = 64,
    .iters = 1000000,
    .windows = 100000,
    .budget = 0.5,
    .check = 1,
};
static struct tt_worker *tt_w;
static int tt_tmax;
static pthread_barrier_t tt_bar;
static struct tt_result tt_res[TT_MAX_LIST * TT_MAX_LIST];
static int tt_nres;

static void tt_usage(FILE *f)
{
    fprintf(f,
            "usage: csnrun -np 2 threadtest [OPTIONS]   (MPI twin: mpirun -np 2 threadtest-mpi)\n"
            "Each of T threads per process uses its own endpoint and exchanges messages with\n"
            "the thread of the same index in the other process: ping-pong (latency), then\n"
            "windowed streaming (aggregate message rate), for every T and message size.\n"
            "  --threads LIST     thread counts 1..256, comma-separated (default 1,2,4,8,16)\n"
            "  --sizes LIST       message sizes in bytes, K/M suffixes (default 8,4096)\n"
            "  --window W         non-blocking messages per window (default 64)\n"
            "  --iters N          ping-pong round trips per thread, at most (default 1000000)\n"
            "  --windows N        streaming windows per thread, at most (default 100000)\n"
            "  --time S           seconds per timed run, at most (default 0.5; 0: no limit,\n"
            "                     always --iters and --windows)\n"
            "  --no-check         do not check payloads\n"
            "  --conn-per-thread  csn: one connection per transport instead of one shared\n"
            "                     per peer process (sets CSN_CONN_PER_TRANSPORT=1)\n"
            "  --json FILE        also write the results as JSON to FILE\n"
            "  --jsonl FILE       also write one JSON Lines record per measurement\n"
            "                     (docs/results-jsonl.md)\n"
            "  --help             this text\n"
            "  --version          the version\n"
            BENCH_SIZE_RULES
            "Warm-up before each timed run: a tenth of the iterations, at most 100 round\n"
            "trips or 10 windows, and at most a quarter of --time.\n");
}

/* Usage errors: one line (from rank 0 only, every rank parses the same arguments). */
static void tt_bad(const char *fmt, const char *what)
{
    if (tt_early_rank() == 0) {
        fprintf(stderr, TT_PROG ": ");
        fprintf(stderr, fmt, what);
        fprintf(stderr, " (see --help)\n");
    }
    exit(2);
}

static int tt_parse_u64(const char *s, unsigned long long max, int allow_suffix,
                        unsigned long long *out)
{
    char *end;
    if (allow_suffix) { /* the benchmarks' one size syntax (bench/common/parse_size.h) */
        size_t sz;
        if (bench_parse_size(s, max > SIZE_MAX ? SIZE_MAX : (size_t)max, &sz) != 0)
            return -1;
        *out = sz;
        return 0;
    }
    if (s == NULL || *s < '0' || *s > '9')
        return -1;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno != 0)
        return -1;
    if (*end != '\0' || v > max)
        return -1;
    *out = v;
    return 0;
}

static int tt_parse_int(const char *s, int min, int max, int *out)
{
    unsigned long long v;
    if (tt_parse_u64(s, (unsigned long long)max, 0, &v) != 0 || v < (unsigned long long)min)
        return -1;
    *out = (int)v;
    return 0;
}

/* "a,b,c": each element checked; fills vals (as unsigned long long), returns the count or -1. */
static int tt_parse_list(const char *s, unsigned long long min, unsigned long long max,
                         int allow_suffix, unsigned long long *vals)
{
    char buf[1024], *save = NULL;
    int n = 0;
    if (s == NULL || strlen(s) >= sizeof buf || *s == '\0')
        return -1;
    strcpy(buf, s);
    if (buf[strlen(buf) - 1] == ',' || buf[0] == ',' || strstr(buf, ",,") != NULL)
        return -1;
    for (char *tok = strtok_r(buf, ",", &save); tok != NULL; tok = strtok_r(NULL, ",", &save)) {
        if (n == TT_MAX_LIST || tt_parse_u64(tok, max, allow_suffix, &vals[n]) != 0 ||
            vals[n] < min)
            return -1;
        n++;
    }
    return n;
}

static void tt_parse_args(int argc, char **argv)
{
    unsigned long long vals[TT_MAX_LIST];
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *val = NULL;
        char name[64];
        const char *eq = strchr(a, '=');
        if (strncmp(a, "--", 2) == 0 && eq != NULL && (size_t)(eq - a) < sizeof name) {
            memcpy(name, a, (size_t)(eq - a));
            name[eq - a] = '\0';
            val = eq + 1;
        } else {
            snprintf(name, sizeof name, "%s", a);
        }
        int takes_value = strcmp(name, "--threads") == 0 || strcmp(name, "--sizes") == 0 ||
                          strcmp(name, "--window") == 0 || strcmp(name, "--iters") == 0 ||
                          strcmp(name, "--windows") == 0 || strcmp(name, "--json") == 0 ||
                          strcmp(name, "--time") == 0;
        if (takes_value && val == NULL) {
            if (i + 1 >= argc)
                tt_bad("option %s needs a value", name);
            val = argv[++i];
        } else if (!takes_value && val != NULL) {
            tt_bad("option %s takes no value", name);
        }
        if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0) {
            if (tt_early_rank() == 0)
                tt_usage(stdout);
            exit(0);
        } else if (strcmp(name, "--threads") == 0) {
            int n = tt_parse_list(val, 1, TT_MAX_THREADS, 0, vals);
            if (n < 0)
                tt_bad("bad --threads list '%s' (thread counts 1..256, comma-separated)", val);
            for (int k = 0; k < n; k++)
                tt_o.threads[k] = (int)vals[k];
            tt_o.nthreads = n;
        } else if (strcmp(name, "--sizes") == 0) {
            int n = tt_parse_list(val, 0, TT_MAX_SIZE, 1, vals);
            if (n < 0)
                tt_bad("bad --sizes list '%s' (sizes 0..16M, comma-separated)", val);
            for (int k = 0; k < n; k++)
                tt_o.sizes[k] = (size_t)vals[k];
            tt_o.nsizes = n;
        } else if (strcmp(name, "--window") == 0) {
            if (tt_parse_int(val, 1, TT_MAX_WINDOW, &tt_o.window) != 0)
                tt_bad("bad --window '%s' (1..4096)", val);
        } else if (strcmp(name, "--iters") == 0) {
            if (tt_parse_int(val, 1, 100000000, &tt_o.iters) != 0)
                tt_bad("bad --iters '%s' (1..100000000)", val);
        } else if (strcmp(name, "--windows") == 0) {
            if (tt_parse_int(val, 1, 10000000, &tt_o.windows) != 0)
                tt_bad("bad --windows '%s' (1..10000000)", val);
        } else if (strcmp(name, "--time") == 0) {
            char *end;
            errno = 0;
            tt_o.budget = strtod(val, &end);
            if (errno != 0 || end == val || *end != '\0' || !(tt_o.budget >= 0) ||
                tt_o.budget > 3600)
                tt_bad("bad --time '%s' (seconds, 0..3600)", val);
        } else if (strcmp(name, "--json") == 0) {
            if (*val == '\0')
                tt_bad("option %s needs a file name", name);
            tt_o.json = val;
        } else if (strcmp(name, "--no-check") == 0) {
            tt_o.check = 0;
        } else if (strcmp(name, "--conn-per-thread") == 0) {
            tt_o.conn_per_thread = 1;
        } else {
            tt_bad("unknown argument '%s'", a);
        }
    }
}

/* ---- payloads: a fixed pattern per (sender rank, thread, slot), and the sequence number
 * stamped over its first and last (up to) 8 bytes, so a stale, reordered or foreign message
 * shows. The receiver rebuilds the expected bytes the same way and compares. */

static void tt_pattern(unsigned char *b, size_t len, int rank, int thread, int slot)
{
    unsigned x = 0x9E3779B9u * (unsigned)(rank + 1) ^ 0x85EBCA6Bu * (unsigned)(thread + 1) ^
                 0xC2B2AE35u * (unsigned)(slot + 1);
    for (size_t k = 0; k < len; k++) {
        x = x * 1103515245u + 12345u;
        b[k] = (unsigned char)(x >> 16);
    }
}

static void tt_stamp(unsigned char *b, size_t len, uint64_t seq)
{
    size_t k = len < 8 ? len : 8;
    unsigned char s[8];
    memcpy(s, &seq, sizeof s);
    memcpy(b, s, k);
    memcpy(b + len - k, s, k);
}

static void tt_verify(struct tt_worker *w, const unsigned char *got, unsigned char *expect,
                      size_t len, uint64_t seq, const char *what)
{
    tt_stamp(expect, len, seq);
    if (len > 0 && memcmp(got, expect, len) != 0) {
        size_t k = 0;
        uint64_t head = 0, tail = 0;
        while (got[k] == expect[k])
            k++;
        if (len >= 8) {
            memcpy(&head, got, 8);
            memcpy(&tail, got + len - 8, 8);
        }
        tt_fail("thread %d: %s %llu of %zu bytes differs at byte %zu (0x%02x, expected 0x%02x); "
                "it carries sequence numbers %llu (head) and %llu (tail)",
                w->idx, what, (unsigned long long)seq, len, k, got[k], expect[k],
                (unsigned long long)head, (unsigned long long)tail);
    }
}

/* Slots are cache-line apart so that neighbouring buffers share no line. */
static size_t tt_stride(size_t len)
{
    return (len + 63) / 64 * 64 + 64;
}

static unsigned char *tt_alloc(size_t n)
{
    unsigned char *p = malloc(n == 0 ? 1 : n);
    if (p == NULL)
        tt_fail("out of memory (%zu bytes)", n);
    return p;
}

/* Warm-up iterations: a tenth, at most cap, at least one. */
static int tt_warmup(int n, int cap)
{
    int w = n / 10;
    return w < 1 ? 1 : w > cap ? cap : w;
}

/* Rank 0 decides how long each run lasts (at most max iterations, at most seconds when
 * seconds > 0) and ends it with a message one byte longer than the payload, which rank 1's
 * receives (posted one byte larger) recognise; so rank 1 never needs to know the count. */
static int tt_more(int done, int max, double t0, double seconds)
{
    return done < max && (seconds <= 0 || done == 0 || tt_wtime() - t0 < seconds);
}

/* Ping-pong round trips numbered from first: rank 0 pings, rank 1 checks and echoes.
 * bufs: send, receive, expected; each len + 1 bytes. Rank 0: returns the number of round
 * trips and their duration in *secs. */
static int tt_pingpong(struct tt_worker *w, unsigned char *const bufs[3], size_t len, int first,
                       int max, double seconds, double *secs)
{
    unsigned char *sbuf = bufs[0], *rbuf = bufs[1], *ebuf = bufs[2];
    int n = 0;
    double t0 = tt_wtime();
    if (tt_rank() == 0) {
        for (; tt_more(n, max, t0, seconds); n++) {
            uint64_t seq = (uint64_t)(first + n);
            if (tt_o.check)
                tt_stamp(sbuf, len, seq);
            tt_send(w->ep, sbuf, len);
            size_t got = tt_recv(w->ep, rbuf, len + 1);
            if (got != len)
                tt_fail("thread %d: echo %llu has %zu bytes, expected %zu", w->idx,
                        (unsigned long long)seq, got, len);
            if (tt_o.check)
                tt_verify(w, rbuf, sbuf, len, seq, "echo");
        }
        *secs = tt_wtime() - t0;
        tt_send(w->ep, sbuf, len + 1);
        return n;
    }
    for (;; n++) {
        uint64_t seq = (uint64_t)(first + n);
        size_t got = tt_recv(w->ep, rbuf, len + 1);
        if (got == len + 1)
            break;
        if (got != len)
            tt_fail("thread %d: ping %llu has %zu bytes, expected %zu", w->idx,
                    (unsigned long long)seq, got, len);
        if (tt_o.check)
            tt_verify(w, rbuf, ebuf, len, seq, "ping");
        tt_send(w->ep, rbuf, len);
    }
    *secs = tt_wtime() - t0;
    return n;
}

/* Streaming windows numbered from first, osu_bw style: rank 0 sends a window of
 * non-blocking messages and waits for them and a short acknowledgement; rank 1 posts a
 * window of receives, waits, checks, acknowledges. bufs (and rank 1's expect) hold window
 * slots of tt_stride(len) > len bytes. Rank 0 returns the windows done, their span in
 * *t0 and *t1. */
static int tt_stream(struct tt_worker *w, unsigned char *bufs, unsigned char *expect, tt_req *req,
                     size_t len, int first, int max, double seconds, double *t0, double *t1)
{
    int win = tt_o.window, n = 0;
    size_t stride = tt_stride(len);
    unsigned char ack[TT_ACK_LEN] = {0};
    *t0 = tt_wtime();
    if (tt_rank() == 0) {
        for (; tt_more(n, max, *t0, seconds); n++) {
            uint64_t seq0 = (uint64_t)(first + n) * (uint64_t)win;
            for (int j = 0; j < win; j++) {
                unsigned char *b = bufs + (size_t)j * stride;
                if (tt_o.check)
                    tt_stamp(b, len, seq0 + (uint64_t)j);
                tt_isend(w->ep, b, len, &req[j]);
            }
            tt_waitall(w->ep, win, req);
            if (tt_recv(w->ep, ack, sizeof ack) != sizeof ack)
                tt_fail("thread %d: acknowledgement of the wrong length", w->idx);
        }
        *t1 = tt_wtime();
        for (int j = 0; j < win; j++)
            tt_isend(w->ep, bufs + (size_t)j * stride, len + 1, &req[j]);
        tt_waitall(w->ep, win, req);
        return n;
    }
    for (;; n++) {
        uint64_t seq0 = (uint64_t)(first + n) * (uint64_t)win;
        for (int j = 0; j < win; j++)
            tt_irecv(w->ep, bufs + (size_t)j * stride, len + 1, &req[j]);
        tt_waitall(w->ep, win, req);
        int stop = req[0].received == len + 1;
        for (int j = 0; j < win; j++) {
            if (req[j].received != (stop ? len + 1 : len))
                tt_fail("thread %d: message %llu has %zu bytes, expected %zu", w->idx,
                        (unsigned long long)(seq0 + (uint64_t)j), req[j].received,
                        stop ? len + 1 : len);
            if (!stop && tt_o.check)
                tt_verify(w, bufs + (size_t)j * stride, expect + (size_t)j * stride, len,
                          seq0 + (uint64_t)j, "message");
        }
        if (stop)
            break;
        tt_send(w->ep, ack, sizeof ack);
    }
    *t1 = tt_wtime();
    return n;
}

/* All threads of this process, then both processes: thread 0 joins the process barrier
 * between two thread barriers. */
static void tt_sync(struct tt_worker *w)
{
    pthread_barrier_wait(&tt_bar);
    if (w->idx == 0)
        tt_barrier(w->ep);
    pthread_barrier_wait(&tt_bar);
}

/* --jsonl (rank 0): the header once the library is up, then a record per figure. */
static const char *tt_jsonl_path;
static FILE *tt_jsonl;
static char **tt_argv;
static int tt_argc;

static void tt_jsonl_header(void)
{
    if (tt_jsonl == NULL)
        return;
    char opts[256], host[256] = "";
    if (gethostname(host, sizeof host - 1) != 0)
        host[0] = '?';
    snprintf(opts, sizeof opts,
             "{\"window\":%d,\"max_iters\":%d,\"max_windows\":%d,\"time_per_run_s\":%g,"
             "\"check\":%s,\"conn_per_thread\":%s}",
             tt_o.window, tt_o.iters, tt_o.windows, tt_o.budget, tt_o.check ? "true" : "false",
             tt_o.conn_per_thread ? "true" : "false");
    struct bench_jsonl_prov h = {.tool = "threadtest",
                                 .flavour = bench_jsonl_flavour(tt_library()),
                                 .library = tt_library(),
                                 .version = tt_library(),
                                 .transport = tt_transport(),
                                 .hosts = host,
                                 .host_each = sizeof host,
                                 .nhosts = 1,
                                 .nprocs = 2,
                                 .argc = tt_argc,
                                 .argv = tt_argv,
                                 .options = opts};
    bench_jsonl_header(tt_jsonl, &h);
}

static void tt_jsonl_result(const struct tt_result *r)
{
    if (tt_jsonl == NULL)
        return;
    struct bench_jsonl_rec e = bench_jsonl_rec_init("pingpong", "latency", "us", "mean");
    e.size = (long long)r->size;
    e.threads = r->threads;
    e.n = r->iters;
    e.value = r->lat_avg_us;
    bench_jsonl_write(tt_jsonl, "threadtest", &e);
    e.statistic = "max";
    e.value = r->lat_max_us;
    bench_jsonl_write(tt_jsonl, "threadtest", &e);
    e = bench_jsonl_rec_init("stream", "msg_rate", "msg/s", "aggregate");
    e.size = (long long)r->size;
    e.threads = r->threads;
    e.n = r->windows;
    e.value = r->msg_rate;
    bench_jsonl_write(tt_jsonl, "threadtest", &e);
    e.metric = "bandwidth";
    e.unit = "MB/s";
    e.value = r->msg_rate * (double)r->size / 1e6;
    bench_jsonl_write(tt_jsonl, "threadtest", &e);
}

/* Thread 0 of rank 0, after the barrier that ends a configuration. */
static void tt_report(int threads, size_t len)
{
    struct tt_result *r = &tt_res[tt_nres++];
    double t0 = tt_w[0].t0, t1 = tt_w[0].t1, lat = 0, latmax = 0, iters = 0, windows = 0;
    for (int i = 0; i < threads; i++) {
        if (tt_w[i].t0 < t0)
            t0 = tt_w[i].t0;
        if (tt_w[i].t1 > t1)
            t1 = tt_w[i].t1;
        lat += tt_w[i].lat_us;
        if (tt_w[i].lat_us > latmax)
            latmax = tt_w[i].lat_us;
        iters += tt_w[i].iters;
        windows += tt_w[i].windows;
    }
    r->threads = threads;
    r->size = len;
    r->lat_avg_us = lat / threads;
    r->lat_max_us = latmax;
    r->msg_rate = windows * tt_o.window / (t1 - t0);
    r->iters = (int)(iters / threads + 0.5);
    r->windows = (int)(windows / threads + 0.5);
    tt_jsonl_result(r);
    printf("%8d %9zu %12.2f %12.2f %14.0f %12.1f %9d %8d\n", threads, len, r->lat_avg_us,
           r->lat_max_us, r->msg_rate, r->msg_rate * (double)len / 1e6, r->iters, r->windows);
    fflush(stdout);
}

/* One configuration (threads, len) on this thread: ping-pong, then streaming, each a short
 * warm-up and then the timed run. Every thread takes part in the barriers; those beyond
 * `threads` only wait. */
static void tt_config(struct tt_worker *w, int threads, size_t len)
{
    int rank = tt_rank(), active = w->idx < threads, win = tt_o.window;
    int warm_pp = tt_warmup(tt_o.iters, 100), warm_st = tt_warmup(tt_o.windows, 10);
    double secs, t0, t1, warm_secs = tt_o.budget / 4;
    size_t stride = tt_stride(len);
    unsigned char *pp[3] = {NULL, NULL, NULL}, *bufs = NULL, *expect = NULL;
    tt_req *req = NULL;
    if (active) {
        for (int k = 0; k < 3; k++)
            pp[k] = tt_alloc(len + 1);
        tt_pattern(pp[0], len, rank, w->idx, 0);
        tt_pattern(pp[2], len, 1 - rank, w->idx, 0);
        bufs = tt_alloc(stride * (size_t)win);
        req = calloc((size_t)win, sizeof *req);
        if (req == NULL)
            tt_fail("out of memory");
        for (int j = 0; j < win; j++)
            tt_pattern(bufs + (size_t)j * stride, len, rank, w->idx, j);
        if (rank == 1) {
            expect = tt_alloc(stride * (size_t)win);
            for (int j = 0; j < win; j++)
                tt_pattern(expect + (size_t)j * stride, len, 0, w->idx, j);
        }
    }

    tt_sync(w);
    if (active) {
        int n = tt_pingpong(w, pp, len, 0, warm_pp, warm_secs, &secs);
        w->iters = tt_pingpong(w, pp, len, n, tt_o.iters, tt_o.budget, &secs);
        w->lat_us = secs / w->iters / 2 * 1e6;
    }
    tt_sync(w);
    if (active) {
        int n = tt_stream(w, bufs, expect, req, len, 0, warm_st, warm_secs, &t0, &t1);
        w->windows =
            tt_stream(w, bufs, expect, req, len, n, tt_o.windows, tt_o.budget, &w->t0, &w->t1);
    }
    tt_sync(w);
    if (w->idx == 0 && rank == 0)
        tt_report(threads, len);
    for (int k = 0; k < 3; k++)
        free(pp[k]);
    free(bufs);
    free(expect);
    free(req);
}

/* The header (rank 0), once the library is initialised: the transport is known then. */
static void tt_header(void)
{
    printf("# %s: %s, transport %s, 2 processes, up to %d threads each\n", TT_PROG, tt_library(),
           tt_transport(), tt_tmax);
    printf("# connections: %s\n", tt_connections());
    printf("# window %d, at most %d round trips and %d windows per thread, about %g s per "
           "timed run, payload check %s\n",
           tt_o.window, tt_o.iters, tt_o.windows, tt_o.budget, tt_o.check ? "on" : "off");
    printf("# lat: one-way ping-pong latency per thread (average, worst); rate: aggregate "
           "streaming messages/s of all threads\n");
    printf("#threads      size   lat_avg_us   lat_max_us      msg_per_s     MB_per_s     "
           "iters  windows\n");
    fflush(stdout);
    tt_jsonl_header();
}

static void *tt_worker_main(void *arg)
{
    struct tt_worker *w = arg;
    w->ep = tt_open(w->idx, tt_o.window);
    tt_sync(w);
    if (w->idx == 0 && tt_rank() == 0)
        tt_header();
    for (int ti = 0; ti < tt_o.nthreads; ti++)
        for (int si = 0; si < tt_o.nsizes; si++)
            tt_config(w, tt_o.threads[ti], tt_o.sizes[si]);
    tt_sync(w);
    tt_close(w->ep);
    return NULL;
}

static int tt_write_json(const char *path)
{
    FILE *f = fopen(path, "w");
    if (f == NULL) {
        fprintf(stderr, TT_PROG ": cannot write %s: %s\n", path, strerror(errno));
        return -1;
    }
    fprintf(f, "{\n  \"benchmark\": \"threadtest\",\n  \"program\": \"" TT_PROG "\",\n");
    fprintf(f, "  \"library\": ");
    bench_json_str(f, tt_library());
    fprintf(f, ",\n  \"transport\": ");
    bench_json_str(f, tt_transport());
    fprintf(f, ",\n  \"connections\": ");
    bench_json_str(f, tt_connections());
    fprintf(f,
            ",\n  \"conn_per_thread\": %s,\n  \"window\": %d,\n  \"max_iters\": %d,\n"
            "  \"max_windows\": %d,\n  \"time_per_run_s\": %g,\n  \"check\": %s,\n"
            "  \"results\": [\n",
            tt_o.conn_per_thread ? "true" : "false", tt_o.window, tt_o.iters, tt_o.windows,
            tt_o.budget, tt_o.check ? "true" : "false");
    for (int i = 0; i < tt_nres; i++) {
        const struct tt_result *r = &tt_res[i];
        fprintf(f,
                "    {\"threads\": %d, \"size\": %zu, \"lat_avg_us\": %.3f, "
                "\"lat_max_us\": %.3f, \"msg_per_s\": %.0f, \"mb_per_s\": %.3f, "
                "\"iters\": %d, \"windows\": %d}%s\n",
                r->threads, r->size, r->lat_avg_us, r->lat_max_us, r->msg_rate,
                r->msg_rate * (double)r->size / 1e6, r->iters, r->windows,
                i + 1 < tt_nres ? "," : "");
    }
    fprintf(f, "  ]\n}\n");
    if (fclose(f) != 0) {
        fprintf(stderr, TT_PROG ": cannot write %s: %s\n", path, strerror(errno));
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    int rc = 0;
    if (bench_version(argc, argv))
        return 0;
    if (bench_jsonl_take_arg(&argc, argv, TT_PROG, &tt_jsonl_path) != 0)
        return 2;
    tt_argc = argc;
    tt_argv = argv;
    tt_parse_args(argc, argv);
    for (int i = 0; i < tt_o.nthreads; i++)
        if (tt_o.threads[i] > tt_tmax)
            tt_tmax = tt_o.threads[i];
    /* The --jsonl file is rank 0's, opened before the job starts: a bad path fails at once. */
    if (tt_early_rank() == 0 && tt_jsonl_path != NULL &&
        (tt_jsonl = bench_jsonl_open(tt_jsonl_path, TT_PROG)) == NULL)
        return 2;
    if ((rc = tt_init(&argc, &argv, tt_o.conn_per_thread)) != 0) {
        if (tt_jsonl != NULL)
            fclose(tt_jsonl);
        return rc;
    }
    if (tt_rank() != 0 && tt_jsonl != NULL) { /* the launcher's rank was not known early */
        fclose(tt_jsonl);
        tt_jsonl = NULL;
    }
    if (tt_size() != 2) {
        if (tt_rank() == 0)
            fprintf(stderr, TT_PROG ": needs exactly 2 processes, has %d (%s)\n", tt_size(),
#ifdef TT_MPI
                    "mpirun -np 2 threadtest-mpi"
#else
                    "csnrun -np 2 threadtest"
#endif
            );
        if (tt_jsonl != NULL)
            fclose(tt_jsonl);
        tt_finalize();
        return 2;
    }
    if (tt_rank() == 0 && tt_tmax > 32) /* the set-up takes a while: say what is going on */
        fprintf(stderr, TT_PROG ": starting %d threads per process, each with its own endpoint\n",
                tt_tmax);
    double tt_start = tt_wtime();
    tt_w = calloc((size_t)tt_tmax, sizeof *tt_w);
    if (tt_w == NULL || pthread_barrier_init(&tt_bar, NULL, (unsigned)tt_tmax) != 0)
        tt_fail("cannot set up %d threads", tt_tmax);
    for (int i = 0; i < tt_tmax; i++) {
        tt_w[i].idx = i;
        if (i > 0 && pthread_create(&tt_w[i].th, NULL, tt_worker_main, &tt_w[i]) != 0)
            tt_fail("cannot create thread %d of %d", i, tt_tmax);
    }
    tt_worker_main(&tt_w[0]);
    for (int i = 1; i < tt_tmax; i++)
        pthread_join(tt_w[i].th, NULL);
    if (tt_rank() == 0 && tt_o.json != NULL && tt_write_json(tt_o.json) != 0)
        rc = 1;
    if (bench_jsonl_close(tt_jsonl, "threadtest", tt_jsonl_path, rc == 0 ? "ok" : "error",
                          tt_wtime() - tt_start) != 0)
        rc = 1;
    pthread_barrier_destroy(&tt_bar);
    free(tt_w);
    tt_finalize();
    return rc;
}
