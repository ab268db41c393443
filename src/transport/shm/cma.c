/* cma.c: process_vm_readv / process_vm_writev, retried until the whole range is copied. */
#include <errno.h>
#include <sys/uio.h>

#include "transport/shm/cma.h"

/* The n segments of csni_cma_readv, read (or written), one system call unless one comes back
 * short: the next goes on from the byte it stopped at. */
static int cma_copyv(pid_t pid, const struct csni_cma_seg *seg, unsigned n, bool write)
{
    struct iovec l[CSNI_CMA_SEGS], r[CSNI_CMA_SEGS];
    unsigned i = 0; /* the segment the next call starts in */
    size_t at = 0;  /* and the byte in it */
    if (n > CSNI_CMA_SEGS)
        return EINVAL;
    while (i < n) {
        if (at == seg[i].len) { /* done, or empty (a split's part of 0 bytes) */
            i++;
            at = 0;
            continue;
        }
        unsigned k = 0;
        for (unsigned j = i; j < n; j++, k++) {
            size_t off = j == i ? at : 0;
            l[k] = (struct iovec){.iov_base = (uint8_t *)seg[j].local + off,
                                  .iov_len = seg[j].len - off};
            r[k] = (struct iovec){.iov_base = (void *)(uintptr_t)(seg[j].remote + off),
                                  .iov_len = seg[j].len - off};
        }
        ssize_t got = write ? process_vm_writev(pid, l, k, r, k, 0)
                            : process_vm_readv(pid, l, k, r, k, 0);
        if (got == 0)
            return EFAULT;
        if (got < 0) {
            if (errno != EINTR)
                return errno;
            continue;
        }
        for (size_t left = (size_t)got; left > 0 && i < n;) {
            size_t step = seg[i].len - at < left ? seg[i].len - at : left;
            left -= step;
            at += step;
            if (at == seg[i].len) {
                i++;
                at = 0;
            }
        }
    }
    return 0;
}

int csni_cma_copy(pid_t pid, void *local, uint64_t remote, size_t n, bool write)
{
    struct csni_cma_seg seg = {.local = local, .remote = remote, .len = n};
    return cma_copyv(pid, &seg, 1, write);
}

int csni_cma_readv(pid_t pid, const struct csni_cma_seg *seg, unsigned n)
{
    return cma_copyv(pid, seg, n, false);
}
