/* progress.h: the progress thread, which moves data for everyone while user threads compute:
 * overlap of communication with computation. */
#ifndef CSNI_PROGRESS_H
#define CSNI_PROGRESS_H

#include "csn.h"

struct csni_proc;

/* Starts the thread (CSN_OK or CSN_SYSTEM_ERROR); stop waits for it to end. */
csn_status csni_progress_start(struct csni_proc *p);
void csni_progress_stop(struct csni_proc *p);
/* A thread went to sleep: the progress thread must poll now. Never blocks. */
void csni_progress_kick(struct csni_proc *p);
/* The poller gave up its role (called after clearing prog.poller): a progress thread in the
 * long park it takes while a user thread polls is woken to look again. Never blocks; a futex
 * wake only when the thread is in that park. */
void csni_progress_nudge(struct csni_proc *p);

#endif
