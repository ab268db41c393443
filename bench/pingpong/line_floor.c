/* line_floor.c: the hardware floor of a shared-memory ping-pong: two processes hand a counter
 * back and forth through two busy-polled cache lines, no library in between. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double floor_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 200000;
    int rounds = 7;
    if (argc > 2 || n <= 0) {
        fprintf(stderr,
                "usage: line-floor [ROUND_TRIPS]   (default 200000 per sample, 7 samples)\n");
        return 2;
    }
    /* Two lines, each written by one side only: the ping and the pong. */
    char *m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) {
        perror("line-floor: mmap");
        return 1;
    }
    _Atomic long *ping = (_Atomic long *)(void *)m, *pong = (_Atomic long *)(void *)(m + 128);
    pid_t child = fork();
    if (child < 0) {
        perror("line-floor: fork");
        return 1;
    }
    if (child == 0) {
        for (long i = 1; i <= rounds * n; i++) {
            while (atomic_load_explicit(ping, memory_order_acquire) != i)
                ;
            atomic_store_explicit(pong, i, memory_order_release);
        }
        _exit(0);
    }
    printf("# line-floor: one-way latency through a busy-polled cache line, %ld round trips per "
           "sample\n",
           n);
    printf("%8s %12s\n", "sample", "one_way_us");
    long i = 0;
    for (int r = 0; r < rounds; r++) {
        double t0 = floor_now();
        for (long k = 0; k < n; k++) {
            i++;
            atomic_store_explicit(ping, i, memory_order_release);
            while (atomic_load_explicit(pong, memory_order_acquire) != i)
                ;
        }
        printf("%8d %12.3f\n", r + 1, (floor_now() - t0) / (double)n / 2 * 1e6);
    }
    waitpid(child, NULL, 0);
    return 0;
}
