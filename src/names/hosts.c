/* hosts.c: which host each rank of the job is on (from its published endpoint), and so which
 * network kind messages between two ranks take. Called by the job helper csn_job_transport
 * and by the debug trace; it calls only down (the address book, the network kinds). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/state.h"
#include "names/book.h"
#include "names/hosts.h"
#include "transport/net.h"
#include "transport/ofi/ofi.h"

/* The host of every rank, from its published endpoint ("ADDR[|ADDR2]|h=HOST", core/proc.c),
 * each fetched once (under job_lock; the table is never freed: it is as big as the job). */
static pthread_mutex_t job_lock = PTHREAD_MUTEX_INITIALIZER;
static char **job_hosts;
static int job_nhosts;

/* 0 with *host set (owned by the table), -1 when rank's endpoint is not to be had. */
static int job_host_of(const struct csni_proc *p, int rank, const char **host)
{
    char ep[1024];
    int rv = -1;

    pthread_mutex_lock(&job_lock);
    if (job_hosts == NULL) {
        if ((job_hosts = calloc((size_t)p->boot.size, sizeof *job_hosts)) == NULL)
            goto fail;
        job_nhosts = p->boot.size;
    }
    if (rank >= job_nhosts)
        goto fail;
    if (job_hosts[rank] == NULL) {
        const char *h;
        if (csni_book_get(p->boot.size, rank, p->tun.lookup_timeout_ms, ep, sizeof ep) != CSN_OK)
            goto fail;
        h = strstr(ep, "|h=");
        if ((job_hosts[rank] = strdup(h != NULL ? h + 3 : "")) == NULL)
            goto fail;
    }
    *host = job_hosts[rank];
    rv = 0;
fail:
    pthread_mutex_unlock(&job_lock);
    return rv;
}

const char *csni_within_name(const struct csni_proc *p)
{
    if (!p->tun.net)
        return "self";
    if (csni_ofi_on())
        return csni_ofi_name(); /* "ofi:PROVIDER" */
    return p->tun.use_shm ? "shm" : p->tun.net->name;
}

const char *csni_pair_transport(struct csni_proc *p, int a, int b)
{
    const char *ha, *hb;

    if (a < 0 || b < 0 || a >= p->boot.size || b >= p->boot.size)
        return NULL;
    if (a == b)
        return "self";
    const char *within = csni_within_name(p);
    /* Over libfabric every pair's data takes the fabric, within a host and between hosts. */
    if (csni_ofi_on())
        return within;
    /* Every rank on this host (csnrun's CSN_LOCAL_SIZE, PMIx's local size): no lookups. */
    if (!p->boot.launched || p->boot.local_size >= p->boot.size)
        return within;
    if (job_host_of(p, a, &ha) != 0 || job_host_of(p, b, &hb) != 0)
        return NULL;
    if (ha[0] == '\0' || hb[0] == '\0' || strcmp(ha, hb) == 0)
        return within;
    return csni_net_remote()->name;
}
