/* watch.c: ends a rank whose csnrun agent is gone (see watch.h). The agent also sets
 * PR_SET_PDEATHSIG on the ranks it forks; this covers what that cannot: processes that a rank
 * started (a shell script's program), which the agent's guardian would otherwise be the only
 * one to stop. */
#include "boot/watch.h"
#include "core/thread.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static pthread_once_t watch_once = PTHREAD_ONCE_INIT;
static int watch_fd = -1;
static dev_t watch_dev;
static ino_t watch_ino;

/* The descriptor still is the pipe we were given (the program may have closed it, and the
 * number may have been reused since: then we stop watching rather than misread it). */
static int watch_same(void)
{
    struct stat st;

    return fstat(watch_fd, &st) == 0 && S_ISFIFO(st.st_mode) && st.st_dev == watch_dev &&
           st.st_ino == watch_ino;
}

static void *watch_thread(void *arg)
{
    sigset_t all;
    const char *rank = getenv("CSN_RANK");

    (void)arg;
    /* Signals belong to the program's threads. */
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, NULL);
    for (;;) {
        struct pollfd p = {.fd = watch_fd, .events = POLLIN};
        char buf[64];
        ssize_t r;

        if (poll(&p, 1, -1) < 0) {
            if (errno == EINTR)
                continue;
            return NULL;
        }
        if ((p.revents & POLLNVAL) || !watch_same())
            return NULL;
        r = read(watch_fd, buf, sizeof buf);
        if (r > 0 || (r < 0 && (errno == EINTR || errno == EAGAIN)))
            continue; /* the agent never writes; be tolerant */
        if (r < 0 || !watch_same())
            return NULL;
        break; /* end of file: the agent is gone */
    }
    fprintf(stderr,
            "csn[%s]: the csnrun agent that started this process is gone (killed?); ending "
            "the process\n",
            rank != NULL ? rank : "?");
    kill(getpid(), SIGTERM);
    nanosleep(&(struct timespec){.tv_sec = 2}, NULL);
    _exit(128 + SIGTERM);
}

static void watch_init(void)
{
    const char *v = getenv("CSN_WATCH_FD");
    struct stat st;
    pthread_t th;
    char *end;
    long fd;

    if (v == NULL || *v == '\0')
        return;
    errno = 0;
    fd = strtol(v, &end, 10);
    if (errno != 0 || *end != '\0' || fd < 0 || fd > 1 << 20)
        return;
    if (fstat((int)fd, &st) != 0 || !S_ISFIFO(st.st_mode))
        return; /* not ours any more (a program that closed it, or a hand-made environment) */
    watch_fd = (int)fd;
    watch_dev = st.st_dev;
    watch_ino = st.st_ino;
    if (csni_thread_start(&th, true, 64 * 1024, watch_thread, NULL) != 0)
        fprintf(stderr, "csn: cannot start the launcher watch: the process will not notice "
                        "its csnrun agent's death\n");
}

void csni_watch_start(void)
{
    pthread_once(&watch_once, watch_init);
}
