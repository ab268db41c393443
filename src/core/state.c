/* state.c: the process's state pointer and the two primitives every module uses with it. */
#include <time.h>
#include <unistd.h>

#include "core/state.h"

struct csni_proc *csni_p;
_Thread_local bool csni_in_progress_thread __attribute__((tls_model("initial-exec")));

uint64_t csni_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void csni_kick_epoll(struct csni_proc *p)
{
    uint64_t one = 1;
    if (write(p->evfd, &one, sizeof one) < 0)
        return; /* the counter is saturated: a wake-up is pending anyway */
}
