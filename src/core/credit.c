/* credit.c: handing eager credit back to senders. */
#include "core/conn.h"
#include "core/credit.h"

void csni_credit_return(struct csni_peer *pp, int64_t bytes, int64_t window)
{
    /* Counted without the lock. Each frame is its own request: one still queued must not hold
     * back what came due since (nothing would send it once the peer, short of credit, stops
     * sending). */
    int64_t owed = atomic_fetch_add(&pp->owed, bytes) + bytes;
    if (owed < window / 4)
        return;
    if ((owed = atomic_exchange(&pp->owed, 0)) <= 0)
        return;
    struct csni_frame f = csni_frame_credit((uint64_t)owed);
    if (!csni_peer_send_frame(pp, &f))
        atomic_fetch_add(&pp->owed, owed); /* short of memory: the next return tries again */
}

void csni_credit_owe(struct csni_conn *c, int64_t bytes, int64_t window)
{
    c->owed += bytes;
    if (c->owed >= window / 16) {
        csni_credit_return(c->pp, c->owed, window);
        c->owed = 0;
    }
}
