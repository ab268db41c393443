/* copyalign.c: what the alignment of a memcpy destination costs on this CPU (why shm pads its
 * records). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "parse_size.h"

static double copyalign_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    size_t len = 65536, rounds = 9;
    static const int offs[] = {0, 8, 16, 24, 32, 40, 48, 56, 64};
    enum { NOFF = sizeof offs / sizeof offs[0], SLOTS = 8 };
    if (argc > 3 || (argc > 1 && bench_parse_size(argv[1], 64u << 20, &len) != 0) ||
        (argc > 2 && bench_parse_size(argv[2], 1000, &rounds) != 0) || len == 0 || rounds < 1) {
        fprintf(stderr,
                "usage: copyalign [BYTES (1..64M, default 64K) [ROUNDS (1..1000, default 9)]]\n");
        return 2;
    }
    size_t stride = (len + 4096 + 4095) & ~(size_t)4095;
    unsigned char *src = aligned_alloc(4096, stride), *dst = aligned_alloc(4096, SLOTS * stride);
    if (!src || !dst) {
        fprintf(stderr, "copyalign: out of memory\n");
        return 1;
    }
    memset(src, 1, stride);
    memset(dst, 2, SLOTS * stride);
    /* Best of ROUNDS per offset, the offsets alternated inside each round (a noisy host). */
    double best[NOFF];
    for (int i = 0; i < NOFF; i++)
        best[i] = 1e9;
    for (size_t r = 0; r < rounds; r++)
        for (int i = 0; i < NOFF; i++) {
            int n = 64;
            double t0 = copyalign_now();
            for (int k = 0; k < n; k++)
                memcpy(dst + (size_t)(k % SLOTS) * stride + offs[i], src, len);
            double t = (copyalign_now() - t0) / n;
            if (t < best[i])
                best[i] = t;
        }
    printf("# memcpy of %zu bytes from a page-aligned source, best of %zu rounds\n", len, rounds);
    printf("# dst offset from a cache line, us per copy, ratio to offset 0\n");
    for (int i = 0; i < NOFF; i++)
        printf("%2d %8.2f %6.2f\n", offs[i], best[i] * 1e6, best[i] / best[0]);
    free(src);
    free(dst);
    return 0;
}
