/* wait.h: waiting for completions: a short spin that drives progress, then sleep. */
#ifndef CSNI_WAIT_H
#define CSNI_WAIT_H

#include <stdbool.h>
#include <stdint.h>

#include "csn.h"
#include "core/op.h"
#include "core/state.h"

/* Waits for want (a blocking call's own op; *got = want), or, want NULL, for the first
 * completion of the kinds in flags: then *got must point to the caller's record, which
 * receives the completed op's peer, buf, status and kind (the op goes back to t). At most
 * timeout_us (CSN_FOREVER: no limit). CSN_OK or CSN_TIMEOUT. No lock held. */
csn_status csni_wait(csn_transport *t, struct csni_op *want, unsigned flags, uint64_t timeout_us,
                     struct csni_op **got);
/* csn_test's wait: csni_wait(t, NULL, ...) with the result in *res, its first look (the
 * common case: a completion is queued) without the spin's set-up. */
csn_status csni_test_wait(csn_transport *t, unsigned flags, uint64_t timeout_us,
                          struct csni_op *res);
/* A wait of the library outside csni_wait (the host barrier's spin): begin counts the thread
 * among the spinners, so that the progress thread stays parked and does not compete with it
 * for the CPU or the next pulls; end takes it out again (counted: whether begin was called)
 * and notes the wait's end, so that a progress thread that took over meanwhile (the thread
 * slept) hands back. Never block. */
void csni_wait_spin_begin(struct csni_proc *p);
void csni_wait_spin_end(struct csni_proc *p, bool counted);
/* In a forked child: only the forking thread may be counted as waiting. */
void csni_wait_forked(void);

#endif
