/* nettest.h: what the parts of nettest (seed 001) share: parameters, tests, rates, output. */
#ifndef NETTEST_H
#define NETTEST_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* The six test procedures, in the column order of the seed's table. */
enum nt_test { NT_STAR, NT_STAR2, NT_CHAOS, NT_CHAOS2, NT_RING, NT_RING2, NT_NTESTS };
enum nt_print { NT_PRINT_AVERAGE, NT_PRINT_TOTAL, NT_PRINT_LOCAL };

/* Throughput unit of every printed rate: 1 MB = 10^6 bytes (said in the header line). */
#define NT_MB 1e6

/* The command line, parsed (params.c). Sizes are in units of unit_bytes. */
struct nt_params {
    char unit;              /* 'b', 'K' or 'M' */
    size_t unit_bytes;      /* 1, 1024, 1048576 */
    uint64_t min, max;      /* m, M (units) */
    uint64_t step;          /* s (units); used only when multiplier < 2 */
    uint64_t multiplier;    /* K; the sizes grow geometrically when >= 2 */
    uint64_t repeats;       /* R */
    uint64_t iterations;    /* T */
    int chaos;              /* C: 1 run the Chaos tests, 0 skip them */
    enum nt_print print;    /* P */
    const char *output;     /* o: NULL for stdout */
    const char *csv, *json; /* --csv, --json: NULL when not asked for */
    int check;              /* 1 check every payload, 0 (--no-check) do not */
    int help;               /* --help seen */
};

/* params.c: parse argv[1..argc-1]. Returns 0, or 2 with a one-line message (naming the
 * parameter, no newline) in err. Never prints. */
int nt_parse(int argc, char **argv, struct nt_params *p, char *err, size_t errlen);
void nt_usage(FILE *f, const char *prog);
/* The message sizes in bytes, in the order the test runs them: the first is min; then
 * size*K (K >= 2; a size of 0 is followed by one unit) or size+s, while <= max. Returns the
 * number of sizes; fills at most cap entries of out (out may be NULL to count). */
size_t nt_sizes(const struct nt_params *p, uint64_t *out, size_t cap);
/* The size after `units` (in units): 1 and *next set, or 0 when units was the last. */
int nt_next_size(const struct nt_params *p, uint64_t units, uint64_t *next);

/* report.c: pure functions of the reporting. */
extern const char *const nt_test_names[NT_NTESTS];
/* The seed's N(P): logical links (unordered pairs) the test uses. Star P-1, Chaos P(P-1)/2,
 * Ring P (a ring of two nodes is one link). */
uint64_t nt_links(enum nt_test t, int nprocs);
/* The neighbours of rank me in test t (ascending rank order); returns their number, Ni(P). */
int nt_neighbours(enum nt_test t, int nprocs, int me, int *out);
/* Ni(P) alone: the number nt_neighbours returns. */
int nt_nlocal(enum nt_test t, int nprocs, int me);
/* Rates in MB/s from L bytes per message and the time T of one iteration (seconds). */
double nt_rate_total(uint64_t len, uint64_t links, double t); /* 2*L*N(P)/T */
double nt_rate_avg(uint64_t len, uint64_t links, double t);   /* R(total)/N(P) */
double nt_rate_local(uint64_t len, int nlocal, double t);     /* 2*L*Ni(P)/T */
/* Statistics of n iteration times (n >= 1); sorts v in place. */
struct nt_stats {
    double mean, min, median, max;
};
void nt_stats_of(double *v, size_t n, struct nt_stats *s);
/* The value the table shows for one test: from the global window tglobal (max over ranks
 * of the mean iteration time) for average/total, from rank 0's own mean tlocal0 for local. */
double nt_table_value(enum nt_print mode, enum nt_test t, int nprocs, uint64_t len, double tglobal,
                      double tlocal0);
/* A rate as the table prints it: at most 7 characters (3 significant digits below 1,
 * 2 decimals below 10^4, 1 below 10^5, none above) so that the seed's tab-separated
 * columns stay aligned. */
void nt_format_rate(char *buf, size_t n, double v);
/* The size column: the size in the parameter unit (sizes are whole units). */
void nt_format_size(char *buf, size_t n, uint64_t bytes, size_t unit_bytes);
/* Build date __DATE__ ("Nov 21 2026") as the seed prints it ("2026/11/21"). */
void nt_build_date(char *buf, size_t n, const char *date);
/* Bytes of memory one rank needs: a send and a receive buffer of max bytes for each
 * neighbour it has in any test that runs, plus the iteration-time arrays. */
uint64_t nt_memory_need(int nprocs, int me, int chaos, uint64_t maxlen, uint64_t iterations);

/* output.c: the --csv and --json files (every measured value, and the provenance). */
struct nt_prov {
    const char *flavour;    /* "csn" or "MPI" */
    const char *build_date; /* as the header prints it */
    const char *library, *transport;
    const char *date;    /* start of the run, UTC, ISO 8601 */
    const char *command; /* the command line, words separated by blanks */
    int nprocs;
    const char *hosts; /* host of rank r at hosts + r*host_each */
    size_t host_each;
    const struct nt_params *p;
};
struct nt_result {
    uint64_t repeat; /* 1-based */
    uint64_t len;    /* message length, bytes */
    enum nt_test test;
    int nprocs;
    double tglobal;              /* max over ranks of the mean iteration time, seconds */
    const struct nt_stats *rank; /* [nprocs]: each rank's iteration times */
};
extern const char *const nt_print_names[3];
void nt_csv_begin(FILE *f, const struct nt_prov *v);
void nt_csv_result(FILE *f, const struct nt_prov *v, const struct nt_result *r);
void nt_json_begin(FILE *f, const struct nt_prov *v);
void nt_json_result(FILE *f, const struct nt_result *r, int first);
/* best[t] is the best table value of test t; have[t] is 0 for tests that did not run. */
void nt_json_end(FILE *f, const double *best, const int *have, double total_s);

/* The --jsonl records (docs/results-jsonl.md): the header, then per result the network's
 * rates (one record each) and every rank's local rate and median iteration time. */
void nt_jsonl_begin(FILE *f, const struct nt_prov *v, int argc, char **argv);
void nt_jsonl_result(FILE *f, const struct nt_result *r);

/* check.c: the payload pattern, a function of sender, receiver, message number and offset. */
void nt_fill(void *buf, size_t len, int from, int to, uint64_t msgno);
/* Returns the first offset that differs from the pattern, or len when all match; on a
 * mismatch *got and *want hold the bytes at that offset. */
size_t nt_verify(const void *buf, size_t len, int from, int to, uint64_t msgno, unsigned char *got,
                 unsigned char *want);

#endif
