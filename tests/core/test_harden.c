/* test_harden.c: issue 16's multi-process regression tests, each run under csnrun:
 *   args      every argument rule of the contract inside a real job (after and before the
 *             shared-memory fast path has a connection), csn_tx(NULL, peer, "x", 1) included
 *   outsider  2000 garbage, silent and half-HELLO connections to rank 1's socket and to the
 *             name service during a checked exchange: rank 1's descriptors come back, the
 *             8 B latency afterwards is within 2x (+0.3 us) of before (the pollers walk only
 *             the ring connections: walking the strangers' left on the list, 1.0 us against
 *             0.17, a bound of 3x + 1 us let through)
 *   emfile    rank 1 at a lowered RLIMIT_NOFILE flooded beyond it: it does not spin, and it
 *             still takes in rank 2's first message once the flood stops (3 ranks)
 *   squat     files named like the old predictable segment names exist before the job: it
 *             works, and they are left as they were
 *   flood     rank 1 posts nothing while rank 0 floods 24 B messages: rank 1's peak RSS
 *             grows by at most the limit plus an allowance; then every message arrives in order
 * The outsider is a child forked before the library starts (it shares no descriptor of it). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "csn.h"
#include "wire/frame.h"
#include "../test.h"

static csn_transport *T;
static csn_netid *ids;
static int rank, size;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void setup(void)
{
    char name[32];
    rank = csn_job_rank();
    size = csn_job_size();
    CHECK(size >= 2);
    CHECK_OK(csn_open(&T));
    snprintf(name, sizeof name, "h.%d", rank);
    CHECK_OK(csn_register_name(T, name));
    ids = calloc((size_t)size, sizeof *ids);
    CHECK(ids);
    for (int r = 0; r < size; r++) {
        snprintf(name, sizeof name, "h.%d", r);
        CHECK_OK(csn_lookup_name(&ids[r], name));
    }
}

/* A small checked exchange between ranks 0 and 1 (also makes their connection). */
static void pair_exchange(size_t n, unsigned seq)
{
    uint8_t *b = malloc(n + 1);
    size_t got = 0;
    CHECK(b);
    if (rank == 0) {
        for (size_t i = 0; i < n; i++)
            b[i] = (uint8_t)(i * 7u + seq);
        CHECK_OK(csn_tx(T, ids[1], b, n));
        csn_netid from = ids[1];
        CHECK_OK(csn_rx(T, &from, b, n, &got));
        CHECK(got == n);
        for (size_t i = 0; i < n; i++)
            CHECK(b[i] == (uint8_t)(i * 7u + seq + 1));
    } else if (rank == 1) {
        csn_netid from = ids[0];
        CHECK_OK(csn_rx(T, &from, b, n, &got));
        CHECK(got == n);
        for (size_t i = 0; i < n; i++) {
            CHECK(b[i] == (uint8_t)(i * 7u + seq));
            b[i]++;
        }
        CHECK_OK(csn_tx(T, ids[0], b, n));
    }
    free(b);
}

/* ---------------------------------------------------------------- args */

static void args_round(void)
{
    csn_netid peer = ids[(rank + 1) % size], from, id;
    char buf[8] = "x";
    size_t got;
    void *p;
    csn_status st;
    csn_transport *dead, *nul = NULL;

    /* NULL transport: every call, the blocking transmit first (it crashed in d77a7e5) */
    CHECK_EQ_STATUS(csn_tx(NULL, peer, "x", 1), CSN_UNINITIALISED_TRANSPORT);
    CHECK_EQ_STATUS(csn_tx(NULL, peer, NULL, 0), CSN_UNINITIALISED_TRANSPORT);
    CHECK_EQ_STATUS(csn_tx_nb(NULL, peer, "x", 1), CSN_UNINITIALISED_TRANSPORT);
    from = peer;
    CHECK_EQ_STATUS(csn_rx(NULL, &from, buf, 1, &got), CSN_UNINITIALISED_TRANSPORT);
    CHECK_EQ_STATUS(csn_rx_nb(NULL, buf, 1, &got), CSN_UNINITIALISED_TRANSPORT);
    CHECK_EQ_STATUS(csn_rx_nb_from(NULL, peer, buf, 1, &got), CSN_UNINITIALISED_TRANSPORT);
    CHECK_EQ_STATUS(csn_test(NULL, CSN_TX | CSN_RX, 0, &id, &p, &st), CSN_UNINITIALISED_TRANSPORT);
    CHECK_EQ_STATUS(csn_register_name(NULL, "some.name"), CSN_UNINITIALISED_TRANSPORT);
    CHECK_EQ_STATUS(csn_job_barrier(NULL), CSN_UNINITIALISED_TRANSPORT);
    CHECK_EQ_STATUS(csn_close(NULL), CSN_INVALID_ARGUMENT);
    CHECK_EQ_STATUS(csn_close(&nul), CSN_UNINITIALISED_TRANSPORT);
    CHECK_EQ_STATUS(csn_open(NULL), CSN_INVALID_ARGUMENT);

    /* a closed transport (the structure is kept: a stale pointer reads as closed) */
    CHECK_OK(csn_open(&dead));
    csn_transport *keep = dead;
    CHECK_OK(csn_close(&dead));
    CHECK(dead == NULL);
    CHECK_EQ_STATUS(csn_tx(keep, peer, "x", 1), CSN_UNINITIALISED_TRANSPORT);
    CHECK_EQ_STATUS(csn_tx_nb(keep, peer, "x", 1), CSN_UNINITIALISED_TRANSPORT);
    from = CSN_NULL_NETID;
    CHECK_EQ_STATUS(csn_rx(keep, &from, buf, 1, &got), CSN_UNINITIALISED_TRANSPORT);
    CHECK_EQ_STATUS(csn_rx_nb(keep, buf, 1, &got), CSN_UNINITIALISED_TRANSPORT);
    CHECK_EQ_STATUS(csn_rx_nb_from(keep, peer, buf, 1, &got), CSN_UNINITIALISED_TRANSPORT);
    CHECK_EQ_STATUS(csn_test(keep, CSN_RX, 0, &id, &p, &st), CSN_UNINITIALISED_TRANSPORT);
    CHECK_EQ_STATUS(csn_register_name(keep, "stale.name"), CSN_UNINITIALISED_TRANSPORT);
    CHECK_EQ_STATUS(csn_job_barrier(keep), CSN_UNINITIALISED_TRANSPORT);
    CHECK_EQ_STATUS(csn_close(&keep), CSN_UNINITIALISED_TRANSPORT);

    /* NULL buffer with a length, absurd lengths */
    CHECK_EQ_STATUS(csn_tx(T, peer, NULL, 1), CSN_INVALID_ARGUMENT);
    CHECK_EQ_STATUS(csn_tx_nb(T, peer, NULL, 24), CSN_INVALID_ARGUMENT);
    CHECK_EQ_STATUS(csn_tx(T, peer, buf, SIZE_MAX), CSN_INVALID_ARGUMENT);
    CHECK_EQ_STATUS(csn_tx_nb(T, peer, buf, (size_t)1 << 62), CSN_INVALID_ARGUMENT);
    from = CSN_NULL_NETID;
    CHECK_EQ_STATUS(csn_rx(T, &from, NULL, 1, &got), CSN_INVALID_ARGUMENT);
    CHECK_EQ_STATUS(csn_rx(T, NULL, buf, 1, &got), CSN_INVALID_ARGUMENT);
    CHECK_EQ_STATUS(csn_rx_nb(T, NULL, 8, &got), CSN_INVALID_ARGUMENT);
    CHECK_EQ_STATUS(csn_rx_nb_from(T, peer, NULL, 8, &got), CSN_INVALID_ARGUMENT);
    CHECK_EQ_STATUS(csn_rx_nb(T, buf, SIZE_MAX, &got), CSN_INVALID_ARGUMENT);

    /* garbage netids: no tag, the null id, all ones, transport id 0, a peer's hidden system
     * transport, and a few thousand random words without the tag */
    const csn_netid bad[] = {CSN_NULL_NETID, 12345, ~(csn_netid)0, peer & ~(csn_netid)0xFFFFFFFFu,
                             (peer & ~(csn_netid)0xFFFFFFFFu) | 1u, peer ^ ((csn_netid)1 << 60),
                             (csn_netid)0xC4 << 56 | 5u, (peer & 0x00FFFFFFFFFFFFFFull)};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        CHECK_EQ_STATUS(csn_tx(T, bad[i], "x", 1), CSN_ILLEGAL_NETID);
        CHECK_EQ_STATUS(csn_tx_nb(T, bad[i], "x", 1), CSN_ILLEGAL_NETID);
        CHECK_EQ_STATUS(csn_tx(T, bad[i], NULL, 0), CSN_ILLEGAL_NETID);
        if (bad[i] == CSN_NULL_NETID)
            continue; /* the null id is "any" for a receive */
        from = bad[i];
        CHECK_EQ_STATUS(csn_rx(T, &from, buf, 1, &got), CSN_ILLEGAL_NETID);
        CHECK_EQ_STATUS(csn_rx_nb_from(T, bad[i], buf, 1, &got), CSN_ILLEGAL_NETID);
    }
    uint64_t x = 0x9E3779B97F4A7C15ull ^ (uint64_t)rank;
    for (int i = 0; i < 5000; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        csn_netid g = (x >> 56) == 0xC5 ? x ^ ((csn_netid)1 << 56) : x;
        CHECK_EQ_STATUS(csn_tx(T, g, buf, 1 + (size_t)(i % 8)), CSN_ILLEGAL_NETID);
        CHECK_EQ_STATUS(csn_tx_nb(T, g, buf, 1), CSN_ILLEGAL_NETID);
    }

    /* csn_test flags */
    CHECK_EQ_STATUS(csn_test(T, 0, 0, &id, &p, &st), CSN_INVALID_ARGUMENT);
    CHECK_EQ_STATUS(csn_test(T, 4, 0, &id, &p, &st), CSN_INVALID_ARGUMENT);
    CHECK_EQ_STATUS(csn_test(T, CSN_TX | 8u, 0, &id, &p, &st), CSN_INVALID_ARGUMENT);
    CHECK_EQ_STATUS(csn_test(T, ~0u, CSN_FOREVER, &id, &p, &st), CSN_INVALID_ARGUMENT);
    CHECK_EQ_STATUS(csn_test(T, CSN_TX | CSN_RX, 0, &id, &p, &st), CSN_TIMEOUT);
    CHECK_EQ_STATUS(csn_test(T, CSN_RX, 0, NULL, NULL, NULL), CSN_TIMEOUT);

    /* names: NULL, empty, control and non-ASCII bytes, over-long */
    char longname[300];
    memset(longname, 'n', sizeof longname);
    longname[256] = 0;
    const char *badnames[] = {"", "tab\there", "new\nline", "caf\xc3\xa9", "\x7f", longname};
    CHECK_EQ_STATUS(csn_register_name(T, NULL), CSN_INVALID_ARGUMENT);
    CHECK_EQ_STATUS(csn_lookup_name(NULL, "h.0"), CSN_INVALID_ARGUMENT);
    CHECK_EQ_STATUS(csn_lookup_name(&id, NULL), CSN_INVALID_ARGUMENT);
    for (size_t i = 0; i < sizeof badnames / sizeof badnames[0]; i++) {
        CHECK_EQ_STATUS(csn_register_name(T, badnames[i]), CSN_INVALID_ARGUMENT);
        CHECK_EQ_STATUS(csn_lookup_name(&id, badnames[i]), CSN_INVALID_ARGUMENT);
    }
}

static void mode_args(void)
{
    setup();
    /* before any connection, then with the pair's connection (the fast path) in place */
    args_round();
    pair_exchange(1, 1);
    pair_exchange(100000, 2);
    CHECK_OK(csn_job_barrier(T));
    args_round();
    /* the job still works, and nothing of the above reached the peer */
    pair_exchange(8, 3);
    pair_exchange(300000, 4);
    CHECK_EQ_STATUS(csn_test(T, CSN_TX | CSN_RX, 0, NULL, NULL, NULL), CSN_TIMEOUT);
    CHECK_OK(csn_job_barrier(T));
    char extra;
    size_t got;
    CHECK_OK(csn_rx_nb(T, &extra, 1, &got));
    void *bp;
    CHECK_EQ_STATUS(csn_test(T, CSN_RX, 200000, NULL, &bp, NULL), CSN_TIMEOUT);
    CHECK_OK(csn_close(&T));
    printf("rank %d: argument checks passed on %s\n", rank, csn_transport_name());
}

/* ---------------------------------------------------------------- outsiders */

static int count_fds(void)
{
    int n = 0;
    DIR *d = opendir("/proc/self/fd");
    struct dirent *e;
    CHECK(d);
    while ((e = readdir(d)) != NULL)
        if (e->d_name[0] != '.')
            n++;
    closedir(d);
    return n - 1; /* the directory's own descriptor */
}

static void raise_nofile(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        (void)setrlimit(RLIMIT_NOFILE, &rl);
    }
}

/* A non-blocking connection to a Unix socket; retries while the listen queue is full. */
static int unix_connect(const char *path, double give_up)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    if (strlen(path) >= sizeof sa.sun_path)
        return -1;
    strcpy(sa.sun_path, path);
    for (;;) {
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (fd < 0)
            return -1;
        if (connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0)
            return fd;
        int e = errno;
        close(fd);
        if ((e != EAGAIN && e != EINTR) || now_s() > give_up)
            return -1;
        usleep(500);
    }
}

static void send_some(int fd, const void *b, size_t n)
{
    ssize_t w = send(fd, b, n, MSG_NOSIGNAL | MSG_DONTWAIT);
    (void)w; /* refused or closed: turned away, all the same */
}

/* Kind k of connection: garbage, silent, half a HELLO, a HELLO header whose key never comes. */
static void attack_one(int fd, int k, uint64_t *rnd)
{
    uint8_t b[CSNI_FRAME_SIZE + CSNI_KEY_BYTES];
    for (size_t i = 0; i < sizeof b; i++) {
        *rnd = *rnd * 6364136223846793005ull + 1442695040888963407ull;
        b[i] = (uint8_t)(*rnd >> 56);
    }
    struct csni_frame f = {.type = CSNI_F_HELLO, .aux = CSNI_PROTO_VERSION, .len = CSNI_KEY_BYTES,
                           .cookie = 1};
    switch (k % 4) {
    case 0:
        b[0] = 0;
        send_some(fd, b, sizeof b);
        break;
    case 1:
        break;
    case 2:
        csni_frame_encode(&f, b);
        send_some(fd, b, CSNI_FRAME_SIZE / 2);
        break;
    default:
        csni_frame_encode(&f, b);
        send_some(fd, b, CSNI_FRAME_SIZE + CSNI_KEY_BYTES / 2);
        break;
    }
}

/* The outsider: n connections to the rank at sock (at most hold open at once, oldest closed
 * first) and m to the name service at ns. Returns the number of connections made. */
static int attack(const char *sock, int n, const char *ns, int m, int hold)
{
    int *fds = calloc((size_t)hold, sizeof *fds), made = 0, nheld = 0;
    int *nsfds = calloc((size_t)(m > 0 ? m : 1), sizeof *nsfds);
    uint64_t rnd = (uint64_t)getpid();
    double give_up = now_s() + 15;
    CHECK(fds && nsfds);
    for (int i = 0; i < n && now_s() < give_up; i++) {
        int fd = unix_connect(sock, give_up);
        if (fd < 0)
            continue;
        made++;
        attack_one(fd, i, &rnd);
        if (nheld == hold) {
            close(fds[0]);
            memmove(fds, fds + 1, (size_t)(hold - 1) * sizeof *fds);
            nheld--;
        }
        fds[nheld++] = fd;
    }
    for (int i = 0; i < m && ns; i++) {
        nsfds[i] = unix_connect(ns, give_up);
        if (nsfds[i] < 0)
            continue;
        made++;
        if (i % 3 == 0)
            send_some(nsfds[i], "GARBAGE \x01\x02\n", 11);
        else if (i % 3 == 1)
            send_some(nsfds[i], "KEY 0123", 8);
    }
    printf("outsider: %d connections made, %d held\n", made, nheld);
    fflush(stdout);
    return made; /* the connections held are closed when the process exits */
}

struct outsider {
    pid_t pid;
    int go; /* write end: one byte starts the attack */
    int done; /* read end: one byte when all connections are made, EOF at the end */
};

/* Forked before the library starts, so it holds none of its descriptors. */
static struct outsider outsider_fork(int victim, int n, int m, int hold, double hold_s)
{
    struct outsider o = {-1, -1, -1};
    int gp[2], dp[2];
    CHECK(pipe(gp) == 0 && pipe(dp) == 0);
    o.pid = fork();
    CHECK(o.pid >= 0);
    if (o.pid == 0) {
        char c, sock[512];
        close(gp[1]);
        close(dp[0]);
        raise_nofile();
        const char *dir = getenv("CSN_JOBDIR"), *ns = getenv("CSN_NS");
        if (!dir || read(gp[0], &c, 1) != 1)
            _exit(1);
        snprintf(sock, sizeof sock, "%s/p%d.sock", dir, victim);
        if (ns && strncmp(ns, "unix:", 5) == 0)
            ns += 5;
        else
            ns = NULL;
        /* tell the parent once every connection exists; hold them hold_s seconds */
        int made = attack(sock, n, ns, m, hold);
        c = made > 0 ? 'y' : 'n';
        if (write(dp[1], &c, 1) != 1)
            _exit(1);
        usleep((useconds_t)(hold_s * 1e6));
        _exit(made > 0 ? 0 : 1);
    }
    close(gp[0]);
    close(dp[1]);
    o.go = gp[1];
    o.done = dp[0];
    return o;
}

/* Wait: the connections of attack() are closed when the child exits. */
static void outsider_reap(struct outsider *o)
{
    int status;
    CHECK(waitpid(o->pid, &status, 0) == o->pid);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    close(o->go);
    close(o->done);
}

/* Half round trip of 8 B messages between ranks 0 and 1, best of 5 rounds of 2000. */
static double latency_us(void)
{
    enum { ROUNDS = 5, ITERS = 2000 };
    double best = 1e9;
    uint64_t v = 0;
    size_t got;
    for (int r = 0; r < ROUNDS; r++) {
        double t0 = now_s();
        for (int i = 0; i < ITERS; i++) {
            csn_netid from;
            if (rank == 0) {
                CHECK_OK(csn_tx(T, ids[1], &v, sizeof v));
                from = ids[1];
                CHECK_OK(csn_rx(T, &from, &v, sizeof v, &got));
            } else {
                from = ids[0];
                CHECK_OK(csn_rx(T, &from, &v, sizeof v, &got));
                v++;
                CHECK_OK(csn_tx(T, ids[0], &v, sizeof v));
            }
        }
        double us = (now_s() - t0) / ITERS / 2 * 1e6;
        if (us < best)
            best = us;
    }
    CHECK(rank != 0 || v == (uint64_t)ROUNDS * ITERS);
    return best;
}

/* Sleeps while letting the library run (nothing posted: the wait times out). */
static void nap_ms(int ms)
{
    csn_netid id;
    void *b;
    csn_status st;
    CHECK_EQ_STATUS(csn_test(T, CSN_RX, (uint64_t)ms * 1000u, &id, &b, &st), CSN_TIMEOUT);
}

static void mode_outsider(void)
{
    struct outsider o = {-1, -1, -1};
    const char *r = getenv("CSN_RANK");
    if (r && atoi(r) == 0)
        o = outsider_fork(1, 2000, 300, 600, 1.0);
    setup();
    pair_exchange(64, 1);
    double before = 1e9;
    for (int i = 0; i < 3; i++) {
        double us = latency_us();
        before = us < before ? us : before;
    }
    int fd0 = count_fds();
    CHECK_OK(csn_job_barrier(T));
    /* a checked exchange all through the attack; the first word says whether it is over */
    char c = 'g';
    if (rank == 0)
        CHECK(write(o.go, &c, 1) == 1);
    uint8_t buf[4096];
    size_t got;
    int rounds = 0, over = 0;
    double t_end = now_s() + 40;
    while (!over && now_s() < t_end) {
        size_t n = 8 + (size_t)(rounds * 37) % (sizeof buf - 8);
        if (rank == 0) {
            struct pollfd pf = {.fd = o.done, .events = POLLIN};
            if (poll(&pf, 1, 0) > 0 && read(o.done, &c, 1) == 0)
                over = 1; /* the child closed its end: every connection is closed */
            for (size_t i = 8; i < n; i++)
                buf[i] = (uint8_t)(i + (size_t)rounds);
            memcpy(buf, &over, sizeof over);
            CHECK_OK(csn_tx(T, ids[1], buf, n));
            csn_netid from = ids[1];
            CHECK_OK(csn_rx(T, &from, buf, sizeof buf, &got));
            CHECK(got == n);
        } else if (rank == 1) {
            csn_netid from = ids[0];
            CHECK_OK(csn_rx(T, &from, buf, sizeof buf, &got));
            CHECK(got == n);
            for (size_t i = 8; i < n; i++)
                CHECK(buf[i] == (uint8_t)(i + (size_t)rounds));
            memcpy(&over, buf, sizeof over);
            CHECK_OK(csn_tx(T, ids[0], buf, n));
        }
        rounds++;
    }
    CHECK(over);
    if (rank == 0)
        outsider_reap(&o);
    /* rank 1's descriptors come back near where they were (it closes what the outsider
     * left: at most the handshake deadline later) */
    int fds = count_fds();
    for (int i = 0; i < 100 && rank == 1 && fds > fd0 + 4; i++) {
        nap_ms(100);
        fds = count_fds();
    }
    CHECK_OK(csn_job_barrier(T));
    /* best of tries for up to 5 s (at least 5): on a loaded host (two ranks on one free core,
     * other tests' ranks beside them) a try can take a time slice per message, for a few tries
     * in a row (1.8 and 56 us against 0.17 with two CPU hogs beside the test, 2 runs of 6); the
     * slowdown being checked for is for good, every try shows it. Both ranks stop together:
     * each try is a ping-pong, and rank 0 says when (the bound met, or the time up). */
    double after = 1e9, t_stop = now_s() + 5;
    for (int i = 0;; i++) {
        double us = latency_us();
        after = us < after ? us : after;
        int stop = i >= 4 && (after <= 2 * before + 0.3 || now_s() > t_stop);
        if (rank == 0) {
            CHECK_OK(csn_tx(T, ids[1], &stop, sizeof stop));
        } else if (rank == 1) {
            csn_netid from = ids[0];
            size_t got;
            CHECK_OK(csn_rx(T, &from, &stop, sizeof stop, &got));
            CHECK(got == sizeof stop);
        }
        if (stop || rank > 1)
            break;
    }
    printf("rank %d: %d checked round trips during the attack; descriptors %d before, %d "
           "after; 8 B latency %.2f us before, %.2f us after\n",
           rank, rounds, fd0, fds, before, after);
    fflush(stdout);
    CHECK(rank != 1 || fds <= fd0 + 4);
    CHECK(after <= 2 * before + 0.3);
    CHECK_OK(csn_job_barrier(T));
    CHECK_OK(csn_close(&T));
}

/* ---------------------------------------------------------------- EMFILE */

static double cpu_s(void)
{
    struct rusage ru;
    CHECK(getrusage(RUSAGE_SELF, &ru) == 0);
    return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
           ru.ru_stime.tv_usec / 1e6;
}

static void mode_emfile(void)
{
    struct outsider o = {-1, -1, -1};
    const char *r = getenv("CSN_RANK");
    const double hold = 3.0;
    if (r && atoi(r) == 0)
        o = outsider_fork(1, 100, 0, 100, hold);
    setup();
    CHECK(size == 3);
    pair_exchange(64, 1); /* ranks 0 and 1 are connected; 2 has not met 1 yet */
    char c = 'g';
    uint64_t v = 0;
    size_t got;
    if (rank == 1) {
        struct rlimit rl;
        CHECK(getrlimit(RLIMIT_NOFILE, &rl) == 0);
        rl.rlim_cur = (rlim_t)count_fds() + 24;
        CHECK(setrlimit(RLIMIT_NOFILE, &rl) == 0);
        CHECK_OK(csn_tx(T, ids[0], &v, sizeof v)); /* ready */
        double c0 = cpu_s(), t0 = now_s();
        csn_netid from = ids[2];
        CHECK_OK(csn_rx(T, &from, &v, sizeof v, &got));
        double cpu = cpu_s() - c0, wall = now_s() - t0;
        printf("rank 1: limit %ld descriptors, flooded: %.2f s CPU in %.2f s until rank 2's "
               "message\n",
               (long)rl.rlim_cur, cpu, wall);
        fflush(stdout);
        CHECK(v == 42);
        CHECK(wall >= hold * 0.5);
        CHECK(cpu < 0.25 * wall);
    } else if (rank == 0) {
        csn_netid from = ids[1];
        CHECK_OK(csn_rx(T, &from, &v, sizeof v, &got));
        CHECK(write(o.go, &c, 1) == 1);
        CHECK(read(o.done, &c, 1) == 1 && c == 'y'); /* every connection made and held */
        CHECK_OK(csn_tx(T, ids[2], &v, sizeof v)); /* rank 2: now */
        outsider_reap(&o);
    } else {
        csn_netid from = ids[0];
        CHECK_OK(csn_rx(T, &from, &v, sizeof v, &got));
        v = 42;
        CHECK_OK(csn_tx(T, ids[1], &v, sizeof v));
    }
    CHECK_OK(csn_job_barrier(T));
    CHECK_OK(csn_close(&T));
}

/* ---------------------------------------------------------------- squatted names */

enum { SQ_LANES = 4 };

static void mode_squat(void)
{
    const char *jobid = getenv("CSN_JOBID"), *r = getenv("CSN_RANK"), *s = getenv("CSN_SIZE");
    char path[SQ_LANES * 8][256];
    struct stat st0[SQ_LANES * 8];
    int made[SQ_LANES * 8] = {0}, n = 0;
    CHECK(jobid && r && s);
    int me = atoi(r), np = atoi(s);
    CHECK(np >= 2 && np <= 8);
    /* names another local user could have guessed in d77a7e5: csn.<jobid>.<from>.<to>.<lane>,
     * made before the library starts; a segment this rank would create starts with its rank */
    for (int to = 0; to < np; to++) {
        if (to == me)
            continue;
        for (int lane = 0; lane < SQ_LANES; lane++, n++) {
            snprintf(path[n], sizeof path[n], "/dev/shm/csn.%s.%d.%d.%d", jobid, me, to, lane);
            int fd = open(path[n], O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644);
            if (fd < 0)
                continue;
            made[n] = 1;
            CHECK(write(fd, "squatter", 8) == 8);
            CHECK(fstat(fd, &st0[n]) == 0);
            close(fd);
        }
    }
    setup();
    static const size_t sizes[] = {0, 8, 4000, 100000, 3u << 20};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++)
        pair_exchange(sizes[k], (unsigned)k);
    CHECK_OK(csn_job_barrier(T));
    /* every file we made is still there, the same file with the same bytes */
    for (int i = 0; i < n; i++) {
        if (!made[i])
            continue;
        struct stat st;
        char b[16] = {0};
        int fd = open(path[i], O_RDONLY | O_CLOEXEC);
        CHECK(fd >= 0);
        CHECK(fstat(fd, &st) == 0 && st.st_ino == st0[i].st_ino && st.st_size == 8);
        CHECK(read(fd, b, sizeof b) == 8 && memcmp(b, "squatter", 8) == 0);
        close(fd);
        CHECK(unlink(path[i]) == 0);
    }
    CHECK_OK(csn_close(&T));
    printf("rank %d: job worked beside %d squatted names, all left as they were\n", me, n);
}

/* ---------------------------------------------------------------- small-message flood */

static long status_kib(const char *field)
{
    char line[256];
    long v = -1;
    size_t fl = strlen(field);
    FILE *f = fopen("/proc/self/status", "r");
    CHECK(f);
    while (fgets(line, sizeof line, f))
        if (strncmp(line, field, fl) == 0 && line[fl] == ':')
            v = atol(line + fl + 1);
    fclose(f);
    CHECK(v >= 0);
    return v;
}

static void mode_flood(long n)
{
    enum { LEN = 24 };
    setup();
    CHECK(size == 2 && n > 0);
    const char *lim = getenv("CSN_UNEXPECTED_LIMIT");
    CHECK(lim);
    long limit_kib = atol(lim) / 1024;
    long base = 0;
    pair_exchange(LEN, 1);
    if (rank == 1)
        base = status_kib("VmRSS");
    CHECK_OK(csn_job_barrier(T));
    if (rank == 0) {
        uint8_t *b = malloc((size_t)n * LEN);
        CHECK(b);
        long done = 0;
        csn_netid id;
        void *bp;
        csn_status st, rv;
        for (long i = 0; i < n; i++) {
            memset(b + i * LEN, (int)(i & 0xFF), LEN);
            memcpy(b + i * LEN, &i, sizeof i);
            /* at the cap on outstanding operations (CSN_MAX_OPS), wait for one to finish */
            while ((rv = csn_tx_nb(T, ids[1], b + i * LEN, LEN)) == CSN_BUSY) {
                CHECK_EQ_STATUS(csn_test(T, CSN_TX, CSN_FOREVER, &id, &bp, &st), CSN_TX_READY);
                CHECK_OK(st);
                done++;
            }
            CHECK_OK(rv);
        }
        for (; done < n; done++) {
            CHECK_EQ_STATUS(csn_test(T, CSN_TX, CSN_FOREVER, &id, &bp, &st), CSN_TX_READY);
            CHECK_OK(st);
        }
        free(b);
    } else {
        /* post nothing until the store stops growing */
        long last = -1;
        int still = 0;
        double t_end = now_s() + 15;
        while (still < 6 && now_s() < t_end) {
            nap_ms(100);
            long rss = status_kib("VmRSS");
            still = (labs(rss - last) < 64) ? still + 1 : 0;
            last = rss;
        }
        long peak = status_kib("VmHWM"), growth = peak - base;
        /* the limit plus what a job of two holds anyway (rings, buffers: ~6.5 MiB measured) */
        long allow = limit_kib + 8 * 1024;
        printf("rank 1: %ld messages of %d B unexpected: RSS %ld KiB at the start, peak %ld "
               "KiB (+%ld KiB, limit %ld KiB, allowed +%ld KiB)\n",
               n, LEN, base, peak, growth, limit_kib, allow);
        fflush(stdout);
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
        printf("rank 1: (a sanitizer's allocator: the bound is not checked)\n");
#else
        CHECK(growth <= allow);
#endif
        uint8_t m[64];
        for (long i = 0; i < n; i++) {
            size_t got;
            csn_netid from = ids[0];
            long seq;
            CHECK_OK(csn_rx(T, &from, m, sizeof m, &got));
            CHECK(got == LEN);
            memcpy(&seq, m, sizeof seq);
            CHECK(seq == i);
            for (size_t k = sizeof seq; k < LEN; k++)
                CHECK(m[k] == (uint8_t)(i & 0xFF));
        }
    }
    CHECK_OK(csn_job_barrier(T));
    CHECK_OK(csn_close(&T));
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: test_harden args|outsider|emfile|squat|flood [N]\n");
        return 2;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (strcmp(argv[1], "args") == 0)
        mode_args();
    else if (strcmp(argv[1], "outsider") == 0)
        mode_outsider();
    else if (strcmp(argv[1], "emfile") == 0)
        mode_emfile();
    else if (strcmp(argv[1], "latency") == 0) { /* not a test: 8 B latency, three times */
        setup();
        pair_exchange(64, 1);
        for (int i = 0; i < 3; i++) {
            double us = latency_us();
            if (rank == 0)
                printf("8 B latency %.2f us\n", us);
            if (i == 1)
                CHECK_OK(csn_job_barrier(T));
        }
        CHECK_OK(csn_close(&T));
    } else if (strcmp(argv[1], "squat") == 0)
        mode_squat();
    else if (strcmp(argv[1], "flood") == 0)
        mode_flood(argc > 2 ? atol(argv[2]) : 200000);
    else {
        fprintf(stderr, "test_harden: unknown mode '%s'\n", argv[1]);
        return 2;
    }
    return 0;
}
