/* test_cma.c: csni_cma_readv (src/transport/shm/cma.c), the gathered single-copy read behind
 * batched pulls: several segments of another process's memory land whole and in place, also
 * unaligned and of odd lengths; a read that stops at a bad segment goes on from where the
 * kernel stopped and reports EFAULT; too many segments is EINVAL; a process gone is ESRCH. A
 * copy of nothing is done at once (a split's empty part). A host that does not permit the read
 * (ptrace policy) skips. */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "transport/shm/cma.h"
#include "../test.h"

#define LEN (256 * 1024)

static uint8_t src[LEN], dst[LEN];

static uint8_t cma_byte(size_t i)
{
    return (uint8_t)(i * 7 + (i >> 9) + 1);
}

int main(void)
{
    int go[2], ready[2];
    CHECK(pipe(go) == 0 && pipe(ready) == 0);
    pid_t child = fork();
    CHECK(child >= 0);
    if (child == 0) { /* the other process: its own copy of src, filled, then it waits */
        char c;
        for (size_t i = 0; i < LEN; i++)
            src[i] = cma_byte(i);
        if (write(ready[1], "r", 1) != 1 || read(go[0], &c, 1) < 0)
            _exit(1);
        _exit(0);
    }
    char c;
    CHECK(read(ready[0], &c, 1) == 1);
    /* Ours stays zero: whatever lands came from the child. */
    struct csni_cma_seg seg[] = {
        {dst + 0, (uintptr_t)src + 0, 5000},
        {dst + 8192, (uintptr_t)src + 100, 70001},
        {dst + 100000, (uintptr_t)src + 200000, 1},
        {dst + 100001, (uintptr_t)src + 4093, 4099},
        {dst + 150000, (uintptr_t)src + 150000, LEN - 150000},
        {dst + 5000, (uintptr_t)src, 0}, /* empty: nothing lands */
    };
    unsigned n = sizeof seg / sizeof seg[0];
    int e = csni_cma_readv(child, seg, n);
    if (e == EPERM || e == ENOSYS) {
        kill(child, SIGKILL);
        (void)waitpid(child, NULL, 0);
        return TEST_SKIP;
    }
    CHECK(e == 0);
    for (unsigned k = 0; k < n; k++) {
        size_t from = (size_t)(seg[k].remote - (uintptr_t)src);
        for (size_t i = 0; i < seg[k].len; i++)
            CHECK(((uint8_t *)seg[k].local)[i] == cma_byte(from + i));
    }
    CHECK(dst[5000] == 0 && dst[8191] == 0); /* nothing between the segments */
    /* A bad address in the second segment: the first lands, then EFAULT. */
    memset(dst, 0, sizeof dst);
    struct csni_cma_seg bad[] = {{dst, (uintptr_t)src + 10, 3000}, {dst + 4096, 4096, 100}};
    CHECK(csni_cma_readv(child, bad, 2) == EFAULT);
    for (size_t i = 0; i < 3000; i++)
        CHECK(dst[i] == cma_byte(10 + i));
    struct csni_cma_seg many[CSNI_CMA_SEGS + 1];
    for (unsigned k = 0; k <= CSNI_CMA_SEGS; k++)
        many[k] = (struct csni_cma_seg){dst + k, (uintptr_t)src + k, 1};
    CHECK(csni_cma_readv(child, many, CSNI_CMA_SEGS + 1) == EINVAL);
    CHECK(csni_cma_readv(child, many, CSNI_CMA_SEGS) == 0);
    /* A copy of nothing (a split's empty part) is done at once, in either direction. */
    CHECK(csni_cma_copy(child, dst, (uintptr_t)src, 0, false) == 0);
    CHECK(csni_cma_copy(child, dst, (uintptr_t)src, 0, true) == 0);
    struct csni_cma_seg none = {dst, (uintptr_t)src, 0};
    CHECK(csni_cma_readv(child, &none, 1) == 0);
    CHECK(write(go[1], "g", 1) == 1);
    int st;
    CHECK(waitpid(child, &st, 0) == child && WIFEXITED(st) && WEXITSTATUS(st) == 0);
    CHECK(csni_cma_readv(child, seg, 1) == ESRCH);
    printf("csni_cma_readv: %u segments, a bad one, too many, a process gone: ok\n", n);
    return 0;
}
