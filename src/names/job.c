/* job.c: job helpers beyond the nine calls: rank r's first transport's netid without a lookup,
 * and the transport that messages between two ranks take (csn.h). */
#include "core/netid.h"
#include "core/proc.h"
#include "core/state.h"
#include "csn.h"
#include "names/hosts.h"

/* A process's transports are numbered in the order they open, after the hidden system
 * transport (core/api.c): the first csn_open of every process gets CSNI_SYS_TPORT + 1. */
#define JOB_FIRST_TPORT (CSNI_SYS_TPORT + 1u)

csn_netid csn_job_netid(int rank)
{
    struct csni_proc *p;
    int size = csni_proc_get(&p) == CSN_OK ? p->boot.size : 1;
    if (rank < 0 || rank >= size)
        return CSN_NULL_NETID;
    return csni_netid_make(rank, JOB_FIRST_TPORT);
}

const char *csn_job_transport(int a, int b)
{
    struct csni_proc *p;
    return csni_proc_get(&p) == CSN_OK ? csni_pair_transport(p, a, b) : NULL;
}
