/* cma.c: process_vm_readv / process_vm_writev, retried until the whole range is copied. */
#include <errno.h>
#include <sys/uio.h>

#include "transport/shm/cma.h"

int csni_cma_copy(pid_t pid, void *local, uint64_t remote, size_t n, bool write)
{
    size_t done = 0;
    while (done < n) {
        struct iovec l = {.iov_base = (uint8_t *)local + done, .iov_len = n - done};
        struct iovec r = {.iov_base = (void *)(uintptr_t)(remote + done), .iov_len = n - done};
        ssize_t got = write ? process_vm_writev(pid, &l, 1, &r, 1, 0)
                            : process_vm_readv(pid, &l, 1, &r, 1, 0);
        if (got > 0)
            done += (size_t)got;
        else if (got == 0)
            return EFAULT;
        else if (errno != EINTR)
            return errno;
    }
    return 0;
}
