/* logp.c: the LogP/LogGP parameter benchmark (o_s, o_r, L, g, G per message size between two
 * ranks), o_r by seed 003's polling method. */
#include "tool.h"
#include "parse_size.h"
#include "comm.h"
#include "jsonl.h"
#include "logp_report.h"
#include "logp_stats.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LOGP_MAX_SIZE ((size_t)1 << 28) /* 256 MiB: two buffers of this are allocated */
#define LOGP_WARMUP 2                   /* iterations run before each measurement, not kept */
#define LOGP_FIRST_BATCH 2              /* batches start small: one iteration may take long */
#define LOGP_MIN_SAMPLES 30             /* before the confidence interval may stop a measurement */
#define LOGP_WARMUP_TIME 0.2            /* seconds of ping-pong before the first size */
#define LOGP_MIN_CAPPED 5               /* samples a measurement takes even past its time cap */
#define LOGP_HARD_CAP_FACTOR 20         /* a measurement yielding no samples stops at 20x the cap */
#define LOGP_MAX_SAMPLES ((size_t)1 << 20)
#define LOGP_BASE_POLLS 4000 /* no-message polls of the o_r baseline */
#define LOGP_DIRECT_WAIT 1.2 /* direct o_r: the receiver waits this many round trips first */

typedef struct logp_opts {
    size_t *sizes;
    size_t nsizes;
    double cap; /* seconds per measurement */
    double rel; /* stop when the 95% CI is within rel of the median */
    const char *json;
    int lenient; /* failed checks do not change the exit status */
} logp_opts;

typedef struct logp_samples {
    double *v;
    size_t n, cap;
} logp_samples;

/* What one measurement loop needs; both ranks hold the same parameters (rank 0 broadcasts). */
typedef struct logp_ctx {
    int rank;
    size_t size;       /* message size of this round */
    char *sbuf, *rbuf; /* LOGP_MAX_SIZE or the largest size, whichever is smaller */
    double clock_cost; /* one comm_wtime() call, subtracted from every interval */
    int k;             /* messages per stream */
    double d_send;     /* PRTT delay between the sender's messages (0: back to back) */
    double d_recv;     /* PRTT delay before each of the receiver's receives */
    double wait;       /* direct o_r: the receiver's wait before the receive */
    double *segs;      /* baseline polls (rank 0), LOGP_BASE_POLLS of them */
} logp_ctx;

typedef double (*logp_body)(logp_ctx *c);

static const char logp_help[] =
    "usage: csnrun -np 2 logp [options]      (or: mpirun -np 2 logp-mpi [options])\n"
    "\n"
    "Measures the LogGP parameters between rank 0 and rank 1 for each message size:\n"
    "  o_s  send overhead, o_r receive overhead, L latency, g gap per message, G gap per byte.\n"
    "\n"
    "options:\n"
    "  -s, --sizes SPEC     MIN:MAX for MIN, 2 MIN, 4 MIN .. MAX (0:MAX gives 0, 1, 2, 4 ..),\n"
    "                       or a list A,B,C; suffixes K, M, G (binary). Default 0:1M.\n"
    "  -t, --cap SECONDS    time cap of each measurement (default 0.2)\n"
    "  -p, --precision PCT  stop a measurement when the 95% confidence interval of its median\n"
    "                       lies within PCT percent of the median, or within half the cost of\n"
    "                       a clock read (default 3)\n"
    "  -j, --json FILE      also write every figure (with intervals and sample counts) as JSON\n"
    "  --lenient            exit 0 even when a check fails (see below)\n"
    "      --jsonl FILE     also write one JSON Lines record per figure\n"
    "                       (docs/results-jsonl.md)\n"
    "  -h, --help           this text\n"
    "  --version            the version\n"
    BENCH_SIZE_RULES
    "\n"
    "Every timing is a sample of a repeated measurement; a measurement stops when its median is\n"
    "known to the precision above (distribution-free 95% interval from order statistics) or at\n"
    "the time cap (then flagged 'c'), not after a fixed count. The cost of reading the clock is\n"
    "measured and subtracted from every interval.\n"
    "\n"
    "o_r, seed-003 method (the column o_r): the host is busy while it takes a message in, so a\n"
    "poll during which a message arrives lasts longer than an empty one. Rank 0 first times\n"
    "4000 polls (comm_test on a posted receive) with no message in flight: the baseline. Then\n"
    "it repeatedly sends a message, polls for the echo, and keeps the longest poll of the run\n"
    "(the candidate). Filtering: a candidate counts only if it is longer than the baseline's\n"
    "99th percentile (the poll visibly did extra work) and shorter than the median round trip\n"
    "(a longer poll was an interrupt or a preemption: the reception is part of the round\n"
    "trip). The sample is candidate minus the baseline median; o_r is the median of the\n"
    "samples, with their interquartile spread and 95% interval in the JSON. acc% is the share\n"
    "of runs accepted; below 10% (or fewer than 5 runs) the method saw no reception cost and\n"
    "the direct o_r stands in (flag 'f').\n"
    "\n"
    "Cross-checks:\n"
    "  o_s:dir   time of a blocking send to a receiver that has posted its receive\n"
    "  o_r:dir   time of a receive of a message that has surely arrived: the receiver waits\n"
    "            1.2 round trips after signalling the sender, then receives\n"
    "  PRTT      parametrised round trip: PRTT(n,d) = time for n messages, d seconds apart,\n"
    "            and an empty reply. o_s = (PRTT(n,d) - PRTT(1,0))/(n-1) - d with the delay at\n"
    "            the sender; o_r (o_r:prtt) the same with the delay before each receive;\n"
    "            d = max(PRTT(1,0), 2 g); n = 32 (fewer above 64K: 2 MiB a stream, at least 8)\n"
    "The column o_s is the PRTT figure. Flags 'S' and 'R' mark sizes where the o_s or the o_r\n"
    "estimates differ by more than 2x.\n"
    "\n"
    "g = (PRTT(n,0) - PRTT(1,0))/(n-1), the time per message of a back-to-back stream;\n"
    "G and g(0 B) come from a least-squares fit of g against the size (weights 1/g^2, so every\n"
    "size counts by its relative error) in two pieces, the break chosen by least squares (a\n"
    "protocol switch such as eager to rendezvous puts a step into g); g(0) is the intercept of\n"
    "the lower piece, G the slope of the upper piece refitted without weights (so that the\n"
    "largest sizes set it: smaller ones run from cache). L = rtt/2 - o_s - o_r, per size.\n"
    "Known-answer checks printed at the end: 1/G against the ping-pong bandwidth of the\n"
    "largest size (size / (rtt/2)), and L + o_s + o_r against the half round trip.\n"
    "\n"
    "Exit status: 0; 3 when a check failed (1/G more than 15% from the ping-pong bandwidth, or\n"
    "L < 0 at the smallest size: a line starting '# FAILED' says which) unless --lenient;\n"
    "2 for a bad command line; 1 when the run failed.\n";

static int logp_env_rank0(void)
{
    /* Before comm_init the rank is unknown; the launchers' variables say who prints. */
    static const char *const vars[] = {"CSN_RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        const char *v = getenv(vars[i]);
        if (v)
            return strcmp(v, "0") == 0;
    }
    return 1;
}

/* Returns 0 to run, 1 after --help, 2 on a usage error (already reported). */
static int logp_parse_args(int argc, char **argv, logp_opts *o)
{
    static const struct option longopts[] = {{"sizes", required_argument, NULL, 's'},
                                             {"cap", required_argument, NULL, 't'},
                                             {"precision", required_argument, NULL, 'p'},
                                             {"json", required_argument, NULL, 'j'},
                                             {"help", no_argument, NULL, 'h'},
                                             {"lenient", no_argument, NULL, 'L'},
                                             {NULL, 0, NULL, 0}};
    const char *sizes = "0:1M";
    int speak = logp_env_rank0();
    char err[256];
    err[0] = '\0';
    o->cap = 0.2;
    o->rel = 0.03;
    o->json = NULL;
    opterr = 0;
    int ch;
    while ((ch = getopt_long(argc, argv, ":s:t:p:j:h", longopts, NULL)) != -1) {
        char *end;
        switch (ch) {
        case 's':
            sizes = optarg;
            break;
        case 't':
            o->cap = strtod(optarg, &end);
            if (*end != '\0' || !(o->cap > 0) || o->cap > 3600)
                snprintf(err, sizeof err, "bad --cap '%s' (want seconds, 0 < cap <= 3600)", optarg);
            break;
        case 'p':
            o->rel = strtod(optarg, &end) / 100.0;
            if (*end != '\0' || !(o->rel > 0) || o->rel >= 1)
                snprintf(err, sizeof err, "bad --precision '%s' (want a percentage, 0 < p < 100)",
                         optarg);
            break;
        case 'j':
            o->json = optarg;
            break;
        case 'L':
            o->lenient = 1;
            break;
        case 'h':
            if (speak)
                fputs(logp_help, stdout);
            return 1;
        case ':':
            snprintf(err, sizeof err, "option '%s' needs a value (see --help)", argv[optind - 1]);
            break;
        default:
            snprintf(err, sizeof err, "unknown option '%s' (see --help)", argv[optind - 1]);
            break;
        }
        if (err[0])
            break;
    }
    if (!err[0] && optind < argc)
        snprintf(err, sizeof err, "unexpected argument '%s' (see --help)", argv[optind]);
    if (!err[0] &&
        logp_parse_sizes(sizes, LOGP_MAX_SIZE, &o->sizes, &o->nsizes, err, sizeof err) != 0 &&
        !err[0])
        snprintf(err, sizeof err, "bad --sizes '%s'", sizes);
    if (err[0]) {
        if (speak)
            fprintf(stderr, "logp: %s\n", err);
        return 2;
    }
    return 0;
}

static double logp_now(void)
{
    return comm_wtime();
}

static double logp_clock_cost(void)
{
    enum { N = 1001 };
    double d[N], scratch[N];
    for (int i = 0; i < N; i++) {
        double a = logp_now();
        double b = logp_now();
        d[i] = b - a;
    }
    logp_summary s;
    logp_summarize(d, N, scratch, &s);
    return s.median;
}

static void logp_spin(double d)
{
    double t0 = logp_now();
    while (logp_now() - t0 < d)
        ;
}

/* The real length of logp_spin(d) as seen between two clock reads: d plus the overshoot of
 * the last clock read. */
static double logp_spin_cost(double d, double clock_cost)
{
    enum { N = 7 };
    double v[N], scratch[N];
    for (int i = 0; i < N; i++) {
        double t0 = logp_now();
        logp_spin(d);
        v[i] = logp_now() - t0 - clock_cost;
    }
    logp_summary s;
    logp_summarize(v, N, scratch, &s);
    return s.median;
}

static void logp_push(logp_samples *s, double v)
{
    if (s->n == s->cap) {
        size_t ncap = s->cap ? 2 * s->cap : 1024;
        double *nv = realloc(s->v, ncap * sizeof *nv);
        if (!nv)
            comm_abort(1, "logp: out of memory for %zu samples", ncap);
        s->v = nv;
        s->cap = ncap;
    }
    s->v[s->n++] = v;
}

static void logp_send(logp_ctx *c, size_t len)
{
    comm_send(c->sbuf, len, 1 - c->rank);
}

static void logp_recv(logp_ctx *c, void *buf, size_t len)
{
    size_t got;
    int from;
    comm_recv(buf, len, 1 - c->rank, &got, &from);
}

/* Ping-pong: the round trip of one message of the size each way. */
static double logp_body_rtt(logp_ctx *c)
{
    if (c->rank == 0) {
        double t0 = logp_now();
        logp_send(c, c->size);
        logp_recv(c, c->rbuf, c->size);
        return logp_now() - t0 - c->clock_cost;
    }
    logp_recv(c, c->rbuf, c->size);
    logp_send(c, c->size);
    return NAN;
}

/* Polls r until it completes, timing every poll (one clock read between polls, so each
 * interval holds one poll and one clock read, whose cost is subtracted). With max_polls > 0,
 * stops after that many polls and stores each poll's time in segs. Returns the longest poll. */
static double logp_poll(comm_req *r, double clock_cost, double *segs, size_t max_polls)
{
    double longest = -INFINITY;
    size_t n = 0;
    double prev = logp_now();
    for (;;) {
        int done = comm_test(r);
        double t = logp_now();
        double seg = t - prev - clock_cost;
        prev = t;
        if (segs)
            segs[n] = seg;
        n++;
        if (seg > longest)
            longest = seg;
        if (done || (max_polls && n == max_polls))
            return longest;
    }
}

/* Seed 003 baseline: polls of a posted receive while the peer is silent; afterwards the peer
 * is told to send the message that completes the receive. */
static void logp_or_baseline(logp_ctx *c)
{
    if (c->rank == 0) {
        comm_req r;
        comm_irecv(c->rbuf, c->size, 1, &r);
        logp_poll(&r, c->clock_cost, c->segs, LOGP_BASE_POLLS);
        logp_send(c, 0);
        comm_waitall(1, &r);
    } else {
        logp_recv(c, c->rbuf, 0);
        logp_send(c, c->size);
    }
}

/* Seed 003 run: send, then poll for the echo; the longest poll is the candidate. */
static double logp_body_seed(logp_ctx *c)
{
    if (c->rank == 0) {
        comm_req r;
        comm_irecv(c->rbuf, c->size, 1, &r);
        logp_send(c, c->size);
        return logp_poll(&r, c->clock_cost, NULL, 0);
    }
    logp_recv(c, c->rbuf, c->size);
    logp_send(c, c->size);
    return NAN;
}

/* Direct o_s: a blocking send to a peer that has posted its receive and polls for it. */
static double logp_body_os_direct(logp_ctx *c)
{
    if (c->rank == 0) {
        logp_recv(c, c->rbuf, 0);
        double t0 = logp_now();
        logp_send(c, c->size);
        return logp_now() - t0 - c->clock_cost;
    }
    comm_req r;
    comm_irecv(c->rbuf, c->size, 0, &r);
    logp_send(c, 0);
    comm_waitall(1, &r);
    return NAN;
}

/* Direct o_r: rank 1 signals, waits 1.2 round trips (the message has arrived by then), times
 * its receive and reports the time to rank 0. */
static double logp_body_or_direct(logp_ctx *c)
{
    double v = NAN;
    if (c->rank == 0) {
        logp_recv(c, c->rbuf, 0);
        logp_send(c, c->size);
        logp_recv(c, &v, sizeof v);
        return v;
    }
    logp_send(c, 0);
    logp_spin(c->wait);
    double t0 = logp_now();
    logp_recv(c, c->rbuf, c->size);
    v = logp_now() - t0 - c->clock_cost;
    comm_send(&v, sizeof v, 0);
    return NAN;
}

/* Parametrised round trip PRTT(k, d): k messages with d_send between the sends (or d_recv
 * before each receive after the first), then an empty reply. */
static double logp_body_prtt(logp_ctx *c)
{
    if (c->rank == 0) {
        double t0 = logp_now();
        for (int i = 0; i < c->k; i++) {
            if (i > 0 && c->d_send > 0)
                logp_spin(c->d_send);
            logp_send(c, c->size);
        }
        logp_recv(c, c->rbuf, 0);
        return logp_now() - t0 - c->clock_cost;
    }
    for (int i = 0; i < c->k; i++) {
        if (i > 0 && c->d_recv > 0)
            logp_spin(c->d_recv);
        logp_recv(c, c->rbuf, c->size);
    }
    logp_send(c, 0);
    return NAN;
}

/* One measurement: repeats body in batches until rank 0 finds the median precise enough or
 * the time cap passes (o->rel 0: runs to the cap); rank 0 broadcasts each batch's length (0
 * ends). With f, the statistic is over the candidates that pass the seed-003 filter. Returns
 * whether it converged. */
static int logp_measure(logp_ctx *c, const logp_opts *o, logp_body body, const logp_or_filter *f,
                        logp_samples *out, logp_summary *sum, size_t *accepted)
{
    double *scratch = NULL, *sel = NULL;
    size_t scap = 0;
    int converged = 0;
    out->n = 0;
    for (int i = 0; i < LOGP_WARMUP; i++)
        body(c);
    double t0 = logp_now();
    size_t iters = 0;
    int nb = LOGP_FIRST_BATCH;
    for (;;) {
        comm_bcast_int(&nb, 1);
        if (nb == 0)
            break;
        for (int i = 0; i < nb; i++) {
            double v = body(c);
            if (c->rank == 0 && isfinite(v))
                logp_push(out, v);
        }
        iters += (size_t)nb;
        if (c->rank != 0)
            continue;
        if (out->n > scap) {
            free(scratch);
            free(sel);
            scap = out->cap;
            scratch = malloc(scap * sizeof *scratch);
            sel = malloc(scap * sizeof *sel);
            if (!scratch || !sel)
                comm_abort(1, "logp: out of memory for %zu samples", scap);
        }
        const double *x = out->v;
        size_t n = out->n;
        if (f) {
            n = logp_or_select(f, out->v, out->n, sel);
            x = sel;
        }
        if (accepted)
            *accepted = n;
        logp_summarize(x, n, scratch, sum);
        double elapsed = logp_now() - t0;
        /* No interval is known better than to half a clock read (the clock also ticks in
         * steps of about that size on some machines). */
        converged = o->rel > 0 &&
                    logp_converged(sum, o->rel, fmax(c->clock_cost / 2, 1e-9), LOGP_MIN_SAMPLES);
        if (converged || out->n >= LOGP_MAX_SAMPLES ||
            (elapsed >= o->cap && out->n >= LOGP_MIN_CAPPED) ||
            elapsed >= o->cap * LOGP_HARD_CAP_FACTOR) {
            nb = 0;
            continue;
        }
        /* Batches grow with the sample (so the sorting stays a small share of the time) but
         * do not run far past the cap. */
        double per_iter = elapsed / (double)iters;
        double want = fmax((double)iters / 2.0, LOGP_FIRST_BATCH);
        if (elapsed < o->cap)
            want = fmin(want, (o->cap - elapsed) / per_iter + 1.0);
        else
            want = (double)(LOGP_MIN_CAPPED - out->n);
        want = fmin(want, (double)(LOGP_MAX_SAMPLES - out->n));
        want = fmin(want, 1 << 20);
        nb = want < 1 ? 1 : (int)want;
    }
    free(scratch);
    free(sel);
    return converged;
}

static void logp_bcast_seconds(double *v)
{
    /* comm has an integer broadcast only: nanoseconds, clamped to the int range. */
    int ns = 0;
    if (comm_rank() == 0)
        ns = (int)fmin(fmax(*v * 1e9, 0), 2e9);
    comm_bcast_int(&ns, 1);
    *v = ns * 1e-9;
}

static int logp_stream_len(size_t size)
{
    size_t k = size ? ((size_t)2 << 20) / size : 32;
    return k < 8 ? 8 : k > 32 ? 32 : (int)k;
}

/* All measurements of one size; fills row on rank 0. */
static void logp_run_size(logp_ctx *c, const logp_opts *o, logp_samples *smp, logp_row *row)
{
    int all_conv = 1;
    memset(row, 0, sizeof *row);
    row->size = c->size;
    c->k = logp_stream_len(c->size);
    row->k = c->k;

    all_conv &= logp_measure(c, o, logp_body_rtt, NULL, smp, &row->rtt, NULL);
    double rtt = row->rtt.median;

    logp_or_baseline(c);
    logp_or_filter f = {0};
    if (c->rank == 0) {
        double *scratch = malloc(LOGP_BASE_POLLS * sizeof *scratch);
        if (!scratch)
            comm_abort(1, "logp: out of memory");
        logp_or_filter_init(&f, c->segs, LOGP_BASE_POLLS, scratch, rtt);
        free(scratch);
    }
    size_t acc = 0;
    all_conv &= logp_measure(c, o, logp_body_seed, &f, smp, &row->or_seed, &acc);
    row->filter = f;
    row->or_candidates = smp->n;
    row->or_accepted = acc;

    all_conv &= logp_measure(c, o, logp_body_os_direct, NULL, smp, &row->os_direct, NULL);

    c->wait = LOGP_DIRECT_WAIT * rtt;
    logp_bcast_seconds(&c->wait);
    all_conv &= logp_measure(c, o, logp_body_or_direct, NULL, smp, &row->or_direct, NULL);

    int k = c->k;
    c->d_send = c->d_recv = 0;
    c->k = 1;
    all_conv &= logp_measure(c, o, logp_body_prtt, NULL, smp, &row->p1, NULL);
    c->k = k;
    all_conv &= logp_measure(c, o, logp_body_prtt, NULL, smp, &row->pn, NULL);

    double d = 0;
    if (c->rank == 0) {
        double g = (row->pn.median - row->p1.median) / (k - 1);
        d = fmax(row->p1.median, 2 * g);
    }
    logp_bcast_seconds(&d);
    row->delay = d;
    row->delay_real = c->rank == 0 ? logp_spin_cost(d, c->clock_cost) : d;

    c->d_send = d;
    all_conv &= logp_measure(c, o, logp_body_prtt, NULL, smp, &row->ps, NULL);
    c->d_send = 0;
    c->d_recv = d;
    all_conv &= logp_measure(c, o, logp_body_prtt, NULL, smp, &row->pr, NULL);
    c->d_recv = 0;
    row->capped = !all_conv;
}

int main(int argc, char **argv)
{
    logp_opts o = {0};
    if (bench_version(argc, argv))
        return 0;
    const char *jsonl_path = NULL;
    FILE *jsonl = NULL;
    if (bench_jsonl_take_arg(&argc, argv, "logp", &jsonl_path) != 0)
        return 2;
    int rv = logp_parse_args(argc, argv, &o);
    if (rv != 0)
        return rv == 1 ? 0 : 2;
    if (comm_init(&argc, &argv) != 0) {
        free(o.sizes);
        return 1;
    }
    int rank = comm_rank();
    if (comm_size() != 2) {
        if (rank == 0)
            fprintf(stderr, "logp: needs exactly 2 ranks, got %d\n", comm_size());
        comm_finalize();
        free(o.sizes);
        return 2;
    }

    FILE *json = NULL;
    int bad = 0;
    if (rank == 0 && o.json) {
        json = fopen(o.json, "w");
        if (!json) {
            fprintf(stderr, "logp: cannot write --json file '%s': %s\n", o.json, strerror(errno));
            bad = 1;
        }
    }
    if (rank == 0 && !bad && jsonl_path && !(jsonl = bench_jsonl_open(jsonl_path, "logp")))
        bad = 1;
    comm_bcast_int(&bad, 1);
    if (bad) {
        if (json)
            fclose(json);
        comm_finalize();
        free(o.sizes);
        return 2;
    }

    size_t maxsize = o.sizes[o.nsizes - 1];
    size_t buflen = maxsize < sizeof(double) ? sizeof(double) : maxsize;
    logp_ctx c = {.rank = rank};
    c.sbuf = malloc(buflen);
    c.rbuf = malloc(buflen);
    c.segs = malloc(LOGP_BASE_POLLS * sizeof *c.segs);
    logp_row *rows = calloc(o.nsizes, sizeof *rows);
    logp_samples smp = {0};
    if (!c.sbuf || !c.rbuf || !c.segs || !rows)
        comm_abort(1, "logp: out of memory for buffers of %zu bytes", buflen);
    memset(c.sbuf, 'a', buflen); /* touch every page before timing */
    memset(c.rbuf, 'b', buflen);
    c.clock_cost = logp_clock_cost();

    logp_meta meta = {0};
    meta.library = comm_library();
    meta.transport = comm_transport();
    comm_gather_str(comm_hostname(), meta.hosts, sizeof meta.hosts / 2);
    meta.clock_cost = c.clock_cost;
    meta.cap = o.cap;
    meta.rel = o.rel;
    meta.argc = argc;
    meta.argv = argv;
    double t_start = logp_now();
    if (rank == 0)
        logp_report_header(stdout, &meta);
    if (jsonl)
        logp_jsonl_header(jsonl, &meta, o.cap, o.rel);
    /* Settle the job first (connections, page faults, the scheduler spreading the two
     * processes over the cores): a measurement that starts in a transient state can look
     * precise and still be wrong. */
    logp_opts warm = o;
    logp_summary unused;
    warm.cap = LOGP_WARMUP_TIME;
    warm.rel = 0;
    c.size = maxsize;
    logp_body_rtt(&c);
    c.size = o.sizes[0];
    logp_measure(&c, &warm, logp_body_rtt, NULL, &smp, &unused, NULL);
    for (size_t i = 0; i < o.nsizes; i++) {
        c.size = o.sizes[i];
        comm_barrier();
        logp_run_size(&c, &o, &smp, &rows[i]);
        if (rank == 0) {
            logp_row_derive(&rows[i], c.clock_cost);
            logp_report_row(stdout, &rows[i]);
            if (jsonl)
                logp_jsonl_row(jsonl, &rows[i]);
        }
    }
    meta.elapsed = logp_now() - t_start;
    rv = 0;
    if (rank == 0) {
        logp_loggp fit;
        logp_loggp_derive(rows, o.nsizes, &fit);
        int failed = logp_report_summary(stdout, &meta, rows, o.nsizes, &fit);
        if (json && logp_report_json(json, o.json, &meta, rows, o.nsizes, &fit) != 0)
            rv = 1;
        else if (failed > 0 && !o.lenient) {
            fprintf(stderr, "logp: %d check%s failed (lines '# FAILED' above); exit status 3 "
                            "(--lenient: 0)\n", failed, failed > 1 ? "s" : "");
            rv = 3;
        }
        if (jsonl)
            logp_jsonl_summary(jsonl, rows, &fit);
        if (jsonl && bench_jsonl_close(jsonl, "logp", jsonl_path, rv == 0 ? "ok" : "error",
                                       meta.elapsed) != 0)
            rv = 1;
    }
    comm_bcast_int(&rv, 1);
    free(smp.v);
    free(rows);
    free(c.segs);
    free(c.sbuf);
    free(c.rbuf);
    free(o.sizes);
    comm_finalize();
    return rv;
}
