/* logp_stats.c: statistics, the o_r candidate filter, the LogGP line fit and size parsing of logp
 * (no I/O, no comm). */
#include "logp_stats.h"
#include "parse_size.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int logp_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double logp_quantile_sorted(const double *sorted, size_t n, double p)
{
    if (n == 0)
        return NAN;
    if (p <= 0)
        return sorted[0];
    if (p >= 1)
        return sorted[n - 1];
    double pos = p * (double)(n - 1);
    size_t i = (size_t)pos;
    double frac = pos - (double)i;
    if (i + 1 >= n)
        return sorted[n - 1];
    return sorted[i] + frac * (sorted[i + 1] - sorted[i]);
}

int logp_summarize(const double *x, size_t n, double *scratch, logp_summary *s)
{
    s->n = n;
    if (n == 0) {
        s->median = s->q1 = s->q3 = s->ci_lo = s->ci_hi = s->min = s->max = s->mean = NAN;
        return -1;
    }
    memcpy(scratch, x, n * sizeof *scratch);
    qsort(scratch, n, sizeof *scratch, logp_cmp_double);
    double sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += scratch[i];
    s->mean = sum / (double)n;
    s->min = scratch[0];
    s->max = scratch[n - 1];
    s->median = logp_quantile_sorted(scratch, n, 0.5);
    s->q1 = logp_quantile_sorted(scratch, n, 0.25);
    s->q3 = logp_quantile_sorted(scratch, n, 0.75);
    /* Ranks (1-based) j and k with P(X_(j) <= median <= X_(k)) >= 0.95 by the normal
     * approximation of the binomial(n, 1/2) count of samples below the median. */
    double half = 1.96 * sqrt((double)n) / 2.0;
    double j = floor((double)n / 2.0 - half);
    double k = ceil(1.0 + (double)n / 2.0 + half);
    s->ci_lo = j < 1 ? scratch[0] : scratch[(size_t)j - 1];
    s->ci_hi = k > (double)n ? scratch[n - 1] : scratch[(size_t)k - 1];
    return 0;
}

int logp_converged(const logp_summary *s, double rel, double abs_floor, size_t min_n)
{
    if (s->n < min_n || s->n == 0 || !isfinite(s->median))
        return 0;
    double tol = fmax(rel * fabs(s->median), abs_floor);
    return s->ci_hi - s->median <= tol && s->median - s->ci_lo <= tol;
}

int logp_or_filter_init(logp_or_filter *f, const double *base, size_t n, double *scratch,
                        double upper)
{
    logp_summary s;
    if (logp_summarize(base, n, scratch, &s) != 0)
        return -1;
    /* scratch is sorted now */
    f->base_median = s.median;
    f->base_spread = s.q3 - s.q1;
    f->lower = logp_quantile_sorted(scratch, n, LOGP_OR_BASE_QUANTILE);
    f->upper = upper;
    return 0;
}

size_t logp_or_select(const logp_or_filter *f, const double *cand, size_t n, double *out)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        double c = cand[i];
        if (isfinite(c) && c > f->lower && c < f->upper)
            out[k++] = c - f->base_median;
    }
    return k;
}

int logp_fit_line(const double *x, const double *y, const double *w, size_t n, logp_fit *f)
{
    double sw = 0, sx = 0, sy = 0;
    size_t used = 0;
    f->a = f->b = f->se_a = f->se_b = f->r2 = f->sse = NAN;
    f->n = 0;
    for (size_t i = 0; i < n; i++) {
        double wi = w ? w[i] : 1.0;
        if (!(wi > 0) || !isfinite(x[i]) || !isfinite(y[i]))
            continue;
        sw += wi;
        sx += wi * x[i];
        sy += wi * y[i];
        used++;
    }
    if (used < 2)
        return -1;
    double xm = sx / sw, ym = sy / sw;
    double sxx = 0, sxy = 0, syy = 0;
    for (size_t i = 0; i < n; i++) {
        double wi = w ? w[i] : 1.0;
        if (!(wi > 0) || !isfinite(x[i]) || !isfinite(y[i]))
            continue;
        double dx = x[i] - xm, dy = y[i] - ym;
        sxx += wi * dx * dx;
        sxy += wi * dx * dy;
        syy += wi * dy * dy;
    }
    if (!(sxx > 0))
        return -1;
    f->b = sxy / sxx;
    f->a = ym - f->b * xm;
    f->n = used;
    double sse = 0;
    for (size_t i = 0; i < n; i++) {
        double wi = w ? w[i] : 1.0;
        if (!(wi > 0) || !isfinite(x[i]) || !isfinite(y[i]))
            continue;
        double r = y[i] - f->a - f->b * x[i];
        sse += wi * r * r;
    }
    f->sse = sse;
    f->r2 = syy > 0 ? 1.0 - sse / syy : 1.0;
    if (used > 2) {
        double s2 = sse / (double)(used - 2);
        f->se_b = sqrt(s2 / sxx);
        f->se_a = sqrt(s2 * (1.0 / sw + xm * xm / sxx));
    }
    return 0;
}

int logp_fit_two(const double *x, const double *y, const double *w, size_t n, size_t min_pts,
                 logp_fit *low, logp_fit *high, size_t *split)
{
    *split = 0;
    if (min_pts < 2)
        min_pts = 2;
    int best_ok = 0;
    double best = INFINITY;
    if (n >= 2 * min_pts) {
        for (size_t s = min_pts; s + min_pts <= n; s++) {
            logp_fit lo, hi;
            if (logp_fit_line(x, y, w ? w : NULL, s, &lo) != 0 ||
                logp_fit_line(x + s, y + s, w ? w + s : NULL, n - s, &hi) != 0)
                continue;
            if (lo.sse + hi.sse < best) {
                best = lo.sse + hi.sse;
                *low = lo;
                *high = hi;
                *split = s;
                best_ok = 1;
            }
        }
    }
    if (best_ok)
        return 0;
    *split = 0;
    if (logp_fit_line(x, y, w, n, low) != 0)
        return -1;
    *high = *low;
    return 0;
}

int logp_disagree(const double *v, size_t n, double factor, double floor)
{
    double lo = INFINITY, hi = -INFINITY;
    size_t finite = 0;
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(v[i]))
            continue;
        double x = fmax(v[i], floor);
        lo = fmin(lo, x);
        hi = fmax(hi, x);
        finite++;
    }
    if (finite < 2)
        return 0;
    if (!(lo > 0)) /* floor <= 0 and a value <= 0: any positive value is infinitely far */
        return hi > lo;
    return hi > factor * lo;
}

int logp_parse_size(const char *s, size_t max, size_t *out)
{
    return bench_parse_size(s, max, out);
}

static int logp_cmp_size(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return (x > y) - (x < y);
}

int logp_parse_sizes(const char *spec, size_t max, size_t **sizes, size_t *n, char *err,
                     size_t errlen)
{
    size_t *v = NULL, cnt = 0, cap = 0;
    char *copy = strdup(spec ? spec : "");
    if (!copy) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    char *colon = strchr(copy, ':');
    if (colon) {
        size_t lo, hi;
        *colon = '\0';
        if (logp_parse_size(copy, max, &lo) != 0) {
            snprintf(err, errlen, "bad size '%s' in --sizes (want e.g. 0, 64, 4K, 1M, at most %zu)",
                     copy, max);
            goto fail;
        }
        if (logp_parse_size(colon + 1, max, &hi) != 0) {
            snprintf(err, errlen, "bad size '%s' in --sizes (want e.g. 0, 64, 4K, 1M, at most %zu)",
                     colon + 1, max);
            goto fail;
        }
        if (lo > hi) {
            snprintf(err, errlen, "--sizes %s:%s: the first size is larger than the second", copy,
                     colon + 1);
            goto fail;
        }
        cap = 72;
        v = malloc(cap * sizeof *v);
        if (!v)
            goto nomem;
        if (lo == 0) {
            v[cnt++] = 0;
            lo = 1;
        }
        for (size_t s = lo; s <= hi; s *= 2) {
            v[cnt++] = s;
            if (s > hi / 2)
                break;
        }
    } else {
        char *save = NULL;
        for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
            size_t s;
            if (logp_parse_size(tok, max, &s) != 0) {
                snprintf(err, errlen,
                         "bad size '%s' in --sizes (want e.g. 0, 64, 4K, 1M, at most %zu)", tok,
                         max);
                goto fail;
            }
            if (cnt == cap) {
                size_t ncap = cap ? 2 * cap : 16;
                size_t *nv = realloc(v, ncap * sizeof *nv);
                if (!nv)
                    goto nomem;
                v = nv;
                cap = ncap;
            }
            v[cnt++] = s;
        }
        if (cnt == 0) {
            snprintf(err, errlen, "--sizes needs MIN:MAX or a comma-separated list of sizes");
            goto fail;
        }
        qsort(v, cnt, sizeof *v, logp_cmp_size);
        size_t k = 1;
        for (size_t i = 1; i < cnt; i++)
            if (v[i] != v[k - 1])
                v[k++] = v[i];
        cnt = k;
    }
    free(copy);
    *sizes = v;
    *n = cnt;
    return 0;
nomem:
    snprintf(err, errlen, "out of memory");
fail:
    free(copy);
    free(v);
    return -1;
}

void logp_format_size(size_t v, char *out, size_t outlen)
{
    if (v >= (1u << 30) && v % (1u << 30) == 0)
        snprintf(out, outlen, "%zuG", v >> 30);
    else if (v >= (1u << 20) && v % (1u << 20) == 0)
        snprintf(out, outlen, "%zuM", v >> 20);
    else if (v >= (1u << 10) && v % (1u << 10) == 0)
        snprintf(out, outlen, "%zuK", v >> 10);
    else
        snprintf(out, outlen, "%zu", v);
}

/* (a - b) / k with the interval of the difference taken end to end. */
static logp_est logp_est_diff(const logp_summary *a, const logp_summary *b, double k, double minus)
{
    logp_est e;
    e.v = (a->median - b->median) / k - minus;
    e.lo = (a->ci_lo - b->ci_hi) / k - minus;
    e.hi = (a->ci_hi - b->ci_lo) / k - minus;
    return e;
}

static logp_est logp_est_of(const logp_summary *s)
{
    logp_est e = {s->median, s->ci_lo, s->ci_hi};
    return e;
}

void logp_row_derive(logp_row *r, double floor)
{
    r->half_rtt.v = r->rtt.median / 2;
    r->half_rtt.lo = r->rtt.ci_lo / 2;
    r->half_rtt.hi = r->rtt.ci_hi / 2;
    double km1 = r->k > 1 ? (double)(r->k - 1) : NAN;
    r->g = logp_est_diff(&r->pn, &r->p1, km1, 0);
    r->os_prtt = logp_est_diff(&r->ps, &r->p1, km1, r->delay_real);
    r->or_prtt = logp_est_diff(&r->pr, &r->p1, km1, r->delay_real);
    r->or_seed_valid = r->or_accepted >= LOGP_OR_MIN_RUNS &&
                       (double)r->or_accepted >= LOGP_OR_MIN_ACCEPT * (double)r->or_candidates &&
                       isfinite(r->or_seed.median);
    r->or_fallback = !r->or_seed_valid;
    r->os = r->os_prtt;
    r->o_r = r->or_seed_valid ? logp_est_of(&r->or_seed) : logp_est_of(&r->or_direct);
    r->L.v = r->half_rtt.v - r->os.v - r->o_r.v;
    r->L.lo = r->half_rtt.lo - r->os.hi - r->o_r.hi;
    r->L.hi = r->half_rtt.hi - r->os.lo - r->o_r.lo;
    double os[2] = {r->os_prtt.v, r->os_direct.median};
    double o_r[3] = {r->or_seed_valid ? r->or_seed.median : NAN, r->or_direct.median, r->or_prtt.v};
    r->os_disagree = logp_disagree(os, 2, LOGP_DISAGREE, floor);
    r->or_disagree = logp_disagree(o_r, 3, LOGP_DISAGREE, floor);
}

/* rows ascending by size (logp_parse_sizes sorts) */
void logp_loggp_derive(const logp_row *rows, size_t n, logp_loggp *out)
{
    memset(out, 0, sizeof *out);
    out->G = out->g0 = out->bw_G = out->bw_pingpong = out->bw_diff = out->lso = out->half_rtt = NAN;
    if (n == 0)
        return;
    double *x = malloc(3 * n * sizeof *x);
    if (x) {
        double *y = x + n, *w = y + n;
        for (size_t i = 0; i < n; i++) {
            x[i] = (double)rows[i].size;
            y[i] = rows[i].g.v;
            /* a non-positive gap is noise around zero: it cannot carry a relative weight */
            w[i] = y[i] > 0 ? 1.0 / (y[i] * y[i]) : 0;
        }
        out->fit_ok =
            logp_fit_two(x, y, w, n, LOGP_FIT_MIN_PTS, &out->low, &out->high, &out->split) == 0;
        /* G is the cost per byte of large messages: the upper piece is refitted without
         * weights, so that its largest sizes (smaller ones run from cache) set the slope. */
        if (out->fit_ok && out->split > 0)
            logp_fit_line(x + out->split, y + out->split, NULL, n - out->split, &out->high);
        free(x);
    }
    if (out->fit_ok) {
        out->G = out->high.b;
        out->g0 = out->low.a;
        out->bw_G = out->G > 0 ? 1.0 / out->G : NAN;
    }
    size_t lo = 0, hi = 0;
    for (size_t i = 1; i < n; i++) {
        if (rows[i].size < rows[lo].size)
            lo = i;
        if (rows[i].size > rows[hi].size)
            hi = i;
    }
    out->small = lo;
    out->large = hi;
    const logp_row *l = &rows[hi];
    if (l->size > 0 && l->half_rtt.v > 0)
        out->bw_pingpong = (double)l->size / l->half_rtt.v;
    out->bw_diff = fabs(out->bw_G - out->bw_pingpong) / out->bw_pingpong;
    const logp_row *s = &rows[lo];
    out->lso = s->L.v + s->os.v + s->o_r.v;
    out->half_rtt = s->half_rtt.v;
}
