/* pingpong.c: two-rank latency, windowed and bidirectional bandwidth over the bench comm layer. */
#include "tool.h"
#include <errno.h>
#include "parse_size.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comm.h"
#include "ppcommon.h"
#include "json.h"
#include "jsonl.h"

enum { PP_LAT = 1, PP_BW = 2, PP_BIBW = 4 };
#define PP_ACK_LEN 4
#define PP_HOST_LEN 256

/* pingpong-lean: the same loop on bench/common/comm_lean.c, no library. That layer holds one
 * message per pair and direction, so a bandwidth window would wait on itself: latency only. Its
 * defaults suit a ping-pong (two ranks, small messages through shared memory as csn's are,
 * spinning as both libraries do with a CPU each); the environment overrides them. */
#ifdef PINGPONG_LEAN
#define PP_TESTS PP_LAT
#define PP_USAGE_HEAD                                                                              \
    "usage: pingpong-lean [OPTIONS]  (forks its 2 ranks: no launcher, no library)\n"               \
    "pingpong's latency test on the least a message layer does (bench/common/comm_lean.c:\n"       \
    "flags in shared memory; up to LEAN_EAGER bytes copied through it, beyond pulled with\n"       \
    "process_vm_readv), as a floor for csn and Open MPI under the same loop. Defaults:\n"          \
    "LEAN_NP=2, LEAN_EAGER=16384, LEAN_YIELD=1000 (a wait yields at every 1000th idle turn).\n"
#else
#define PP_TESTS (PP_LAT | PP_BW | PP_BIBW)
#define PP_USAGE_HEAD                                                                              \
    "usage: pingpong [OPTIONS]      (run with 2 ranks: csnrun -np 2 pingpong,\n"                   \
    "                                or mpirun -np 2 pingpong-mpi)\n"
#endif

static const char pingpong_usage[] = PP_USAGE_HEAD
    "Latency (half round trip), bandwidth (a window of non-blocking sends, the receiver\n"
    "posts as many receives, then a short ack) and bidirectional bandwidth, per size.\n"
    "Each size: warm-up, then timed batches; latency reports median and min, bandwidth\n"
    "median and max. MB/s means 1e6 bytes per second.\n"
    "Options:\n" PP_COMMON_HELP PP_JSONL_HELP
#ifdef PINGPONG_LEAN
    "  --test lat         the only test (default)\n"
#else
    "  --test LIST        any of lat,bw,bibw (default all three)\n"
#endif
    "  --no-check         do not fill and check the payload\n"
    "  --reuse-buffer     bw and bibw: every message of a window into one receive buffer\n"
    "                     (as OSU's osu_bw does); default: one buffer per message\n"
    "  --help             this text\n"
    "  --version          the version\n" BENCH_SIZE_RULES;

/* --jsonl (rank 0): every sample, the median and the best value, as they are measured. */
static FILE *pingpong_jsonl;

struct pingpong_opts {
    struct pp_common c;
    unsigned tests;
    int check;
    int reuse; /* --reuse-buffer */
};

/* One row of results; NAN where a test was not run. */
struct pingpong_row {
    size_t size;
    double lat_med, lat_min, bw_med, bw_max, bibw_med, bibw_max;
    long lat_iters, bw_iters, bibw_iters;
    int bw_window;
};

/* What a batch needs: buffers (sbuf: this rank's messages; arena: receive buffers, one per
 * message of a window) and the requests of one window in each direction. */
struct pingpong_ctx {
    int rank, peer;
    unsigned char *sbuf, *arena;
    comm_req *req;
    int check;
    int reuse; /* every message of a window into arena (--reuse-buffer) */
};

static int pingpong_parse_tests(const char *s, unsigned *out)
{
    *out = 0;
    const char *p = s;
    while (*p != '\0') {
        size_t n = strcspn(p, ",");
        if (n == 3 && strncmp(p, "lat", 3) == 0)
            *out |= PP_LAT;
        else if (n == 2 && strncmp(p, "bw", 2) == 0)
            *out |= PP_BW;
        else if (n == 4 && strncmp(p, "bibw", 4) == 0)
            *out |= PP_BIBW;
        else
            return -1;
        p += n;
        if (*p == ',')
            p++;
    }
    return *out != 0 ? 0 : -1;
}

/* Returns 0 to run, 1 after --help, 2 on a usage error (one line already printed). */
static int pingpong_parse(int argc, char **argv, struct pingpong_opts *o)
{
    pp_common_defaults(&o->c);
    o->tests = PP_TESTS;
    o->check = 1;
    o->reuse = 0;
    for (int i = 1; i < argc; i++) {
        const char *v;
        int r = pp_common_arg(argc, argv, &i, &o->c, "pingpong");
        if (r < 0)
            return 2;
        if (r > 0)
            continue;
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            fputs(pingpong_usage, stdout);
            return 1;
        }
        if (strcmp(argv[i], "--no-check") == 0) {
            o->check = 0;
            continue;
        }
        if (strcmp(argv[i], "--reuse-buffer") == 0) {
            o->reuse = 1;
            continue;
        }
        r = pp_opt(argc, argv, &i, "--test", &v);
        if (r < 0) {
            fprintf(stderr, "pingpong: option --test needs a value\n");
            return 2;
        }
        if (r > 0) {
            if (pingpong_parse_tests(v, &o->tests) != 0) {
                fprintf(stderr, "pingpong: bad value '%s' for --test (any of lat,bw,bibw)\n", v);
                return 2;
            }
            if (o->tests & ~PP_TESTS) {
                fprintf(stderr, "pingpong-lean: --test lat only (its layer holds one message per "
                                "pair and direction)\n");
                return 2;
            }
            continue;
        }
        fprintf(stderr, "pingpong: unknown argument '%s' (see --help)\n", argv[i]);
        return 2;
    }
    return pp_common_finish(&o->c, "pingpong") == 0 ? 0 : 2;
}

/* The pattern seed of the messages that rank sends in one sample: differs per direction,
 * test, size and sample, so that a message left over from an earlier sample is caught. */
static uint64_t pingpong_seed(int sender, unsigned test, size_t size, int sample)
{
    return ((uint64_t)size << 20) ^ ((uint64_t)test << 12) ^ ((uint64_t)sample << 2) ^
           (uint64_t)sender;
}

static void pingpong_expect_len(size_t got, size_t want, int status, const char *what)
{
    if (status != 0)
        comm_abort(1, "pingpong: %s: receive failed: %s", what, comm_status_string(status));
    if (got != want)
        comm_abort(1, "pingpong: %s: received %zu bytes, expected %zu", what, got, want);
}

static void pingpong_send(const void *buf, size_t len, int dst, const char *what)
{
    int st = comm_send(buf, len, dst);
    if (st != 0)
        comm_abort(1, "pingpong: %s: send failed: %s", what, comm_status_string(st));
}

static void pingpong_sends_ok(const comm_req *r, int n, const char *what)
{
    for (int j = 0; j < n; j++)
        if (r[j].status != 0)
            comm_abort(1, "pingpong: %s: send failed: %s", what, comm_status_string(r[j].status));
}

/* Runs n iterations of test at size; returns the elapsed seconds (meaningful on rank 0). */
static double pingpong_batch(struct pingpong_ctx *c, unsigned test, size_t size, int window, long n)
{
    unsigned char ack[PP_ACK_LEN] = {0};
    size_t got;
    int from;
    size_t stride = c->reuse ? 0 : size; /* between the receive buffers of a window */
    double t0 = comm_wtime();
    if (test == PP_LAT) {
        for (long i = 0; i < n; i++) {
            int st;
            if (c->rank == 0) {
                pingpong_send(c->sbuf, size, c->peer, "latency");
                st = comm_recv(c->arena, size, c->peer, &got, &from);
            } else {
                st = comm_recv(c->arena, size, c->peer, &got, &from);
                pingpong_send(c->sbuf, size, c->peer, "latency");
            }
            pingpong_expect_len(got, size, st, "latency");
        }
    } else if (test == PP_BW) {
        for (long i = 0; i < n; i++) {
            if (c->rank == 0) {
                for (int j = 0; j < window; j++)
                    comm_isend(c->sbuf, size, c->peer, &c->req[j]);
                comm_waitall(window, c->req);
                pingpong_sends_ok(c->req, window, "bandwidth");
                int st = comm_recv(ack, sizeof ack, c->peer, &got, &from);
                pingpong_expect_len(got, sizeof ack, st, "bandwidth ack");
            } else {
                for (int j = 0; j < window; j++)
                    comm_irecv(c->arena + (size_t)j * stride, size, c->peer, &c->req[j]);
                comm_waitall(window, c->req);
                for (int j = 0; j < window; j++)
                    pingpong_expect_len(c->req[j].len, size, c->req[j].status, "bandwidth");
                pingpong_send(ack, sizeof ack, c->peer, "bandwidth ack");
            }
        }
    } else {
        for (long i = 0; i < n; i++) {
            for (int j = 0; j < window; j++)
                comm_irecv(c->arena + (size_t)j * stride, size, c->peer, &c->req[j]);
            for (int j = 0; j < window; j++)
                comm_isend(c->sbuf, size, c->peer, &c->req[window + j]);
            comm_waitall(2 * window, c->req);
            for (int j = 0; j < window; j++)
                pingpong_expect_len(c->req[j].len, size, c->req[j].status, "bidirectional");
            pingpong_sends_ok(c->req + window, window, "bidirectional");
        }
        /* The clock stops when rank 1 has received everything too. */
        if (c->rank == 0) {
            int st = comm_recv(ack, sizeof ack, c->peer, &got, &from);
            pingpong_expect_len(got, sizeof ack, st, "bidirectional ack");
        } else {
            pingpong_send(ack, sizeof ack, c->peer, "bidirectional ack");
        }
    }
    return comm_wtime() - t0;
}

/* Warm-up and choice of the iterations per batch. Without --iters, batches of 1, 2, 4, ...
 * iterations run until they add up to one sample's time, and at least three of them; the
 * fastest gives the time per iteration (a stall in one warm-up batch must not shrink every
 * later batch to one iteration). The first message of a size may be a stall of its own: over
 * libfabric's tcp provider the first large one to a peer sets up the provider's connection
 * (tens of ms), which alone filled the budget and left 256 KiB measured in batches of one
 * iteration. A slow case (one core shared by both ranks) still costs few iterations. */
static long pingpong_calibrate(struct pingpong_ctx *c, const struct pp_common *o, unsigned test,
                               size_t size, int window)
{
    if (o->iters > 0) {
        long w = o->warmup >= 0 ? o->warmup : (o->iters / 10 > 0 ? o->iters / 10 : 1);
        if (w > 0)
            pingpong_batch(c, test, size, window, w);
        return o->iters;
    }
    double budget = o->sample_ms * 1e-3, total = 0.0, per_iter = 0.0;
    long n = 1;
    for (;;) {
        double t = pingpong_batch(c, test, size, window, n);
        int more = 0;
        if (c->rank == 0) {
            total += t;
            if (per_iter == 0.0 || t / (double)n < per_iter)
                per_iter = t / (double)n;
            more = (total < budget || n < 4) && n < (1L << 22); /* n: 1, 2, 4 at least */
        }
        comm_bcast_int(&more, 1);
        if (!more)
            break;
        n *= 2;
    }
    if (o->warmup > 0)
        pingpong_batch(c, test, size, window, o->warmup);
    int iters = 1;
    if (c->rank == 0 && per_iter > 0.0) {
        double want = ceil(budget / per_iter);
        iters = want > 1e7 ? 10000000 : (want < 1.0 ? 1 : (int)want);
    }
    comm_bcast_int(&iters, 1);
    return iters;
}

/* A --jsonl record of test (its name, metric and unit). */
static struct bench_jsonl_rec pingpong_jsonl_rec(unsigned test, const char *statistic)
{
    if (test == PP_LAT)
        return bench_jsonl_rec_init("lat", "latency", "us", statistic);
    return bench_jsonl_rec_init(test == PP_BW ? "bw" : "bibw", "bandwidth", "MB/s", statistic);
}

/* Runs one test at one size: calibration, then o->samples checked batches. Fills the
 * median and the best value (min latency, max bandwidth). */
static void pingpong_run(struct pingpong_ctx *c, const struct pp_common *o, unsigned test,
                         size_t size, double *med, double *best, long *iters_out, int *window_out)
{
    int window = test == PP_LAT ? 1 : pp_window_for(size, o->window, o->window_bytes);
    long iters = pingpong_calibrate(c, o, test, size, window);
    double v[PP_MAX_SAMPLES];
    /* Who checks what: latency and bibw, both ranks; bw, rank 1 only. */
    int receives = test != PP_BW || c->rank == 1;
    int sends = test != PP_BW || c->rank == 0;
    int nbuf = test == PP_LAT || c->reuse ? 1 : window;
    for (int s = 0; s < o->samples; s++) {
        if (c->check && sends)
            pp_fill(c->sbuf, size, pingpong_seed(c->rank, test, size, s));
        comm_barrier();
        double t = pingpong_batch(c, test, size, window, iters);
        if (c->check && receives) {
            uint64_t seed = pingpong_seed(c->peer, test, size, s);
            for (int b = 0; b < nbuf; b++) {
                size_t bad = pp_check(c->arena + (size_t)b * size, size, seed);
                if (bad != (size_t)-1)
                    comm_abort(
                        1, "pingpong: payload mismatch: size %zu, sample %d, buffer %d, byte %zu",
                        size, s, b, bad);
            }
        }
        double bytes = (double)size * window * (double)iters;
        if (test == PP_LAT)
            v[s] = t / (2.0 * (double)iters) * 1e6;
        else
            v[s] = (test == PP_BIBW ? 2.0 : 1.0) * bytes / t / 1e6;
    }
    *best = test == PP_LAT ? pp_min(v, o->samples) : pp_max(v, o->samples);
    if (pingpong_jsonl != NULL) {
        struct bench_jsonl_rec e = pingpong_jsonl_rec(test, "sample");
        e.size = (long long)size;
        for (int s = 0; s < o->samples; s++) {
            e.repeat = s + 1;
            e.value = v[s];
            bench_jsonl_write(pingpong_jsonl, "pingpong", &e);
        }
        e.repeat = 0;
        e.n = o->samples;
        e.statistic = test == PP_LAT ? "min" : "max";
        e.value = *best;
        bench_jsonl_write(pingpong_jsonl, "pingpong", &e);
    }
    *med = pp_median(v, o->samples);
    if (pingpong_jsonl != NULL) {
        struct bench_jsonl_rec e = pingpong_jsonl_rec(test, "median");
        e.size = (long long)size;
        e.n = o->samples;
        e.value = *med;
        bench_jsonl_write(pingpong_jsonl, "pingpong", &e);
    }
    *iters_out = iters;
    *window_out = window;
}

static void pingpong_cell(char *buf, size_t cap, double v, int prec)
{
    if (isnan(v))
        snprintf(buf, cap, "-");
    else
        snprintf(buf, cap, "%.*f", prec, v);
}

static void pingpong_print_header(const struct pingpong_opts *o, const char *hosts)
{
    const struct pp_common *c = &o->c;
    char wb[32];
    printf("# pingpong: %s over %s, 2 ranks on %s\n", comm_library(), comm_transport(), hosts);
    printf("# latency: half round trip in us, median and min of %d batches\n", c->samples);
    printf("# bandwidth: MB/s (1e6 B/s), median and max of %d batches; window of %d messages "
           "(at most %s bytes per window), then a %d-byte ack; bibw: both ranks send a window\n",
           c->samples, c->window, pp_size_str(c->window_bytes, wb, sizeof wb), PP_ACK_LEN);
    printf("# receive buffers (bw, bibw): %s\n",
           o->reuse ? "one for every message of a window (--reuse-buffer)" : "one per message");
    printf("# payload check: %s; iterations per batch: %s\n", o->check ? "on" : "off",
           c->iters > 0 ? "fixed (--iters)" : "calibrated to --sample-ms");
    printf("%10s", "size");
    if (o->tests & PP_LAT)
        printf(" %10s %10s %9s", "lat_med", "lat_min", "iters");
    if (o->tests & PP_BW)
        printf(" %10s %10s %9s", "bw_med", "bw_max", "iters");
    if (o->tests & PP_BIBW)
        printf(" %10s %10s %9s", "bibw_med", "bibw_max", "iters");
    printf("\n");
    fflush(stdout);
}

/* Prints median, best and iterations of one test, or dashes when it did not run. */
static void pingpong_print_cells(double med, double best, long iters, int prec)
{
    char a[32], b[32], n[32];
    pingpong_cell(a, sizeof a, med, prec);
    pingpong_cell(b, sizeof b, best, prec);
    if (isnan(med))
        snprintf(n, sizeof n, "-");
    else
        snprintf(n, sizeof n, "%ld", iters);
    printf(" %10s %10s %9s", a, b, n);
}

static void pingpong_print_row(const struct pingpong_opts *o, const struct pingpong_row *r)
{
    printf("%10zu", r->size);
    if (o->tests & PP_LAT)
        pingpong_print_cells(r->lat_med, r->lat_min, r->lat_iters, 2);
    if (o->tests & PP_BW)
        pingpong_print_cells(r->bw_med, r->bw_max, r->bw_iters, 1);
    if (o->tests & PP_BIBW)
        pingpong_print_cells(r->bibw_med, r->bibw_max, r->bibw_iters, 1);
    printf("\n");
    fflush(stdout);
}

static void pingpong_json_pair(FILE *f, const char *name, double med, const char *bestname,
                               double best, long iters, int window)
{
    if (isnan(med)) {
        fprintf(f, ", \"%s\": null", name);
        return;
    }
    fprintf(f, ", \"%s\": {\"median\": %.6g, \"%s\": %.6g, \"iters\": %ld", name, med, bestname,
            best, iters);
    if (window > 0)
        fprintf(f, ", \"window\": %d", window);
    fputc('}', f);
}

static int pingpong_write_json(FILE *f, const struct pingpong_opts *o, const char *hosts,
                               const struct pingpong_row *rows, int n)
{
    fprintf(f, "{\n\"benchmark\": \"pingpong\",\n\"library\": ");
    bench_json_str(f, comm_library());
    fprintf(f, ",\n\"transport\": ");
    bench_json_str(f, comm_transport());
    fprintf(f, ",\n\"hosts\": ");
    bench_json_str(f, hosts);
    fprintf(f,
            ",\n\"samples\": %d,\n\"window\": %d,\n\"window_bytes\": %zu,\n\"check\": %s,\n"
            "\"reuse_buffer\": %s,\n"
            "\"units\": {\"lat\": \"us, half round trip\", \"bw\": \"MB/s (1e6 B/s)\"},\n"
            "\"results\": [\n",
            o->c.samples, o->c.window, o->c.window_bytes, o->check ? "true" : "false",
            o->reuse ? "true" : "false");
    for (int i = 0; i < n; i++) {
        const struct pingpong_row *r = &rows[i];
        fprintf(f, "{\"size\": %zu", r->size);
        pingpong_json_pair(f, "lat_us", r->lat_med, "min", r->lat_min, r->lat_iters, 0);
        pingpong_json_pair(f, "bw_MBps", r->bw_med, "max", r->bw_max, r->bw_iters, r->bw_window);
        pingpong_json_pair(f, "bibw_MBps", r->bibw_med, "max", r->bibw_max, r->bibw_iters,
                           r->bw_window);
        fprintf(f, "}%s\n", i + 1 < n ? "," : "");
    }
    fprintf(f, "]\n}\n");
    return ferror(f) ? -1 : 0;
}

int main(int argc, char **argv)
{
    struct pingpong_opts o;
    int quiet[2];
    if (bench_version(argc, argv))
        return 0;
    bench_quiet_begin(quiet); /* --help and usage errors from rank 0 only */
    const char *jsonl_path = NULL;
    if (bench_jsonl_take_arg(&argc, argv, "pingpong", &jsonl_path) != 0)
        return 2;
    int rc = pingpong_parse(argc, argv, &o);
    bench_quiet_end(quiet, rc);
    if (rc != 0)
        return rc == 1 ? 0 : 2;
#ifdef PINGPONG_LEAN
    const char *np = getenv("LEAN_NP");
    if (np != NULL && strcmp(np, "2") != 0) {
        fprintf(stderr, "pingpong-lean: LEAN_NP must be 2 (its two ranks), not '%s'\n", np);
        return 2;
    }
    if (setenv("LEAN_NP", "2", 0) != 0 || setenv("LEAN_EAGER", "16384", 0) != 0 ||
        setenv("LEAN_YIELD", "1000", 0) != 0) {
        fprintf(stderr, "pingpong-lean: cannot set its defaults: %s\n", strerror(errno));
        return 1;
    }
#endif
    if (comm_init(&argc, &argv) != 0)
        return 1;
    double start0 = comm_wtime();

    struct pingpong_ctx c = {.check = o.check, .reuse = o.reuse};
    struct pingpong_row *rows = NULL;
    char *hosts = NULL;
    FILE *json = NULL;
    rc = 0;
    if (comm_size() != 2) {
        if (comm_rank() == 0 && bench_env_rank() <= 0)
            fprintf(stderr, "%s: needs exactly 2 ranks, got %d (%s -np 2 %s)\n",
                    bench_prog(argv[0]), comm_size(), bench_launcher(bench_prog(argv[0])),
                    bench_prog(argv[0]));
        rc = 2;
        goto out;
    }
    c.rank = comm_rank();
    c.peer = 1 - c.rank;

    /* The JSON file is opened first, so that a bad name fails before any measurement. */
    int ok = 1;
    if (c.rank == 0 && o.c.json != NULL) {
        json = fopen(o.c.json, "w");
        if (json == NULL) {
            fprintf(stderr, "%s: cannot write --json file '%s': %s\n", bench_prog(argv[0]),
                    o.c.json, strerror(errno));
            ok = 0;
        }
    }
    if (c.rank == 0 && ok && jsonl_path != NULL &&
        (pingpong_jsonl = bench_jsonl_open(jsonl_path, "pingpong")) == NULL)
        ok = 0;
    comm_bcast_int(&ok, 1);
    if (!ok) {
        rc = 2;
        goto out;
    }

    size_t maxsize = 0, arena = 0;
    for (int i = 0; i < o.c.sizes.n; i++) {
        size_t s = o.c.sizes.v[i];
        size_t a = o.reuse ? s : s * (size_t)pp_window_for(s, o.c.window, o.c.window_bytes);
        maxsize = s > maxsize ? s : maxsize;
        arena = a > arena ? a : arena;
    }
    c.sbuf = pp_alloc(maxsize);
    c.arena = pp_alloc(arena);
    c.req = calloc(2 * (size_t)o.c.window, sizeof *c.req);
    rows = calloc((size_t)o.c.sizes.n, sizeof *rows);
    hosts = calloc(2, PP_HOST_LEN);
    if (c.sbuf == NULL || c.arena == NULL || c.req == NULL || rows == NULL || hosts == NULL)
        comm_abort(1, "pingpong: out of memory (%zu + %zu bytes of buffers)", maxsize, arena);

    comm_gather_str(comm_hostname(), hosts, PP_HOST_LEN);
    char hostlist[2 * PP_HOST_LEN + 2] = "";
    if (c.rank == 0) {
        hosts[PP_HOST_LEN - 1] = hosts[2 * PP_HOST_LEN - 1] = '\0';
        snprintf(hostlist, sizeof hostlist, "%s,%s", hosts, hosts + PP_HOST_LEN);
        pingpong_print_header(&o, hostlist);
        if (pingpong_jsonl != NULL) {
            char opts[256];
            snprintf(opts, sizeof opts,
                     "{\"samples\":%d,\"iters\":%ld,\"window\":%d,\"window_bytes\":%zu,"
                     "\"sample_ms\":%g,\"tests\":%u,\"check\":%s,\"reuse_buffer\":%s}",
                     o.c.samples, o.c.iters, o.c.window, o.c.window_bytes, o.c.sample_ms, o.tests,
                     o.check ? "true" : "false", o.reuse ? "true" : "false");
            struct bench_jsonl_prov h = {.tool = "pingpong",
                                         .flavour = bench_jsonl_flavour(comm_library()),
                                         .library = comm_library(),
                                         .version = comm_library(),
                                         .transport = comm_transport(),
                                         .hosts = hosts,
                                         .host_each = PP_HOST_LEN,
                                         .nhosts = 2,
                                         .argc = argc,
                                         .argv = argv,
                                         .options = opts};
            bench_jsonl_header(pingpong_jsonl, &h);
        }
    }

    for (int i = 0; i < o.c.sizes.n; i++) {
        struct pingpong_row *r = &rows[i];
        r->size = o.c.sizes.v[i];
        r->lat_med = r->lat_min = r->bw_med = r->bw_max = r->bibw_med = r->bibw_max = NAN;
        int w;
        if (o.tests & PP_LAT)
            pingpong_run(&c, &o.c, PP_LAT, r->size, &r->lat_med, &r->lat_min, &r->lat_iters, &w);
        /* Bandwidth of empty messages means nothing: those cells stay empty. */
        if ((o.tests & PP_BW) && r->size > 0)
            pingpong_run(&c, &o.c, PP_BW, r->size, &r->bw_med, &r->bw_max, &r->bw_iters,
                         &r->bw_window);
        if ((o.tests & PP_BIBW) && r->size > 0)
            pingpong_run(&c, &o.c, PP_BIBW, r->size, &r->bibw_med, &r->bibw_max, &r->bibw_iters,
                         &r->bw_window);
        if (c.rank == 0)
            pingpong_print_row(&o, r);
    }
    if (json != NULL) {
        if (pingpong_write_json(json, &o, hostlist, rows, o.c.sizes.n) != 0 || fclose(json) != 0) {
            perror(o.c.json);
            rc = 1;
        }
        json = NULL;
    }
    comm_barrier();

out:
    if (pingpong_jsonl != NULL &&
        bench_jsonl_close(pingpong_jsonl, "pingpong", jsonl_path, rc == 0 ? "ok" : "error",
                          comm_wtime() - start0) != 0 &&
        rc == 0)
        rc = 1;
    pingpong_jsonl = NULL;
    if (json != NULL)
        fclose(json);
    free(hosts);
    free(rows);
    free(c.req);
    pp_free(c.arena);
    pp_free(c.sbuf);
    comm_finalize();
    return rc;
}
