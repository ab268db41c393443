/* ofi_module.c: libcsn-ofi.so, the libfabric component (see ofi_module.h). Every call into
 * libfabric is here; transport/ofi/ofi.c holds the link logic and loads this module with dlopen.
 * Compiled only into the module (CSNI_OFI_MODULE_BUILD): builds that glob every source file
 * (the fuzzers) see an empty file. */
#ifdef CSNI_OFI_MODULE_BUILD
#include "transport/ofi/ofi_module.h"

#include <errno.h>
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_tagged.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static struct fi_info *mod_info;
static struct fid_fabric *mod_fabric;
static struct fid_domain *mod_domain;

struct csni_ofi_ep {
    struct fid_ep *ep;
    struct fid_cq *rxcq, *txcq;
    struct fid_av *av;
    struct fid_mr *mr;
    void *desc, *mem; /* the link's buffers [mem, mem + memlen) and their registration */
    size_t memlen;
    fi_addr_t peer;
    char shm[64];         /* the shm provider's region file (mod_shm_name), "" if none */
    _Atomic bool unnamed; /* mod_unname done */
};

static void mod_err(char *err, size_t cap, const char *what, int rc)
{
    if (cap)
        snprintf(err, cap, "%s: %s", what, fi_strerror(rc < 0 ? -rc : rc));
}

static int mod_init(char *prov, size_t cap, char *err, size_t errcap)
{
    struct fi_info *hints = fi_allocinfo(), *list = NULL, *pick = NULL;
    const char *want = getenv("FI_PROVIDER");
    int rc;

    if (!hints) {
        mod_err(err, errcap, "fi_allocinfo", -FI_ENOMEM);
        return -1;
    }
    /* Each connection has an endpoint of its own with one peer: rxm's shared receive context
     * (its default over tcp) only costs here, 4096 buffers set up per endpoint (0.2-0.9 s per
     * connection measured on this machine). rxm's eager buffer: large enough for a link's
     * message (CSNI_OFI_MSG_MAX). The user's own settings win. Read by libfabric when the
     * provider first loads, i.e. at the fi_getinfo below. */
    if (setenv("FI_OFI_RXM_USE_SRX", "0", 0) != 0 ||
        setenv("FI_OFI_RXM_BUFFER_SIZE", CSNI_OFI_RXM_BUFFER, 0) != 0) {
        mod_err(err, errcap, "setenv", -FI_ENOMEM);
        fi_freeinfo(hints);
        return -1;
    }
    hints->caps = FI_TAGGED;
    hints->ep_attr->type = FI_EP_RDM;
    hints->mode = FI_CONTEXT | FI_CONTEXT2;
    hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_ALLOCATED | FI_MR_VIRT_ADDR | FI_MR_PROV_KEY;
    hints->domain_attr->threading = FI_THREAD_SAFE;
    hints->tx_attr->msg_order = FI_ORDER_SAS;
    hints->rx_attr->msg_order = FI_ORDER_SAS;
    rc = fi_getinfo(FI_VERSION(1, 9), NULL, NULL, 0, hints, &list);
    fi_freeinfo(hints);
    if (rc != 0 || !list) {
        mod_err(err, errcap, want && *want ? want : "no reliable-datagram provider", rc ? rc : -FI_ENODATA);
        return -1;
    }
    /* FI_PROVIDER filters inside libfabric; without it, the first provider that reaches other
     * hosts (shm only reaches this one: ask for it by name). */
    for (struct fi_info *i = list; i && !pick; i = i->next)
        if ((want && *want) || strcmp(i->fabric_attr->prov_name, "shm") != 0)
            pick = i;
    if (!pick) {
        mod_err(err, errcap, "only the host-local shm provider is there (set FI_PROVIDER=shm)", -FI_ENODATA);
        goto fail;
    }
    if (!(mod_info = fi_dupinfo(pick))) {
        mod_err(err, errcap, "fi_dupinfo", -FI_ENOMEM);
        goto fail;
    }
    fi_freeinfo(list);
    list = NULL;
    /* A connection posts 32 receives and has at most 8 sends in flight (transport/ofi/ofi.c),
     * and the provider's own messages (CSN_OFI_RNDV) beside them: queues of 128, not the
     * provider's default (rxm: 16 MiB of buffers per endpoint, 0.25 s to set up each). */
    if (mod_info->rx_attr->size > 128)
        mod_info->rx_attr->size = 128;
    if (mod_info->tx_attr->size > 128)
        mod_info->tx_attr->size = 128;
    if ((rc = fi_fabric(mod_info->fabric_attr, &mod_fabric, NULL)) != 0) {
        mod_err(err, errcap, "fi_fabric", rc);
        goto fail;
    }
    if ((rc = fi_domain(mod_fabric, mod_info, &mod_domain, NULL)) != 0) {
        mod_err(err, errcap, "fi_domain", rc);
        goto fail;
    }
    snprintf(prov, cap, "%s", mod_info->fabric_attr->prov_name);
    return 0;
fail:
    if (list)
        fi_freeinfo(list);
    if (mod_fabric)
        fi_close(&mod_fabric->fid);
    mod_fabric = NULL;
    if (mod_info)
        fi_freeinfo(mod_info);
    mod_info = NULL;
    return -1;
}

/* The shm provider (libfabric 1.17) keeps an endpoint's region in /dev/shm under the
 * endpoint's address less its "fi_shm://" prefix, "PID:UID:INDEX" (16 MiB here), and removes
 * that file only in fi_close of the endpoint or in its own SIGINT/SIGTERM/SIGBUS/SIGSEGV
 * handler: not at exit (its fini frees the list of names without unlinking them), never after
 * _exit or SIGKILL. A peer needs the name only to map the region, once, when it inserts our
 * address (fi_av_insert maps it then). Keeps the file's name for mod_unname when it is this
 * process's own (it starts with our PID); name: fi_getname's address, len bytes. */
static void mod_shm_name(struct csni_ofi_ep *e, const void *name, size_t len)
{
    char a[CSNI_OFI_NAME_MAX + 1], pid[24];
    const char *n;
    int k;

    if (strcmp(mod_info->fabric_attr->prov_name, "shm") != 0 || len > CSNI_OFI_NAME_MAX)
        return;
    memcpy(a, name, len);
    a[len] = '\0';
    n = strstr(a, "://") ? strstr(a, "://") + 3 : a; /* as the provider's smr_no_prefix */
    k = snprintf(pid, sizeof pid, "%ld:", (long)getpid());
    if (k <= 0 || strncmp(n, pid, (size_t)k) != 0 || strchr(n, '/') || strlen(n) >= sizeof e->shm)
        return;
    memcpy(e->shm, n, strlen(n) + 1);
}

static int mod_unname(struct csni_ofi_ep *e)
{
    if (!e || !e->shm[0] || atomic_exchange(&e->unnamed, true))
        return 0;
    /* The mappings (ours, the peer's) stay; fi_close's own unlink then finds nothing. */
    return shm_unlink(e->shm) == 0 || errno == ENOENT ? 0 : errno;
}

static void mod_close(struct csni_ofi_ep *e)
{
    if (!e)
        return;
    if (e->ep)
        fi_close(&e->ep->fid);
    if (e->av)
        fi_close(&e->av->fid);
    if (e->rxcq)
        fi_close(&e->rxcq->fid);
    if (e->txcq)
        fi_close(&e->txcq->fid);
    if (e->mr)
        fi_close(&e->mr->fid);
    free(e);
}

static int mod_open(struct csni_ofi_ep **out, void *mem, size_t memlen, void *name, size_t *namelen,
                    int poll_only, int *rxfd, char *err, size_t errcap)
{
    struct csni_ofi_ep *e = calloc(1, sizeof *e);
    /* A queue with a wait descriptor costs the provider a signal per completion (a write to
     * it, and our read to clear it): polled without one, 8 B latency 12-18 % lower over the
     * tcp provider (BENCHMARKS.md). */
    struct fi_cq_attr cq = {.format = FI_CQ_FORMAT_MSG,
                            .wait_obj = poll_only ? FI_WAIT_NONE : FI_WAIT_FD,
                            .size = 1024};
    struct fi_av_attr av = {.type = FI_AV_TABLE, .count = 4};
    const char *what = "";
    int rc;

    *out = NULL;
    *rxfd = -1;
    if (!e) {
        mod_err(err, errcap, "endpoint", -FI_ENOMEM);
        return -1;
    }
    e->peer = FI_ADDR_UNSPEC;
    e->mem = mem;
    e->memlen = memlen;
    if (mod_info->domain_attr->mr_mode & FI_MR_LOCAL) {
        what = "fi_mr_reg";
        if ((rc = fi_mr_reg(mod_domain, mem, memlen, FI_SEND | FI_RECV, 0, 0, 0, &e->mr, NULL)) != 0)
            goto fail;
        e->desc = fi_mr_desc(e->mr);
    }
    what = "fi_cq_open";
    if ((rc = fi_cq_open(mod_domain, &cq, &e->rxcq, NULL)) != 0) {
        cq.wait_obj = FI_WAIT_NONE; /* a provider without a wait descriptor: polled */
        if ((rc = fi_cq_open(mod_domain, &cq, &e->rxcq, NULL)) != 0)
            goto fail;
    } else if (poll_only || fi_control(&e->rxcq->fid, FI_GETWAIT, rxfd) != 0) {
        *rxfd = -1;
    }
    cq.wait_obj = FI_WAIT_NONE;
    if ((rc = fi_cq_open(mod_domain, &cq, &e->txcq, NULL)) != 0)
        goto fail;
    what = "fi_av_open";
    if ((rc = fi_av_open(mod_domain, &av, &e->av, NULL)) != 0)
        goto fail;
    what = "fi_endpoint";
    if ((rc = fi_endpoint(mod_domain, mod_info, &e->ep, NULL)) != 0)
        goto fail;
    what = "fi_ep_bind";
    if ((rc = fi_ep_bind(e->ep, &e->rxcq->fid, FI_RECV)) != 0 ||
        (rc = fi_ep_bind(e->ep, &e->txcq->fid, FI_TRANSMIT)) != 0 ||
        (rc = fi_ep_bind(e->ep, &e->av->fid, 0)) != 0)
        goto fail;
    what = "fi_enable";
    if ((rc = fi_enable(e->ep)) != 0)
        goto fail;
    what = "fi_getname";
    if ((rc = fi_getname(&e->ep->fid, name, namelen)) != 0)
        goto fail;
    mod_shm_name(e, name, *namelen);
    *out = e;
    return 0;
fail:
    mod_err(err, errcap, what, rc);
    *rxfd = -1;
    mod_close(e);
    return -1;
}

static int mod_insert(struct csni_ofi_ep *e, const void *name, size_t namelen)
{
    (void)namelen;
    return fi_av_insert(e->av, name, 1, &e->peer, 0, NULL) == 1 ? 0 : -1;
}

static int mod_rc(ssize_t rc)
{
    if (rc == 0)
        return 0;
    return rc == -FI_EAGAIN ? -EAGAIN : rc < 0 ? (int)rc : -EIO;
}

/* The link's own buffers carry its registration (desc); any other memory goes only where
 * the provider needs none (mod_direct). */
static void *mod_desc(struct csni_ofi_ep *e, const void *buf)
{
    return e->desc && buf >= e->mem && (const uint8_t *)buf < (const uint8_t *)e->mem + e->memlen
               ? e->desc
               : NULL;
}

static int mod_post_recv(struct csni_ofi_ep *e, void *buf, size_t len, uint64_t tag, void *ctx)
{
    return mod_rc(fi_trecv(e->ep, buf, len, mod_desc(e, buf), FI_ADDR_UNSPEC, tag, 0, ctx));
}

static int mod_send(struct csni_ofi_ep *e, const void *buf, size_t len, uint64_t tag, void *ctx)
{
    return mod_rc(fi_tsend(e->ep, buf, len, mod_desc(e, buf), e->peer, tag, ctx));
}

static void mod_cancel(struct csni_ofi_ep *e, void *ctx)
{
    (void)fi_cancel(&e->ep->fid, ctx); /* not found: it completed or is under way */
}

static int mod_direct(void)
{
    return !(mod_info->domain_attr->mr_mode & FI_MR_LOCAL);
}

static int mod_poll(struct fid_cq *cq, struct csni_ofi_done *d, int n)
{
    struct fi_cq_msg_entry ent[16];
    int got = 0;
    while (got < n) {
        size_t want = (size_t)(n - got) < 16 ? (size_t)(n - got) : 16;
        ssize_t r = fi_cq_read(cq, ent, want);
        if (r == -FI_EAGAIN)
            break;
        if (r == -FI_EAVAIL) {
            struct fi_cq_err_entry ee = {0};
            if (fi_cq_readerr(cq, &ee, 0) != 1)
                return -EIO;
            d[got].ctx = ee.op_context;
            d[got].len = 0;
            d[got++].err = ee.err ? ee.err : EIO;
            continue;
        }
        if (r < 0)
            return (int)r;
        for (ssize_t i = 0; i < r; i++) {
            d[got].ctx = ent[i].op_context;
            d[got].len = ent[i].len;
            d[got++].err = 0;
        }
        if ((size_t)r < want)
            break;
    }
    return got;
}

static int mod_poll_rx(struct csni_ofi_ep *e, struct csni_ofi_done *d, int n)
{
    return mod_poll(e->rxcq, d, n);
}

static int mod_poll_tx(struct csni_ofi_ep *e, struct csni_ofi_done *d, int n)
{
    return mod_poll(e->txcq, d, n);
}

static int mod_trywait(struct csni_ofi_ep *e)
{
    struct fid *f = &e->rxcq->fid;
    return fi_trywait(mod_fabric, &f, 1) == 0 ? 0 : 1;
}

static const struct csni_ofi_module mod = {
    .abi = CSNI_OFI_MODULE_ABI,
    .init = mod_init,
    .open = mod_open,
    .insert = mod_insert,
    .post_recv = mod_post_recv,
    .send = mod_send,
    .cancel = mod_cancel,
    .direct = mod_direct,
    .poll_rx = mod_poll_rx,
    .poll_tx = mod_poll_tx,
    .trywait = mod_trywait,
    .close = mod_close,
    .unname = mod_unname,
};

__attribute__((visibility("default"))) const struct csni_ofi_module *csn_ofi_module(void);

const struct csni_ofi_module *csn_ofi_module(void)
{
    return &mod;
}
#endif
