/* nsserv.h: the job's name service, server side of the protocol in names.h (csnrun runs it; so does
 * rank 0 of a PMIx-launched job). */
#ifndef CSNI_NSSERV_H
#define CSNI_NSSERV_H

#include <poll.h>
#include <stddef.h>
#include <stdint.h>

struct csni_ns;

/* Listens on jobdir/ns (Unix) or, with tcp, on a TCP port of the numeric address advertise
 * (IPv4 or IPv6), advertised as tcp:ADVERTISE:PORT; writes the CSN_NS value into addr. At most
 * maxconns connections at once (0: as many as RLIMIT_NOFILE allows, raising the soft limit to
 * the hard one). Messages start with who ("csnrun"). NULL after a message on failure. */
struct csni_ns *csni_ns_create(const char *who, const char *jobdir, const char *jobkey, int size,
                               int tcp, const char *advertise, int maxconns, char *addr,
                               size_t cap);
/* The most descriptors csni_ns_pollfds gives. */
#define CSNI_NS_POLLFDS 1
/* Appends the fds to watch to fds (room for max); returns how many: one, an epoll set that
 * watches the listener and every connection, so that a loop's poll costs the same with ten
 * thousand kept connections as with one. */
int csni_ns_pollfds(struct csni_ns *ns, struct pollfd *fds, int max);
/* Handles the events of the fds that csni_ns_pollfds gave (same order), then expired deadlines. */
void csni_ns_handle(struct csni_ns *ns, const struct pollfd *fds, int n);
/* The earliest deadline (CLOCK_MONOTONIC ms) of a connection, or UINT64_MAX. */
uint64_t csni_ns_next_deadline(const struct csni_ns *ns);
/* A rank's process ended: its names are dropped. */
void csni_ns_rank_gone(struct csni_ns *ns, int rank);
void csni_ns_destroy(struct csni_ns *ns);

#endif
