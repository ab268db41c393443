/* net.h: a network kind (how a connection between two processes is made): an ops table each,
 * found by name or by the prefix of a published address ("unix:...", "tcp:..."). The core knows
 * network kinds only through this table. */
#ifndef CSNI_NET_H
#define CSNI_NET_H

#include <stdbool.h>
#include <stddef.h>

#include "csn.h"

struct csni_net_ops {
    const char *name; /* "unix", "tcp": also the prefix of its addresses ("unix:") */
    bool host_local;  /* reaches only processes of this host; may carry shared-memory rings */
    /* Creates this process's listening socket (non-blocking, close-on-exec) and writes the
     * address others connect to into addr (cap bytes). dir: the job's directory for socket
     * files; me: this process's id. Does not block. CSN_OK, CSN_INVALID_ARGUMENT (a bad
     * setting, a line on stderr says which) or CSN_SYSTEM_ERROR. */
    csn_status (*listen)(const char *dir, int me, int *fd, char *addr, size_t cap);
    /* Connects to a published address of this kind; blocks until connected (at most
     * timeout_ms). The caller owns *fd. CSN_OK, CSN_PEER_LOST (refused, absent, timed out),
     * CSN_ILLEGAL_NETID (a malformed address) or CSN_SYSTEM_ERROR. */
    csn_status (*connect)(const char *addr, unsigned timeout_ms, int *fd);
    /* Options of a connected data socket (notsent: TCP_NOTSENT_LOWAT, 0 for the kernel's).
     * Does not block; failures are harmless (a kind may not know an option). */
    void (*tune)(int fd, size_t notsent);
};

extern const struct csni_net_ops csni_net_unix;
extern const struct csni_net_ops csni_net_tcp;

/* The kind called name, or NULL. */
const struct csni_net_ops *csni_net_by_name(const char *name);
/* The first kind that reaches across hosts (for the second listener of a job on several hosts). */
const struct csni_net_ops *csni_net_remote(void);
/* The kind an address belongs to (by its "name:" prefix), or NULL. */
const struct csni_net_ops *csni_net_of_addr(const char *addr);

#endif
