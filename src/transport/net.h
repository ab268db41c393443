/* net.h: a network kind (how a connection between two processes is made): an ops table each,
 * found by name or by the prefix of a published address ("unix:...", "tcp:..."). The core knows
 * network kinds only through this table. */
#ifndef CSNI_NET_H
#define CSNI_NET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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
    /* The writer of a connected data socket found it full (owner: that connection's writer,
     * under its lock): sets the unsent bytes the kernel may hold to hold_us of the
     * connection's measured delivery rate, at least notsent (0: leaves the kernel's). Does
     * not block. Returns the limit now in force (notsent when the kind could not measure or
     * set it); no status: a failure leaves the old limit, harmlessly. NULL: a kind without
     * such a limit (unix). */
    size_t (*refit)(int fd, size_t notsent, uint64_t hold_us);
    /* The reader of a connected data socket took a large read (CSNI_NET_BULK_READ bytes or
     * more) from it (owner: that connection's reader): asks the kernel to acknowledge what
     * came at once. Does not block; no status (a failure changes only the timing). NULL: a
     * kind without acknowledgements (unix). */
    void (*bulk_read)(int fd);
};

/* A read at least this long is bulk data (a rendezvous payload, or a batch of many small
 * frames): below it, a read is a message on the latency path, and gets no extra system call. */
#define CSNI_NET_BULK_READ ((size_t)16 << 10)

extern const struct csni_net_ops csni_net_unix;
extern const struct csni_net_ops csni_net_tcp;

/* The kind called name, or NULL. */
const struct csni_net_ops *csni_net_by_name(const char *name);
/* The first kind that reaches across hosts (for the second listener of a job on several hosts). */
const struct csni_net_ops *csni_net_remote(void);
/* The kind of a connected socket (by its address family), or NULL. */
const struct csni_net_ops *csni_net_of_fd(int fd);
/* The kind an address belongs to (by its "name:" prefix), or NULL. */
const struct csni_net_ops *csni_net_of_addr(const char *addr);

#endif
