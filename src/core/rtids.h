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
 * asks pp unless a question is already on its way (op then waits for the answer to that one,
 * and is asked about again if it does not cover op: see csni_rtid_answer). Completes op
 * (CSN_PEER_LOST) when pp is lost. False (nothing done) when the state is known by now: look
 * again. No lock held by the caller. While held, op->token is the question that covers op
 * (asked after op was held; 0: none yet). */
bool csni_rtid_hold(struct csni_peer *pp, struct csni_op *op, uint32_t tid);
/* pp said that ids below n were handed out there, answering our question gen (0: a count it
 * sent unasked). Returns the held transmits that may leave now (ids below n), oldest first,
 * and in *refused those to fail, each with its status in op->status: CSN_ILLEGAL_NETID when
 * the id was not handed out when pp answered a question asked after the transmit was held,
 * CSN_PEER_LOST when the transport is known to have closed. The caller sends or fails them,
 * then calls again; NULL with *refused NULL once none is left: n is then published (a
 * transmit that sees it leaves directly, after the held ones: per-pair order is kept), and
 * pp is asked again for the transmits still held (held after the question left, to ids
 * handed out after pp answered). Between a call that returned transmits and the caller's
 * csni_rtid_released, pp->releasing counts them (csn_close waits for it). */
struct csni_op *csni_rtid_answer(struct csni_peer *pp, uint32_t n, uint64_t gen,
                                 struct csni_op **refused);
/* The transmits of the last csni_rtid_answer are sent or failed. */
void csni_rtid_released(struct csni_peer *pp);
/* pp's transport tid closed. */
void csni_rtid_gone(struct csni_peer *pp, uint32_t tid);

#endif
