/* rtids.h: what this process knows of a peer's transport ids. No message leaves for a
 * transport of a peer before the id is known to have been handed out there and not to have
 * closed: the first transmit to a new id is held while the peer is asked (one round trip), so
 * a garbage netid gives CSN_ILLEGAL_NETID and a closed transport CSN_PEER_LOST instead of a
 * message dropped on arrival. Ids are never reused (core/tport.c). */
#ifndef CSNI_RTIDS_H
#define CSNI_RTIDS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "core/netid.h"
#include "core/peer.h"

/* Closed ids remembered (a bit each); a transport of a higher id that closes is still refused
 * by its process (its messages are dropped there and the sender is told). */
#define CSNI_GONE_TIDS 4096u

enum csni_rtid { CSNI_RTID_OPEN, CSNI_RTID_UNKNOWN, CSNI_RTID_GONE };

/* Without a lock (the fast path): two atomic loads. */
static inline enum csni_rtid csni_rtid_state(struct csni_peer *pp, uint32_t tid)
{
    if (tid == CSNI_SYS_TPORT)
        return CSNI_RTID_OPEN; /* every process has it from the start, for its life */
    _Atomic uint64_t *g = atomic_load_explicit(&pp->gone, memory_order_acquire);
    if (g && tid < CSNI_GONE_TIDS &&
        (atomic_load_explicit(&g[tid / 64], memory_order_relaxed) >> (tid % 64) & 1u))
        return CSNI_RTID_GONE;
    return tid < atomic_load_explicit(&pp->tids, memory_order_acquire) ? CSNI_RTID_OPEN
                                                                        : CSNI_RTID_UNKNOWN;
}

/* Holds op, a transmit to pp's transport tid whose state was UNKNOWN, until pp answers, and
 * asks pp unless a question is already on its way; completes it (CSN_PEER_LOST) when pp is
 * lost. False (nothing done) when the state is known by now: look again. No lock held by the
 * caller. */
bool csni_rtid_hold(struct csni_peer *pp, struct csni_op *op, uint32_t tid);
/* pp answered that ids below n were handed out: the transmits held, oldest first (the caller
 * sends or fails each, then calls again), and NULL once none is left, n then published. Held
 * transmits leave before any later one: their per-pair order is kept. */
struct csni_op *csni_rtid_answer(struct csni_peer *pp, uint32_t n);
/* pp's transport tid closed. */
void csni_rtid_gone(struct csni_peer *pp, uint32_t tid);

#endif
