/* parse_size.h: the benchmarks' size syntax ("0", "1536", "4K", "4KiB", "1MB", "1G"), one
 * definition for all of them. */
#ifndef BENCH_PARSE_SIZE_H
#define BENCH_PARSE_SIZE_H

#include <ctype.h>
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>

/* The rule, for every benchmark's --help (and docs/tools.md). */
#define BENCH_SIZE_RULES                                                                         \
    "SIZE: bytes, or a number with K, M or G, always binary: 4K = 4Ki = 4KiB = 4KB = 4096,\n"     \
    "  1M = 1Mi = 1MiB = 1MB = 2^20, 1G = 2^30. Rates printed in MB/s are decimal (10^6 B/s).\n"

/* Decimal digits, an optional multiplier K, M or G (powers of 1024, either case), an optional
 * "i" after it and an optional "B"/"b". 0 and *out set, or -1 (malformed, or above max). */
static inline int bench_parse_size(const char *s, size_t max, size_t *out)
{
    if (s == NULL || !isdigit((unsigned char)s[0]))
        return -1;
    errno = 0;
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno != 0)
        return -1;
    unsigned shift = 0;
    switch (*end) {
    case 'k':
    case 'K':
        shift = 10;
        break;
    case 'm':
    case 'M':
        shift = 20;
        break;
    case 'g':
    case 'G':
        shift = 30;
        break;
    default:
        break;
    }
    if (shift != 0 && *++end == 'i')
        end++;
    if (*end == 'B' || *end == 'b')
        end++;
    if (*end != '\0' || v > (unsigned long long)max >> shift)
        return -1;
    *out = (size_t)(v << shift);
    return 0;
}

#endif
