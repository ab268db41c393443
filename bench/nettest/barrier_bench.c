/* barrier_bench.c: the time of one barrier of the job (the one nettest closes each timed
 * iteration with), through the bench comm layer: csn_job_barrier or MPI_Barrier. Rank 0
 * prints the median and the minimum over batches in us per barrier. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comm.h"

#define BARRIER_BATCHES 5

static int barrier_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    if (comm_init(&argc, &argv) != 0)
        return 1;
    long n = 2000;
    int help = argc == 2 && strcmp(argv[1], "--help") == 0, bad = argc > 2;
    if (argc == 2 && !help) {
        char *end = NULL;
        n = strtol(argv[1], &end, 10);
        bad = n < 1 || n > 10000000 || *end != '\0';
    }
    if (help || bad) {
        if (comm_rank() == 0)
            fprintf(help ? stdout : stderr,
                    "usage: barrier-bench [BARRIERS]  (per batch, 1 to 10000000, default 2000; "
                    "%d batches after a warm-up)\n",
                    BARRIER_BATCHES);
        comm_finalize();
        return bad ? 2 : 0;
    }
    double us[BARRIER_BATCHES];
    for (long i = 0; i < n; i++) /* warm-up: connections made, caches warm */
        comm_barrier();
    for (int b = 0; b < BARRIER_BATCHES; b++) {
        double t0 = comm_wtime();
        for (long i = 0; i < n; i++)
            comm_barrier();
        us[b] = (comm_wtime() - t0) / (double)n * 1e6;
    }
    qsort(us, BARRIER_BATCHES, sizeof us[0], barrier_cmp);
    if (comm_rank() == 0)
        printf("# barrier-bench: %s, %d ranks, %ld barriers per batch\nbarrier_us median %.3f "
               "min %.3f\n",
               comm_library(), comm_size(), n, us[BARRIER_BATCHES / 2], us[0]);
    comm_finalize();
    return 0;
}
