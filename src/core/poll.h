/* poll.h: the progress engine: what moves data when a thread polls or sleeps: it reads the
 * rings and sockets (driving each connection's reader and handing frames to the protocol),
 * accepts connections, and reports ended connections to the peer table. */
#ifndef CSNI_POLL_H
#define CSNI_POLL_H

#include <stdbool.h>
#include <stdint.h>

#include "csn.h"

struct csni_proc;
struct csni_op;
struct csni_conn;

/* epoll data of the process's own descriptors (a connection's is its pointer). */
#define CSNI_EV_LISTEN ((uint64_t)1)
#define CSNI_EV_KICK ((uint64_t)2)
#define CSNI_EV_LISTEN2 ((uint64_t)3)

/* Drives c's reader until it has nothing more, handing its frames to the protocol (block:
 * wait for the reader lock, else leave it to the thread that holds it). No lock held. */
void csni_poll_serve(struct csni_proc *p, struct csni_conn *c, bool block);
/* One non-blocking round: rings, and now and then the epoll set. No lock held. */
void csni_poll(struct csni_proc *p);
/* A receive's spin on t: the first ring with data is read directly if its next frame is a
 * message for t's receive (own, or any when NULL) (1; 2: its completion was written to res,
 * csn_test's result, as csni_match_direct says). 0: every ring empty, nothing queued to
 * send; -1: the caller polls the general way. */
int csni_poll_direct(struct csni_proc *p, csn_transport *t, struct csni_op *own,
                     struct csni_op *res);
/* One round of sleeping in epoll (at most nap_ns) and handling what woke us. */
void csni_poll_sleep(struct csni_proc *p, uint64_t nap_ns);
/* Before a thread sleeps: arm every ring's doorbell. True when a ring has work already (the
 * caller must then not sleep); handle: do that work now. May run membarrier (1-50 us). */
bool csni_arm_rings(struct csni_proc *p, bool handle);

#endif
