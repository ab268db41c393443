/* forked.h: ranks forked on one host that share one anonymous mapping, for the references that
 * run with no library (nettest-floor, nettest-lean's comm_lean.c): the fork, a counter barrier,
 * a failure flag every wait looks at, and a pull of another rank's memory. */
#ifndef BENCH_FORKED_H
#define BENCH_FORKED_H

#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#define FORKED_MAX_NP 64

/* The head of the mapping; the caller's shared state follows it (forked_start's extra). */
struct forked_job {
    _Alignas(64) _Atomic unsigned count;
    _Alignas(64) _Atomic unsigned gen;
    _Alignas(64) _Atomic int failed; /* a rank gave up or died: everyone stops at their next wait */
    int np;
    pid_t pid[FORKED_MAX_NP];
};

/* Maps the job with extra shared bytes after its head (*area, 64-byte aligned, zeroed) and
 * forks the np ranks (np from 2 to FORKED_MAX_NP); returns in each its rank. The process
 * started stays their supervisor and never returns: it waits for them, marks the job failed
 * as soon as one exits other than with status 0 or dies (the others stop at their next wait,
 * none waits for a dead rank), and exits with the first failed rank's status (1 for a
 * signal), else 0. Returns -1 with a line on stderr (who: the program's name) when the job
 * cannot start. */
static inline int forked_start(struct forked_job **jobp, int np, size_t extra, void **area,
                               const char *who)
{
    size_t head = (sizeof(struct forked_job) + 63) & ~(size_t)63;
    struct forked_job *job =
        mmap(NULL, head + extra, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (job == MAP_FAILED) {
        fprintf(stderr, "%s: mmap of %zu bytes: %s\n", who, head + extra, strerror(errno));
        return -1;
    }
    job->np = np;
    *jobp = job;
    *area = (uint8_t *)job + head;
    fflush(NULL); /* nothing buffered is written twice */
    int forked = 0, rc = 0;
    for (; forked < np; forked++) {
        pid_t k = fork();
        if (k == 0) {
            job->pid[forked] = getpid();
            return forked;
        }
        if (k < 0) {
            fprintf(stderr, "%s: fork: %s\n", who, strerror(errno));
            atomic_store(&job->failed, 1);
            rc = 1;
            break;
        }
    }
    for (int left = forked; left > 0; left--) {
        int st = 0;
        if (wait(&st) < 0)
            break;
        int code = WIFEXITED(st) ? WEXITSTATUS(st) : 1;
        if (code != 0) {
            atomic_store(&job->failed, 1);
            if (rc == 0)
                rc = code;
        }
    }
    exit(rc);
}

/* The counter barrier: the last to arrive moves the generation the others watch, calling
 * idle(arg) at every turn. 0, or -1 when a rank failed. */
static inline int forked_barrier(struct forked_job *job, void (*idle)(void *), void *arg)
{
    unsigned g = atomic_load(&job->gen);
    if (atomic_fetch_add(&job->count, 1) == (unsigned)job->np - 1) {
        atomic_store(&job->count, 0);
        atomic_store(&job->gen, g + 1);
    } else {
        while (atomic_load(&job->gen) == g && !atomic_load(&job->failed))
            idle(arg);
    }
    return atomic_load(&job->failed) ? -1 : 0;
}

/* Copies len bytes at src in rank from's memory to dst with one process_vm_readv: 0, or an
 * errno (EFAULT for a short copy). */
static inline int forked_pull(const struct forked_job *job, int from, void *dst, uint64_t src,
                              size_t len)
{
    struct iovec l = {.iov_base = dst, .iov_len = len};
    struct iovec r = {.iov_base = (void *)(uintptr_t)src, .iov_len = len};
    if (len == 0)
        return 0;
    ssize_t got = process_vm_readv(job->pid[from], &l, 1, &r, 1, 0);
    return got == (ssize_t)len ? 0 : got < 0 ? errno : EFAULT;
}

#endif
