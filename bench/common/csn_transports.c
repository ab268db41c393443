/* csn_transports.c: what a csn benchmark's figures went over, for its header and JSON: the
 * transport every pair of ranks takes ("shm", "tcp", "ofi:tcp;ofi_rxm"), or "shm within hosts,
 * tcp between" when the job spans hosts (csn_job_transport per pair). */
#include <stdio.h>
#include <string.h>

#include "csn.h"
#include "csn_transports.h"

/* Adds pair (a, b)'s transport to what was seen; 0, or -1 when it is not to be had. */
static int transports_see(int a, int b, const char *own, const char **within, const char **between)
{
    const char *t = csn_job_transport(a, b);
    if (t == NULL)
        return -1;
    if (strcmp(t, own) == 0)
        *within = *within ? *within : t;
    else
        *between = *between ? *between : t;
    return 0;
}

const char *bench_csn_transports(int np)
{
    static char summary[96];
    const char *within = NULL, *between = NULL, *own = csn_transport_name();
    if (summary[0] != '\0')
        return summary;
    /* Rank 0 against every other first: when none of them is on another host, no pair is,
     * and the answer took N-1 looks, not N^2/2 (1024 ranks on one host: 6 s of rank 0's time
     * among the others, BENCHMARKS.md, issue 17). Otherwise the other pairs, until both kinds
     * are seen. */
    for (int b = 1; b < np; b++)
        if (transports_see(0, b, own, &within, &between) != 0)
            return own; /* an address not to be had: say what we know */
    for (int a = 1; between && !within && a < np; a++)
        for (int b = a + 1; !within && b < np; b++)
            if (transports_see(a, b, own, &within, &between) != 0)
                return own;
    if (within && between)
        snprintf(summary, sizeof summary, "%s within hosts, %s between", within, between);
    else
        snprintf(summary, sizeof summary, "%s", between ? between : within ? within : own);
    return summary;
}
