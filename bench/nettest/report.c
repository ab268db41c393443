/* report.c: nettest's pure reporting: links per topology, the R formulas, statistics, formats. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nettest.h"

const char *const nt_test_names[NT_NTESTS] = {"Star", "Star2", "Chaos", "Chaos2", "Ring", "Ring2"};

uint64_t nt_links(enum nt_test t, int nprocs)
{
    uint64_t p = nprocs < 2 ? 0 : (uint64_t)nprocs;
    if (p == 0)
        return 0;
    switch (t) {
    case NT_STAR:
    case NT_STAR2:
        return p - 1;
    case NT_CHAOS:
    case NT_CHAOS2:
        return p * (p - 1) / 2;
    case NT_RING:
    case NT_RING2:
        return p == 2 ? 1 : p;
    default:
        return 0;
    }
}

int nt_neighbours(enum nt_test t, int nprocs, int me, int *out)
{
    int n = 0;
    if (nprocs < 2)
        return 0;
    switch (t) {
    case NT_STAR:
    case NT_STAR2:
        if (me == 0) {
            for (int j = 1; j < nprocs; j++)
                out[n++] = j;
        } else {
            out[n++] = 0;
        }
        break;
    case NT_CHAOS:
    case NT_CHAOS2:
        for (int j = 0; j < nprocs; j++)
            if (j != me)
                out[n++] = j;
        break;
    case NT_RING:
    case NT_RING2: {
        int l = (me + nprocs - 1) % nprocs, r = (me + 1) % nprocs;
        if (l == r) {
            out[n++] = l;
        } else {
            out[n++] = l < r ? l : r;
            out[n++] = l < r ? r : l;
        }
        break;
    }
    default:
        break;
    }
    return n;
}

int nt_nlocal(enum nt_test t, int nprocs, int me)
{
    if (nprocs < 2)
        return 0;
    switch (t) {
    case NT_STAR:
    case NT_STAR2:
        return me == 0 ? nprocs - 1 : 1;
    case NT_CHAOS:
    case NT_CHAOS2:
        return nprocs - 1;
    case NT_RING:
    case NT_RING2:
        return nprocs == 2 ? 1 : 2;
    default:
        return 0;
    }
}

double nt_rate_total(uint64_t len, uint64_t links, double t)
{
    return t > 0 ? 2.0 * (double)len * (double)links / t / NT_MB : 0.0;
}

double nt_rate_avg(uint64_t len, uint64_t links, double t)
{
    return links > 0 ? nt_rate_total(len, links, t) / (double)links : 0.0;
}

double nt_rate_local(uint64_t len, int nlocal, double t)
{
    return t > 0 ? 2.0 * (double)len * (double)nlocal / t / NT_MB : 0.0;
}

static int report_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void nt_stats_of(double *v, size_t n, struct nt_stats *s)
{
    double sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += v[i];
    qsort(v, n, sizeof *v, report_cmp_double);
    s->mean = sum / (double)n;
    s->min = v[0];
    s->max = v[n - 1];
    s->median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double nt_table_value(enum nt_print mode, enum nt_test t, int nprocs, uint64_t len, double tglobal,
                      double tlocal0)
{
    uint64_t links = nt_links(t, nprocs);
    switch (mode) {
    case NT_PRINT_TOTAL:
        return nt_rate_total(len, links, tglobal);
    case NT_PRINT_LOCAL:
        /* Rank 0 is the Star centre; in Chaos and Ring every rank has the same Ni(P). */
        return nt_rate_local(len, nt_nlocal(t, nprocs, 0), tlocal0);
    case NT_PRINT_AVERAGE:
    default:
        return nt_rate_avg(len, links, tglobal);
    }
}

void nt_format_rate(char *buf, size_t n, double v)
{
    static const char *const fmts[] = {"%.2f", "%.1f", "%.0f"};
    if (v > 0 && v < 1) {
        /* Small rates keep their digits: 0.00463, 1.2e-05. */
        snprintf(buf, n, v < 1e-3 ? "%.2g" : "%.3g", v);
        return;
    }
    for (size_t i = 0; i < sizeof fmts / sizeof fmts[0]; i++) {
        snprintf(buf, n, fmts[i], v);
        if (strlen(buf) <= 7)
            return;
    }
}

void nt_format_size(char *buf, size_t n, uint64_t bytes, size_t unit_bytes)
{
    snprintf(buf, n, "%llu", (unsigned long long)(bytes / unit_bytes));
}

void nt_build_date(char *buf, size_t n, const char *date)
{
    static const char months[] = "JanFebMarAprMayJunJulAugSepOctNovDec";
    char mon[4] = {0};
    int day = 0, year = 0;
    if (sscanf(date, "%3s %d %d", mon, &day, &year) == 3) {
        const char *m = strstr(months, mon);
        if (m != NULL && (m - months) % 3 == 0) {
            snprintf(buf, n, "%04d/%02d/%02d", year, (int)(m - months) / 3 + 1, day);
            return;
        }
    }
    snprintf(buf, n, "%s", date);
}

uint64_t nt_memory_need(int nprocs, int me, int chaos, uint64_t maxlen, uint64_t iterations)
{
    static const enum nt_test used[] = {NT_STAR, NT_RING, NT_CHAOS};
    int *seen = calloc((size_t)nprocs, sizeof *seen);
    int *list = malloc((size_t)nprocs * sizeof *list);
    uint64_t peers = 0;
    if (seen == NULL || list == NULL) {
        free(seen);
        free(list);
        return UINT64_MAX;
    }
    /* The bidirectional tests have the same neighbours as their unidirectional twins. */
    for (size_t k = 0; k < sizeof used / sizeof used[0]; k++) {
        if (used[k] == NT_CHAOS && !chaos)
            continue;
        int n = nt_neighbours(used[k], nprocs, me, list);
        for (int i = 0; i < n; i++)
            if (!seen[list[i]]) {
                seen[list[i]] = 1;
                peers++;
            }
    }
    free(seen);
    free(list);
    return 2 * peers * maxlen + 2 * iterations * (uint64_t)sizeof(double);
}
