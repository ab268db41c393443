/* hosts.h: the host of each rank, and the network kind between two ranks. */
#ifndef CSNI_HOSTS_H
#define CSNI_HOSTS_H

struct csni_proc;

/* The transport between processes of one host: "shm", "ofi:PROVIDER", a network kind's name,
 * or "self" for a process not launched (csn_transport_name). */
const char *csni_within_name(const struct csni_proc *p);

/* What messages between ranks a and b of p's job take: "self", the kind within a host
 * (csni_within_name) or the kind between hosts; NULL for a rank out of range or one whose
 * address is not published within the lookup timeout (may block that long). */
const char *csni_pair_transport(struct csni_proc *p, int a, int b);

#endif
