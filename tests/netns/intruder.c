/* intruder.c: connects to a rank or to the name service the way an outsider would (garbage, a wrong
 * job key) and checks that it is turned away. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "wire/frame.h"

#define INTRUDER_WAIT_MS 10000

static const char intruder_usage[] =
    "usage: intruder garbage|wrongkey|ns IP:PORT\n"
    "  garbage   sends bytes that are no csn frame to a rank's TCP endpoint\n"
    "  wrongkey  sends a well-formed HELLO with a random job key to a rank's TCP endpoint\n"
    "  ns        asks the name service for ep.0 presenting a wrong job key\n"
    "Exit 0 when the other side closes the connection without answering (within 10 s),\n"
    "1 when it answers or keeps the connection open, 2 for bad usage.\n";

static int intruder_connect(const char *target)
{
    char host[64];
    const char *colon = strrchr(target, ':');
    struct sockaddr_in sa = {.sin_family = AF_INET};
    int fd;

    if (colon == NULL || (size_t)(colon - target) >= sizeof host)
        return -1;
    memcpy(host, target, (size_t)(colon - target));
    host[colon - target] = '\0';
    sa.sin_port = htons((uint16_t)atoi(colon + 1));
    if (inet_pton(AF_INET, host, &sa.sin_addr) != 1 || sa.sin_port == 0)
        return -1;
    fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
        fprintf(stderr, "intruder: cannot connect to %s: %s\n", target, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -2;
    }
    return fd;
}

static int intruder_send(int fd, const void *buf, size_t n)
{
    const char *p = buf;

    while (n > 0) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* 0 when the peer closes (EOF or reset) without sending anything, or, from the name
 * service, after its one line "DENIED" (a wrong key is told so, nothing more); 1 otherwise. */
static int intruder_expect_close(int fd, const char *what)
{
    struct pollfd p = {.fd = fd, .events = POLLIN};
    char buf[256];
    ssize_t r;
    int denied = 0;

again:
    if (poll(&p, 1, INTRUDER_WAIT_MS) <= 0) {
        fprintf(stderr, "intruder: %s: the connection is still open after %d ms\n", what,
                INTRUDER_WAIT_MS);
        return 1;
    }
    r = recv(fd, buf, sizeof buf - 1, 0);
    if (r == 7 && !denied && strcmp(what, "ns") == 0 && memcmp(buf, "DENIED\n", 7) == 0) {
        denied = 1;
        goto again;
    }
    if (r > 0) {
        buf[r] = '\0';
        fprintf(stderr, "intruder: %s: got an answer: %s\n", what, buf);
        return 1;
    }
    printf("intruder: %s: refused (%s%s)\n", what, denied ? "DENIED, " : "",
           r == 0 ? "closed" : strerror(errno));
    return 0;
}

int main(int argc, char **argv)
{
    unsigned char buf[CSNI_FRAME_SIZE + CSNI_KEY_BYTES];
    int fd, rc, urnd;

    if (argc == 2 && strcmp(argv[1], "--help") == 0) {
        fputs(intruder_usage, stdout);
        return 0;
    }
    if (argc != 3 || (strcmp(argv[1], "garbage") != 0 && strcmp(argv[1], "wrongkey") != 0 &&
                      strcmp(argv[1], "ns") != 0)) {
        fputs(intruder_usage, stderr);
        return 2;
    }
    fd = intruder_connect(argv[2]);
    if (fd == -1) {
        fprintf(stderr, "intruder: '%s' is not IPv4:PORT\n", argv[2]);
        return 2;
    }
    if (fd < 0)
        return 1;
    urnd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    if (urnd < 0 || read(urnd, buf, sizeof buf) != (ssize_t)sizeof buf) {
        fprintf(stderr, "intruder: cannot read /dev/urandom\n");
        return 1;
    }
    close(urnd);
    if (strcmp(argv[1], "garbage") == 0) {
        /* Random bytes: the magic number cannot match by chance, the frame is refused. */
        buf[0] = 0x00;
        rc = intruder_send(fd, buf, sizeof buf);
    } else if (strcmp(argv[1], "wrongkey") == 0) {
        struct csni_frame f = {
            .type = CSNI_F_HELLO, .aux = CSNI_PROTO_VERSION, .len = CSNI_KEY_BYTES, .cookie = 1};
        csni_frame_encode(&f, buf); /* the random key after the header stays */
        rc = intruder_send(fd, buf, sizeof buf);
    } else {
        static const char req[] = "KEY 0123456789abcdef0123456789abcdef\nGET 0 ep.0\n";
        rc = intruder_send(fd, req, sizeof req - 1);
    }
    if (rc != 0) {
        /* Closed before we finished: turned away all the same. */
        printf("intruder: %s: refused while sending (%s)\n", argv[1], strerror(errno));
        close(fd);
        return 0;
    }
    rc = intruder_expect_close(fd, argv[1]);
    close(fd);
    return rc;
}
