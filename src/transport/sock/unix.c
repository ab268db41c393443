/* unix.c: addressing of the Unix-domain stream transport (a socket file in the job directory). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "transport/net.h"

/* errno as a status, errno kept for the caller. */
static csn_status unix_errno(int e)
{
    errno = e;
    return e == ENOMEM ? CSN_NO_HEAP : CSN_SYSTEM_ERROR;
}

static csn_status unix_listen(const char *dir, int me, int *fd, char *addr, size_t cap)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    int s, n = snprintf(sa.sun_path, sizeof sa.sun_path, "%s/p%d.sock", dir, me);
    if (n < 0 || (size_t)n >= sizeof sa.sun_path || (size_t)n + 6 > cap) {
        errno = ENAMETOOLONG;
        return CSN_SYSTEM_ERROR;
    }
    if ((s = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0)) < 0)
        return unix_errno(errno);
    unlink(sa.sun_path);
    if (bind(s, (struct sockaddr *)&sa, sizeof sa) < 0 || listen(s, 128) < 0) {
        int e = errno;
        close(s);
        return unix_errno(e);
    }
    snprintf(addr, cap, "unix:%s", sa.sun_path);
    *fd = s;
    return CSN_OK;
}

static csn_status unix_connect(const char *addr, unsigned timeout_ms, int *fd)
{
    (void)timeout_ms; /* a local connect completes or fails at once */
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    int s;
    if (strncmp(addr, "unix:", 5) != 0 || strlen(addr + 5) >= sizeof sa.sun_path)
        return CSN_ILLEGAL_NETID;
    strcpy(sa.sun_path, addr + 5);
    if ((s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
        return unix_errno(errno);
    while (connect(s, (struct sockaddr *)&sa, sizeof sa) < 0) {
        int e = errno;
        if (e == EINTR)
            continue;
        close(s);
        return e == ENOENT || e == ECONNREFUSED ? CSN_PEER_LOST : unix_errno(e);
    }
    *fd = s;
    return CSN_OK;
}

/* A Unix socket refuses TCP options: nothing to tune. */
static void unix_tune(int fd, size_t notsent)
{
    (void)fd;
    (void)notsent;
}

const struct csni_net_ops csni_net_unix = {
    .name = "unix",
    .host_local = true,
    .listen = unix_listen,
    .connect = unix_connect,
    .tune = unix_tune,
};
