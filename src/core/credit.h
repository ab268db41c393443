/* credit.h: eager credit, the flow control that bounds what a receiver must hold for messages
 * nobody asked for (CSN_UNEXPECTED_LIMIT): a sender spends credit on each eager message, the
 * receiver hands it back (CREDIT frames) as receives take the messages. */
#ifndef CSNI_CREDIT_H
#define CSNI_CREDIT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "core/peer.h"
#include "core/pool.h"
#include "core/unex.h"

struct csni_conn;

/* What an eager message of len bytes costs: the memory it holds at the receiver. */
static inline int64_t csni_credit_cost(size_t len)
{
    return csni_unex_cost(len);
}

/* Takes credit for cost bytes towards pp, without a lock; false when there is not enough (two
 * racing takers may both give back and fall to rendezvous: harmless). */
static inline bool csni_credit_take(struct csni_peer *pp, int64_t cost)
{
    return csni_pool_take(&pp->credit, cost);
}

/* Gives back credit taken and not used. */
static inline void csni_credit_untake(struct csni_peer *pp, int64_t cost)
{
    csni_pool_give(&pp->credit, cost);
}

/* The peer handed credit back (a CREDIT frame). */
static inline void csni_credit_granted(struct csni_peer *pp, uint64_t bytes)
{
    csni_pool_give(&pp->credit, (int64_t)bytes);
}

/* We consumed bytes of pp's credit: owe them, and send a CREDIT frame once a quarter window is
 * owed. May be called under a transport lock. */
void csni_credit_return(struct csni_peer *pp, int64_t bytes, int64_t window);
/* The same for a message the reader of c consumed (its reader lock held): gathered per
 * connection without an atomic, handed on a sixteenth of a window at a time. */
void csni_credit_owe(struct csni_conn *c, int64_t bytes, int64_t window);

#endif
