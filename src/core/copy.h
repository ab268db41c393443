/* copy.h: the copy of an eager payload, into a ring record and out of it into a receive.
 * Most such payloads are a few bytes, where a call into the C library's memcpy cost more than
 * the bytes: 26 instructions for 8 (callgrind, BENCHMARKS.md, issue 19). */
#ifndef CSNI_COPY_H
#define CSNI_COPY_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* The first and the last w bytes of n (w <= n <= 2w), both loaded before either is stored;
 * w a constant, so that each memcpy is one move. */
static inline __attribute__((always_inline)) void copy_ends(uint8_t *d, const uint8_t *s, size_t n,
                                                            size_t w)
{
    uint64_t a, b;
    memcpy(&a, s, w);
    memcpy(&b, s + n - w, w);
    memcpy(d, &a, w);
    memcpy(d + n - w, &b, w);
}

/* Copies n bytes between buffers that do not overlap; either may be NULL when n is 0 (a
 * user's empty message). Up to 16 bytes as two loads and two stores of a fixed size, which
 * overlap when n is not a power of two; longer, memcpy. */
static inline __attribute__((always_inline)) void csni_copy(void *dst, const void *src, size_t n)
{
    uint8_t *d = dst;
    const uint8_t *s = src;
    if (n > 16) {
        memcpy(d, s, n);
    } else if (n >= 8) {
        copy_ends(d, s, n, 8);
    } else if (n >= 4) {
        copy_ends(d, s, n, 4);
    } else if (n > 0) {
        d[0] = s[0];
        d[n / 2] = s[n / 2];
        d[n - 1] = s[n - 1];
    }
}

#endif
