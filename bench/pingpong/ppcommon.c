/* ppcommon.c: sizes, payload patterns, statistics, options shared by pingpong and memcpy-bench. */
#include "ppcommon.h"
#include "parse_size.h"

#include <ctype.h>
#include <sched.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int pp_parse_size(const char *s, size_t *out)
{
    return bench_parse_size(s, PP_MAX_SIZE, out);
}

int pp_parse_size_list(const char *s, struct pp_sizes *out)
{
    out->n = 0;
    if (s == NULL || *s == '\0')
        return -1;
    const char *p = s;
    for (;;) {
        const char *comma = strchr(p, ',');
        size_t n = comma ? (size_t)(comma - p) : strlen(p);
        char item[32];
        if (n == 0 || n >= sizeof item || out->n == PP_MAX_SIZES)
            return -1;
        memcpy(item, p, n);
        item[n] = '\0';
        if (pp_parse_size(item, &out->v[out->n]) != 0)
            return -1;
        out->n++;
        if (comma == NULL)
            return 0;
        p = comma + 1;
    }
}

int pp_size_range(size_t min, size_t max, struct pp_sizes *out)
{
    out->n = 0;
    if (min > max)
        return -1;
    size_t s = min;
    while (out->n < PP_MAX_SIZES) {
        out->v[out->n++] = s;
        size_t next = s == 0 ? 1 : s * 2;
        if (next > max)
            break;
        s = next;
    }
    return 0;
}

int pp_parse_long(const char *s, long lo, long hi, long *out)
{
    if (s == NULL || *s == '\0')
        return -1;
    errno = 0;
    char *end;
    long v = strtol(s, &end, 10);
    if (errno != 0 || *end != '\0' || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

const char *pp_size_str(size_t size, char *buf, size_t cap)
{
    if (size >= ((size_t)1 << 30) && size % ((size_t)1 << 30) == 0)
        snprintf(buf, cap, "%zuG", size >> 30);
    else if (size >= ((size_t)1 << 20) && size % ((size_t)1 << 20) == 0)
        snprintf(buf, cap, "%zuM", size >> 20);
    else if (size >= 1024 && size % 1024 == 0)
        snprintf(buf, cap, "%zuK", size >> 10);
    else
        snprintf(buf, cap, "%zu", size);
    return buf;
}

/* Word k of the pattern: a cheap mix of seed and k, different in every byte lane. */
static inline uint64_t pp_word(uint64_t seed, uint64_t k)
{
    uint64_t x = (k + 1) * 0x9E3779B97F4A7C15ull ^ seed;
    return x ^ (x >> 29);
}

void pp_fill(void *buf, size_t len, uint64_t seed)
{
    unsigned char *p = buf;
    size_t words = len / 8;
    for (size_t k = 0; k < words; k++) {
        uint64_t w = pp_word(seed, k);
        memcpy(p + 8 * k, &w, 8);
    }
    if (len % 8) {
        uint64_t w = pp_word(seed, words);
        memcpy(p + 8 * words, &w, len % 8);
    }
}

size_t pp_check(const void *buf, size_t len, uint64_t seed)
{
    const unsigned char *p = buf;
    size_t words = len / 8;
    for (size_t k = 0; k < words; k++) {
        uint64_t w = pp_word(seed, k), got;
        memcpy(&got, p + 8 * k, 8);
        if (got != w) {
            for (size_t b = 0; b < 8; b++)
                if (((const unsigned char *)&w)[b] != p[8 * k + b])
                    return 8 * k + b;
        }
    }
    if (len % 8) {
        uint64_t w = pp_word(seed, words);
        for (size_t b = 0; b < len % 8; b++)
            if (((const unsigned char *)&w)[b] != p[8 * words + b])
                return 8 * words + b;
    }
    return (size_t)-1;
}

void *pp_alloc(size_t len)
{
    size_t page = 4096;
    size_t rounded = (len + page - 1) / page * page;
    if (rounded == 0)
        rounded = page;
    void *p = aligned_alloc(page, rounded);
    if (p != NULL)
        memset(p, 0, rounded);
    return p;
}

void pp_free(void *p)
{
    free(p);
}

int pp_window_for(size_t size, int window, size_t window_bytes)
{
    if (size == 0 || (size_t)window * size <= window_bytes)
        return window;
    size_t w = window_bytes / size;
    return w < 1 ? 1 : (int)w;
}

int pp_opt(int argc, char **argv, int *i, const char *name, const char **val)
{
    const char *a = argv[*i];
    size_t n = strlen(name);
    if (strncmp(a, name, n) != 0)
        return 0;
    if (a[n] == '=') {
        *val = a + n + 1;
        return 1;
    }
    if (a[n] != '\0')
        return 0;
    if (*i + 1 >= argc)
        return -1;
    *i += 1;
    *val = argv[*i];
    return 1;
}

void pp_common_defaults(struct pp_common *o)
{
    memset(o, 0, sizeof *o);
    o->min = 0;
    o->max = (size_t)64 << 20;
    o->samples = 7;
    o->iters = 0;
    o->warmup = -1;
    o->sample_ms = 10.0;
    o->window = 64;
    o->window_bytes = (size_t)64 << 20;
    o->json = NULL;
}

static int pp_bad(const char *prog, const char *opt, const char *val, const char *want)
{
    fprintf(stderr, "%s: bad value '%s' for %s (%s)\n", prog, val, opt, want);
    return -1;
}

int pp_common_arg(int argc, char **argv, int *i, struct pp_common *o, const char *prog)
{
    static const char *const names[] = {"--sizes",        "--min",    "--max",       "--samples",
                                        "--iters",        "--warmup", "--sample-ms", "--window",
                                        "--window-bytes", "--json"};
    const char *v = NULL;
    int which = -1;
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
        int r = pp_opt(argc, argv, i, names[k], &v);
        if (r < 0) {
            fprintf(stderr, "%s: option %s needs a value\n", prog, names[k]);
            return -1;
        }
        if (r > 0) {
            which = (int)k;
            break;
        }
    }
    long l;
    const char *sz = "a size such as 4096, 64K or 4M, at most 1G";
    switch (which) {
    case 0:
        if (pp_parse_size_list(v, &o->sizes) != 0)
            return pp_bad(prog, names[which], v, "comma-separated sizes such as 0,8,1K,4M");
        o->have_list = 1;
        return 1;
    case 1:
    case 2:
        if (pp_parse_size(v, which == 1 ? &o->min : &o->max) != 0)
            return pp_bad(prog, names[which], v, sz);
        o->have_range = 1;
        return 1;
    case 3:
        if (pp_parse_long(v, 1, PP_MAX_SAMPLES, &l) != 0)
            return pp_bad(prog, names[which], v, "an integer from 1 to 1000");
        o->samples = (int)l;
        return 1;
    case 4:
        if (pp_parse_long(v, 1, 100000000, &l) != 0)
            return pp_bad(prog, names[which], v, "an integer from 1 to 100000000");
        o->iters = l;
        return 1;
    case 5:
        if (pp_parse_long(v, 0, 100000000, &l) != 0)
            return pp_bad(prog, names[which], v, "an integer from 0 to 100000000");
        o->warmup = l;
        return 1;
    case 6:
        if (pp_parse_long(v, 1, 60000, &l) != 0)
            return pp_bad(prog, names[which], v, "milliseconds from 1 to 60000");
        o->sample_ms = (double)l;
        return 1;
    case 7:
        if (pp_parse_long(v, 1, 1024, &l) != 0)
            return pp_bad(prog, names[which], v, "an integer from 1 to 1024");
        o->window = (int)l;
        return 1;
    case 8:
        if (pp_parse_size(v, &o->window_bytes) != 0 || o->window_bytes == 0)
            return pp_bad(prog, names[which], v, sz);
        return 1;
    case 9:
        if (*v == '\0')
            return pp_bad(prog, names[which], v, "a file name");
        o->json = v;
        return 1;
    default:
        return 0;
    }
}

int pp_common_finish(struct pp_common *o, const char *prog)
{
    if (o->have_list && o->have_range) {
        fprintf(stderr, "%s: give either --sizes or --min/--max, not both\n", prog);
        return -1;
    }
    if (o->have_list)
        return 0;
    if (pp_size_range(o->min, o->max, &o->sizes) != 0) {
        fprintf(stderr, "%s: --min (%zu) is larger than --max (%zu)\n", prog, o->min, o->max);
        return -1;
    }
    return 0;
}

double pp_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int pp_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double pp_median(double *v, int n)
{
    if (n <= 0)
        return 0.0;
    qsort(v, (size_t)n, sizeof *v, pp_cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
}

double pp_min(const double *v, int n)
{
    double m = n > 0 ? v[0] : 0.0;
    for (int i = 1; i < n; i++)
        if (v[i] < m)
            m = v[i];
    return m;
}

double pp_max(const double *v, int n)
{
    double m = n > 0 ? v[0] : 0.0;
    for (int i = 1; i < n; i++)
        if (v[i] > m)
            m = v[i];
    return m;
}

int pp_two_cpus(int cpu[2])
{
    cpu_set_t set;
    int k = 0;
    if (sched_getaffinity(0, sizeof set, &set) != 0)
        return -1;
    for (int c = 0; c < CPU_SETSIZE && k < 2; c++)
        if (CPU_ISSET(c, &set))
            cpu[k++] = c;
    errno = k < 2 ? EINVAL : 0;
    return k < 2 ? -1 : 0;
}

int pp_bind_cpu(int c)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(c, &set);
    return sched_setaffinity(0, sizeof set, &set);
}
