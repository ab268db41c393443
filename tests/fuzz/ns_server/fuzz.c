/* ns_server: the name service's server (src/names/nsserv.c) over real sockets. An input is up
 * to 4 connections' bytes separated by 0xFF 0xFE; the first byte's bits say, per connection,
 * whether the harness first sends the right "KEY <jobkey>\n" line (bit i) and whether it
 * half-closes after writing (bit 4+i). Every connection's bytes go in at once; the service
 * runs until each connection is closed or 64 turns passed; replies are read and must be lines
 * the protocol allows. A fresh service per input (in a private directory). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "names/nsserv.h"

#define KEY "0123456789abcdef0123456789abcdef"
#define NCONN 4

static char dir[64];

static void cleanup(void)
{
    rmdir(dir);
}

static int reply_ok(const char *s, size_t n)
{
    /* Every reply is one line starting with one of these, except a DUMP's: "OK <k>\n" and k
     * lines "<key> <value>\n". A connection is answered once: its request came with more. */
    static const char *ok[] = {"OK", "TAKEN", "NOTFOUND", "ERR ", "DENIED"};
    const char *nl;
    size_t i;

    if (n == 0)
        return 1;
    if (s[n - 1] != '\n')
        return 0;
    nl = memchr(s, '\n', n);
    if (nl != s + n - 1) {
        unsigned long k, lines = 0;
        char *end;
        if (strncmp(s, "OK ", 3) != 0)
            return 0;
        k = strtoul(s + 3, &end, 10);
        if (end != nl)
            return 0;
        for (const char *q = nl + 1; q < s + n; q++)
            lines += *q == '\n';
        return lines == k;
    }
    for (i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        if (strncmp(s, ok[i], strlen(ok[i])) == 0)
            return 1;
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct csni_ns *ns;
    char addr[256], rep[NCONN][8192];
    size_t replen[NCONN] = {0};
    int cfd[NCONN], ncl = 0, i, turn, flags;
    const uint8_t *p, *end = data + size;

    if (dir[0] == '\0') {
        snprintf(dir, sizeof dir, "/tmp/csn-fuzz-ns-XXXXXX");
        if (mkdtemp(dir) == NULL)
            abort();
        atexit(cleanup);
    }
    if (size < 1)
        return 0;
    flags = data[0];
    ns = csni_ns_create("fuzz", dir, KEY, 4, 0, NULL, 16, addr, sizeof addr);
    if (ns == NULL)
        abort();
    for (p = data + 1; ncl < NCONN && p <= end; ncl++) {
        struct sockaddr_un un = {.sun_family = AF_UNIX};
        const uint8_t *sep = p;
        size_t n;

        while (sep + 1 < end && !(sep[0] == 0xFF && sep[1] == 0xFE))
            sep++;
        if (sep + 1 >= end)
            sep = end;
        n = (size_t)(sep - p);
        cfd[ncl] = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0);
        if (strlen(addr + 5) >= sizeof un.sun_path)
            abort();
        memcpy(un.sun_path, addr + 5, strlen(addr + 5) + 1);
        if (cfd[ncl] < 0 || connect(cfd[ncl], (struct sockaddr *)&un, sizeof un) != 0)
            abort();
        if (flags & (1 << ncl))
            (void)!write(cfd[ncl], "KEY " KEY "\n", 37);
        if (n > 0)
            (void)!send(cfd[ncl], p, n, MSG_NOSIGNAL);
        if (flags & (16 << ncl))
            shutdown(cfd[ncl], SHUT_WR);
        p = sep + 2;
    }
    for (turn = 0; turn < 64; turn++) {
        struct pollfd fds[CSNI_NS_POLLFDS];
        int n = csni_ns_pollfds(ns, fds, CSNI_NS_POLLFDS), open = 0;

        (void)poll(fds, (nfds_t)n, 0);
        csni_ns_handle(ns, fds, n);
        for (i = 0; i < ncl; i++) {
            ssize_t r;
            if (cfd[i] < 0)
                continue;
            r = read(cfd[i], rep[i] + replen[i], sizeof rep[i] - replen[i]);
            if (r > 0) {
                replen[i] += (size_t)r;
                if (replen[i] == sizeof rep[i])
                    abort(); /* far more than one reply line */
            } else if (r == 0 || errno != EAGAIN) {
                if (!reply_ok(rep[i], replen[i]))
                    abort();
                close(cfd[i]);
                cfd[i] = -1;
                continue;
            }
            open++;
        }
        if (open == 0)
            break;
    }
    for (i = 0; i < ncl; i++) {
        if (cfd[i] >= 0) {
            if (!reply_ok(rep[i], replen[i]))
                abort(); /* kept open after its reply: what came must still be well formed */
            close(cfd[i]);
        }
    }
    csni_ns_destroy(ns);
    return 0;
}
