/* unix.c: addressing of the Unix-domain stream transport (a socket file in the job directory). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "core/core.h"

static csn_status unix_listen(struct csni_proc *p, int *fd, char *addr, size_t cap)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    int s, n = snprintf(sa.sun_path, sizeof sa.sun_path, "%s/p%d.sock", p->boot.jobdir, p->me);
    if (n < 0 || (size_t)n >= sizeof sa.sun_path || (size_t)n + 6 > cap) {
        errno = ENAMETOOLONG;
        return CSN_SYSTEM_ERROR;
    }
    if ((s = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0)) < 0)
        return csni_errno_status(errno);
    unlink(sa.sun_path);
    if (bind(s, (struct sockaddr *)&sa, sizeof sa) < 0 || listen(s, 128) < 0) {
        int e = errno;
        close(s);
        return csni_errno_status(e);
    }
    snprintf(addr, cap, "unix:%s", sa.sun_path);
    *fd = s;
    return CSN_OK;
}

static csn_status unix_connect(const char *addr, int *fd)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    int s;
    if (strncmp(addr, "unix:", 5) != 0 || strlen(addr + 5) >= sizeof sa.sun_path)
        return CSN_ILLEGAL_NETID;
    strcpy(sa.sun_path, addr + 5);
    if ((s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
        return csni_errno_status(errno);
    while (connect(s, (struct sockaddr *)&sa, sizeof sa) < 0) {
        int e = errno;
        if (e == EINTR)
            continue;
        close(s);
        return e == ENOENT || e == ECONNREFUSED ? CSN_PEER_LOST : csni_errno_status(e);
    }
    *fd = s;
    return CSN_OK;
}

const struct csni_transport_ops csni_unix_ops = {
    .name = "unix",
    .listen = unix_listen,
    .connect = unix_connect,
};
