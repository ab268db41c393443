/* params.c: nettest's command line (seed 001: letter + value) and its message sizes. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "nettest.h"

/* Largest message the parser accepts (1 TiB); the memory check refuses what does not fit. */
#define PARAMS_MAX_BYTES ((uint64_t)1 << 40)

static int params_fail(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return 2;
}

/* A non-negative decimal integer: digits only (no sign, no blanks), no overflow. */
static int params_number(const char *s, uint64_t *v)
{
    uint64_t x = 0;
    if (*s == '\0')
        return -1;
    for (; *s; s++) {
        if (*s < '0' || *s > '9')
            return -1;
        unsigned d = (unsigned)(*s - '0');
        if (x > (UINT64_MAX - d) / 10)
            return -1;
        x = x * 10 + d;
    }
    *v = x;
    return 0;
}

void nt_usage(FILE *f, const char *prog)
{
    fprintf(
        f,
        "usage: %s [u<unit>] [m<min>] [M<max>] [s<step>] [K<mult>] [R<repeats>] [T<times>]\n"
        "       [C<on|off>] [P<average|total|local>] [o<file>] [--no-check] [--csv FILE]\n"
        "       [--json FILE] [--help]\n"
        "Network test of seed 001 (NETTEST): throughput of the Star, Chaos (full graph) and\n"
        "Ring topologies with unidirectional (Star, Chaos, Ring) and bidirectional (Star2,\n"
        "Chaos2, Ring2) exchanges. Run it with at least 2 processes, e.g.\n"
        "  csnrun -np 4 nettest uK m1 M16 K2 R2 T1000 Ptotal otransfer.dat\n"
        "Each parameter is a letter immediately followed by its value:\n"
        "  u  unit of the message lengths: b (bytes), K (1024 bytes), M (1048576 bytes); default "
        "K\n"
        "  m  smallest message length, in units (0 allowed); default 1\n"
        "  M  largest message length, in units; default 16\n"
        "  s  additive step between lengths, used only when there is no multiplier (K < 2)\n"
        "  K  multiplier between lengths (2 or 10 usually); default 2 unless s is given;\n"
        "     a length of 0 is followed by 1 unit\n"
        "  R  repeats of the whole test; default 1\n"
        "  T  iterations of each test routine (the time is their mean); default 1000\n"
        "  C  Chaos tests on or off (on/off, yes/no, 1/0); default on\n"
        "  P  print mode: average (per logical link, R(avg)), total (whole network,\n"
        "     R(total)) or local (of rank 0, the Star centre, R(local)); default average\n"
        "  o  output file for the results; default the terminal\n"
        "Options beyond the seed:\n"
        "  --no-check   do not fill and verify the payloads (by default every byte of every\n"
        "               message is checked outside the timed window; a bad byte aborts the run;\n"
        "               the fill also leaves each send buffer freshly written before each\n"
        "               iteration, as a program that computes its messages does: without it\n"
        "               the buffers stay in the shared cache, which favours single-copy layers)\n"
        "  --csv FILE   every measured value: per repeat, size, test and rank, the mean, min,\n"
        "               median and max iteration time, and the rates; provenance as # lines\n"
        "  --json FILE  the same values and the provenance (hosts, library, transport, options)\n"
        "  --jsonl FILE one JSON Lines record per measurement, written as it arrives\n"
        "               (docs/results-jsonl.md)\n"
        "  --help       this text\n"
        "Rates are in MB/s with 1 MB = 10^6 bytes. A logical link is an unordered pair of nodes:\n"
        "Star has P-1, Chaos P(P-1)/2, Ring P (a ring of two is one link, crossed once each way).\n"
        "R(total) = 2*L*N(P)/T, R(avg) = R(total)/N(P), R(local) = 2*L*Ni(P)/T, where T is the\n"
        "largest over ranks of the mean iteration time (rank 0's own for local).\n"
        "Exit status: 0 success, 2 bad parameters, other values a failed run.\n",
        prog);
}

/* The value of a long option given as "--opt FILE" or "--opt=FILE". */
static const char *params_long_value(int argc, char **argv, int *i, const char *name)
{
    size_t n = strlen(name);
    if (strncmp(argv[*i], name, n) != 0)
        return NULL;
    if (argv[*i][n] == '=')
        return argv[*i] + n + 1;
    if (argv[*i][n] == '\0' && *i + 1 < argc)
        return argv[++*i];
    if (argv[*i][n] == '\0')
        return "";
    return NULL;
}

int nt_parse(int argc, char **argv, struct nt_params *p, char *err, size_t errlen)
{
    int have_k = 0, have_s = 0;
    memset(p, 0, sizeof *p);
    p->unit = 'K';
    p->unit_bytes = 1024;
    p->min = 1;
    p->max = 16;
    p->repeats = 1;
    p->iterations = 1000;
    p->chaos = 1;
    p->print = NT_PRINT_AVERAGE;
    p->check = 1;

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            p->help = 1;
            continue;
        }
        if (strcmp(a, "--no-check") == 0) {
            p->check = 0;
            continue;
        }
        if ((v = params_long_value(argc, argv, &i, "--csv")) != NULL) {
            if (*v == '\0')
                return params_fail(err, errlen, "--csv: missing file name");
            p->csv = v;
            continue;
        }
        if ((v = params_long_value(argc, argv, &i, "--json")) != NULL) {
            if (*v == '\0')
                return params_fail(err, errlen, "--json: missing file name");
            p->json = v;
            continue;
        }
        if (a[0] == '-')
            return params_fail(err, errlen, "%s: unknown option (see --help)", a);
        if (a[0] == '\0')
            return params_fail(err, errlen, "empty parameter (see --help)");

        char letter = a[0];
        v = a + 1;
        uint64_t n = 0;
        if (strchr("mMsKRT", letter) != NULL) {
            if (*v == '\0')
                return params_fail(err, errlen, "%c: missing value", letter);
            if (params_number(v, &n) != 0)
                return params_fail(err, errlen, "%c: '%s' is not a non-negative integer", letter,
                                   v);
        }
        switch (letter) {
        case 'u':
            if (strcmp(v, "b") == 0)
                p->unit_bytes = 1;
            else if (strcmp(v, "K") == 0)
                p->unit_bytes = 1024;
            else if (strcmp(v, "M") == 0)
                p->unit_bytes = 1024 * 1024;
            else
                return params_fail(err, errlen, "u: unit must be b, K or M (got '%s')", v);
            p->unit = v[0];
            break;
        case 'm':
            p->min = n;
            break;
        case 'M':
            p->max = n;
            break;
        case 's':
            p->step = n;
            have_s = 1;
            break;
        case 'K':
            p->multiplier = n;
            have_k = 1;
            break;
        case 'R':
            if (n < 1)
                return params_fail(err, errlen, "R: the test must run at least once (R1)");
            p->repeats = n;
            break;
        case 'T':
            if (n < 1)
                return params_fail(err, errlen,
                                   "T: each routine needs at least one iteration (T1)");
            p->iterations = n;
            break;
        case 'C':
            if (strcmp(v, "on") == 0 || strcmp(v, "yes") == 0 || strcmp(v, "1") == 0)
                p->chaos = 1;
            else if (strcmp(v, "off") == 0 || strcmp(v, "no") == 0 || strcmp(v, "0") == 0)
                p->chaos = 0;
            else
                return params_fail(err, errlen, "C: chaos flag must be on or off (got '%s')", v);
            break;
        case 'P':
            if (strcmp(v, "average") == 0 || strcmp(v, "avg") == 0)
                p->print = NT_PRINT_AVERAGE;
            else if (strcmp(v, "total") == 0)
                p->print = NT_PRINT_TOTAL;
            else if (strcmp(v, "local") == 0)
                p->print = NT_PRINT_LOCAL;
            else
                return params_fail(err, errlen,
                                   "P: print mode must be average, total or local (got '%s')", v);
            break;
        case 'o':
            if (*v == '\0')
                return params_fail(err, errlen, "o: missing file name");
            p->output = v;
            break;
        default:
            return params_fail(err, errlen, "%s: unknown parameter letter '%c' (see --help)", a,
                               letter);
        }
    }
    if (p->help)
        return 0;

    if (!have_k)
        p->multiplier = have_s ? 1 : 2; /* 1: no multiplier, the step is used */
    if (p->multiplier < 2 && p->step == 0)
        return params_fail(
            err, errlen, "K: multiplier %llu is less than 2 and there is no step s to use instead",
            (unsigned long long)p->multiplier);
    if (p->min > p->max)
        return params_fail(err, errlen, "m: minimum length %llu exceeds maximum length M%llu",
                           (unsigned long long)p->min, (unsigned long long)p->max);
    if (p->max > PARAMS_MAX_BYTES / p->unit_bytes)
        return params_fail(err, errlen, "M: maximum length %llu%c is more than 1 TiB",
                           (unsigned long long)p->max, p->unit);
    return 0;
}

int nt_next_size(const struct nt_params *p, uint64_t units, uint64_t *next)
{
    uint64_t n;
    if (p->multiplier >= 2) {
        if (units == 0)
            n = 1;
        else if (units > p->max / p->multiplier)
            return 0;
        else
            n = units * p->multiplier;
    } else {
        if (p->step > p->max - units) /* units <= max always: no wrap */
            return 0;
        n = units + p->step;
    }
    if (n > p->max)
        return 0;
    *next = n;
    return 1;
}

size_t nt_sizes(const struct nt_params *p, uint64_t *out, size_t cap)
{
    size_t n = 0;
    uint64_t u = p->min;
    do {
        if (out != NULL && n < cap)
            out[n] = u * p->unit_bytes;
        n++;
    } while (nt_next_size(p, u, &u));
    return n;
}
