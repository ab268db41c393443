/* netaddr.c: which IPv4 address of this host the other hosts of a job reach (interface, route,
 * fallback). */
#include "csnrun.h"

#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* A unicast IPv4 address a rank can listen on and others can connect to: not 0.0.0.0, not
 * broadcast, not multicast. */
int net_usable_ipv4(const char *s)
{
    struct in_addr a;
    uint32_t h;

    if (s == NULL || inet_pton(AF_INET, s, &a) != 1)
        return 0;
    h = ntohl(a.s_addr);
    return h != 0 && h != 0xFFFFFFFFu && (h >> 28) != 0xE;
}

static void net_format(const struct in_addr *a, char *out, size_t cap)
{
    if (inet_ntop(AF_INET, a, out, (socklen_t)cap) == NULL && cap > 0)
        out[0] = '\0';
}

int net_iface_ipv4(const char *ifname, char *out, size_t cap)
{
    struct ifaddrs *all, *i;
    int rc = -1;

    if (getifaddrs(&all) != 0)
        return -1;
    for (i = all; i != NULL && rc != 0; i = i->ifa_next) {
        if (i->ifa_addr == NULL || i->ifa_addr->sa_family != AF_INET ||
            strcmp(i->ifa_name, ifname) != 0)
            continue;
        net_format(&((struct sockaddr_in *)i->ifa_addr)->sin_addr, out, cap);
        rc = net_usable_ipv4(out) ? 0 : -1;
    }
    freeifaddrs(all);
    if (rc != 0)
        errno = EADDRNOTAVAIL;
    return rc;
}

int net_first_ipv4(char *out, size_t cap)
{
    struct ifaddrs *all, *i;
    int rc = -1;

    if (getifaddrs(&all) != 0)
        return -1;
    for (i = all; i != NULL && rc != 0; i = i->ifa_next) {
        if (i->ifa_addr == NULL || i->ifa_addr->sa_family != AF_INET ||
            (i->ifa_flags & IFF_UP) == 0 || (i->ifa_flags & IFF_LOOPBACK) != 0)
            continue;
        net_format(&((struct sockaddr_in *)i->ifa_addr)->sin_addr, out, cap);
        rc = net_usable_ipv4(out) ? 0 : -1;
    }
    freeifaddrs(all);
    if (rc != 0)
        errno = EADDRNOTAVAIL;
    return rc;
}

int net_route_source(const char *dest, char *out, size_t cap)
{
    struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons(9)}, me;
    socklen_t ml = sizeof me;
    int fd, rc = -1;

    if (inet_pton(AF_INET, dest, &to.sin_addr) != 1) {
        errno = EAFNOSUPPORT;
        return -1;
    }
    /* Connecting a datagram socket only looks the route up: nothing is sent. */
    fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    if (connect(fd, (struct sockaddr *)&to, sizeof to) == 0 &&
        getsockname(fd, (struct sockaddr *)&me, &ml) == 0) {
        net_format(&me.sin_addr, out, cap);
        rc = net_usable_ipv4(out) ? 0 : -1;
        if (rc != 0)
            errno = ENETUNREACH;
    }
    close(fd);
    return rc;
}

int net_resolve_ipv4(const char *host, char *out, size_t cap)
{
    struct addrinfo hints, *res = NULL;
    int rc = -1;

    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_INET;
    hints.ai_socktype = SOCK_STREAM;
    if (getaddrinfo(host, NULL, &hints, &res) != 0 || res == NULL)
        return -1;
    net_format(&((struct sockaddr_in *)res->ai_addr)->sin_addr, out, cap);
    rc = net_usable_ipv4(out) ? 0 : -1;
    freeaddrinfo(res);
    return rc;
}
