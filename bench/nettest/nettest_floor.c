/* nettest_floor.c: the floor of nettest's cells on one host, with no library: NP processes
 * (forked), each message pulled by its receiver with one process_vm_readv from its sender's
 * buffer, the barrier one counter in shared memory (waiters yield). Per size and topology
 * (Star, Chaos, Ring: nettest's neighbours), an iteration is: barrier, the clock, every rank
 * pulls the messages of all its neighbours, barrier, the clock. Nothing else: no headers, no
 * matching, no waiting for a message to be announced, no order between a rank's receives; the
 * one-way tests (Star, Chaos, Ring) move the same bytes as their two-way twins and only add an
 * order, so both columns get the same floor. The figures are nettest's (the slowest rank's mean
 * iteration, R(total), R(avg) or R(local) as P says), in nettest's table, so that
 * bench/nettest-configs.sh sets nettest and nettest-mpi against it (floor:BUILD).
 *
 * usage: nettest-floor [--np N] NETTEST-PARAMETERS   (e.g. uK m1 M1024 K4 R1 T200 Ptotal) */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "forked.h"
#include "nettest.h"
#include "tool.h"

/* What the ranks share after the job's head. */
struct floor_shared {
    uint64_t sbuf[FORKED_MAX_NP]; /* each rank's send buffer, in its own address space */
    double mean[FORKED_MAX_NP];   /* each rank's mean iteration of the cell, seconds */
};

static struct forked_job *floor_job;
static struct floor_shared *floor_sh;
static int floor_np;

static double floor_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void floor_yield(void *arg)
{
    (void)arg;
    sched_yield();
}

/* The counter barrier (as core/hostbar.c, without sleep): 0, or -1 when a rank failed. */
static int floor_barrier(void)
{
    return forked_barrier(floor_job, floor_yield, NULL);
}

static int floor_pull(int from, void *dst, size_t len)
{
    int e = forked_pull(floor_job, from, dst, floor_sh->sbuf[from], len);
    if (e == 0)
        return 0;
    fprintf(stderr, "nettest-floor: process_vm_readv of %zu bytes from rank %d: %s\n", len, from,
            strerror(e));
    atomic_store(&floor_job->failed, 1);
    return -1;
}

static const enum nt_test floor_topo[3] = {NT_STAR, NT_CHAOS, NT_RING};

/* One rank's whole run; rank 0 prints. Returns the process's exit status. */
static int floor_rank(int me, const struct nt_params *p, const uint64_t *sizes, size_t nsizes)
{
    uint64_t maxlen = 0;
    for (size_t i = 0; i < nsizes; i++)
        maxlen = sizes[i] > maxlen ? sizes[i] : maxlen;
    size_t cap = maxlen ? (size_t)maxlen : 1;
    char *sbuf = malloc(cap), *rbuf = malloc(cap * (size_t)(floor_np - 1));
    double *row = calloc(NT_NTESTS, sizeof *row);
    if (!sbuf || !rbuf || !row) {
        fprintf(stderr, "nettest-floor: rank %d: out of memory for %zu-byte buffers\n", me, cap);
        atomic_store(&floor_job->failed, 1);
        return 1;
    }
    memset(sbuf, me + 1, cap); /* touched: the pages are this process's own */
    memset(rbuf, 0, cap * (size_t)(floor_np - 1));
    floor_sh->sbuf[me] = (uint64_t)(uintptr_t)sbuf;
    if (floor_barrier() != 0)
        return 1;
    for (uint64_t rep = 0; rep < p->repeats; rep++) {
        if (me == 0) {
            printf("Size,%c", p->unit);
            for (int t = 0; t < NT_NTESTS; t++)
                printf("\t%s", nt_test_names[t]);
            printf("\n");
        }
        for (size_t i = 0; i < nsizes; i++) {
            size_t len = (size_t)sizes[i];
            for (int k = 0; k < 3; k++) {
                enum nt_test t = floor_topo[k];
                int nb[FORKED_MAX_NP];
                int n = nt_neighbours(t, floor_np, me, nb);
                double sum = 0;
                for (uint64_t it = 0; it < p->iterations; it++) {
                    if (floor_barrier() != 0)
                        return 1;
                    double t0 = floor_now();
                    for (int j = 0; j < n; j++)
                        if (floor_pull(nb[j], rbuf + (size_t)j * cap, len) != 0)
                            return 1;
                    if (floor_barrier() != 0)
                        return 1;
                    sum += floor_now() - t0;
                }
                floor_sh->mean[me] = sum / (double)p->iterations;
                if (floor_barrier() != 0)
                    return 1;
                double tglobal = 0;
                for (int r = 0; r < floor_np; r++)
                    tglobal = floor_sh->mean[r] > tglobal ? floor_sh->mean[r] : tglobal;
                /* The two-way twin (the next test in nettest's order) has the same floor. */
                row[t] = row[t + 1] =
                    nt_table_value(p->print, t, floor_np, len, tglobal, floor_sh->mean[0]);
                if (floor_barrier() != 0) /* everyone has read the means */
                    return 1;
            }
            if (me == 0) {
                char sz[32], v[32];
                nt_format_size(sz, sizeof sz, len, p->unit_bytes);
                printf("%s", sz);
                for (int t = 0; t < NT_NTESTS; t++) {
                    nt_format_rate(v, sizeof v, row[t]);
                    printf("\t%s", v);
                }
                printf("\n");
                fflush(stdout);
            }
        }
        if (me == 0)
            printf("\n");
    }
    free(sbuf);
    free(rbuf);
    free(row);
    return 0;
}

static void floor_usage(FILE *f)
{
    fprintf(f,
            "usage: nettest-floor [--np N] NETTEST-PARAMETERS   (e.g. uK m1 M1024 K4 R1 T200 "
            "Ptotal)\n"
            "The floor of nettest's cells on this host, with no library: N processes (default "
            "4, 2 to %d), each\nmessage pulled by its receiver with one process_vm_readv, the "
            "barrier a counter in shared\nmemory. nettest's table; a test and its two-way twin "
            "share one floor (the same bytes).\n",
            FORKED_MAX_NP);
}

int main(int argc, char **argv)
{
    if (bench_version(argc, argv))
        return 0;
    int np = 4, first = 1;
    if (argc > 1 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        floor_usage(stdout);
        return 0;
    }
    if (argc > 1 && strcmp(argv[1], "--np") == 0) {
        char *end = NULL;
        long v = argc > 2 ? strtol(argv[2], &end, 10) : 0;
        if (argc < 3 || *end != '\0' || v < 2 || v > FORKED_MAX_NP) {
            fprintf(stderr, "nettest-floor: --np takes a number from 2 to %d, not '%s'\n",
                    FORKED_MAX_NP, argc > 2 ? argv[2] : "");
            return 2;
        }
        np = (int)v;
        first = 3;
    }
    struct nt_params p;
    char err[256];
    /* nt_parse reads argv[1..]: hand it the parameters after --np. */
    argv[first - 1] = argv[0];
    if (nt_parse(argc - first + 1, argv + first - 1, &p, err, sizeof err) != 0) {
        fprintf(stderr, "nettest-floor: %s\n", err);
        return 2;
    }
    if (p.help) {
        floor_usage(stdout);
        return 0;
    }
    if (p.output || p.csv || p.json) {
        fprintf(stderr, "nettest-floor: o, --csv and --json are nettest's alone\n");
        return 2;
    }
    size_t nsizes = nt_sizes(&p, NULL, 0);
    uint64_t *sizes = calloc(nsizes ? nsizes : 1, sizeof *sizes);
    if (!sizes)
        return 1;
    nt_sizes(&p, sizes, nsizes);
    floor_np = np;
    printf("# nettest-floor: %d processes on this host, no library: each message pulled with "
           "one process_vm_readv,\n# the barrier a counter in shared memory; a test and its "
           "two-way twin share one floor\n",
           np);
    void *area;
    int me = forked_start(&floor_job, np, sizeof *floor_sh, &area, "nettest-floor");
    if (me < 0)
        return 1;
    floor_sh = area;
    int rc = floor_rank(me, &p, sizes, nsizes);
    free(sizes);
    return rc;
}
