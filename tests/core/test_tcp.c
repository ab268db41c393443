/* test_tcp.c: the TCP network kind alone (src/transport/sock/tcp.c): a connected data socket
 * starts with the fixed low-water mark of unsent bytes, and once its writer found it full the
 * mark is refit to the connection's delivery rate times the hold time (at least the fixed mark,
 * at most 64 MiB), as the kernel then reports it; a Unix socket has no such mark to refit. */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../test.h"
#include "transport/net.h"

#define FLOOR (128u << 10)

static int tcp_lowat(int fd)
{
    int v = -1;
    socklen_t len = sizeof v;
    CHECK(getsockopt(fd, IPPROTO_TCP, TCP_NOTSENT_LOWAT, &v, &len) == 0);
    return v;
}

int main(void)
{
    char addr[256];
    int lfd, cfd, afd;
    CHECK(csni_net_tcp.refit != NULL);
    CHECK(csni_net_unix.refit == NULL);
    CHECK_OK(csni_net_tcp.listen("/tmp", 0, &lfd, addr, sizeof addr));
    CHECK_OK(csni_net_tcp.connect(addr, 5000, &cfd));
    struct pollfd pl = {.fd = lfd, .events = POLLIN};
    CHECK(poll(&pl, 1, 5000) == 1);
    CHECK((afd = accept(lfd, NULL, NULL)) >= 0);
    csni_net_tcp.tune(cfd, FLOOR);
    CHECK(tcp_lowat(cfd) == (int)FLOOR);

    /* Move 64 MiB through the pair (the reader drains between writes), so that the kernel has a
     * delivery-rate sample; loopback delivers far more than FLOOR bytes per second. */
    static char buf[1 << 16];
    size_t moved = 0;
    while (moved < (64u << 20)) {
        ssize_t w = send(cfd, buf, sizeof buf, MSG_DONTWAIT);
        if (w < 0)
            CHECK(errno == EAGAIN);
        else
            moved += (size_t)w;
        ssize_t r;
        while ((r = recv(afd, buf, sizeof buf, MSG_DONTWAIT)) > 0)
            ;
    }
    /* Hold 1 s: the mark becomes the rate in bytes per second, so at least the floor, at most
     * 64 MiB, and what the kernel reports is what refit said. */
    size_t got = csni_net_tcp.refit(cfd, FLOOR, 1000000);
    CHECK(got > FLOOR);
    CHECK(got <= (64u << 20));
    CHECK(tcp_lowat(cfd) == (int)got);
    /* A hold of 1 us at that rate is below the floor: the floor. */
    CHECK(csni_net_tcp.refit(cfd, FLOOR, 1) == FLOOR);
    CHECK(tcp_lowat(cfd) == (int)FLOOR);
    /* notsent 0 (CSN_TCP_NOTSENT=0: the kernel's own) is left alone. */
    CHECK(csni_net_tcp.refit(cfd, 0, 1000000) == 0);
    CHECK(tcp_lowat(cfd) == (int)FLOOR);
    close(afd);
    close(cfd);
    close(lfd);
    printf("test_tcp: the low-water mark refit to the path's rate, within its bounds\n");
    return 0;
}
