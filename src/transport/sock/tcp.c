/* tcp.c: addressing of the TCP transport (ADDR:PORT; the address from CSN_ADDR, else loopback). */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/core.h"

/* No Nagle delay on small frames. And little unsent data in the kernel: the socket takes new
 * bytes only while less than the low-water mark is still unsent, so a full transfer waits in
 * csn's own queue, where control frames (a CTS, returned credit) overtake it, instead of
 * behind megabytes in the kernel's buffer (a CTS stuck there for one whole message time
 * halved a bidirectional exchange). Bytes in flight are not limited: the window still fills
 * the path. Unix sockets refuse both options, harmlessly. */
void csni_tcp_tune(const struct csni_proc *p, int s)
{
    int one = 1;
    setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (p->tcp_notsent > 0) {
        int lowat = (int)p->tcp_notsent;
        setsockopt(s, IPPROTO_TCP, TCP_NOTSENT_LOWAT, &lowat, sizeof lowat);
    }
}

static csn_status tcp_listen(struct csni_proc *p, int *fd, char *addr, size_t cap)
{
    const char *host = getenv("CSN_ADDR");
    struct sockaddr_in sa = {.sin_family = AF_INET};
    socklen_t len = sizeof sa;
    int s, one = 1;
    (void)p;
    if (!host || !*host)
        host = "127.0.0.1";
    if (inet_pton(AF_INET, host, &sa.sin_addr) != 1) {
        fprintf(stderr, "csn: CSN_ADDR=%s is not an IPv4 address\n", host);
        return CSN_INVALID_ARGUMENT;
    }
    if ((s = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0)) < 0)
        return csni_errno_status(errno);
    setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(s, (struct sockaddr *)&sa, sizeof sa) < 0 || listen(s, 128) < 0 ||
        getsockname(s, (struct sockaddr *)&sa, &len) < 0) {
        int e = errno;
        close(s);
        return csni_errno_status(e);
    }
    snprintf(addr, cap, "tcp:%s:%u", host, (unsigned)ntohs(sa.sin_port));
    *fd = s;
    return CSN_OK;
}

static csn_status tcp_connect(const char *addr, int *fd)
{
    char host[256];
    const char *colon;
    struct sockaddr_in sa = {.sin_family = AF_INET};
    int s;
    if (strncmp(addr, "tcp:", 4) != 0 || !(colon = strrchr(addr + 4, ':')) ||
        (size_t)(colon - addr - 4) >= sizeof host)
        return CSN_ILLEGAL_NETID;
    memcpy(host, addr + 4, (size_t)(colon - addr - 4));
    host[colon - addr - 4] = 0;
    sa.sin_port = htons((uint16_t)atoi(colon + 1));
    if (inet_pton(AF_INET, host, &sa.sin_addr) != 1)
        return CSN_ILLEGAL_NETID;
    if ((s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
        return csni_errno_status(errno);
    while (connect(s, (struct sockaddr *)&sa, sizeof sa) < 0) {
        int e = errno;
        if (e == EINTR)
            continue;
        close(s);
        return e == ECONNREFUSED || e == EHOSTUNREACH || e == ETIMEDOUT ? CSN_PEER_LOST
                                                                        : csni_errno_status(e);
    }
    *fd = s;
    return CSN_OK;
}

const struct csni_transport_ops csni_tcp_ops = {
    .name = "tcp",
    .listen = tcp_listen,
    .connect = tcp_connect,
};
