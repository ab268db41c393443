/* hostbar.h: the host barrier: csn_job_barrier of a job whose ranks all share one host and its
 * shared memory, as one counter in a segment of the host's shared memory.
 *
 * The message barrier (core/api.c) takes log2(N) rounds of messages, each a hand-over between
 * processes; where ranks outnumber CPUs most of them wait for the CPU too (4 ranks on 2 CPUs:
 * 3.1-4.2 us, Open MPI's 2.2). Here each rank adds one to a counter and the last one moves
 * the generation that the others watch (1.4-2.0 us; BENCHMARKS.md, issue 19). The segment is
 * set up by the job's first two barriers, over messages (core/api.c): rank 0 makes it before
 * the first, the others open it before the second, whose messages carry each one's answer;
 * from the third on, all use it or none. Only where p->tun.host_barrier (core/proc.c). */
#ifndef CSNI_HOSTBAR_H
#define CSNI_HOSTBAR_H

#include "csn.h"

/* The segment's name in the shared-memory directory: csn.<jobid>.CSNI_HOSTBAR_NAME (the
 * PMIx exit handler of rank 0 removes it, boot/pmix.c, when the job ended before its second
 * barrier; csnrun's cleanup takes it with the rings of rank 0). */
#define CSNI_HOSTBAR_NAME "0.0.bar"

struct csni_proc;
struct csni_hostbar;

/* Rank 0, before the first barrier: makes the segment (<shm_dir>/csn.<jobid>.0.0.bar, 0600,
 * ours alone). NULL when it cannot: the job keeps the message barrier. Never blocks long. */
struct csni_hostbar *csni_hostbar_create(const struct csni_proc *p);
/* Any other rank, before the second barrier: opens rank 0's segment and checks it (ours, of
 * this job, of its size, in our pid namespace), then fills in its slot. NULL when it cannot. */
struct csni_hostbar *csni_hostbar_open(const struct csni_proc *p);
/* Rank 0, after the second barrier (everyone has tried to open it): removes the name. */
void csni_hostbar_unlink(const struct csni_proc *p);
/* Unmaps h (NULL: nothing). */
void csni_hostbar_close(struct csni_hostbar *h);
/* One barrier of all ranks. Blocks: spins (yielding where ranks outnumber CPUs), then sleeps
 * on a futex of the segment; drives the process's progress meanwhile. Returns CSN_OK, or
 * CSN_PEER_LOST when a rank that has not arrived is dead (looked for after 100 ms of waiting,
 * then every 100 ms); after that every later call returns CSN_PEER_LOST at once. */
csn_status csni_hostbar_wait(struct csni_proc *p, struct csni_hostbar *h);

#endif
