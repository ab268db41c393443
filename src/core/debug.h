/* debug.h: CSN_DEBUG, a trace on stderr of what the library decides: 1 at open (transports,
 * protocol thresholds, waiting policy), 2 also the transport of each peer at its first
 * message, 3 also the protocol of every message sent. Read once, at the first csn_open. */
#ifndef CSNI_DEBUG_H
#define CSNI_DEBUG_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include "csn.h"

struct csni_proc;

extern _Atomic int csni_debug_level; /* 0..3; set before the process state is published */

/* Level 1: the decisions of the start-up (after the network is up). */
void csni_debug_open(const struct csni_proc *p);
/* Levels 2 and 3: a message of len bytes is being sent to the transport `to` (blocking: by
 * csn_tx). */
void csni_debug_tx(struct csni_proc *p, csn_netid to, size_t len, bool blocking);

/* Level 2: this process moved its frames for proc to the connection the lower id made, or
 * (p->tun.own_sends) to one of its own, for large messages over a fabric (core/peer.c). */
void csni_debug_move(const struct csni_proc *p, int proc);

static inline void csni_debug_on_tx(struct csni_proc *p, csn_netid to, size_t len, bool blocking)
{
    if (atomic_load_explicit(&csni_debug_level, memory_order_relaxed) >= 2)
        csni_debug_tx(p, to, len, blocking);
}

#endif
