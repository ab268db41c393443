/* logp_stats.h: the pure part of logp (statistics, o_r filtering, LogGP fit, size parsing),
 * unit-tested. */
#ifndef LOGP_STATS_H
#define LOGP_STATS_H

#include <stddef.h>

/* Order statistics of a sample. The confidence interval is the distribution-free 95% interval
 * of the median (binomial order statistics), so no normality is assumed: benchmark timings
 * have long right tails. */
typedef struct logp_summary {
    size_t n;
    double median;
    double q1, q3;       /* quartiles; the spread reported is q3 - q1 */
    double ci_lo, ci_hi; /* 95% confidence interval of the median; [min, max] when n is tiny */
    double min, max, mean;
} logp_summary;

/* Summarises x[0..n) without changing it; scratch holds n doubles. n == 0 gives all NaN and
 * returns -1; otherwise 0. */
int logp_summarize(const double *x, size_t n, double *scratch, logp_summary *s);

/* Quantile p (0..1) of sorted[0..n), linear interpolation between order statistics. */
double logp_quantile_sorted(const double *sorted, size_t n, double p);

/* 1 when both ends of the confidence interval lie within rel * |median| of the median (or
 * within abs_floor, whichever is larger: a median near zero cannot reach a relative bound)
 * and n >= min_n; 0 otherwise. */
int logp_converged(const logp_summary *s, double rel, double abs_floor, size_t min_n);

/* The o_r filter of seed 003. A baseline is the duration of single polls with no message in
 * flight. A candidate is the longest poll of one run (a run: the master sends, then polls until
 * the reply has arrived). A candidate is accepted when it is longer than the baseline's
 * 99th percentile (the poll visibly did extra work: it took the message in) and shorter than
 * the round-trip time (a longer one was an interrupt or a preemption, since the reception is
 * part of the round trip). An accepted candidate gives the sample candidate - baseline median:
 * the work beyond what the poll would have cost anyway. */
typedef struct logp_or_filter {
    double base_median; /* expected poll time with no message */
    double base_spread; /* interquartile range of the baseline */
    double lower;       /* candidates must be longer than this */
    double upper;       /* and shorter than this */
} logp_or_filter;

#define LOGP_OR_BASE_QUANTILE 0.99

/* Builds the filter from n baseline polls (scratch: n doubles) and the round-trip bound.
 * Returns -1 when n == 0. */
int logp_or_filter_init(logp_or_filter *f, const double *base, size_t n, double *scratch,
                        double upper);

/* Writes the accepted samples of cand[0..n) to out (room for n) and returns their count. */
size_t logp_or_select(const logp_or_filter *f, const double *cand, size_t n, double *out);

/* Weighted least squares y = a + b x. w == NULL means equal weights. Returns -1 when the fit is
 * undetermined (fewer than two distinct x with positive weight), else 0. r2 is the weighted
 * coefficient of determination; se_a, se_b the standard errors from the weighted residuals. */
typedef struct logp_fit {
    double a, b;
    double se_a, se_b;
    double r2;
    double sse; /* weighted sum of squared residuals */
    size_t n;
} logp_fit;
int logp_fit_line(const double *x, const double *y, const double *w, size_t n, logp_fit *f);

/* Two lines: x[0..split) and x[split..n), x ascending, each with at least min_pts points, the
 * split chosen to minimise the total weighted squared residual. A protocol switch (eager to
 * rendezvous) puts a step into g(size) that one line cannot follow. With fewer than
 * 2 min_pts points both fits are the one line over all points and split is 0. Returns -1 when
 * even that is undetermined. */
int logp_fit_two(const double *x, const double *y, const double *w, size_t n, size_t min_pts,
                 logp_fit *low, logp_fit *high, size_t *split);

/* 1 when the finite values among v[0..n) differ by more than factor (largest / smallest, each
 * first raised to floor so that values at the noise floor do not count as a 2x difference);
 * 0 when they agree or fewer than two are finite. */
int logp_disagree(const double *v, size_t n, double factor, double floor);

/* Sizes: "1024", "4K", "1M", "2G" (binary multiples; an optional trailing "B" or "iB" is
 * accepted). Returns 0, or -1 for anything else or a value above max. */
int logp_parse_size(const char *s, size_t max, size_t *out);

/* A size list: "MIN:MAX" gives MIN, 2 MIN, 4 MIN ... <= MAX (MIN 0 gives 0, 1, 2, 4 ...);
 * "A,B,C" gives those sizes, sorted and without duplicates. On success returns 0 with a
 * malloc'ed array in *sizes; on error returns -1 and writes one line into err. */
int logp_parse_sizes(const char *spec, size_t max, size_t **sizes, size_t *n, char *err,
                     size_t errlen);

/* "0", "512", "4K", "1M", "1536" (exact multiples only get a suffix). */
void logp_format_size(size_t v, char *out, size_t outlen);

/* A derived figure with a conservative 95% interval (the intervals of its parts combined
 * end to end). */
typedef struct logp_est {
    double v, lo, hi;
} logp_est;

#define LOGP_OR_MIN_ACCEPT 0.10 /* seed o_r needs this share of accepted runs ... */
#define LOGP_OR_MIN_RUNS 5      /* ... and at least this many */
#define LOGP_DISAGREE 2.0       /* estimates further apart than this factor are flagged */

/* All measurements of one message size (times in seconds) and what is derived from them. */
typedef struct logp_row {
    size_t size;
    int k;                  /* messages per PRTT stream */
    double delay;           /* PRTT delay d asked for */
    double delay_real;      /* its real length, measured */
    logp_summary rtt;       /* ping-pong round trip */
    logp_summary or_seed;   /* seed-003 samples that passed the filter */
    logp_summary os_direct; /* blocking send */
    logp_summary or_direct; /* receive of an arrived message */
    logp_summary p1, pn;    /* PRTT(1,0), PRTT(k,0) */
    logp_summary ps, pr;    /* PRTT(k,d) with the delay at the sender, at the receiver */
    logp_or_filter filter;
    size_t or_candidates, or_accepted;
    int capped; /* some measurement stopped at the time cap */
    /* derived by logp_row_derive */
    logp_est half_rtt, g, os_prtt, or_prtt;
    logp_est os, o_r; /* the figures used: PRTT o_s; seed o_r, else direct o_r */
    logp_est L;       /* rtt/2 - o_s - o_r */
    int or_seed_valid, or_fallback;
    int os_disagree, or_disagree;
} logp_row;

/* Fills the derived fields of r; floor is the noise floor of the 2x comparison (the clock
 * cost). */
void logp_row_derive(logp_row *r, double floor);

/* The LogGP summary over all sizes. */
#define LOGP_FIT_MIN_PTS 3 /* sizes per piece of the two-piece fit */

typedef struct logp_loggp {
    int fit_ok;
    logp_fit low, high; /* g(size) = a + b size below and from the break: the break and the
                         * lower piece with weights 1/g^2, the upper piece unweighted */
    size_t split;       /* index of the first size of the upper piece (0: one line) */
    double G, g0;       /* high.b, low.a */
    size_t small;       /* index of the smallest size: L, o_s, o_r come from it */
    size_t large;       /* index of the largest size: the bandwidth check */
    double bw_G;        /* 1/G, bytes per second */
    double bw_pingpong; /* largest size / half round trip */
    double bw_diff;     /* |bw_G - bw_pingpong| / bw_pingpong */
    double lso;         /* L + o_s + o_r at the smallest size */
    double half_rtt;    /* half round trip at the smallest size */
} logp_loggp;

/* rows ascending by size. */
void logp_loggp_derive(const logp_row *rows, size_t n, logp_loggp *out);

#endif
