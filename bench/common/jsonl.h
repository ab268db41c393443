/* jsonl.h: the benchmarks' JSON Lines records (docs/results-jsonl.md): a provenance header, one
 * record per measurement written (and flushed) as it arrives, an end record. Header-only, so
 * that every benchmark (csn or MPI, comm layer or not) includes it without a link change. */
#ifndef BENCH_JSONL_H
#define BENCH_JSONL_H

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "json.h"

/* The source commit, generated at every build of the benchmarks (common/commit.cmake); a test
 * that compiles this header without it says "unknown". */
#if defined(__has_include) && __has_include("bench_commit.h")
#include "bench_commit.h"
#endif
#ifndef BENCH_COMMIT
#define BENCH_COMMIT "unknown"
#endif

#define BENCH_JSONL_SCHEMA "csn-bench/1"

/* Only the first rank of a job says what is wrong with the command line (the launchers'
 * environment tells the rank before the job starts; unknown: talk). */
static inline int bench_jsonl_talks(void)
{
    static const char *const vars[] = {"CSN_RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        const char *v = getenv(vars[i]);
        if (v != NULL && *v != '\0')
            return strcmp(v, "0") == 0;
    }
    return 1;
}

/* The status 2 of a usage error. A rank that stays silent first waits (2 s at most, the
 * launcher ends it sooner) so that the talking rank's line is out before the launcher, seeing
 * the first rank fail, ends the job: else that line can be lost. */
static inline int bench_usage_status(void)
{
    if (!bench_jsonl_talks()) {
        struct timespec ts = {2, 0};
        while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
            ;
    }
    return 2;
}

/* Takes "--jsonl FILE" or "--jsonl=FILE" out of argv (before the tool's own parser sees it)
 * and sets *path (NULL when absent). Returns 0, or 2 after one line on stderr. */
static inline int bench_jsonl_take_arg(int *argc, char **argv, const char *tool, const char **path)
{
    *path = NULL;
    int out = 1;
    for (int i = 1; i < *argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--") == 0) {
            while (i < *argc)
                argv[out++] = argv[i++];
            break;
        }
        if (strcmp(a, "--jsonl") == 0) {
            if (i + 1 >= *argc || argv[i + 1][0] == '\0') {
                if (bench_jsonl_talks())
                    fprintf(stderr, "%s: option --jsonl needs a file name\n", tool);
                return bench_usage_status();
            }
            *path = argv[++i];
            continue;
        }
        if (strncmp(a, "--jsonl=", 8) == 0) {
            if (a[8] == '\0') {
                if (bench_jsonl_talks())
                    fprintf(stderr, "%s: option --jsonl needs a file name\n", tool);
                return bench_usage_status();
            }
            *path = a + 8;
            continue;
        }
        argv[out++] = argv[i];
    }
    argv[out] = NULL;
    *argc = out;
    return 0;
}

/* "csn" or "mpi", from the comm layer's library name ("csn 0.1.0", "Open MPI ..."). */
static inline const char *bench_jsonl_flavour(const char *library)
{
    return library != NULL && strncmp(library, "csn", 3) == 0 ? "csn" : "mpi";
}

/* Opens path for writing (rank 0 only). NULL after one line on stderr. */
static inline FILE *bench_jsonl_open(const char *path, const char *tool)
{
    FILE *f = fopen(path, "w");
    if (f == NULL)
        fprintf(stderr, "%s: --jsonl: cannot write '%s': %s\n", tool, path, strerror(errno));
    return f;
}

/* A number, or null when not finite. */
static inline void bench_jsonl_num(FILE *f, double v)
{
    if (isfinite(v))
        fprintf(f, "%.9g", v);
    else
        fputs("null", f);
}

/* What the header record says about the run. hosts: nhosts names (one per rank), each at
 * hosts + r * host_each. options: a JSON object text of the tool's parsed options, or NULL. */
struct bench_jsonl_prov {
    const char *tool;    /* "nettest", "pingpong", ... */
    const char *flavour; /* "csn" or "mpi" */
    const char *library, *version, *transport;
    const char *hosts;
    size_t host_each;
    int nhosts;
    int nprocs; /* 0: nhosts (a tool that knows only some ranks' hosts says how many ranks) */
    int argc;
    char **argv;
    const char *options; /* JSON object text or NULL */
};

static inline void bench_jsonl_header(FILE *f, const struct bench_jsonl_prov *p)
{
    char date[32] = "";
    time_t now = time(NULL);
    struct tm tm;
    if (gmtime_r(&now, &tm) != NULL)
        strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", &tm);
    struct utsname u;
    int have_u = uname(&u) == 0;
    double load[3] = {NAN, NAN, NAN};
    FILE *la = fopen("/proc/loadavg", "r");
    if (la != NULL) {
        if (fscanf(la, "%lf %lf %lf", &load[0], &load[1], &load[2]) != 3)
            load[0] = load[1] = load[2] = NAN;
        fclose(la);
    }
    fprintf(f, "{\"type\":\"header\",\"schema\":\"%s\",\"tool\":", BENCH_JSONL_SCHEMA);
    bench_json_str(f, p->tool);
    fputs(",\"flavour\":", f);
    bench_json_str(f, p->flavour);
    fputs(",\"date\":", f);
    bench_json_str(f, date);
    fputs(",\"library\":", f);
    bench_json_str(f, p->library);
    fputs(",\"version\":", f);
    bench_json_str(f, p->version);
    fputs(",\"commit\":", f);
    bench_json_str(f, BENCH_COMMIT);
    fputs(",\"transport\":", f);
    bench_json_str(f, p->transport);
    fprintf(f, ",\"nprocs\":%d,\"hosts\":[", p->nprocs > 0 ? p->nprocs : p->nhosts);
    for (int r = 0; r < p->nhosts; r++) {
        if (r > 0)
            fputc(',', f);
        bench_json_str(f, p->hosts + (size_t)r * p->host_each);
    }
    fprintf(f, "],\"cpus\":%ld,\"kernel\":", sysconf(_SC_NPROCESSORS_ONLN));
    bench_json_str(f, have_u ? u.release : "");
    fputs(",\"machine\":", f);
    bench_json_str(f, have_u ? u.machine : "");
    fputs(",\"load\":[", f);
    for (int i = 0; i < 3; i++) {
        if (i > 0)
            fputc(',', f);
        bench_jsonl_num(f, load[i]);
    }
    fputs("],\"command\":[", f);
    for (int i = 0; i < p->argc; i++) {
        if (i > 0)
            fputc(',', f);
        bench_json_str(f, p->argv[i]);
    }
    fprintf(f, "],\"options\":%s}\n", p->options != NULL ? p->options : "{}");
    fflush(f);
}

/* One measurement. Fields that do not apply: size -1, repeat 0, rank -1, pair_a -1,
 * threads 0, ci_lo/ci_hi NaN, flag NULL. A value that is not finite is written as null with
 * the flag "nan" (unless a flag is given). */
struct bench_jsonl_rec {
    const char *test;      /* the tool's test or procedure: "Star2", "lat", "loggp" ... */
    const char *metric;    /* what was measured: "rate_total", "latency", "L" ... */
    long long size;        /* message size, bytes */
    int repeat;            /* 1-based repeat or sample */
    int rank;              /* the rank (node) the value belongs to */
    int pair_a, pair_b;    /* the pair of ranks a link value belongs to */
    int threads;           /* threads per process */
    double value;          /* the value */
    const char *unit;      /* "MB/s", "us", "s", "msg/s" */
    const char *statistic; /* "sample", "median", "min", "max", "mean", "estimate" ... */
    double ci_lo, ci_hi;   /* a 95% interval around value */
    long n;                /* samples behind a summary (0: not said) */
    const char *flag;      /* why value cannot be used ("negative", "nan", "outside_ci") */
};

/* A record with nothing set (every optional field "does not apply"). */
static inline struct bench_jsonl_rec bench_jsonl_rec_init(const char *test, const char *metric,
                                                          const char *unit, const char *statistic)
{
    struct bench_jsonl_rec r = {test, metric, -1,        0,   -1,  -1, -1,  0,
                                NAN,  unit,   statistic, NAN, NAN, 0,  NULL};
    return r;
}

static inline void bench_jsonl_write(FILE *f, const char *tool, const struct bench_jsonl_rec *r)
{
    if (f == NULL)
        return;
    fputs("{\"type\":\"measurement\",\"tool\":", f);
    bench_json_str(f, tool);
    fputs(",\"test\":", f);
    bench_json_str(f, r->test);
    fputs(",\"metric\":", f);
    bench_json_str(f, r->metric);
    fputs(",\"size\":", f);
    if (r->size >= 0)
        fprintf(f, "%lld", r->size);
    else
        fputs("null", f);
    fputs(",\"repeat\":", f);
    if (r->repeat > 0)
        fprintf(f, "%d", r->repeat);
    else
        fputs("null", f);
    fputs(",\"rank\":", f);
    if (r->rank >= 0)
        fprintf(f, "%d", r->rank);
    else
        fputs("null", f);
    fputs(",\"pair\":", f);
    if (r->pair_a >= 0)
        fprintf(f, "[%d,%d]", r->pair_a, r->pair_b);
    else
        fputs("null", f);
    fputs(",\"threads\":", f);
    if (r->threads > 0)
        fprintf(f, "%d", r->threads);
    else
        fputs("null", f);
    fputs(",\"value\":", f);
    bench_jsonl_num(f, r->value);
    fputs(",\"unit\":", f);
    bench_json_str(f, r->unit);
    fputs(",\"statistic\":", f);
    bench_json_str(f, r->statistic);
    if (isfinite(r->ci_lo) && isfinite(r->ci_hi)) {
        fputs(",\"ci\":[", f);
        bench_jsonl_num(f, r->ci_lo);
        fputc(',', f);
        bench_jsonl_num(f, r->ci_hi);
        fputc(']', f);
    }
    if (r->n > 0)
        fprintf(f, ",\"n\":%ld", r->n);
    const char *flag = r->flag;
    if (flag == NULL && !isfinite(r->value))
        flag = "nan";
    if (flag != NULL) {
        fputs(",\"flag\":", f);
        bench_json_str(f, flag);
    }
    fputs("}\n", f);
    fflush(f);
}

/* The end record, then closes f. status: "ok" or "error". Returns 0, or -1 after one line on
 * stderr when the file could not be written. */
static inline int bench_jsonl_close(FILE *f, const char *tool, const char *path, const char *status,
                                    double elapsed_s)
{
    if (f == NULL)
        return 0;
    fputs("{\"type\":\"end\",\"tool\":", f);
    bench_json_str(f, tool);
    fputs(",\"status\":", f);
    bench_json_str(f, status);
    fputs(",\"elapsed_s\":", f);
    bench_jsonl_num(f, elapsed_s);
    fputs("}\n", f);
    int bad = ferror(f);
    if (fclose(f) != 0 || bad) {
        fprintf(stderr, "%s: --jsonl: writing '%s' failed\n", tool, path);
        return -1;
    }
    return 0;
}

#endif
