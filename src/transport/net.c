/* net.c: the table of network kinds. */
#include <string.h>
#include <sys/socket.h>

#include "transport/net.h"

static const struct csni_net_ops *const net_kinds[] = {&csni_net_unix, &csni_net_tcp};

const struct csni_net_ops *csni_net_by_name(const char *name)
{
    for (size_t i = 0; i < sizeof net_kinds / sizeof net_kinds[0]; i++)
        if (strcmp(net_kinds[i]->name, name) == 0)
            return net_kinds[i];
    return NULL;
}

const struct csni_net_ops *csni_net_remote(void)
{
    for (size_t i = 0; i < sizeof net_kinds / sizeof net_kinds[0]; i++)
        if (!net_kinds[i]->host_local)
            return net_kinds[i];
    return NULL;
}

const struct csni_net_ops *csni_net_of_addr(const char *addr)
{
    for (size_t i = 0; i < sizeof net_kinds / sizeof net_kinds[0]; i++) {
        size_t n = strlen(net_kinds[i]->name);
        if (strncmp(addr, net_kinds[i]->name, n) == 0 && addr[n] == ':')
            return net_kinds[i];
    }
    return NULL;
}

const struct csni_net_ops *csni_net_of_fd(int fd)
{
    struct sockaddr_storage ss;
    socklen_t len = sizeof ss;
    if (getsockname(fd, (struct sockaddr *)&ss, &len) != 0)
        return NULL;
    return ss.ss_family == AF_UNIX                               ? &csni_net_unix
           : ss.ss_family == AF_INET || ss.ss_family == AF_INET6 ? &csni_net_tcp
                                                                 : NULL;
}
