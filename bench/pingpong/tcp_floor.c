/* tcp_floor.c: what the kernel's loopback TCP delivers to two processes, one way and both ways,
 * over one connection (as csn carries a pair's traffic) or two (one per direction, as iperf3
 * --bidir does): no library in between. Each process is one thread that polls its sockets and
 * sends and receives SIZE-byte blocks without blocking (as csn's progress engine does), for
 * SECONDS. Prints MB/s (1e6 B/s) received in all, median of ROUNDS alternating rounds, per size.
 *
 * With --netns LNS CNS ADDR the pair crosses two network namespaces instead (root): the
 * listening end in LNS, bound to ADDR (one of LNS's addresses), the connecting end in CNS; each
 * socket keeps its namespace after the process returns to its own (bench/tcp-vs-mpi.sh's netns
 * part: the floor of the veth path, one connection both ways against iperf3 --bidir's two).
 *
 * What the kernel offers beyond that, to see whether it pays on the path (issue 21): --sockbuf
 * SIZE fixes every socket's send and receive buffer (SO_SNDBUF, SO_RCVBUF, set before the
 * connection so that the window scale fits; the kernel's autotuning is then off); --zerocopy
 * sends with MSG_ZEROCOPY (SO_ZEROCOPY), reaping the kernel's completion notices from the
 * socket's error queue as it goes (the block is never changed, so none is waited for).
 *
 * --latency: the half round trip of a SIZE-byte ping-pong instead (microseconds), each process
 * spinning on a non-blocking recv until the whole message is in and answering with one send:
 * one system call per message each way and no wait in the kernel, the least a library that
 * polls its socket can do (issue 21: csn's and Open MPI's small-message latency against it).
 *
 * usage: tcp-floor [--netns LNS CNS ADDR] [--sockbuf SIZE] [--zerocopy] [--latency]
 *                  [ROUNDS [SECONDS [SIZE...]]]   (default loopback, 3 rounds of 1 s; 64K 1M 4M;
 *                  with --latency 8 1K 64K) */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/errqueue.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ppcommon.h"

#define FLOOR_MAX_SIZES 16
#define FLOOR_MAX_ROUNDS 15

enum floor_mode { FLOOR_ONE, FLOOR_BOTH_ONE_CONN, FLOOR_BOTH_TWO_CONNS, FLOOR_MODES };
static const char *const floor_mode_names[FLOOR_MODES] = {"one way", "both ways, 1 conn",
                                                          "both ways, 2 conns"};

static void floor_die(const char *what)
{
    fprintf(stderr, "tcp-floor: %s: %s\n", what, strerror(errno));
    exit(1);
}

/* Where the pair's ends live: -1 for this process's own namespace (loopback), else open
 * descriptors of the listening and the connecting end's namespaces (--netns) and our own. */
static int floor_ns_listen = -1, floor_ns_connect = -1, floor_ns_home = -1;
static struct in_addr floor_addr = {.s_addr = 0};
static int floor_sockbuf;   /* --sockbuf: bytes, 0 for the kernel's autotuning */
static bool floor_zerocopy; /* --zerocopy */

#ifndef SO_ZEROCOPY
#define SO_ZEROCOPY 60
#endif
#ifndef MSG_ZEROCOPY
#define MSG_ZEROCOPY 0x4000000
#endif

/* The options of a socket before it connects or listens. */
static void floor_options(int s)
{
    int one = 1;
    if (floor_sockbuf &&
        (setsockopt(s, SOL_SOCKET, SO_SNDBUF, &floor_sockbuf, sizeof floor_sockbuf) != 0 ||
         setsockopt(s, SOL_SOCKET, SO_RCVBUF, &floor_sockbuf, sizeof floor_sockbuf) != 0))
        floor_die("--sockbuf: setsockopt");
    if (floor_zerocopy && setsockopt(s, SOL_SOCKET, SO_ZEROCOPY, &one, sizeof one) != 0)
        floor_die("--zerocopy: setsockopt SO_ZEROCOPY");
}

/* MSG_ZEROCOPY sends the kernel reported done, and how many of them it copied anyway (as it
 * does where the data stays in the machine): this process's own count. */
static unsigned long long floor_zc_sent, floor_zc_copied;

/* Takes the kernel's MSG_ZEROCOPY completion notices off s's error queue (they hold socket
 * memory until read) and counts them: how many notices were read. */
static int floor_reap(int s)
{
    char ctl[256];
    int n = 0;
    for (;;) {
        struct msghdr m = {.msg_control = ctl, .msg_controllen = sizeof ctl};
        if (recvmsg(s, &m, MSG_ERRQUEUE | MSG_DONTWAIT) < 0) {
            if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
                floor_die("recvmsg MSG_ERRQUEUE");
            return n;
        }
        n++;
        for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c)) {
            struct sock_extended_err e;
            if (c->cmsg_len < CMSG_LEN(sizeof e))
                continue;
            memcpy(&e, CMSG_DATA(c), sizeof e);
            if (e.ee_origin != SO_EE_ORIGIN_ZEROCOPY)
                continue;
            unsigned long long k = (unsigned long long)(e.ee_data - e.ee_info) + 1;
            floor_zc_sent += k;
            if (e.ee_code & SO_EE_CODE_ZEROCOPY_COPIED)
                floor_zc_copied += k;
        }
    }
}

static void floor_enter(int nsfd)
{
    if (nsfd >= 0 && setns(nsfd, CLONE_NEWNET) != 0)
        floor_die("setns");
}

static int floor_open_ns(const char *name)
{
    char path[4096];
    snprintf(path, sizeof path, strchr(name, '/') ? "%s" : "/run/netns/%s", name);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        fprintf(stderr, "tcp-floor: --netns: %s: %s\n", path, strerror(errno));
        exit(2);
    }
    return fd;
}

/* A connected pair of TCP sockets: *a the connecting end, *b the accepted one. */
static void floor_pair(int *a, int *b)
{
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr = floor_addr};
    socklen_t sl = sizeof sa;
    floor_enter(floor_ns_listen);
    int l = socket(AF_INET, SOCK_STREAM, 0);
    if (l >= 0)
        floor_options(l);
    if (l < 0 || bind(l, (struct sockaddr *)&sa, sizeof sa) != 0 || listen(l, 1) != 0 ||
        getsockname(l, (struct sockaddr *)&sa, &sl) != 0)
        floor_die("listen");
    floor_enter(floor_ns_connect);
    *a = socket(AF_INET, SOCK_STREAM, 0);
    if (*a >= 0)
        floor_options(*a);
    if (*a < 0 || connect(*a, (struct sockaddr *)&sa, sizeof sa) != 0)
        floor_die("connect");
    floor_enter(floor_ns_home);
    if ((*b = accept(l, NULL, NULL)) < 0)
        floor_die("accept");
    close(l);
}

/* One side's run: sends on tx (-1: none) and receives on rx (-1: none) for secs; returns the
 * bytes received. tx and rx may be the same socket. */
static unsigned long long floor_side(int tx, int rx, size_t size, double secs, char *sbuf,
                                     char *rbuf)
{
    unsigned long long got = 0;
    size_t off = 0;
    double end = pp_now() + secs;
    bool idle = false;
    while (pp_now() < end) {
        if (idle) { /* nothing moved in the last turn: wait for the sockets */
            struct pollfd pf[2];
            int n = 0;
            if (tx >= 0)
                pf[n++] = (struct pollfd){.fd = tx, .events = POLLOUT | (tx == rx ? POLLIN : 0)};
            if (rx >= 0 && rx != tx)
                pf[n++] = (struct pollfd){.fd = rx, .events = POLLIN};
            if (poll(pf, (nfds_t)n, 10) < 0 && errno != EINTR)
                floor_die("poll");
        }
        idle = true;
        for (ssize_t w = 1; tx >= 0 && w > 0;) {
            w = send(tx, sbuf + off, size - off,
                     MSG_DONTWAIT | MSG_NOSIGNAL | (floor_zerocopy ? MSG_ZEROCOPY : 0));
            if (w > 0) {
                off = (off + (size_t)w) % size;
                idle = false;
            } else if (w < 0 && errno == ENOBUFS && floor_zerocopy) {
                w = floor_reap(tx); /* the notices fill the socket's option memory */
            } /* else the socket is full, or the other process has ended its run */
        }
        if (floor_zerocopy && tx >= 0 && floor_reap(tx) > 0)
            idle = false;
        for (ssize_t r = 1; rx >= 0 && r > 0;) {
            r = recv(rx, rbuf, size, MSG_DONTWAIT);
            if (r > 0) {
                got += (unsigned long long)r;
                idle = false;
            }
        }
    }
    return got;
}

/* One run of mode at size: MB/s received by both processes together. */
static double floor_run(enum floor_mode mode, size_t size, double secs, char *sbuf, char *rbuf)
{
    int s1a, s1b, s2a = -1, s2b = -1, res[2], go[2];
    floor_pair(&s1a, &s1b);
    if (mode == FLOOR_BOTH_TWO_CONNS)
        floor_pair(&s2a, &s2b);
    if (pipe(res) != 0 || pipe(go) != 0)
        floor_die("pipe");
    pid_t pid = fork();
    if (pid < 0)
        floor_die("fork");
    char c;
    if (pid == 0) { /* B: receives on s1; sends on s1 or s2 */
        close(s1a);
        if (s2a >= 0)
            close(s2a);
        if (read(go[0], &c, 1) != 1)
            _exit(1);
        int tx = mode == FLOOR_ONE ? -1 : mode == FLOOR_BOTH_ONE_CONN ? s1b : s2b;
        unsigned long long got = floor_side(tx, s1b, size, secs, sbuf, rbuf);
        _exit(write(res[1], &got, sizeof got) == sizeof got ? 0 : 1);
    }
    close(s1b);
    if (s2b >= 0)
        close(s2b);
    if (write(go[1], "g", 1) != 1)
        floor_die("write");
    int rx = mode == FLOOR_ONE ? -1 : mode == FLOOR_BOTH_ONE_CONN ? s1a : s2a;
    unsigned long long mine = floor_side(s1a, rx, size, secs, sbuf, rbuf), theirs = 0;
    if (read(res[0], &theirs, sizeof theirs) != sizeof theirs)
        floor_die("the other process's count");
    close(s1a);
    if (s2a >= 0)
        close(s2a);
    int st;
    waitpid(pid, &st, 0);
    close(res[0]);
    close(res[1]);
    close(go[0]);
    close(go[1]);
    return (double)(mine + theirs) / secs / 1e6;
}

/* Receives exactly n bytes, spinning on a non-blocking recv: false when the peer closed. */
static bool floor_recv_all(int s, char *buf, size_t n)
{
    for (size_t got = 0; got < n;) {
        ssize_t r = recv(s, buf + got, n - got, MSG_DONTWAIT);
        if (r > 0)
            got += (size_t)r;
        else if (r == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR))
            return false;
    }
    return true;
}

static void floor_send_all(int s, const char *buf, size_t n)
{
    for (size_t put = 0; put < n;) {
        ssize_t w = send(s, buf + put, n - put, MSG_NOSIGNAL);
        if (w > 0)
            put += (size_t)w;
        else if (w < 0 && errno != EINTR)
            floor_die("send");
    }
}

/* One --latency run at size: the half round trip in microseconds over secs of ping-pong. */
static double floor_latency(size_t size, double secs, char *sbuf, char *rbuf)
{
    int a, b, one = 1;
    floor_pair(&a, &b);
    if (setsockopt(a, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) != 0 ||
        setsockopt(b, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) != 0)
        floor_die("setsockopt TCP_NODELAY");
    pid_t pid = fork();
    if (pid < 0)
        floor_die("fork");
    if (pid == 0) { /* the echo: answers every message until the other side closes */
        close(a);
        while (floor_recv_all(b, rbuf, size))
            floor_send_all(b, sbuf, size);
        _exit(0);
    }
    close(b);
    for (int i = 0; i < 100; i++) { /* warm-up */
        floor_send_all(a, sbuf, size);
        if (!floor_recv_all(a, rbuf, size))
            floor_die("the echo ended");
    }
    long n = 0;
    double t0 = pp_now(), t = t0;
    while (t - t0 < secs) {
        for (int i = 0; i < 64; i++, n++) {
            floor_send_all(a, sbuf, size);
            if (!floor_recv_all(a, rbuf, size))
                floor_die("the echo ended");
        }
        t = pp_now();
    }
    close(a);
    int st;
    waitpid(pid, &st, 0);
    return (t - t0) / (2.0 * (double)n) * 1e6;
}

int main(int argc, char **argv)
{
    size_t sizes[FLOOR_MAX_SIZES] = {65536, 1 << 20, 4 << 20};
    int nsizes = 3;
    long rounds = 3;
    char where[160] = "loopback TCP";
    bool latency = false;
    floor_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (argc > 1 && strcmp(argv[1], "--help") == 0) {
        printf("usage: tcp-floor [--netns LNS CNS ADDR] [--sockbuf SIZE] [--zerocopy] [--latency]\n"
               "                 [ROUNDS [SECONDS [SIZE...]]]\n"
               "  (default loopback, 3 rounds of 1 s; 64K 1M 4M); --netns: the listening end in\n"
               "  namespace LNS bound to its address ADDR, the connecting end in CNS (root);\n"
               "  --sockbuf: every socket's SO_SNDBUF and SO_RCVBUF (autotuning off);\n"
               "  --zerocopy: sends with MSG_ZEROCOPY;\n"
               "  --latency: half round trip (us) of a ping-pong spinning on recv (default\n"
               "  sizes 8 1K 64K) instead of bandwidth\n");
        return 0;
    }
    if (argc > 1 && strcmp(argv[1], "--netns") == 0) {
        if (argc < 5 || inet_pton(AF_INET, argv[4], &floor_addr) != 1) {
            fprintf(stderr, "tcp-floor: --netns needs LNS CNS ADDR (an IPv4 address of LNS)\n");
            return 2;
        }
        floor_ns_listen = floor_open_ns(argv[2]);
        floor_ns_connect = floor_open_ns(argv[3]);
        floor_ns_home = floor_open_ns("/proc/self/ns/net");
        snprintf(where, sizeof where, "TCP from namespace %.60s to %.60s", argv[3], argv[2]);
        argv += 4;
        argc -= 4;
    }
    for (;;) {
        if (argc > 2 && strcmp(argv[1], "--sockbuf") == 0) {
            size_t v;
            if (pp_parse_size(argv[2], &v) != 0 || v < 4096 || v > (1u << 30)) {
                fprintf(stderr, "tcp-floor: --sockbuf: bad size '%s' (4K to 1G)\n", argv[2]);
                return 2;
            }
            floor_sockbuf = (int)v;
            argv += 2;
            argc -= 2;
        } else if (argc > 1 && strcmp(argv[1], "--zerocopy") == 0) {
            floor_zerocopy = true;
            argv++;
            argc--;
        } else if (argc > 1 && strcmp(argv[1], "--latency") == 0) {
            latency = true;
            argv++;
            argc--;
        } else {
            break;
        }
    }
    if (argc > 1 && argv[1][0] == '-') {
        fprintf(stderr, "tcp-floor: unknown option '%s' (see --help)\n", argv[1]);
        return 2;
    }
    if (latency && floor_zerocopy) {
        fprintf(stderr, "tcp-floor: --zerocopy is for the bandwidth runs, not --latency\n");
        return 2;
    }
    double secs = argc > 2 ? strtod(argv[2], NULL) : 1.0;
    if ((argc > 1 && pp_parse_long(argv[1], 1, FLOOR_MAX_ROUNDS, &rounds) != 0) ||
        !(secs > 0 && secs <= 60)) {
        fprintf(stderr, "tcp-floor: ROUNDS from 1 to %d, SECONDS above 0 and at most 60\n",
                FLOOR_MAX_ROUNDS);
        return 2;
    }
    if (latency) {
        sizes[0] = 8;
        sizes[1] = 1024;
        sizes[2] = 65536;
    }
    if (argc > 3) {
        nsizes = 0;
        for (int i = 3; i < argc && nsizes < FLOOR_MAX_SIZES; i++) {
            size_t v;
            if (pp_parse_size(argv[i], &v) != 0 || v == 0 || v > (1u << 30)) {
                fprintf(stderr, "tcp-floor: bad size '%s' (1 to 1G)\n", argv[i]);
                return 2;
            }
            sizes[nsizes++] = v;
        }
    }
    size_t max = 0;
    for (int i = 0; i < nsizes; i++)
        max = sizes[i] > max ? sizes[i] : max;
    char *sbuf = malloc(max), *rbuf = malloc(max);
    if (!sbuf || !rbuf)
        floor_die("malloc");
    memset(sbuf, 0x5a, max);
    signal(SIGPIPE, SIG_IGN);
    char opts[96] = "";
    if (floor_sockbuf)
        snprintf(opts, sizeof opts, ", SO_SNDBUF/SO_RCVBUF %d", floor_sockbuf);
    if (floor_zerocopy)
        snprintf(opts + strlen(opts), sizeof opts - strlen(opts), ", MSG_ZEROCOPY");
    if (latency) {
        printf("# tcp-floor --latency: %s%s, ping-pong, each process spinning on recv, %ld rounds "
               "of %.1f s; half round trip (us), median (min-max)\n",
               where, opts, rounds, secs);
        printf("%10s | %26s\n", "size", "half round trip");
        for (int i = 0; i < nsizes; i++) {
            double v[FLOOR_MAX_ROUNDS];
            for (long r = 0; r < rounds; r++)
                v[r] = floor_latency(sizes[i], secs, sbuf, rbuf);
            printf("%10zu | %8.2f (%7.2f-%7.2f)\n", sizes[i], pp_median(v, (int)rounds),
                   pp_min(v, (int)rounds), pp_max(v, (int)rounds));
            fflush(stdout);
        }
        free(sbuf);
        free(rbuf);
        return 0;
    }
    printf("# tcp-floor: %s%s, one thread per process polling its sockets, %ld rounds of "
           "%.1f s; MB/s (1e6 B/s) received in all, median (min-max)\n",
           where, opts, rounds, secs);
    printf("%10s", "size");
    for (int m = 0; m < FLOOR_MODES; m++)
        printf(" | %26s", floor_mode_names[m]);
    printf(" | 2 conns/1 conn\n");
    for (int i = 0; i < nsizes; i++) {
        double v[FLOOR_MODES][FLOOR_MAX_ROUNDS], med[FLOOR_MODES];
        for (long r = 0; r < rounds; r++)
            for (int m = 0; m < FLOOR_MODES; m++) {
                int mode = r % 2 ? FLOOR_MODES - 1 - m : m; /* the order flips every round */
                v[mode][r] = floor_run((enum floor_mode)mode, sizes[i], secs, sbuf, rbuf);
            }
        printf("%10zu", sizes[i]);
        for (int m = 0; m < FLOOR_MODES; m++) {
            double lo = pp_min(v[m], (int)rounds), hi = pp_max(v[m], (int)rounds);
            med[m] = pp_median(v[m], (int)rounds);
            printf(" | %8.0f (%7.0f-%7.0f)", med[m], lo, hi);
        }
        printf(" | %14.2f\n", med[FLOOR_BOTH_TWO_CONNS] / med[FLOOR_BOTH_ONE_CONN]);
        fflush(stdout);
    }
    if (floor_zerocopy)
        printf("# MSG_ZEROCOPY: the kernel reported %llu sends of one process done, %llu of them "
               "copied anyway\n",
               floor_zc_sent, floor_zc_copied);
    free(sbuf);
    free(rbuf);
    return 0;
}
