/* boot.h: what a process learns about its job at start (from csnrun's environment, or PMIx). */
#ifndef CSNI_BOOT_H
#define CSNI_BOOT_H

#include <limits.h>
#include "csn.h"

/* Environment that csnrun sets for every rank (the whole list; see tools/csnrun):
 *   CSN_RANK, CSN_SIZE        rank and size of the job
 *   CSN_LOCAL_RANK, CSN_LOCAL_SIZE   rank among, and number of, the job's ranks on this host
 *   CSN_NS                    name service address: "unix:/path" or "tcp:HOST:PORT"
 *   CSN_JOBKEY                32 hex digits; proves membership on every connection
 *   CSN_JOBID                 short printable id; shared-memory files are /dev/shm/csn.<JOBID>.*
 *   CSN_JOBDIR                a private directory of the job (Unix sockets live there);
 *                             csnrun removes it and /dev/shm/csn.<JOBID>.* when the job ends
 *   CSN_HOST                  the host name csnrun used for this rank's host
 * Without CSN_RANK the process is a job of size 1 with no name service (names are then
 * held in the process). */
struct csni_boot {
    int rank, size;
    int local_rank, local_size;
    int launched;      /* 1 when started by csnrun (or PMIx), 0 for a lone process */
    char ns[PATH_MAX]; /* "" when there is no name service */
    char jobkey[33];   /* "" when not launched */
    char jobid[64];
    char jobdir[PATH_MAX]; /* "" when not launched */
    char host[256];
};

/* Reads the environment once. Returns CSN_INVALID_ARGUMENT (after printing one line to
 * stderr) when the variables are present but malformed. */
csn_status csni_boot_init(struct csni_boot *b);

#endif
