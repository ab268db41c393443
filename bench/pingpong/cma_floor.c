/* cma_floor.c: the floor of a single-copy (CMA) transfer on this host, one way and both ways
 * at once: two processes, no library in between. Each process owns a SIZE-byte source and a
 * SIZE-byte destination buffer; "one way" has process A pull B's source with one
 * process_vm_readv per message while B waits; "both ways" has A and B pull each other's source
 * at the same time (what two simultaneous rendezvous transfers do). Prints GB/s (1e9 B/s) of
 * bytes delivered, best of REPS, per size; the both-ways figure counts both directions.
 *
 * usage: cma-floor [REPS [SIZE...]]   (default 5 reps; sizes 64K 512K 1M 4M 16M 64M) */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ppcommon.h"

#define FLOOR_MAX_SIZES 16

/* Shared between the two processes: the phase to run and its start/end handshakes. */
struct floor_sync {
    _Atomic int go;   /* phase number to start (A writes) */
    _Atomic int done; /* phase number B finished */
    _Atomic int ready;
    double b_secs;
};

/* Pulls n messages of size bytes from pid's src into dst; returns seconds, or -1. */
static double floor_pull(pid_t pid, void *dst, const void *src, size_t size, long n)
{
    struct iovec l = {.iov_base = dst, .iov_len = size};
    struct iovec r = {.iov_base = (void *)src, .iov_len = size};
    double t0 = pp_now();
    for (long i = 0; i < n; i++) {
        size_t got = 0;
        while (got < size) {
            l.iov_base = (char *)dst + got;
            l.iov_len = size - got;
            r.iov_base = (char *)src + got;
            r.iov_len = size - got;
            ssize_t k = process_vm_readv(pid, &l, 1, &r, 1, 0);
            if (k <= 0)
                return -1.0;
            got += (size_t)k;
        }
    }
    return pp_now() - t0;
}

int main(int argc, char **argv)
{
    long reps = 5;
    struct pp_sizes sz = {.n = 0};
    if (argc > 1 && (pp_parse_long(argv[1], 1, 1000, &reps) != 0)) {
        fprintf(stderr, "cma-floor: usage: cma-floor [REPS [SIZE...]] (bad REPS '%s')\n", argv[1]);
        return 2;
    }
    for (int i = 2; i < argc; i++) {
        if (sz.n == FLOOR_MAX_SIZES || pp_parse_size(argv[i], &sz.v[sz.n]) != 0 ||
            sz.v[sz.n] == 0) {
            fprintf(stderr, "cma-floor: usage: cma-floor [REPS [SIZE...]] (bad SIZE '%s')\n",
                    argv[i]);
            return 2;
        }
        sz.n++;
    }
    if (sz.n == 0) {
        size_t d[] = {64 << 10, 512 << 10, 1 << 20, 4 << 20, 16 << 20, 64 << 20};
        for (size_t i = 0; i < sizeof d / sizeof d[0]; i++)
            sz.v[sz.n++] = d[i];
    }
    size_t max = 0;
    for (int i = 0; i < sz.n; i++)
        max = sz.v[i] > max ? sz.v[i] : max;
    struct floor_sync *s =
        mmap(NULL, sizeof *s, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (s == MAP_FAILED) {
        perror("cma-floor: mmap");
        return 1;
    }
    memset(s, 0, sizeof *s);
    /* Both processes allocate (touched) before the fork: the same addresses in both. */
    unsigned char *src = pp_alloc(max), *dst = pp_alloc(max);
    if (!src || !dst) {
        fprintf(stderr, "cma-floor: out of memory (2 x %zu bytes)\n", max);
        return 1;
    }
    pid_t parent = getpid();
    pid_t child = fork();
    if (child < 0) {
        perror("cma-floor: fork");
        return 1;
    }
    if (child == 0) {
        /* B: its own copies of the buffers (touch them: copy-on-write pages become its own). */
        memset(src, 0x5b, max);
        memset(dst, 0, max);
        atomic_store(&s->ready, 1);
        for (int phase = 1;; phase++) {
            int g;
            while ((g = atomic_load(&s->go)) < phase && g >= 0)
                ;
            if (g < 0)
                _exit(0);
            /* Odd phases: one way (B idle); even: both ways, B pulls the same bytes. */
            size_t size = sz.v[(phase - 1) / 2 / reps % sz.n];
            long n = (long)((64u << 20) / size) + 1;
            s->b_secs = (phase % 2 == 0) ? floor_pull(parent, dst, src, size, n) : 0.0;
            atomic_store(&s->done, phase);
        }
    }
    memset(src, 0xa5, max);
    while (!atomic_load(&s->ready))
        ;
    printf("# cma-floor: process_vm_readv between two processes, %ld reps, best; GB/s = 1e9 B/s\n",
           reps);
    printf("%10s %12s %12s %8s\n", "size", "one_way", "both_ways", "both/one");
    int phase = 0, rc = 0;
    for (int i = 0; i < sz.n && rc == 0; i++) {
        size_t size = sz.v[i];
        long n = (long)((64u << 20) / size) + 1;
        double best1 = 0, best2 = 0;
        for (long r = 0; r < reps; r++) {
            for (int both = 0; both < 2; both++) {
                atomic_store(&s->go, ++phase);
                double t = floor_pull(child, dst, src, size, n);
                while (atomic_load(&s->done) < phase)
                    ;
                if (t < 0 || s->b_secs < 0) {
                    fprintf(stderr, "cma-floor: process_vm_readv failed: %s\n", strerror(errno));
                    rc = 1;
                    break;
                }
                double bytes = (double)size * (double)n;
                if (!both) {
                    best1 = bytes / t / 1e9 > best1 ? bytes / t / 1e9 : best1;
                } else {
                    double tt = t > s->b_secs ? t : s->b_secs; /* both done */
                    best2 = 2 * bytes / tt / 1e9 > best2 ? 2 * bytes / tt / 1e9 : best2;
                }
            }
            if (rc)
                break;
        }
        if (rc == 0) {
            char b[32];
            printf("%10s %12.2f %12.2f %8.2f\n", pp_size_str(size, b, sizeof b), best1, best2,
                   best2 / best1);
            fflush(stdout);
        }
    }
    atomic_store(&s->go, -1);
    int st;
    waitpid(child, &st, 0);
    pp_free(src);
    pp_free(dst);
    return rc;
}
