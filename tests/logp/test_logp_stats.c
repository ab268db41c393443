/* test_logp_stats.c: logp's statistics, o_r filter, LogGP fit and size parsing on synthetic samples
 * with known answers. */
#include "logp_stats.h"
#include "test.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static double urand(void) /* uniform in [0, 1), deterministic */
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (double)(rng_state >> 11) / 9007199254740992.0;
}

static double exprand(double mean)
{
    return -mean * log(1.0 - urand());
}

static int near(double got, double want, double rel)
{
    return fabs(got - want) <= rel * fabs(want);
}

static void test_summary(void)
{
    double x[] = {5, 1, 4, 2, 3};
    double scratch[5];
    logp_summary s;
    CHECK(logp_summarize(x, 5, scratch, &s) == 0);
    CHECK(s.n == 5 && s.median == 3 && s.q1 == 2 && s.q3 == 4 && s.min == 1 && s.max == 5);
    CHECK(s.mean == 3);
    CHECK(x[0] == 5);                    /* input untouched */
    CHECK(s.ci_lo == 1 && s.ci_hi == 5); /* too few samples for a narrower 95% interval */
    CHECK(logp_summarize(x, 0, scratch, &s) == -1 && isnan(s.median));

    double even[] = {1, 2, 3, 4};
    CHECK(logp_summarize(even, 4, scratch, &s) == 0 && s.median == 2.5);

    /* Long-tailed timings: 1 us plus an exponential tail of mean 0.1 us; true median
     * 1 + 0.1 ln 2. The interval must contain it and shrink as n grows. */
    enum { N = 20000 };
    double *big = malloc(N * sizeof *big), *sc = malloc(N * sizeof *sc);
    CHECK(big && sc);
    for (size_t i = 0; i < N; i++)
        big[i] = 1e-6 + exprand(1e-7);
    double truth = 1e-6 + 1e-7 * log(2.0);
    logp_summary s1, s2;
    CHECK(logp_summarize(big, 200, sc, &s1) == 0);
    CHECK(logp_summarize(big, N, sc, &s2) == 0);
    CHECK(s1.ci_lo <= truth && truth <= s1.ci_hi);
    CHECK(s2.ci_lo <= truth && truth <= s2.ci_hi);
    CHECK(s2.ci_hi - s2.ci_lo < s1.ci_hi - s1.ci_lo);
    CHECK(near(s2.median, truth, 0.01));
    /* 20000 samples: the interval is well within 3% of the median; 200 is not within 0.3%. */
    CHECK(logp_converged(&s2, 0.03, 0, 10));
    CHECK(!logp_converged(&s1, 0.003, 0, 10));
    CHECK(!logp_converged(&s2, 0.03, 0, N + 1)); /* min_n not reached */
    free(big);
    free(sc);

    /* A median near zero converges on the absolute floor. */
    logp_summary z = {.n = 50, .median = 0, .ci_lo = -1e-9, .ci_hi = 1e-9};
    CHECK(!logp_converged(&z, 0.03, 0, 10));
    CHECK(logp_converged(&z, 0.03, 2e-9, 10));
}

static void test_quantile(void)
{
    double v[] = {10, 20, 30, 40, 50};
    CHECK(logp_quantile_sorted(v, 5, 0) == 10);
    CHECK(logp_quantile_sorted(v, 5, 1) == 50);
    CHECK(logp_quantile_sorted(v, 5, 0.5) == 30);
    CHECK(fabs(logp_quantile_sorted(v, 5, 0.125) - 15) < 1e-12);
    CHECK(isnan(logp_quantile_sorted(v, 0, 0.5)));
}

/* The seed-003 filter: polls take 50 ns +- 5 ns with no message, with a 1% tail of up to 30 ns
 * more; a reception adds o_r = 300 ns. Runs: 80% show the reception as their longest poll, 10%
 * were preempted (longer than the 20 us round trip), 10% saw no visible reception. */
static void test_or_filter(void)
{
    enum { NB = 4000, NC = 2000 };
    const double o_r = 300e-9, rtt = 20e-6;
    double *base = malloc(NB * sizeof *base), *sc = malloc(NB * sizeof *sc);
    double *cand = malloc(NC * sizeof *cand), *acc = malloc(NC * sizeof *acc);
    CHECK(base && sc && cand && acc);
    for (size_t i = 0; i < NB; i++)
        base[i] = 45e-9 + 10e-9 * urand() + (urand() < 0.01 ? 30e-9 * urand() : 0);
    logp_or_filter f;
    CHECK(logp_or_filter_init(&f, base, NB, sc, rtt) == 0);
    CHECK(near(f.base_median, 50e-9, 0.03));
    CHECK(f.lower > 54e-9 && f.lower < 85e-9);
    CHECK(f.upper == rtt);
    CHECK(f.base_spread > 3e-9 && f.base_spread < 7e-9);
    size_t want = 0;
    for (size_t i = 0; i < NC; i++) {
        double u = urand();
        double poll = 45e-9 + 10e-9 * urand();
        if (u < 0.8) {
            cand[i] = poll + o_r + exprand(20e-9);
            want++;
        } else if (u < 0.9) {
            cand[i] = 4e-3 + poll; /* a 4 ms time slice */
        } else {
            cand[i] = 50e-9 + 2e-9 * urand(); /* nothing seen */
        }
    }
    size_t k = logp_or_select(&f, cand, NC, acc);
    CHECK(k == want);
    logp_summary s;
    CHECK(logp_summarize(acc, k, sc, &s) == 0);
    /* median of o_r + exp(20 ns) + (poll - 50 ns): o_r + 20 ns ln 2 */
    CHECK(near(s.median, o_r + 20e-9 * log(2.0), 0.03));
    CHECK(s.ci_lo <= o_r + 20e-9 * log(2.0) + 2e-9 && s.ci_hi >= o_r + 20e-9 * log(2.0) - 2e-9);
    CHECK(logp_or_filter_init(&f, base, 0, sc, rtt) == -1);

    /* Non-finite candidates are dropped. */
    double odd[] = {NAN, INFINITY, 100e-9};
    CHECK(logp_or_filter_init(&f, base, NB, sc, rtt) == 0);
    CHECK(logp_or_select(&f, odd, 3, acc) == 1);
    free(base);
    free(sc);
    free(cand);
    free(acc);
}

/* The LogGP fit: per-message time g(m) = g0 + m G over sizes 0 .. 1 MiB. */
static void test_fit(void)
{
    enum { N = 21 };
    const double g0 = 0.25e-6, G = 1.0 / 10e9; /* 0.25 us, 10 GB/s */
    double x[N], y[N], w[N];
    for (int i = 0; i < N; i++) {
        x[i] = i == 0 ? 0 : (double)(1u << (i - 1));
        y[i] = g0 + x[i] * G;
        w[i] = 1.0 / (y[i] * y[i]);
    }
    logp_fit f;
    CHECK(logp_fit_line(x, y, w, N, &f) == 0);
    CHECK(near(f.a, g0, 1e-9) && near(f.b, G, 1e-9) && f.r2 > 0.999999 && f.n == N);
    CHECK(logp_fit_line(x, y, NULL, N, &f) == 0);
    CHECK(near(f.a, g0, 1e-6) && near(f.b, G, 1e-9));

    /* 3% multiplicative noise: with relative weights both parameters come back, the
     * intercept from the small sizes, the slope from the large ones. */
    for (int i = 0; i < N; i++) {
        y[i] = (g0 + x[i] * G) * (1.0 + 0.03 * (2 * urand() - 1));
        w[i] = 1.0 / (y[i] * y[i]);
    }
    CHECK(logp_fit_line(x, y, w, N, &f) == 0);
    CHECK(near(f.a, g0, 0.05));
    CHECK(near(f.b, G, 0.05));
    CHECK(f.se_b > 0 && f.se_b < 0.05 * G);
    CHECK(f.r2 > 0.99);

    /* Undetermined fits. */
    double one[] = {5, 5, 5};
    CHECK(logp_fit_line(one, y, NULL, 3, &f) == -1);
    CHECK(logp_fit_line(x, y, NULL, 1, &f) == -1);
    double zero_w[N] = {0};
    zero_w[3] = 1;
    CHECK(logp_fit_line(x, y, zero_w, N, &f) == -1);
    /* NaN points are skipped. */
    double xs[] = {0, 1, 2, 3}, ys[] = {1, 3, NAN, 7};
    CHECK(logp_fit_line(xs, ys, NULL, 4, &f) == 0 && f.n == 3);
    CHECK(near(f.a, 1, 1e-12) && near(f.b, 2, 1e-12));
}

/* A protocol switch: 0.1 us + 1/20 GB/s below 4 KiB, 2 us + 1/13 GB/s from 4 KiB on. */
static void test_fit_two(void)
{
    enum { N = 22 };
    double x[N], y[N], w[N];
    for (int i = 0; i < N; i++) {
        x[i] = i == 0 ? 0 : (double)(1u << (i - 1));
        y[i] = x[i] < 4096 ? 0.1e-6 + x[i] / 20e9 : 2e-6 + x[i] / 13e9;
        y[i] *= 1.0 + 0.01 * (2 * urand() - 1);
        w[i] = 1.0 / (y[i] * y[i]);
    }
    logp_fit lo, hi, one;
    size_t split;
    CHECK(logp_fit_two(x, y, w, N, 3, &lo, &hi, &split) == 0);
    CHECK(x[split] == 4096);
    CHECK(near(lo.a, 0.1e-6, 0.05));
    CHECK(near(hi.b, 1 / 13e9, 0.03));
    CHECK(near(hi.a, 2e-6, 0.1));
    CHECK(lo.n == split && hi.n == N - split);
    /* one line misses the slope badly */
    CHECK(logp_fit_line(x, y, w, N, &one) == 0);
    CHECK(!near(one.b, 1 / 13e9, 0.15));
    CHECK(one.sse > lo.sse + hi.sse);

    /* Too few points for two pieces: one line, split 0. */
    CHECK(logp_fit_two(x, y, w, 5, 3, &lo, &hi, &split) == 0);
    CHECK(split == 0 && lo.n == 5 && hi.b == lo.b);
    CHECK(logp_fit_two(x, y, w, 1, 3, &lo, &hi, &split) == -1);
}

/* Row derivation on PRTT figures built from known parameters: o_s 0.3 us, o_r 0.5 us,
 * L 1 us, g 0.6 us, stream of 16, delay 2 us. */
static void set_summary(logp_summary *s, double v)
{
    s->n = 100;
    s->median = v;
    s->ci_lo = v * 0.99;
    s->ci_hi = v * 1.01;
}

static void test_row(void)
{
    const double os = 0.3e-6, orr = 0.5e-6, L = 1e-6, g = 0.6e-6, d = 2e-6;
    const int k = 16;
    logp_row r;
    memset(&r, 0, sizeof r);
    r.size = 64;
    r.k = k;
    r.delay = d;
    r.delay_real = d;
    double p1 = os + L + orr + os + L + orr; /* message there, empty reply back */
    set_summary(&r.rtt, 2 * (os + L + orr));
    set_summary(&r.p1, p1);
    set_summary(&r.pn, p1 + (k - 1) * g);
    set_summary(&r.ps, p1 + (k - 1) * (os + d));
    set_summary(&r.pr, p1 + (k - 1) * (orr + d));
    set_summary(&r.or_seed, orr * 1.1);
    set_summary(&r.os_direct, os * 0.9);
    set_summary(&r.or_direct, orr * 1.2);
    r.or_candidates = 100;
    r.or_accepted = 90;
    logp_row_derive(&r, 20e-9);
    CHECK(near(r.g.v, g, 1e-9) && r.g.lo < g && r.g.hi > g);
    CHECK(near(r.os_prtt.v, os, 1e-6) && near(r.or_prtt.v, orr, 1e-6));
    CHECK(r.or_seed_valid && !r.or_fallback);
    CHECK(near(r.o_r.v, orr * 1.1, 1e-9));
    CHECK(near(r.os.v, os, 1e-6));
    CHECK(near(r.L.v, L - 0.1 * orr, 1e-6) && r.L.lo < r.L.v && r.L.hi > r.L.v);
    CHECK(!r.os_disagree && !r.or_disagree);

    /* Too few accepted runs: the direct o_r stands in; a wild direct o_s is flagged. */
    r.or_accepted = 5; /* 5% */
    set_summary(&r.os_direct, os * 3);
    logp_row_derive(&r, 20e-9);
    CHECK(!r.or_seed_valid && r.or_fallback && near(r.o_r.v, orr * 1.2, 1e-9));
    CHECK(r.os_disagree && !r.or_disagree);

    /* A two-piece summary: eager below 4 KiB; above, copies from cache run at 20 GB/s up to
     * 128 KiB and at 10 GB/s beyond. G must be the large-message figure. */
    enum { NT = 22 };
    logp_row t[NT];
    for (int i = 0; i < NT; i++) {
        t[i] = r;
        t[i].size = i == 0 ? 0 : (size_t)1 << (i - 1);
        double m = (double)t[i].size, gi;
        if (m < 4096)
            gi = 0.1e-6 + m / 20e9;
        else if (m <= 131072)
            gi = 2e-6 + m / 20e9;
        else
            gi = 2e-6 + 131072 / 20e9 + (m - 131072) / 10e9;
        set_summary(&t[i].pn, p1 + (k - 1) * gi);
        logp_row_derive(&t[i], 20e-9);
    }
    logp_loggp tf;
    logp_loggp_derive(t, NT, &tf);
    CHECK(tf.fit_ok && tf.split > 0 && t[tf.split].size <= 4096);
    CHECK(near(tf.g0, 0.1e-6, 0.05));
    CHECK(near(tf.bw_G, 10e9, 0.15));

    /* The summary over sizes: L, o_s, o_r from the smallest; the bandwidth check. */
    logp_row rows[8];
    for (int i = 0; i < 8; i++) {
        rows[i] = r;
        rows[i].size = i == 0 ? 0 : (size_t)1 << (2 * i + 6);
        double gi = 0.2e-6 + (double)rows[i].size / 10e9;
        set_summary(&rows[i].pn, p1 + (k - 1) * gi);
        set_summary(&rows[i].rtt, 2 * (os + L + orr) + 2 * (double)rows[i].size / 10e9);
        logp_row_derive(&rows[i], 20e-9);
    }
    logp_loggp f;
    logp_loggp_derive(rows, 8, &f);
    CHECK(f.fit_ok && f.small == 0 && f.large == 7);
    CHECK(near(f.G, 1 / 10e9, 0.01) && near(f.bw_G, 10e9, 0.01));
    CHECK(near(f.lso, rows[0].half_rtt.v, 1e-9));
    /* size / (rtt/2) at 1 MiB: 1 MiB / (1.8 us + 105 us) */
    double want = (double)rows[7].size / (os + L + orr + (double)rows[7].size / 10e9);
    CHECK(near(f.bw_pingpong, want, 1e-9));
    CHECK(near(f.bw_diff, fabs(10e9 - want) / want, 1e-6));
}

static void test_disagree(void)
{
    double a[] = {1.0e-6, 1.5e-6, 1.9e-6};
    CHECK(!logp_disagree(a, 3, 2.0, 0));
    double b[] = {1.0e-6, 2.5e-6};
    CHECK(logp_disagree(b, 2, 2.0, 0));
    double c[] = {1.0e-6, NAN, 2.5e-6};
    CHECK(logp_disagree(c, 3, 2.0, 0));
    double d[] = {1.0e-6, NAN};
    CHECK(!logp_disagree(d, 2, 2.0, 0));
    /* at the noise floor 5 ns and 12 ns are not told apart */
    double e[] = {5e-9, 12e-9};
    CHECK(logp_disagree(e, 2, 2.0, 0));
    CHECK(!logp_disagree(e, 2, 2.0, 20e-9));
    double f[] = {-3e-9, 1e-6};
    CHECK(logp_disagree(f, 2, 2.0, 20e-9));
    CHECK(logp_disagree(f, 2, 2.0, 0));
    double g[] = {-3e-9, -3e-9};
    CHECK(!logp_disagree(g, 2, 2.0, 0));
}

static void test_sizes(void)
{
    size_t v, *s = NULL, n = 0;
    char err[200];
    const size_t MAX = (size_t)1 << 28;
    CHECK(logp_parse_size("0", MAX, &v) == 0 && v == 0);
    CHECK(logp_parse_size("1536", MAX, &v) == 0 && v == 1536);
    CHECK(logp_parse_size("4K", MAX, &v) == 0 && v == 4096);
    CHECK(logp_parse_size("4KiB", MAX, &v) == 0 && v == 4096);
    CHECK(logp_parse_size("1M", MAX, &v) == 0 && v == 1048576);
    CHECK(logp_parse_size("1MB", MAX, &v) == 0 && v == 1048576);
    CHECK(logp_parse_size("256M", MAX, &v) == 0 && v == MAX);
    CHECK(logp_parse_size("257M", MAX, &v) == -1);
    CHECK(logp_parse_size("1G", MAX, &v) == -1);
    CHECK(logp_parse_size("-1", MAX, &v) == -1);
    CHECK(logp_parse_size("", MAX, &v) == -1);
    CHECK(logp_parse_size("4X", MAX, &v) == -1);
    CHECK(logp_parse_size("99999999999999999999999", MAX, &v) == -1);

    CHECK(logp_parse_sizes("0:1M", MAX, &s, &n, err, sizeof err) == 0);
    CHECK(n == 22 && s[0] == 0 && s[1] == 1 && s[2] == 2 && s[21] == 1048576);
    free(s);
    CHECK(logp_parse_sizes("3:100", MAX, &s, &n, err, sizeof err) == 0);
    CHECK(n == 6 && s[0] == 3 && s[5] == 96);
    free(s);
    CHECK(logp_parse_sizes("8:8", MAX, &s, &n, err, sizeof err) == 0 && n == 1 && s[0] == 8);
    free(s);
    CHECK(logp_parse_sizes("0:0", MAX, &s, &n, err, sizeof err) == 0 && n == 1 && s[0] == 0);
    free(s);
    CHECK(logp_parse_sizes("64K,0,1K,64K", MAX, &s, &n, err, sizeof err) == 0);
    CHECK(n == 3 && s[0] == 0 && s[1] == 1024 && s[2] == 65536);
    free(s);
    CHECK(logp_parse_sizes("1M:1K", MAX, &s, &n, err, sizeof err) == -1);
    CHECK(strstr(err, "larger") != NULL);
    CHECK(logp_parse_sizes("0,x", MAX, &s, &n, err, sizeof err) == -1);
    CHECK(strstr(err, "'x'") != NULL);
    CHECK(logp_parse_sizes("", MAX, &s, &n, err, sizeof err) == -1);
    CHECK(logp_parse_sizes(",", MAX, &s, &n, err, sizeof err) == -1);
    CHECK(logp_parse_sizes("0:1G", MAX, &s, &n, err, sizeof err) == -1);

    char buf[32];
    logp_format_size(0, buf, sizeof buf);
    CHECK(strcmp(buf, "0") == 0);
    logp_format_size(512, buf, sizeof buf);
    CHECK(strcmp(buf, "512") == 0);
    logp_format_size(4096, buf, sizeof buf);
    CHECK(strcmp(buf, "4K") == 0);
    logp_format_size(1536, buf, sizeof buf);
    CHECK(strcmp(buf, "1536") == 0);
    logp_format_size(1048576, buf, sizeof buf);
    CHECK(strcmp(buf, "1M") == 0);
}

int main(void)
{
    test_quantile();
    test_summary();
    test_or_filter();
    test_fit();
    test_fit_two();
    test_row();
    test_disagree();
    test_sizes();
    return 0;
}
