/* comm_common.c: the backend-independent part of the bench comm layer (clock, host name). */
#include <time.h>
#include <unistd.h>

#include "comm.h"

/* Both backends time with the same clock, so csn and MPI figures are measured alike. */
double comm_wtime(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

const char *comm_hostname(void)
{
    static char name[256];
    if (name[0] == '\0' && gethostname(name, sizeof name - 1) != 0)
        name[0] = '?';
    return name;
}
