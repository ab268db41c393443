/* pmix.h: starting under a PMIx launcher (Open MPI's mpirun, Slurm's srun --mpi=pmix): identity,
 * job key, endpoint exchange. */
#ifndef CSNI_PMIX_H
#define CSNI_PMIX_H

#ifdef CSN_HAVE_PMIX
#include <stddef.h>
#include <stdint.h>

#include "boot/boot.h"

/* 1 when the environment names a PMIx server (PMIX_NAMESPACE and PMIX_RANK are set). */
int csni_pmix_present(void);

/* PMIx_Init and the job as PMIx describes it: rank, size, local rank and size, host. Rank 0
 * makes the job key and a job id suffix and runs the job's name service in a thread (on
 * 127.0.0.1, or on this host's address when the job spans hosts); every rank gets them
 * with PMIx_Get from rank 0. b->ns is "pmix+tcp:IP:PORT": names go to that service, the
 * key-value store (endpoints) through PMIx. Each rank gets a private job directory, removed
 * at exit with its socket and the shared-memory files it created. CSN_NOT_FOUND when
 * PMIx_Init fails (the caller runs alone); other errors after one line on stderr. */
csn_status csni_pmix_boot(struct csni_boot *b);

/* PMIx_Put (global scope) and PMIx_Commit of one of this process's keys: others read it with
 * csni_pmix_get without a fence (the PMIx server fetches it: direct modex). */
csn_status csni_pmix_put(const char *key, const char *value);

/* PMIx_Get of rank's key, waiting up to timeout_ms for rank to commit it. CSN_NOT_FOUND when
 * it does not come; CSN_OVERRUN when value (cap bytes) is too small (truncated copy). */
csn_status csni_pmix_get(int rank, const char *key, uint64_t timeout_ms, char *value, size_t cap);
#endif

#endif
