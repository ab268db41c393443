/* job.c: job helpers that need no name service: rank r's first transport's netid (csn.h). */
#include "core/netid.h"
#include "csn.h"

/* A process's transports are numbered in the order they open, after the hidden system
 * transport (core/api.c): the first csn_open of every process gets CSNI_SYS_TPORT + 1. */
#define JOB_FIRST_TPORT (CSNI_SYS_TPORT + 1u)

csn_netid csn_job_netid(int rank)
{
    if (rank < 0 || rank >= csn_job_size())
        return CSN_NULL_NETID;
    return csni_netid_make(rank, JOB_FIRST_TPORT);
}
