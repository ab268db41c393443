/* ppcommon.h: sizes, payload patterns, statistics, options shared by pingpong and memcpy-bench. */
#ifndef PPCOMMON_H
#define PPCOMMON_H

#include <stddef.h>
#include <stdint.h>

#define PP_MAX_SIZE ((size_t)1 << 30) /* largest message a size option accepts: 1 GiB */
#define PP_MAX_SIZES 64               /* longest size list */
#define PP_MAX_SAMPLES 1000

/* A list of message sizes, in the order they are measured. */
struct pp_sizes {
    size_t v[PP_MAX_SIZES];
    int n;
};

/* Parses "64", "4K", "4KiB", "1M", "1MB" (K, M, G are powers of 1024) into *out.
 * Returns 0, or -1 when s is not a size or is above PP_MAX_SIZE. */
int pp_parse_size(const char *s, size_t *out);

/* Parses a comma-separated list of sizes. Returns 0, or -1 (bad item, empty or too long). */
int pp_parse_size_list(const char *s, struct pp_sizes *out);

/* Fills out with min, then doubling up to max (0 is followed by 1). Returns 0, or -1 when
 * min > max. */
int pp_size_range(size_t min, size_t max, struct pp_sizes *out);

/* Parses a decimal integer in [lo, hi]. Returns 0 or -1. */
int pp_parse_long(const char *s, long lo, long hi, long *out);

/* Formats a size as "64", "4K", "16M" (exact binary multiples), else plain bytes. */
const char *pp_size_str(size_t size, char *buf, size_t cap);

/* A payload pattern: deterministic bytes derived from (seed, offset), so that a receiver can
 * check a message without a copy of what was sent, and a stale message (other seed) fails. */
void pp_fill(void *buf, size_t len, uint64_t seed);
/* Returns the offset of the first byte that differs from pp_fill(seed), or (size_t)-1. */
size_t pp_check(const void *buf, size_t len, uint64_t seed);

/* Page-aligned zeroed allocation (touched, so that page faults stay out of the timing). */
void *pp_alloc(size_t len);
void pp_free(void *p);

/* The messages per window for size: window, but no more bytes than window_bytes (at least 1). */
int pp_window_for(size_t size, int window, size_t window_bytes);

/* Option matching for "--name VALUE" and "--name=VALUE": when argv[*i] is option name, sets
 * *val to its value, moves *i onto the last argument used and returns 1; returns -1 when the
 * value is missing, 0 when argv[*i] is not this option. */
int pp_opt(int argc, char **argv, int *i, const char *name, const char **val);

/* The options pingpong and memcpy-bench share. */
struct pp_common {
    struct pp_sizes sizes; /* final list (after pp_common_finish) */
    int have_list;         /* --sizes given */
    int have_range;        /* --min or --max given */
    size_t min, max;
    int samples;         /* timed batches per size */
    long iters;          /* iterations per batch; 0: calibrated to sample_ms */
    long warmup;         /* warm-up iterations; -1: calibration run (or iters/10) */
    double sample_ms;    /* target length of one batch when calibrating */
    int window;          /* messages (copies) per window */
    size_t window_bytes; /* at most this many bytes per window */
    const char *json;    /* NULL: no JSON file */
};

#define PP_COMMON_HELP                                                                             \
    "  --sizes LIST       comma-separated sizes (e.g. 0,8,1K,64K,4M); overrides --min/--max\n"     \
    "  --min SIZE         smallest size (default 0); sizes double from it\n"                       \
    "  --max SIZE         largest size (default 64M)\n"                                            \
    "  --samples N        timed batches per size (default 7)\n"                                    \
    "  --iters N          iterations per batch (default: calibrated to --sample-ms)\n"             \
    "  --warmup N         warm-up iterations (default: the calibration run, or iters/10)\n"        \
    "  --sample-ms MS     target length of one batch when calibrating (default 10)\n"              \
    "  --window N         messages per window (default 64)\n"                                      \
    "  --window-bytes SIZE  at most this many bytes per window (default 64M; at least 1 "          \
    "message)\n"                                                                                   \
    "  --json FILE        also write the results as JSON (one result per line)\n"
/* pingpong's alone (memcpy-bench and cma-floor do not take it). */
#define PP_JSONL_HELP                                                                              \
    "  --jsonl FILE       also write one JSON Lines record per measurement\n"                      \
    "                     (docs/results-jsonl.md)\n"

void pp_common_defaults(struct pp_common *o);
/* Consumes argv[*i] if it is a shared option: returns 1 (consumed), 0 (not a shared option)
 * or -1 after printing one line "PROG: ..." to stderr. */
int pp_common_arg(int argc, char **argv, int *i, struct pp_common *o, const char *prog);
/* Builds the size list; returns 0 or -1 after printing one line. */
int pp_common_finish(struct pp_common *o, const char *prog);

double pp_now(void); /* seconds, monotonic */

/* The first two CPUs this process may run on (the floors' --bind). Returns 0, or -1 with errno
 * set (EINVAL: fewer than two). */
int pp_two_cpus(int cpu[2]);
/* Binds the calling process to CPU c. Returns 0 or -1 (errno). */
int pp_bind_cpu(int c);

/* Statistics over n samples (v is reordered). */
double pp_median(double *v, int n);
double pp_min(const double *v, int n);
double pp_max(const double *v, int n);

#endif
