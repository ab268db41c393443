/* test_logp_report.c: logp's summary says FAILED and counts the failure when the known-answer
 * check misses (1/G 24% from the ping-pong bandwidth) and when L < 0 at the LogGP size; rows
 * with L < 0 carry the flag N; a passing run says "check passed" and counts nothing. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "logp_report.h"

static int fails;
#define CHECK(c)                                                                                   \
    do {                                                                                           \
        if (!(c)) {                                                                                \
            fprintf(stderr, "test_logp_report: %s failed (line %d)\n", #c, __LINE__);              \
            fails++;                                                                               \
        }                                                                                          \
    } while (0)

static int summary(const logp_row *rows, size_t n, const logp_loggp *f, char *text, size_t cap)
{
    logp_meta m;
    FILE *o = fmemopen(text, cap, "w");
    int r;
    memset(&m, 0, sizeof m);
    memset(text, 0, cap);
    r = logp_report_summary(o, &m, rows, n, f);
    fclose(o);
    return r;
}

int main(void)
{
    static char text[1 << 16];
    logp_row rows[2];
    logp_loggp f;
    FILE *o;

    memset(rows, 0, sizeof rows);
    memset(&f, 0, sizeof f);
    rows[0].size = 8;
    rows[1].size = 1 << 20;
    rows[0].L.v = 0.2e-6;
    rows[1].L.v = 1e-6;
    f.small = 0;
    f.large = 1;
    f.bw_G = 10e9;
    f.bw_pingpong = 10.5e9;
    f.bw_diff = 0.05;
    f.lso = f.half_rtt = 1e-6;
    CHECK(summary(rows, 2, &f, text, sizeof text) == 0);
    CHECK(strstr(text, "check passed") != NULL && strstr(text, "FAILED") == NULL);

    f.bw_diff = 0.24; /* the case: 24% apart, known answer within 15% */
    CHECK(summary(rows, 2, &f, text, sizeof text) == 1);
    CHECK(strstr(text, "FAILED check: 1/G") != NULL);

    rows[0].L.v = -0.3e-6;
    CHECK(summary(rows, 2, &f, text, sizeof text) == 2);
    CHECK(strstr(text, "FAILED check: L = -0.300 us") != NULL);
    CHECK(strstr(text, "L < 0 at 1 of 2 sizes") != NULL);

    o = fmemopen(text, sizeof text, "w");
    logp_report_row(o, &rows[0]);
    fclose(o);
    CHECK(strchr(text, 'N') != NULL);
    if (fails == 0)
        printf("logp report: failed checks are said and counted\n");
    return fails != 0;
}
