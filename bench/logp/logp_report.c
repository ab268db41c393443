/* logp_report.c: prints logp's table (microseconds, one row per size, then the LogGP summary and
 * checks) and writes the JSON. */
#include "logp_report.h"

#include <errno.h>
#include <math.h>
#include <string.h>
#include "json.h"
#include "jsonl.h"

#define US 1e6

void logp_report_header(FILE *out, const logp_meta *m)
{
    fprintf(out, "# logp: LogGP parameters between rank 0 (%s) and rank 1 (%s)\n", m->hosts,
            m->hosts + sizeof m->hosts / 2);
    fprintf(out, "# library %s, transport %s\n", m->library, m->transport);
    fprintf(out,
            "# times in us; stop rule: 95%% interval of the median within %g%% of it, or "
            "%g s per measurement; clock read %.3f us, subtracted\n",
            m->rel * 100, m->cap, m->clock_cost * US);
    fprintf(out, "# o_s: parametrised round trip; o_r: seed-003 polling method; :dir direct, "
                 ":prtt parametrised round trip; acc%%: o_r runs accepted by the filter\n");
    fprintf(out, "# flags: S o_s estimates >2x apart, R o_r estimates >2x apart, f seed o_r "
                 "undetected (direct used), c time cap reached, N L < 0 (o_s + o_r exceed "
                 "rtt/2: the overheads are overestimated at this size)\n");
    fprintf(out, "%8s %9s %9s %9s %9s %9s %9s %5s %9s %9s  %s\n", "size", "rtt/2", "o_s", "o_s:dir",
            "o_r", "o_r:dir", "o_r:prtt", "acc%", "g", "L", "flags");
    fflush(out);
}

void logp_report_row(FILE *out, const logp_row *r)
{
    char size[32], flags[8];
    size_t nf = 0;
    logp_format_size(r->size, size, sizeof size);
    if (r->os_disagree)
        flags[nf++] = 'S';
    if (r->or_disagree)
        flags[nf++] = 'R';
    if (r->or_fallback)
        flags[nf++] = 'f';
    if (r->capped)
        flags[nf++] = 'c';
    if (r->L.v < 0)
        flags[nf++] = 'N';
    flags[nf] = '\0';
    double acc = r->or_candidates ? 100.0 * (double)r->or_accepted / (double)r->or_candidates : 0;
    fprintf(out, "%8s %9.3f %9.3f %9.3f %9.3f %9.3f %9.3f %5.0f %9.3f %9.3f  %s\n", size,
            r->half_rtt.v * US, r->os.v * US, r->os_direct.median * US,
            r->or_seed_valid ? r->or_seed.median * US : NAN, r->or_direct.median * US,
            r->or_prtt.v * US, acc, r->g.v * US, r->L.v * US, flags);
    fflush(out);
}

int logp_report_summary(FILE *out, const logp_meta *m, const logp_row *rows, size_t n,
                        const logp_loggp *f)
{
    char small[32], large[32];
    int failed = 0;
    size_t negative = 0;
    const logp_row *s = &rows[f->small];
    logp_format_size(s->size, small, sizeof small);
    logp_format_size(rows[f->large].size, large, sizeof large);
    fprintf(out, "# LogGP (at %s B): L = %.3f us, o_s = %.3f us, o_r = %.3f us\n", small,
            s->L.v * US, s->os.v * US, s->o_r.v * US);
    if (f->fit_ok && f->split > 0) {
        char brk[32];
        logp_format_size(rows[f->split].size, brk, sizeof brk);
        fprintf(out,
                "# fit of g against size in two pieces, the break chosen by least squares "
                "(weights 1/g^2): below %s B g = %.3f us + %.4f ns/B (R^2 %.3f), from %s B "
                "(unweighted) g = %.3f us + %.4f ns/B (R^2 %.3f)\n",
                brk, f->low.a * US, f->low.b * 1e9, f->low.r2, brk, f->high.a * US, f->high.b * 1e9,
                f->high.r2);
    } else if (f->fit_ok) {
        fprintf(out,
                "# fit of g against size (weights 1/g^2), one line over %zu sizes: g = %.3f "
                "us + %.4f ns/B (R^2 %.3f)\n",
                f->low.n, f->low.a * US, f->low.b * 1e9, f->low.r2);
    }
    if (f->fit_ok)
        fprintf(out, "# LogGP: g(0) = %.3f us, G = %.4f ns/B (+- %.4f), 1/G = %.2f GB/s\n",
                f->g0 * US, f->G * 1e9, f->high.se_b * 1e9, f->bw_G / 1e9);
    else
        fprintf(out, "# fit of g against size: needs two sizes with a positive gap\n");
    if (isfinite(f->bw_pingpong) && isfinite(f->bw_G)) {
        int ok = f->bw_diff <= LOGP_KNOWN_ANSWER;
        fprintf(out,
                "# %s: 1/G = %.2f GB/s vs ping-pong bandwidth at %s B (size / (rtt/2)) = "
                "%.2f GB/s: %.0f%% apart (known answer: within %.0f%%)\n",
                ok ? "check passed" : "FAILED check", f->bw_G / 1e9, large, f->bw_pingpong / 1e9,
                f->bw_diff * 100, LOGP_KNOWN_ANSWER * 100);
        failed += !ok;
    }
    fprintf(out,
            "# check: L + o_s + o_r = %.3f us = half round trip at %s B (%.3f us); compare with "
            "pingpong's small-message latency (known answer: within 15%%)\n",
            f->lso * US, small, f->half_rtt * US);
    for (size_t i = 0; i < n; i++) {
        const logp_row *r = &rows[i];
        char sz[32];
        logp_format_size(r->size, sz, sizeof sz);
        if (r->os_disagree)
            fprintf(out,
                    "# %s B: o_s estimates disagree by more than 2x: prtt %.3f, direct "
                    "%.3f us\n",
                    sz, r->os_prtt.v * US, r->os_direct.median * US);
        if (r->or_disagree)
            fprintf(out,
                    "# %s B: o_r estimates disagree by more than 2x: seed %.3f, direct "
                    "%.3f, prtt %.3f us\n",
                    sz, r->or_seed_valid ? r->or_seed.median * US : NAN, r->or_direct.median * US,
                    r->or_prtt.v * US);
    }
    for (size_t i = 0; i < n; i++)
        negative += rows[i].L.v < 0;
    if (negative > 0)
        fprintf(out, "# L < 0 at %zu of %zu sizes (flag N): o_s + o_r exceed the half round trip "
                     "there, so the overheads are overestimated\n",
                negative, n);
    if (s->L.v < 0) {
        fprintf(out, "# FAILED check: L = %.3f us < 0 at %s B, the size of the LogGP figures\n",
                s->L.v * US, small);
        failed++;
    }
    fprintf(out, "# %zu sizes in %.1f s\n", n, m->elapsed);
    fflush(out);
    return failed;
}

/* JSON numbers: NaN and infinities become null. */
static void logp_json_num(FILE *o, const char *key, double v)
{
    if (isfinite(v))
        fprintf(o, "\"%s\": %.6g", key, v);
    else
        fprintf(o, "\"%s\": null", key);
}

static void logp_json_summary(FILE *o, const char *key, const logp_summary *s)
{
    fprintf(o, "\"%s\": {\"n\": %zu, ", key, s->n);
    logp_json_num(o, "median", s->median);
    fputs(", ", o);
    logp_json_num(o, "ci_lo", s->ci_lo);
    fputs(", ", o);
    logp_json_num(o, "ci_hi", s->ci_hi);
    fputs(", ", o);
    logp_json_num(o, "q1", s->q1);
    fputs(", ", o);
    logp_json_num(o, "q3", s->q3);
    fputs(", ", o);
    logp_json_num(o, "min", s->min);
    fputs(", ", o);
    logp_json_num(o, "max", s->max);
    fputs("}", o);
}

static void logp_json_est(FILE *o, const char *key, const logp_est *e)
{
    fprintf(o, "\"%s\": {", key);
    logp_json_num(o, "value", e->v);
    fputs(", ", o);
    logp_json_num(o, "ci_lo", e->lo);
    fputs(", ", o);
    logp_json_num(o, "ci_hi", e->hi);
    fputs("}", o);
}

int logp_report_json(FILE *o, const char *path, const logp_meta *m, const logp_row *rows, size_t n,
                     const logp_loggp *f)
{
    fputs("{\n  \"benchmark\": \"logp\",\n  \"units\": \"seconds\",\n  \"command\": ", o);
    char cmd[1024] = "";
    for (int i = 0; i < m->argc; i++) {
        if (i)
            strncat(cmd, " ", sizeof cmd - strlen(cmd) - 1);
        strncat(cmd, m->argv[i], sizeof cmd - strlen(cmd) - 1);
    }
    bench_json_str(o, cmd);
    fputs(",\n  \"library\": ", o);
    bench_json_str(o, m->library);
    fputs(",\n  \"transport\": ", o);
    bench_json_str(o, m->transport);
    fputs(",\n  \"hosts\": [", o);
    bench_json_str(o, m->hosts);
    fputs(", ", o);
    bench_json_str(o, m->hosts + sizeof m->hosts / 2);
    fputs("],\n  ", o);
    logp_json_num(o, "clock_cost", m->clock_cost);
    fputs(",\n  ", o);
    logp_json_num(o, "time_cap", m->cap);
    fputs(",\n  ", o);
    logp_json_num(o, "precision", m->rel);
    fputs(",\n  ", o);
    logp_json_num(o, "elapsed", m->elapsed);
    fputs(",\n  \"sizes\": [\n", o);
    for (size_t i = 0; i < n; i++) {
        const logp_row *r = &rows[i];
        fprintf(o, "    {\"size\": %zu, \"stream\": %d, ", r->size, r->k);
        logp_json_num(o, "delay", r->delay);
        fputs(", ", o);
        logp_json_num(o, "delay_real", r->delay_real);
        fprintf(o, ", \"capped\": %s,\n     ", r->capped ? "true" : "false");
        logp_json_est(o, "half_rtt", &r->half_rtt);
        fputs(", ", o);
        logp_json_est(o, "o_s", &r->os);
        fputs(", ", o);
        logp_json_est(o, "o_r", &r->o_r);
        fputs(",\n     ", o);
        logp_json_est(o, "g", &r->g);
        fputs(", ", o);
        logp_json_est(o, "L", &r->L);
        fputs(",\n     ", o);
        logp_json_est(o, "o_s_prtt", &r->os_prtt);
        fputs(", ", o);
        logp_json_est(o, "o_r_prtt", &r->or_prtt);
        fputs(",\n     ", o);
        logp_json_summary(o, "o_s_direct", &r->os_direct);
        fputs(",\n     ", o);
        logp_json_summary(o, "o_r_direct", &r->or_direct);
        fputs(",\n     ", o);
        logp_json_summary(o, "o_r_seed", &r->or_seed);
        fprintf(o,
                ",\n     \"o_r_seed_filter\": {\"candidates\": %zu, \"accepted\": %zu, "
                "\"valid\": %s, ",
                r->or_candidates, r->or_accepted, r->or_seed_valid ? "true" : "false");
        logp_json_num(o, "baseline_median", r->filter.base_median);
        fputs(", ", o);
        logp_json_num(o, "baseline_iqr", r->filter.base_spread);
        fputs(", ", o);
        logp_json_num(o, "lower", r->filter.lower);
        fputs(", ", o);
        logp_json_num(o, "upper", r->filter.upper);
        fputs("},\n     ", o);
        logp_json_summary(o, "rtt", &r->rtt);
        fputs(",\n     ", o);
        logp_json_summary(o, "prtt_1_0", &r->p1);
        fputs(",\n     ", o);
        logp_json_summary(o, "prtt_n_0", &r->pn);
        fputs(",\n     ", o);
        logp_json_summary(o, "prtt_n_d_send", &r->ps);
        fputs(",\n     ", o);
        logp_json_summary(o, "prtt_n_d_recv", &r->pr);
        fprintf(o, ",\n     \"o_s_disagree\": %s, \"o_r_disagree\": %s}%s\n",
                r->os_disagree ? "true" : "false", r->or_disagree ? "true" : "false",
                i + 1 < n ? "," : "");
    }
    fputs("  ],\n  \"loggp\": {", o);
    const logp_row *s = &rows[f->small];
    fprintf(o, "\"at_size\": %zu, ", s->size);
    logp_json_num(o, "L", s->L.v);
    fputs(", ", o);
    logp_json_num(o, "o_s", s->os.v);
    fputs(", ", o);
    logp_json_num(o, "o_r", s->o_r.v);
    fputs(", ", o);
    logp_json_num(o, "g0", f->g0);
    fputs(", ", o);
    logp_json_num(o, "G", f->G);
    fputs(", ", o);
    logp_json_num(o, "G_se", f->high.se_b);
    fputs(", ", o);
    logp_json_num(o, "fit_r2_low", f->low.r2);
    fputs(", ", o);
    logp_json_num(o, "fit_r2_high", f->high.r2);
    fprintf(o, ", \"fit_break_size\": %zu,\n    ", f->split ? rows[f->split].size : 0);
    logp_json_num(o, "bandwidth_G", f->bw_G);
    fputs(", ", o);
    logp_json_num(o, "bandwidth_pingpong", f->bw_pingpong);
    fputs(", ", o);
    logp_json_num(o, "bandwidth_rel_diff", f->bw_diff);
    fputs(", ", o);
    logp_json_num(o, "L_plus_overheads", f->lso);
    fputs(", ", o);
    logp_json_num(o, "half_rtt", f->half_rtt);
    fputs("}\n}\n", o);
    if (ferror(o) | fclose(o)) {
        fprintf(stderr, "logp: cannot write --json file '%s': %s\n", path, strerror(errno));
        return -1;
    }
    return 0;
}

/* A LogGP figure that cannot be used as a value says why: not a number, negative, or outside
 * its own 95% interval. NULL when it is usable. */
const char *logp_jsonl_flag(double v, double lo, double hi)
{
    if (!isfinite(v))
        return "nan";
    if (v < 0)
        return "negative";
    if (isfinite(lo) && isfinite(hi) && (v < lo || v > hi))
        return "outside_ci";
    return NULL;
}

static void logp_jsonl_est(FILE *f, const char *test, const char *metric, size_t size,
                           const logp_est *e)
{
    struct bench_jsonl_rec r = bench_jsonl_rec_init(test, metric, "us", "estimate");
    r.size = (long long)size;
    r.value = e->v * US;
    r.ci_lo = e->lo * US;
    r.ci_hi = e->hi * US;
    r.flag = logp_jsonl_flag(e->v, e->lo, e->hi);
    bench_jsonl_write(f, "logp", &r);
}

void logp_jsonl_header(FILE *f, const logp_meta *m, double cap, double rel)
{
    char opts[160];
    snprintf(opts, sizeof opts, "{\"time_cap_s\":%g,\"precision\":%g,\"clock_cost_us\":%.6g}", cap,
             rel, m->clock_cost * US);
    struct bench_jsonl_prov h = {.tool = "logp",
                                 .flavour = bench_jsonl_flavour(m->library),
                                 .library = m->library,
                                 .version = m->library,
                                 .transport = m->transport,
                                 .hosts = m->hosts,
                                 .host_each = sizeof m->hosts / 2,
                                 .nhosts = 2,
                                 .argc = m->argc,
                                 .argv = m->argv,
                                 .options = opts};
    bench_jsonl_header(f, &h);
}

void logp_jsonl_row(FILE *f, const logp_row *r)
{
    logp_jsonl_est(f, "size", "half_rtt", r->size, &r->half_rtt);
    logp_jsonl_est(f, "size", "o_s", r->size, &r->os);
    logp_jsonl_est(f, "size", "o_r", r->size, &r->o_r);
    logp_jsonl_est(f, "size", "g", r->size, &r->g);
    logp_jsonl_est(f, "size", "L", r->size, &r->L);
    struct bench_jsonl_rec e = bench_jsonl_rec_init("size", "rtt", "us", "median");
    e.size = (long long)r->size;
    e.value = r->rtt.median * US;
    e.ci_lo = r->rtt.ci_lo * US;
    e.ci_hi = r->rtt.ci_hi * US;
    e.n = (long)r->rtt.n;
    bench_jsonl_write(f, "logp", &e);
}

void logp_jsonl_summary(FILE *f, const logp_row *rows, const logp_loggp *fit)
{
    const logp_row *s = &rows[fit->small];
    logp_jsonl_est(f, "loggp", "L", s->size, &s->L);
    logp_jsonl_est(f, "loggp", "o_s", s->size, &s->os);
    logp_jsonl_est(f, "loggp", "o_r", s->size, &s->o_r);
    struct bench_jsonl_rec e = bench_jsonl_rec_init("loggp", "g", "us", "estimate");
    e.value = fit->fit_ok ? fit->g0 * US : NAN;
    e.ci_lo = fit->fit_ok ? (fit->low.a - 1.96 * fit->low.se_a) * US : NAN;
    e.ci_hi = fit->fit_ok ? (fit->low.a + 1.96 * fit->low.se_a) * US : NAN;
    e.flag = logp_jsonl_flag(e.value, e.ci_lo, e.ci_hi);
    bench_jsonl_write(f, "logp", &e);
    e.metric = "G";
    e.unit = "us/B";
    e.value = fit->fit_ok ? fit->G * US : NAN;
    e.ci_lo = fit->fit_ok ? (fit->G - 1.96 * fit->high.se_b) * US : NAN;
    e.ci_hi = fit->fit_ok ? (fit->G + 1.96 * fit->high.se_b) * US : NAN;
    e.flag = logp_jsonl_flag(e.value, e.ci_lo, e.ci_hi);
    bench_jsonl_write(f, "logp", &e);
    e = bench_jsonl_rec_init("loggp", "bandwidth_G", "MB/s", "estimate");
    e.value = fit->bw_G / 1e6;
    bench_jsonl_write(f, "logp", &e);
    e.metric = "bandwidth_pingpong";
    e.size = (long long)rows[fit->large].size;
    e.value = fit->bw_pingpong / 1e6;
    bench_jsonl_write(f, "logp", &e);
}
