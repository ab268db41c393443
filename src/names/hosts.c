/* hosts.c: which host each rank of the job is on (from its published endpoint), and so which
 * network kind messages between two ranks take. Called by the job helper csn_job_transport
 * and by the debug trace; it calls only down (the address book, the network kinds). */
#include <stddef.h>
#include <string.h>

#include "core/state.h"
#include "names/book.h"
#include "names/hosts.h"
#include "transport/net.h"
#include "transport/ofi/ofi.h"

/* The host of rank, from its published endpoint ("ADDR[|ADDR2]|h=HOST", core/proc.c), which
 * the address book keeps once fetched: a pointer into ep (room for an endpoint), "" when the
 * endpoint names none; NULL when rank's endpoint is not to be had. */
static const char *job_host_of(const struct csni_proc *p, int rank, char *ep, size_t cap)
{
    const char *h;

    if (csni_book_get(p->boot.size, rank, p->tun.lookup_timeout_ms, ep, cap) != CSN_OK)
        return NULL;
    h = strstr(ep, "|h=");
    return h != NULL ? h + 3 : "";
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
    char epa[1024], epb[1024];
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
    if (!(ha = job_host_of(p, a, epa, sizeof epa)) || !(hb = job_host_of(p, b, epb, sizeof epb)))
        return NULL;
    if (ha[0] == '\0' || hb[0] == '\0' || strcmp(ha, hb) == 0)
        return within;
    return csni_net_remote()->name;
}
