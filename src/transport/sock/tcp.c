/* tcp.c: addressing of the TCP transport (ADDR:PORT; the address from CSN_ADDR, else loopback). */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <linux/tcp.h> /* struct tcp_info with tcpi_delivery_rate (glibc's lacks it) */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "transport/net.h"

/* No Nagle delay on small frames. And little unsent data in the kernel: the socket takes new
 * bytes only while less than the low-water mark is still unsent, so a full transfer waits in
 * csn's own queue, where control frames (a CTS, returned credit) overtake it, instead of
 * behind megabytes in the kernel's buffer (a CTS stuck there for one whole message time
 * halved a bidirectional exchange). The mark starts at notsent and is refit to the path's
 * rate (tcp_refit). Bytes in flight are not limited: the window still fills the path. Unix
 * sockets refuse both options, harmlessly. */
static void tcp_tune(int s, size_t notsent)
{
    int one = 1;
    if (setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) != 0)
        return; /* not a TCP socket */
    if (notsent > 0) {
        int lowat = (int)notsent;
        (void)setsockopt(s, IPPROTO_TCP, TCP_NOTSENT_LOWAT, &lowat, sizeof lowat); /* a hint */
    }
}

/* The writer found the socket full: the unsent bytes the kernel may hold become hold_us of the
 * connection's delivery rate (the kernel's latest sample), at least notsent, at most 64 MiB. A
 * fixed 128 KiB kept a CTS prompt on a shaped 200 Mbit/s link (5 ms) but woke the writer every
 * 128 KiB on loopback and cost bulk transfers there a third to half of their rate (BENCHMARKS.md,
 * issue 21): a time, not a byte count, bounds what a control frame waits behind, and on a fast
 * path that time buys megabytes. */
static size_t tcp_refit(int s, size_t notsent, uint64_t hold_us)
{
    struct tcp_info ti;
    socklen_t len = sizeof ti;
    if (notsent == 0)
        return 0;
    memset(&ti, 0, sizeof ti);
    if (getsockopt(s, IPPROTO_TCP, TCP_INFO, &ti, &len) != 0 ||
        len < offsetof(struct tcp_info, tcpi_delivery_rate) + sizeof ti.tcpi_delivery_rate)
        return notsent;
    uint64_t want = ti.tcpi_delivery_rate / 1000u * hold_us / 1000u; /* bytes/s times us */
    if (want > (64u << 20))
        want = 64u << 20;
    if (want < notsent)
        want = notsent;
    int lowat = (int)want;
    return setsockopt(s, IPPROTO_TCP, TCP_NOTSENT_LOWAT, &lowat, sizeof lowat) == 0 ? (size_t)want
                                                                                    : notsent;
}

/* errno as a status, errno kept for the caller. */
static csn_status tcp_errno(int e)
{
    errno = e;
    return e == ENOMEM ? CSN_NO_HEAP : CSN_SYSTEM_ERROR;
}

static csn_status tcp_listen(const char *dir, int me, int *fd, char *addr, size_t cap)
{
    const char *host = getenv("CSN_ADDR");
    struct sockaddr_in sa = {.sin_family = AF_INET};
    socklen_t len = sizeof sa;
    int s, one = 1;
    (void)dir;
    (void)me;
    if (!host || !*host)
        host = "127.0.0.1";
    if (inet_pton(AF_INET, host, &sa.sin_addr) != 1) {
        fprintf(stderr, "csn: CSN_ADDR=%s is not an IPv4 address\n", host);
        return CSN_INVALID_ARGUMENT;
    }
    if ((s = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0)) < 0)
        return tcp_errno(errno);
    if (setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) < 0 || bind(s, (struct sockaddr *)&sa, sizeof sa) < 0 || listen(s, SOMAXCONN) < 0 ||
        getsockname(s, (struct sockaddr *)&sa, &len) < 0) {
        int e = errno;
        close(s);
        return tcp_errno(e);
    }
    snprintf(addr, cap, "tcp:%s:%u", host, (unsigned)ntohs(sa.sin_port));
    *fd = s;
    return CSN_OK;
}

static csn_status tcp_connect(const char *addr, unsigned timeout_ms, int *fd)
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
    char *end;
    unsigned long port = strtoul(colon + 1, &end, 10);
    if (*end || port == 0 || port > 65535 || inet_pton(AF_INET, host, &sa.sin_addr) != 1)
        return CSN_ILLEGAL_NETID;
    sa.sin_port = htons((uint16_t)port);
    if ((s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
        return tcp_errno(errno);
    /* A blocking connect gives up after SO_SNDTIMEO (EINPROGRESS): a host that does not
     * answer costs at most timeout_ms. */
    struct timeval tv = {.tv_sec = timeout_ms / 1000, .tv_usec = (timeout_ms % 1000) * 1000};
    if (setsockopt(s, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv) != 0) {
        close(s);
        return tcp_errno(errno);
    }
    while (connect(s, (struct sockaddr *)&sa, sizeof sa) < 0) {
        int e = errno;
        if (e == EINTR)
            continue;
        close(s);
        return e == ECONNREFUSED || e == EHOSTUNREACH || e == ETIMEDOUT || e == EINPROGRESS ||
                       e == EAGAIN
                   ? CSN_PEER_LOST
                   : tcp_errno(e);
    }
    tv.tv_sec = 0;
    tv.tv_usec = 0;
    if (setsockopt(s, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv) != 0) {
        close(s);
        return tcp_errno(errno);
    }
    *fd = s;
    return CSN_OK;
}

/* One TCP connection carries a pair's messages both ways, so the kernel takes it for an
 * interactive one (it sends soon after it receives) and delays its acknowledgements to carry
 * them on the replies: a bulk transfer's sender then waits for them. Asking for quick
 * acknowledgements after each large read (the mode lasts only a few segments) measured, over
 * loopback (bench/ab.sh, 6 rounds): one way 1.24x and 1.15x, both ways 1.28x and 1.21x at
 * 1 and 4 MiB (BENCHMARKS.md, issue 21). */
static void tcp_bulk_read(int s)
{
    int one = 1;
    (void)setsockopt(s, IPPROTO_TCP, TCP_QUICKACK, &one, sizeof one); /* a hint */
}

const struct csni_net_ops csni_net_tcp = {
    .name = "tcp",
    .host_local = false,
    .listen = tcp_listen,
    .connect = tcp_connect,
    .tune = tcp_tune,
    .refit = tcp_refit,
    .bulk_read = tcp_bulk_read,
};
