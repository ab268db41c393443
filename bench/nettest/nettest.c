/* nettest.c: NETTEST (seed 001): parameters, setup checks, test loop, table, best values. */
#include "bench_commit.h"
#include "tool.h"
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "comm.h"
#include "jsonl.h"
#include "nettest.h"
#include "procs.h"

#ifndef NETTEST_FLAVOUR
#error "NETTEST_FLAVOUR must name the backend (csn, MPI or lean)"
#endif

#define HOST_EACH 256

/* Everything rank 0 prints and writes. */
/* Every table value, for the medians and spreads after the seed's table. */
struct nettest_cell {
    size_t len;
    int test;
    double v;
};

struct nettest_out {
    FILE *out, *csv, *json;
    FILE *jsonl;  /* --jsonl: one record per measurement */
    int progress; /* stderr is a terminal: show a progress line */
    double best[NT_NTESTS];
    int have[NT_NTESTS];
    int first_json;
    struct nettest_cell *cells;
    size_t ncells, capcells;
};

/* The rank before the comm layer starts, from the launchers' environment, so that only one
 * process prints a usage error; -1 when not launched. */
static int nettest_rank_hint(void)
{
    static const char *const vars[] = {"CSN_RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK",
                                       "SLURM_PROCID"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        const char *v = getenv(vars[i]);
        if (v != NULL && *v != '\0')
            return atoi(v);
    }
    return -1;
}

/* Bytes of memory available on this host (MemAvailable), or 0 when unknown. */
static uint64_t nettest_mem_available(void)
{
    FILE *f = fopen("/proc/meminfo", "r");
    char line[256];
    unsigned long long kb = 0;
    if (f != NULL) {
        while (fgets(line, sizeof line, f) != NULL)
            if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1)
                break;
        fclose(f);
    }
    if (kb == 0) {
        long pages = sysconf(_SC_AVPHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
        return pages > 0 && psz > 0 ? (uint64_t)pages * (uint64_t)psz : 0;
    }
    return (uint64_t)kb * 1024;
}

/* Rank 0 decides, everyone learns: 0 go on, 2 stop with a usage error. */
static int nettest_agree(int status)
{
    comm_bcast_int(&status, 1);
    return status;
}

/* Rank 0: the memory check over all hosts (before any buffer is allocated). */
static int nettest_check_memory(const char *hosts, const double *mem, int np, uint64_t maxlen,
                                char *err, size_t errlen)
{
    for (int r = 0; r < np; r++) {
        const char *h = hosts + (size_t)r * HOST_EACH;
        double need = 0;
        int procs = 0, first = -1;
        for (int k = 0; k < np; k++)
            if (strcmp(hosts + (size_t)k * HOST_EACH, h) == 0) {
                if (first < 0)
                    first = k;
                need += mem[2 * k];
                procs++;
            }
        if (first != r)
            continue; /* each host once, at its first rank */
        double avail = mem[2 * r + 1];
        if (avail > 0 && need > avail) {
            snprintf(err, errlen,
                     "M: messages of %llu bytes need %.0f MiB of buffers on host %s (%d "
                     "processes) but only %.0f MiB are available; lower M",
                     (unsigned long long)maxlen, need / 1048576.0, h, procs, avail / 1048576.0);
            return 2;
        }
    }
    return 0;
}

static void nettest_header(FILE *f, const struct nt_params *p, int np, const char *hosts,
                           const char *date, const char *when)
{
    static const char *const mode[] = {"R(avg): average per logical link",
                                       "R(total): the whole network",
                                       "R(local): node 0, the Star centre"};
    fprintf(f, "NETTEST/%s of %s is running with following parameters:\n", NETTEST_FLAVOUR, date);
    if (p->unit == 'b')
        fprintf(f, "\tMessage length unit is 1b = 1 byte\n");
    else
        fprintf(f, "\tMessage length unit is 1%cb = %zu bytes\n", p->unit, p->unit_bytes);
    fprintf(f, "\tMessages: %llu to %llu units, step %llu, multiplier %llu\n",
            (unsigned long long)p->min, (unsigned long long)p->max, (unsigned long long)p->step,
            (unsigned long long)p->multiplier);
    fprintf(f, "\t%llu times for each test routine, %llu iterations for whole test\n",
            (unsigned long long)p->iterations, (unsigned long long)p->repeats);
    if (p->chaos)
        fprintf(f, "\tRunning chaos test with %llu logical links used.\n",
                (unsigned long long)nt_links(NT_CHAOS, np));
    else
        fprintf(f, "\tChaos test is off.\n");
    fprintf(f, "\tNodes:");
    for (int r = 0; r < np; r++)
        fprintf(f, " %s", hosts + (size_t)r * HOST_EACH);
    fprintf(f, "\n\tLibrary: %s, transport %s; payload check %s\n", comm_library(),
            comm_transport(), p->check ? "on (every byte of every message)" : "off (--no-check)");
    fprintf(f, "\tRun %s, build of %s of commit %s (the first line's date is the build's)\n", when,
            date, BENCH_COMMIT);
    fprintf(f, "\n\tNetwork throughput values in MB/sec (1 MB = 10^6 bytes), %s\n", mode[p->print]);
    fprintf(f, "Size,%c", p->unit);
    for (int t = 0; t < NT_NTESTS; t++)
        fprintf(f, "\t%s", nt_test_names[t]);
    fputc('\n', f);
    fflush(f);
}

static void nettest_progress_clear(struct nettest_out *o)
{
    if (o->progress)
        fputs("\r\033[K", stderr);
}

/* For the test suite only: NETTEST_TEST_CORRUPT=N flips one received byte of message number
 * N (counted over the whole run) on the last rank, to show that the check catches it. */
static uint64_t nettest_corrupt_at;

/* The test loop body for one test at one size: T iterations with the check around each. */
static void nettest_run_one(struct nt_ctx *c, enum nt_test t, const struct nt_params *p,
                            uint64_t repeat, uint64_t *msgno, double *times, int *peers,
                            struct nt_stats *st)
{
    int n = nt_neighbours(t, c->np, c->me, peers);
    for (uint64_t it = 0; it < p->iterations; it++) {
        ++*msgno;
        for (int k = 0; k < n; k++) {
            if (p->check)
                nt_fill(c->sbuf[peers[k]], c->len, c->me, peers[k], *msgno);
            c->rlen[peers[k]] = (size_t)-1;
        }
        times[it] = nt_iteration(c, t);
        if (*msgno == nettest_corrupt_at && c->me == c->np - 1 && n > 0 && c->len > 0)
            c->rbuf[peers[0]][c->len / 2] ^= 0x5A;
        for (int k = 0; k < n; k++) {
            int j = peers[k];
            unsigned char got = 0, want = 0;
            if (c->rlen[j] != c->len)
                comm_abort(3,
                           "%s, size %zu bytes, repeat %llu, iteration %llu: the message from "
                           "rank %d has %zu bytes, expected %zu",
                           nt_test_names[t], c->len, (unsigned long long)repeat,
                           (unsigned long long)it + 1, j, c->rlen[j], c->len);
            if (!p->check)
                continue;
            size_t off = nt_verify(c->rbuf[j], c->len, j, c->me, *msgno, &got, &want);
            if (off != c->len)
                comm_abort(3,
                           "payload check failed: %s, size %zu bytes, repeat %llu, iteration "
                           "%llu: the message from rank %d differs at offset %zu (got 0x%02x, "
                           "expected 0x%02x)",
                           nt_test_names[t], c->len, (unsigned long long)repeat,
                           (unsigned long long)it + 1, j, off, got, want);
        }
    }
    nt_stats_of(times, (size_t)p->iterations, st);
}

static int nettest_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* After the seed's table and best values: per size and test, the median of the repeats and
 * their spread (min-max), so that repeats that differ are seen as such. */
static void nettest_medians(FILE *f, const struct nettest_out *o, const struct nt_params *p)
{
    double *v = malloc((o->ncells ? o->ncells : 1) * sizeof *v);
    char a[32], b[32], c[32], sz[32];

    if (v == NULL || p->repeats < 2) {
        free(v);
        return;
    }
    fprintf(f, "\n\tMedian of the %llu repeats (min-max) in MB/sec\n",
            (unsigned long long)p->repeats);
    fprintf(f, "Median,%c", p->unit);
    for (int t = 0; t < NT_NTESTS; t++)
        fprintf(f, "\t%s", nt_test_names[t]);
    fputc('\n', f);
    for (size_t i = 0; i < o->ncells; i++) {
        size_t len = o->cells[i].len;
        int seen = 0;
        for (size_t k = 0; k < i && !seen; k++)
            seen = o->cells[k].len == len;
        if (seen)
            continue; /* one line per size, in the table's order */
        nt_format_size(sz, sizeof sz, len, p->unit_bytes);
        fputs(sz, f);
        for (int t = 0; t < NT_NTESTS; t++) {
            size_t n = 0;
            for (size_t k = 0; k < o->ncells; k++)
                if (o->cells[k].len == len && o->cells[k].test == t)
                    v[n++] = o->cells[k].v;
            if (n == 0) {
                fputs("\t-", f);
                continue;
            }
            qsort(v, n, sizeof *v, nettest_cmp_double);
            nt_format_rate(a, sizeof a, n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2);
            nt_format_rate(b, sizeof b, v[0]);
            nt_format_rate(c, sizeof c, v[n - 1]);
            fprintf(f, "\t%s (%s-%s)", a, b, c);
        }
        fputc('\n', f);
    }
    free(v);
}

static void nettest_best(FILE *f, const struct nettest_out *o)
{
    char v[32];
    fprintf(f, "\n\tBest network throughput values in MB/sec\n");
    for (int t = 0; t < NT_NTESTS; t++)
        fprintf(f, "\t%s", nt_test_names[t]);
    fputc('\n', f);
    for (int t = 0; t < NT_NTESTS; t++) {
        if (o->have[t])
            nt_format_rate(v, sizeof v, o->best[t]);
        else
            snprintf(v, sizeof v, "-");
        fprintf(f, "\t%s", v);
    }
    fputc('\n', f);
}

/* Opens one of rank 0's output files; on failure fills err naming the parameter. */
static FILE *nettest_open(const char *path, const char *param, char *err, size_t errlen)
{
    FILE *f = fopen(path, "w");
    if (f == NULL)
        snprintf(err, errlen, "%s: cannot open '%s' for writing: %s", param, path, strerror(errno));
    return f;
}

int main(int argc, char **argv)
{
    struct nt_params p;
    struct nettest_out o = {0};
    struct nt_ctx c = {0};
    char err[512] = "", date[32], when[32], command[4096] = "", *hosts = NULL;
    double *mem = NULL, *times = NULL, *gathered = NULL, mine[2];
    struct nt_stats *stats = NULL;
    int *peers = NULL, rc = 1, status;

    if (bench_version(argc, argv))
        return 0;
    uint64_t msgno = 0;

    int hint = nettest_rank_hint();
    const char *jsonl_path = NULL;
    if (bench_jsonl_take_arg(&argc, argv, "nettest", &jsonl_path) != 0)
        return 2;
    const char *corrupt = getenv("NETTEST_TEST_CORRUPT");
    if (corrupt != NULL)
        nettest_corrupt_at = strtoull(corrupt, NULL, 10);
    if (nt_parse(argc, argv, &p, err, sizeof err) != 0) {
        if (hint <= 0)
            fprintf(stderr, "nettest: %s\n", err);
        return 2;
    }
    if (p.help) {
        if (hint <= 0)
            nt_usage(stdout, "nettest");
        return 0;
    }
    for (int i = 0; i < argc; i++) {
        size_t used = strlen(command);
        snprintf(command + used, sizeof command - used, "%s%s", i ? " " : "", argv[i]);
    }
    nt_build_date(date, sizeof date, __DATE__);
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);

    if (comm_init(&argc, &argv) != 0)
        return 1;
    double start0 = comm_wtime();
    c.me = comm_rank();
    c.np = comm_size();
    if (c.np < 2) {
        if (c.me == 0)
            fprintf(stderr,
                    "nettest: np: nettest needs at least 2 processes, this job has %d (start it "
                    "as: %s -np 4 %s ...)\n",
                    c.np, strcmp(NETTEST_FLAVOUR, "MPI") == 0 ? "mpirun" : "csnrun",
                    strcmp(NETTEST_FLAVOUR, "MPI") == 0 ? "nettest-mpi" : "nettest");
        rc = 2;
        goto out;
    }
    uint64_t maxlen = p.max * p.unit_bytes;

    /* Setup checks, decided by rank 0 before any test runs. Memory: every rank says what it
     * needs and what its host has; rank 0 sums per host. Then the output files. */
    hosts = calloc((size_t)c.np, HOST_EACH);
    mem = calloc(2 * (size_t)c.np, sizeof *mem);
    if (hosts == NULL || mem == NULL)
        comm_abort(1, "out of memory");
    comm_gather_str(comm_hostname(), hosts, HOST_EACH);
    mine[0] = (double)nt_memory_need(c.np, c.me, p.chaos, maxlen, p.iterations);
    mine[1] = (double)nettest_mem_available();
    comm_gather_doubles(mine, 2, mem);
    status = 0;
    if (c.me == 0) {
        if (maxlen > comm_max_len()) {
            snprintf(err, sizeof err, "M: %llu bytes is more than %s can send in one message (%zu)",
                     (unsigned long long)maxlen, comm_library(), comm_max_len());
            status = 2;
        } else {
            status = nettest_check_memory(hosts, mem, c.np, maxlen, err, sizeof err);
        }
        if (status == 0 && p.output != NULL &&
            (o.out = nettest_open(p.output, "o", err, sizeof err)) == NULL)
            status = 2;
        if (status == 0 && p.csv != NULL &&
            (o.csv = nettest_open(p.csv, "--csv", err, sizeof err)) == NULL)
            status = 2;
        if (status == 0 && p.json != NULL &&
            (o.json = nettest_open(p.json, "--json", err, sizeof err)) == NULL)
            status = 2;
        if (status == 0 && jsonl_path != NULL &&
            (o.jsonl = nettest_open(jsonl_path, "--jsonl", err, sizeof err)) == NULL)
            status = 2;
    }
    if (nettest_agree(status) != 0) {
        if (c.me == 0)
            fprintf(stderr, "nettest: %s\n", err);
        rc = 2;
        goto out;
    }

    /* Buffers: a send and a receive buffer per neighbour of any test that runs (the seed's
     * two buffers per neighbour), touched now so that page faults stay out of the timing. */
    size_t blen = maxlen > 64 ? (size_t)maxlen : 64;
    c.sbuf = calloc((size_t)c.np, sizeof *c.sbuf);
    c.rbuf = calloc((size_t)c.np, sizeof *c.rbuf);
    c.rlen = calloc((size_t)c.np, sizeof *c.rlen);
    c.req = calloc(2 * (size_t)c.np, sizeof *c.req);
    c.nb = calloc((size_t)c.np, sizeof *c.nb);
    peers = calloc((size_t)c.np, sizeof *peers);
    times = malloc((size_t)p.iterations * sizeof *times);
    stats = calloc((size_t)c.np, sizeof *stats);
    gathered = calloc(4 * (size_t)c.np, sizeof *gathered);
    if (!c.sbuf || !c.rbuf || !c.rlen || !c.req || !c.nb || !peers || !times || !stats || !gathered)
        comm_abort(1, "out of memory for the test's bookkeeping (T%llu)",
                   (unsigned long long)p.iterations);
    for (int t = 0; t < NT_NTESTS; t++) {
        if ((t == NT_CHAOS || t == NT_CHAOS2) && !p.chaos)
            continue;
        int n = nt_neighbours((enum nt_test)t, c.np, c.me, peers);
        for (int k = 0; k < n; k++) {
            int j = peers[k];
            if (c.sbuf[j] != NULL)
                continue;
            void *s = NULL, *r = NULL;
            if (posix_memalign(&s, 4096, blen) != 0 || posix_memalign(&r, 4096, blen) != 0)
                comm_abort(1, "cannot allocate 2 buffers of %zu bytes for rank %d", blen, j);
            memset(s, 0, blen);
            memset(r, 0, blen);
            c.sbuf[j] = s;
            c.rbuf[j] = r;
        }
    }

    struct nt_prov prov = {.flavour = NETTEST_FLAVOUR,
                           .build_date = date,
                           .library = comm_library(),
                           /* Rank 0 alone writes it: the other ranks' looks at every
                            * rank's host would each fetch the whole address book. */
                           .transport = c.me == 0 ? comm_transport() : "",
                           .date = when,
                           .command = command,
                           .nprocs = c.np,
                           .hosts = hosts,
                           .host_each = HOST_EACH,
                           .p = &p};
    FILE *out = stdout;
    if (c.me == 0) {
        out = o.out != NULL ? o.out : stdout;
        o.progress = isatty(STDERR_FILENO);
        o.first_json = 1;
        nettest_header(out, &p, c.np, hosts, date, when);
        if (o.csv != NULL)
            nt_csv_begin(o.csv, &prov);
        if (o.json != NULL)
            nt_json_begin(o.json, &prov);
        if (o.jsonl != NULL)
            nt_jsonl_begin(o.jsonl, &prov, argc, argv);
    }

    comm_barrier();
    double start = comm_wtime();
    for (uint64_t rep = 1; rep <= p.repeats; rep++) {
        uint64_t units = p.min;
        do {
            double row[NT_NTESTS] = {0};
            int ran[NT_NTESTS] = {0};
            c.len = (size_t)(units * p.unit_bytes);
            for (int ti = 0; ti < NT_NTESTS; ti++) {
                enum nt_test t = (enum nt_test)ti;
                struct nt_stats st;
                if ((t == NT_CHAOS || t == NT_CHAOS2) && !p.chaos)
                    continue;
                if (o.progress)
                    fprintf(stderr, "\r\033[Knettest: repeat %llu/%llu, size %llu%c, %s",
                            (unsigned long long)rep, (unsigned long long)p.repeats,
                            (unsigned long long)units, p.unit, nt_test_names[t]);
                nettest_run_one(&c, t, &p, rep, &msgno, times, peers, &st);
                double v4[4] = {st.mean, st.min, st.median, st.max};
                comm_gather_doubles(v4, 4, gathered);
                if (c.me != 0)
                    continue;
                /* One window for the whole network: the slowest rank's mean iteration. */
                double tglobal = 0;
                for (int r = 0; r < c.np; r++) {
                    stats[r] = (struct nt_stats){gathered[4 * r], gathered[4 * r + 1],
                                                 gathered[4 * r + 2], gathered[4 * r + 3]};
                    if (stats[r].mean > tglobal)
                        tglobal = stats[r].mean;
                }
                row[t] = nt_table_value(p.print, t, c.np, c.len, tglobal, stats[0].mean);
                ran[t] = 1;
                if (!o.have[t] || row[t] > o.best[t])
                    o.best[t] = row[t];
                if (o.ncells == o.capcells) {
                    size_t cap = o.capcells ? 2 * o.capcells : 64;
                    struct nettest_cell *nc = realloc(o.cells, cap * sizeof *nc);
                    if (nc == NULL)
                        comm_abort(1, "out of memory");
                    o.cells = nc;
                    o.capcells = cap;
                }
                o.cells[o.ncells++] = (struct nettest_cell){c.len, t, row[t]};
                o.have[t] = 1;
                struct nt_result res = {rep, c.len, t, c.np, tglobal, stats};
                if (o.csv != NULL)
                    nt_csv_result(o.csv, &prov, &res);
                if (o.json != NULL) {
                    nt_json_result(o.json, &res, o.first_json);
                    o.first_json = 0;
                }
                if (o.jsonl != NULL)
                    nt_jsonl_result(o.jsonl, &res);
            }
            if (c.me == 0) {
                char v[32];
                nettest_progress_clear(&o);
                nt_format_size(v, sizeof v, c.len, p.unit_bytes);
                fputs(v, out);
                for (int t = 0; t < NT_NTESTS; t++) {
                    if (ran[t])
                        nt_format_rate(v, sizeof v, row[t]);
                    else
                        snprintf(v, sizeof v, "-");
                    fprintf(out, "\t%s", v);
                }
                fputc('\n', out);
                fflush(out);
            }
        } while (nt_next_size(&p, units, &units));
    }
    comm_barrier();
    double total = comm_wtime() - start;
    if (c.me == 0) {
        char up[8];
        nettest_progress_clear(&o);
        snprintf(up, sizeof up, "%s", NETTEST_FLAVOUR);
        for (char *q = up; *q; q++)
            *q = (char)toupper((unsigned char)*q);
        fprintf(out, "\n%s Network Test complete in %.2f sec\n", up, total);
        nettest_best(out, &o);
        nettest_medians(out, &o, &p);
        fflush(out);
        if (o.json != NULL)
            nt_json_end(o.json, o.best, o.have, total);
    }
    rc = 0;

out:
    if (o.jsonl != NULL &&
        bench_jsonl_close(o.jsonl, "nettest", jsonl_path, rc == 0 ? "ok" : "error",
                          comm_wtime() - start0) != 0 &&
        rc == 0)
        rc = 1;
    if (o.out != NULL && fclose(o.out) != 0 && rc == 0) {
        fprintf(stderr, "nettest: o: writing '%s' failed: %s\n", p.output, strerror(errno));
        rc = 1;
    }
    if (o.csv != NULL && fclose(o.csv) != 0 && rc == 0) {
        fprintf(stderr, "nettest: --csv: writing '%s' failed: %s\n", p.csv, strerror(errno));
        rc = 1;
    }
    if (o.json != NULL && fclose(o.json) != 0 && rc == 0) {
        fprintf(stderr, "nettest: --json: writing '%s' failed: %s\n", p.json, strerror(errno));
        rc = 1;
    }
    for (int j = 0; c.sbuf != NULL && j < c.np; j++) {
        free(c.sbuf[j]);
        free(c.rbuf[j]);
    }
    free(c.sbuf);
    free(c.rbuf);
    free(c.rlen);
    free(c.req);
    free(c.nb);
    free(peers);
    free(times);
    free(o.cells);
    free(stats);
    free(gathered);
    free(hosts);
    free(mem);
    comm_finalize();
    return rc;
}
