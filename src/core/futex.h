/* futex.h: the two futex calls the library sleeps and wakes with (private to the process). */
#ifndef CSNI_FUTEX_H
#define CSNI_FUTEX_H

#include <linux/futex.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* Wakes every thread asleep on w. Never blocks. */
static inline void csni_futex_wake(_Atomic uint32_t *w)
{
    (void)syscall(SYS_futex, (uint32_t *)w, FUTEX_WAKE_PRIVATE, 0x7fffffff, NULL, NULL, 0);
}

/* Sleeps while *w == val, at most timeout_ns; returns early on a wake-up, a signal or a change
 * (the caller always looks again, so the result is only a hint). */
static inline int csni_futex_wait(_Atomic uint32_t *w, uint32_t val, uint64_t timeout_ns)
{
    struct timespec ts = {.tv_sec = (time_t)(timeout_ns / 1000000000u),
                          .tv_nsec = (long)(timeout_ns % 1000000000u)};
    return (int)syscall(SYS_futex, (uint32_t *)w, FUTEX_WAIT_PRIVATE, val, &ts, NULL, 0);
}

#endif
