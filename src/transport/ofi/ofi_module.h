/* ofi_module.h: the interface between libcsn and its libfabric (OFI) component, libcsn-ofi.so
 * (ofi_module.c), which libcsn loads with dlopen only when CSN_TRANSPORT=ofi asks for it.
 * Plain C types only: libcsn never includes rdma/fabric.h nor links libfabric. */
#ifndef CSNI_OFI_MODULE_H
#define CSNI_OFI_MODULE_H

#include <stddef.h>
#include <stdint.h>

/* Bumped whenever the structures or the sizes below change; libcsn refuses a module of another
 * version. */
#define CSNI_OFI_MODULE_ABI 4
/* The one symbol the module exports: const struct csni_ofi_module *csn_ofi_module(void). */
#define CSNI_OFI_MODULE_SYMBOL "csn_ofi_module"
/* The module's file, in the directory "csn" beside libcsn.so (build tree and install alike). */
#define CSNI_OFI_MODULE_FILE "libcsn-ofi.so"
/* Bytes reserved for the provider at the head of every operation's context (struct
 * fi_context2 is 64 bytes): the context pointer handed to post_recv/send points there. */
#define CSNI_OFI_CTX 64
/* The most stream bytes one message of a link carries (transport/ofi/ofi.c), and the eager
 * buffer the component asks rxm for (FI_OFI_RXM_BUFFER_SIZE, when the user has not set it), so
 * that such a message stays under rxm's eager limit (the buffer less rxm's header). */
#define CSNI_OFI_MSG_MAX 32384u
#define CSNI_OFI_RXM_BUFFER "33024"
/* The longest endpoint address (fi_getname) csn carries. */
#define CSNI_OFI_NAME_MAX 256

struct csni_ofi_ep; /* one endpoint of the module: its own completion queues and address vector */

/* One completion: the context given with the operation, bytes received, 0 or a positive errno. */
struct csni_ofi_done {
    void *ctx;
    size_t len;
    int err;
};

struct csni_ofi_module {
    unsigned abi; /* CSNI_OFI_MODULE_ABI */
    /* Chooses the provider (FI_PROVIDER, else the first reliable-datagram one that is not
     * host-local) and opens its fabric and domain. 0 with its name in prov, or -1 with a reason
     * in err. */
    int (*init)(char *prov, size_t cap, char *err, size_t errcap);
    /* An endpoint with its receive completion queue's wait descriptor in *rxfd (-1: the
     * provider has none, or poll_only: the caller never sleeps on it, and the provider need
     * not signal one), its address in name (*namelen bytes, in: capacity). mem: the link's
     * buffers, registered when the provider needs local registration. 0 or -1 (err). */
    int (*open)(struct csni_ofi_ep **ep, void *mem, size_t memlen, void *name, size_t *namelen,
                int poll_only, int *rxfd, char *err, size_t errcap);
    /* The peer's address (the only one this endpoint sends to). 0 or -1. */
    int (*insert)(struct csni_ofi_ep *ep, const void *name, size_t namelen);
    /* Posts a receive of a message with this tag / sends one message with this tag (the link's
     * stream is tag 0; the provider's own protocol, rendezvous included, moves it). buf stays
     * the provider's until the operation's completion. 0, -EAGAIN (retry after polling),
     * -errno. Not blocking. */
    int (*post_recv)(struct csni_ofi_ep *ep, void *buf, size_t len, uint64_t tag, void *ctx);
    int (*send)(struct csni_ofi_ep *ep, const void *buf, size_t len, uint64_t tag, void *ctx);
    /* Withdraws a posted receive not yet matched: its completion then comes with ECANCELED
     * (a receive under way completes as it would have). Not blocking. */
    void (*cancel)(struct csni_ofi_ep *ep, void *ctx);
    /* 1 when any memory of the process may be handed to post_recv/send as it is, 0 when the
     * provider wants it registered first (FI_MR_LOCAL: verbs, efa). */
    int (*direct)(void);
    /* Completions of receives / sends, at most n: their count, or -errno. */
    int (*poll_rx)(struct csni_ofi_ep *ep, struct csni_ofi_done *d, int n);
    int (*poll_tx)(struct csni_ofi_ep *ep, struct csni_ofi_done *d, int n);
    /* Before sleeping on rxfd: 0 when it may sleep (fi_trywait), 1 when it must poll first. */
    int (*trywait)(struct csni_ofi_ep *ep);
    void (*close)(struct csni_ofi_ep *ep);
    /* The peer has mapped what it needs of this endpoint (it inserted our address, or sent to
     * us), or nobody will any more: removes the name the provider keeps for it outside the
     * process, so that no end of the process (exit, _exit, SIGKILL) can leave it behind. The
     * shm provider's region file /dev/shm/PID:UID:INDEX, only when PID is ours; nothing for the
     * other providers. The endpoint keeps working. Once per endpoint (later calls do nothing);
     * safe beside other threads' calls on the endpoint. 0, or a positive errno. */
    int (*unname)(struct csni_ofi_ep *ep);
};

typedef const struct csni_ofi_module *(*csni_ofi_module_fn)(void);

#endif
