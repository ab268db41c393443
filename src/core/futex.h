/* futex.h: the futex calls the library sleeps and wakes with: on a word private to the process,
 * and (_shared) on a word of a segment several processes map (core/hostbar.c). */
#ifndef CSNI_FUTEX_H
#define CSNI_FUTEX_H

#include <linux/futex.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static inline void csni_futex_wake_op(_Atomic uint32_t *w, int op)
{
    (void)syscall(SYS_futex, (uint32_t *)w, op, 0x7fffffff, NULL, NULL, 0);
}

static inline int csni_futex_wait_op(_Atomic uint32_t *w, int op, uint32_t val,
                                     uint64_t timeout_ns)
{
    struct timespec ts = {.tv_sec = (time_t)(timeout_ns / 1000000000u),
                          .tv_nsec = (long)(timeout_ns % 1000000000u)};
    return (int)syscall(SYS_futex, (uint32_t *)w, op, val, &ts, NULL, 0);
}

/* Wakes every thread asleep on w. Never blocks. */
static inline void csni_futex_wake(_Atomic uint32_t *w)
{
    csni_futex_wake_op(w, FUTEX_WAKE_PRIVATE);
}

/* Sleeps while *w == val, at most timeout_ns; returns early on a wake-up, a signal or a change
 * (the caller always looks again, so the result is only a hint). */
static inline int csni_futex_wait(_Atomic uint32_t *w, uint32_t val, uint64_t timeout_ns)
{
    return csni_futex_wait_op(w, FUTEX_WAIT_PRIVATE, val, timeout_ns);
}

/* The same on a word in memory that other processes map too (MAP_SHARED). */
static inline void csni_futex_wake_shared(_Atomic uint32_t *w)
{
    csni_futex_wake_op(w, FUTEX_WAKE);
}

static inline int csni_futex_wait_shared(_Atomic uint32_t *w, uint32_t val, uint64_t timeout_ns)
{
    return csni_futex_wait_op(w, FUTEX_WAIT, val, timeout_ns);
}

#endif
