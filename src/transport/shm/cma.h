/* cma.h: single-copy transfers between the memory of two processes of one host (cross-memory
 * attach: process_vm_readv / process_vm_writev), for rendezvous messages over shared memory. */
#ifndef CSNI_CMA_H
#define CSNI_CMA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Copies n bytes between local memory and address remote of process pid (write: local to
 * remote). Blocks only for the copy. Returns 0, or the errno that stopped it (ESRCH: the process
 * is gone; EPERM/ENOSYS: not permitted here; EFAULT: a bad address). */
int csni_cma_copy(pid_t pid, void *local, uint64_t remote, size_t n, bool write);

/* At most this many segments per csni_cma_readv. */
#define CSNI_CMA_SEGS 16

/* One piece of a gathered read: len bytes from address remote of the process into local. */
struct csni_cma_seg {
    void *local;
    uint64_t remote;
    size_t len;
};

/* Reads the n segments (at most CSNI_CMA_SEGS) of process pid in as few system calls as the
 * kernel allows: one, unless a call comes back short, when the next goes on from the byte it
 * stopped at. Blocks only for the copy. Returns 0 or an errno as csni_cma_copy's. */
int csni_cma_readv(pid_t pid, const struct csni_cma_seg *seg, unsigned n);

#endif
