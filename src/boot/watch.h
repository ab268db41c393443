/* watch.h: a rank's own check on its launcher (issue 16, item 9). */
#ifndef CSNI_WATCH_H
#define CSNI_WATCH_H

/* csnrun's agent gives every rank the read end of a pipe whose only writer is the agent, and
 * names it in CSN_WATCH_FD. Called by csni_boot_init for a launched process: a thread waits on
 * that descriptor (no CPU, no polling) and, when the agent is gone (end of file: killed, or
 * killed together with its guardian), ends the process: one line on stderr, SIGTERM, and
 * _exit(143) 2 s later if the process survives its SIGTERM. Started once per process; does
 * nothing without CSN_WATCH_FD, or when it does not name a pipe. */
void csni_watch_start(void);

#endif
