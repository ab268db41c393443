/* test_nettest_unit.c: nettest's pure parts: parameters, sizes, links, R formulas, formats. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nettest.h"
#include "test.h"

static int parse_words(const char *line, struct nt_params *p, char *err, size_t errlen)
{
    static char buf[512];
    char *argv[32];
    int argc = 0;
    snprintf(buf, sizeof buf, "%s", line);
    argv[argc++] = "nettest";
    for (char *w = strtok(buf, " "); w != NULL && argc < 31; w = strtok(NULL, " "))
        argv[argc++] = w;
    argv[argc] = NULL;
    err[0] = '\0';
    return nt_parse(argc, argv, p, err, errlen);
}

/* A bad command line: status 2 and a message that starts by naming the parameter. */
static void bad(const char *line, const char *prefix)
{
    struct nt_params p;
    char err[256];
    int rc = parse_words(line, &p, err, sizeof err);
    if (rc != 2 || strncmp(err, prefix, strlen(prefix)) != 0 || strchr(err, '\n') != NULL) {
        fprintf(stderr, "'%s' gave %d '%s', wanted 2 '%s...'\n", line, rc, err, prefix);
        abort();
    }
}

static void test_parse(void)
{
    struct nt_params p;
    char err[256];
    CHECK(parse_words("uK m1 M16 K2 R2 T1000 Ptotal otransfer.dat", &p, err, sizeof err) == 0);
    CHECK(p.unit == 'K' && p.unit_bytes == 1024 && p.min == 1 && p.max == 16);
    CHECK(p.multiplier == 2 && p.step == 0 && p.repeats == 2 && p.iterations == 1000);
    CHECK(p.print == NT_PRINT_TOTAL && strcmp(p.output, "transfer.dat") == 0);
    CHECK(p.chaos == 1 && p.check == 1 && p.csv == NULL && p.json == NULL && !p.help);

    CHECK(parse_words("ub m0 M10 s3 Coff Plocal --no-check --csv a.csv --json=b.json", &p, err,
                      sizeof err) == 0);
    CHECK(p.unit_bytes == 1 && p.step == 3 && p.multiplier == 1 && p.chaos == 0);
    CHECK(p.print == NT_PRINT_LOCAL && p.check == 0);
    CHECK(strcmp(p.csv, "a.csv") == 0 && strcmp(p.json, "b.json") == 0);
    CHECK(parse_words("K1 s2", &p, err, sizeof err) == 0 && p.multiplier == 1 && p.step == 2);
    CHECK(parse_words("--help", &p, err, sizeof err) == 0 && p.help);
    CHECK(parse_words("uM M1048576", &p, err, sizeof err) == 0); /* 1 TiB: the limit */

    bad("Z5", "Z5: unknown parameter letter");
    bad("x", "x: unknown parameter letter");
    bad("--bogus", "--bogus: unknown option");
    bad("m32 M16", "m: ");
    bad("K1", "K: ");
    bad("K0 s0", "K: ");
    bad("m-1", "m: ");
    bad("M-16", "M: ");
    bad("T-5", "T: ");
    bad("R-1", "R: ");
    bad("s-2", "s: ");
    bad("K-2", "K: ");
    bad("T0", "T: ");
    bad("R0", "R: ");
    bad("m", "m: missing value");
    bad("T1x", "T: ");
    bad("M99999999999999999999999", "M: ");
    bad("uM M1048577", "M: ");
    bad("uX", "u: ");
    bad("uk", "u: ");
    bad("Pfast", "P: ");
    bad("Cmaybe", "C: ");
    bad("o", "o: ");
    bad("--csv", "--csv: ");
}

static void sizes_are(const char *line, const uint64_t *want, size_t n)
{
    struct nt_params p;
    char err[256];
    uint64_t got[64];
    CHECK(parse_words(line, &p, err, sizeof err) == 0);
    size_t k = nt_sizes(&p, got, 64);
    CHECK(k == n);
    for (size_t i = 0; i < n; i++)
        CHECK(got[i] == want[i]);
}

static void test_sizes(void)
{
    static const uint64_t seed[] = {1024, 2048, 4096, 8192, 16384};
    static const uint64_t step[] = {0, 3, 6, 9};
    static const uint64_t ten[] = {0, 1, 10, 100};
    static const uint64_t one[] = {5 << 20};
    static const uint64_t notpow[] = {3, 6, 12};
    sizes_are("uK m1 M16 K2", seed, 5);
    sizes_are("ub m0 M10 s3", step, 4);
    sizes_are("ub m0 M100 K10", ten, 4);
    sizes_are("uM m5 M5", one, 1);
    sizes_are("ub m3 M23 K2", notpow, 3);
    sizes_are("ub m3 M3 s18446744073709551615", notpow, 1); /* a huge step does not wrap */
}

static void test_links(void)
{
    CHECK(nt_links(NT_STAR, 4) == 3 && nt_links(NT_STAR2, 4) == 3);
    CHECK(nt_links(NT_CHAOS, 4) == 6 && nt_links(NT_CHAOS2, 4) == 6); /* the seed's sample */
    CHECK(nt_links(NT_RING, 4) == 4 && nt_links(NT_RING2, 4) == 4);
    CHECK(nt_links(NT_RING, 2) == 1 && nt_links(NT_CHAOS, 2) == 1 && nt_links(NT_STAR, 2) == 1);
    CHECK(nt_links(NT_RING, 3) == 3 && nt_links(NT_CHAOS, 1) == 0);
    /* Every link has two ends: the Ni(P) add up to 2N(P); the relation is symmetric. */
    for (int np = 2; np <= 9; np++)
        for (int t = 0; t < NT_NTESTS; t++) {
            int nb[16], nb2[16];
            uint64_t ends = 0;
            for (int me = 0; me < np; me++) {
                int n = nt_neighbours((enum nt_test)t, np, me, nb);
                CHECK(n == nt_nlocal((enum nt_test)t, np, me));
                ends += (uint64_t)n;
                for (int k = 0; k < n; k++) {
                    CHECK(nb[k] != me && nb[k] >= 0 && nb[k] < np);
                    CHECK(k == 0 || nb[k] > nb[k - 1]);
                    int m = nt_neighbours((enum nt_test)t, np, nb[k], nb2), back = 0;
                    for (int q = 0; q < m; q++)
                        back |= nb2[q] == me;
                    CHECK(back);
                }
            }
            CHECK(ends == 2 * nt_links((enum nt_test)t, np));
        }
}

static int near(double a, double b)
{
    return fabs(a - b) <= 1e-9 * fabs(b);
}

static void test_rates(void)
{
    /* L = 1024 bytes, T = 1 ms: 2*L/T = 2.048 MB/s per link (1 MB = 10^6 bytes). */
    CHECK(near(nt_rate_total(1024, 3, 1e-3), 6.144));
    CHECK(near(nt_rate_avg(1024, 3, 1e-3), 2.048));
    CHECK(near(nt_rate_local(1024, 2, 1e-3), 4.096));
    CHECK(nt_rate_total(1024, 3, 0) == 0 && nt_rate_avg(0, 3, 1e-3) == 0);
    /* The table: global window 1 ms for avg and total; rank 0's own 0.5 ms for local. */
    double tg = 1e-3, t0 = 0.5e-3;
    CHECK(near(nt_table_value(NT_PRINT_TOTAL, NT_STAR, 4, 1024, tg, t0), 6.144));
    CHECK(near(nt_table_value(NT_PRINT_TOTAL, NT_CHAOS2, 4, 1024, tg, t0), 12.288));
    CHECK(near(nt_table_value(NT_PRINT_TOTAL, NT_RING, 4, 1024, tg, t0), 8.192));
    CHECK(near(nt_table_value(NT_PRINT_TOTAL, NT_RING2, 2, 1024, tg, t0), 2.048));
    for (int t = 0; t < NT_NTESTS; t++)
        CHECK(near(nt_table_value(NT_PRINT_AVERAGE, (enum nt_test)t, 4, 1024, tg, t0), 2.048));
    CHECK(near(nt_table_value(NT_PRINT_LOCAL, NT_STAR, 4, 1024, tg, t0), 12.288)); /* Ni=3 */
    CHECK(near(nt_table_value(NT_PRINT_LOCAL, NT_CHAOS, 4, 1024, tg, t0), 12.288));
    CHECK(near(nt_table_value(NT_PRINT_LOCAL, NT_RING2, 4, 1024, tg, t0), 8.192)); /* Ni=2 */
    CHECK(near(nt_table_value(NT_PRINT_LOCAL, NT_RING, 2, 1024, tg, t0), 4.096));  /* Ni=1 */
    /* The seed's first Star value, 8.38 MB/s of R(total) with 4 nodes and 1 KB messages,
     * corresponds to T = 2*1024*3/8.38e6 s. */
    CHECK(near(nt_table_value(NT_PRINT_TOTAL, NT_STAR, 4, 1024, 2.0 * 1024 * 3 / 8.38e6, 1), 8.38));
}

static void test_stats_formats(void)
{
    double v[] = {3, 1, 2, 5}, w[] = {7};
    struct nt_stats s;
    char buf[32];
    nt_stats_of(v, 4, &s);
    CHECK(s.mean == 2.75 && s.min == 1 && s.median == 2.5 && s.max == 5);
    nt_stats_of(w, 1, &s);
    CHECK(s.mean == 7 && s.min == 7 && s.median == 7 && s.max == 7);

    nt_format_rate(buf, sizeof buf, 8.384);
    CHECK(strcmp(buf, "8.38") == 0);
    nt_format_rate(buf, sizeof buf, 0);
    CHECK(strcmp(buf, "0.00") == 0);
    nt_format_rate(buf, sizeof buf, 0.0046321);
    CHECK(strcmp(buf, "0.00463") == 0);
    nt_format_rate(buf, sizeof buf, 0.0000123);
    CHECK(strcmp(buf, "1.2e-05") == 0);
    nt_format_rate(buf, sizeof buf, 12345.678);
    CHECK(strcmp(buf, "12345.7") == 0);
    nt_format_rate(buf, sizeof buf, 9999.996);
    CHECK(strcmp(buf, "10000.0") == 0);
    nt_format_rate(buf, sizeof buf, 123456.7);
    CHECK(strcmp(buf, "123457") == 0);
    nt_format_size(buf, sizeof buf, 16384, 1024);
    CHECK(strcmp(buf, "16") == 0);
    nt_build_date(buf, sizeof buf, "Jul  8 2003");
    CHECK(strcmp(buf, "2003/07/08") == 0);
    nt_build_date(buf, sizeof buf, "Nov 21 2026");
    CHECK(strcmp(buf, "2026/11/21") == 0);

    /* Memory: 4 ranks, all of rank 1's 3 peers with Chaos; 0, 2 (ring) without. */
    CHECK(nt_memory_need(4, 1, 1, 1000, 10) == 2 * 3 * 1000 + 2 * 10 * sizeof(double));
    CHECK(nt_memory_need(4, 1, 0, 1000, 10) == 2 * 2 * 1000 + 2 * 10 * sizeof(double));
    CHECK(nt_memory_need(6, 3, 0, 1000, 1) == 2 * 3 * 1000 + 2 * sizeof(double));
}

static void test_check(void)
{
    unsigned char buf[80], got, want;
    for (size_t len = 0; len <= sizeof buf; len++) {
        nt_fill(buf, len, 1, 2, 42);
        CHECK(nt_verify(buf, len, 1, 2, 42, &got, &want) == len);
        for (size_t off = 0; off < len; off++) {
            buf[off] ^= 0x10;
            CHECK(nt_verify(buf, len, 1, 2, 42, &got, &want) == off);
            CHECK((got ^ want) == 0x10);
            buf[off] ^= 0x10;
        }
    }
    /* Word i is word 0 + i * 0x9E3779B97F4A7C15, four words a turn or one (the tail) alike. */
    nt_fill(buf, sizeof buf, 1, 2, 42);
    uint64_t w0, wi;
    memcpy(&w0, buf, 8);
    for (size_t i = 1; i < sizeof buf / 8; i++) {
        memcpy(&wi, buf + 8 * i, 8);
        CHECK(wi - w0 == i * 0x9E3779B97F4A7C15ull);
    }
    /* Another message, the other direction, another pair: all differ (in the first word). */
    nt_fill(buf, 64, 1, 2, 42);
    CHECK(nt_verify(buf, 64, 1, 2, 43, &got, &want) < 8);
    CHECK(nt_verify(buf, 64, 2, 1, 42, &got, &want) < 8);
    CHECK(nt_verify(buf, 64, 1, 3, 42, &got, &want) < 8);
    /* A message shifted by one byte or one word is caught. */
    unsigned char shifted[72];
    nt_fill(shifted, 72, 1, 2, 42);
    CHECK(nt_verify(shifted + 1, 64, 1, 2, 42, &got, &want) < 8);
    CHECK(nt_verify(shifted + 8, 64, 1, 2, 42, &got, &want) < 8);
}

int main(void)
{
    test_parse();
    test_sizes();
    test_links();
    test_rates();
    test_stats_formats();
    test_check();
    printf("nettest unit tests passed\n");
    return 0;
}
