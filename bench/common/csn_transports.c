/* csn_transports.c: what a csn benchmark's figures went over, for its header and JSON: the
 * transport every pair of ranks takes ("shm", "tcp", "ofi:tcp;ofi_rxm"), or "shm within hosts,
 * tcp between" when the job spans hosts (csn_job_transport per pair). */
#include <stdio.h>
#include <string.h>

#include "csn.h"
#include "csn_transports.h"

const char *bench_csn_transports(int np)
{
    static char summary[96];
    const char *within = NULL, *between = NULL, *own = csn_transport_name();
    if (summary[0] != '\0')
        return summary;
    for (int a = 0; a < np && !(within && between); a++) {
        for (int b = a + 1; b < np && !(within && between); b++) {
            const char *t = csn_job_transport(a, b);
            if (t == NULL)
                return own; /* an address not to be had: say what we know */
            if (strcmp(t, own) == 0)
                within = within ? within : t;
            else
                between = between ? between : t;
        }
    }
    if (within && between)
        snprintf(summary, sizeof summary, "%s within hosts, %s between", within, between);
    else
        snprintf(summary, sizeof summary, "%s", between ? between : within ? within : own);
    return summary;
}
