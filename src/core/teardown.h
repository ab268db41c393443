/* teardown.h: what ends: a peer process (lost), a transport (closed). */
#ifndef CSNI_TEARDOWN_H
#define CSNI_TEARDOWN_H

#include <stdint.h>

#include "csn.h"

struct csni_proc;
struct csni_peer;

/* pp is gone: every operation waiting on it completes with CSN_PEER_LOST, one-source receives
 * from it too, and what it announced but can no longer send is dropped. Once per peer. No lock
 * held by the caller. */
void csni_peer_lost(struct csni_proc *p, struct csni_peer *pp);
/* pp closed its transport tid (its TIDS GONE note, after everything that transport sent us
 * on the pair): receives posted for that transport alone can never complete, and fail with
 * CSN_PEER_LOST (csni_post_rx fails later ones; ids from CSNI_GONE_TIDS on are not
 * remembered, and nothing is done for them). Reader lock held. */
void csni_peer_tport_gone(struct csni_proc *p, struct csni_peer *pp, uint32_t tid);
/* At close (t already out of the table, no lock held), before waiting for t's frames on
 * their way: withdraws t's transmits held for a peer's answer (rtids.c), waits for those an
 * answer is sending, and returns the withdrawn ones for csni_tport_drain. */
struct csni_op *csni_tport_unhold(struct csni_proc *p, csn_transport *t);
/* Then: t's transmits whose RTS gave a receiver over shared memory their buffer's address
 * (it may read that memory until it answers) are withdrawn (CSNI_RTS_WITHDRAWN: a receiver
 * that has not matched one forgets the address and answers GONE); true if any was. The
 * caller polls until csni_tport_pull_pending says each is answered or its peer lost. No lock
 * held. */
bool csni_tport_unpull(struct csni_proc *p, csn_transport *t);
bool csni_tport_pull_pending(struct csni_proc *p, csn_transport *t);
/* Then: cancel and hand back everything of t, held (from csni_tport_unhold) too. */
void csni_tport_drain(struct csni_proc *p, csn_transport *t, struct csni_op *held);

#endif
