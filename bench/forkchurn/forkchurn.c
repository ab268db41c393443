/* forkchurn.c: a rank whose forked children come and go (each calls csn_open, sends one
 * message and exits), and the round trip to a new child after so many have gone: what the
 * dead ones cost the parent's polls, its descriptors and its memory. */
#include <csn.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tool.h"

static const char forkchurn_usage[] =
    "usage: forkchurn [--children N[,N...]] [--iters K]\n"
    "Run it as one rank: csnrun -np 1 forkchurn. Forks children one after another, each of\n"
    "which opens a transport, sends the parent one message and exits; after N of them (each N\n"
    "of the list, ascending) a new child makes K round trips of 8 bytes with the parent.\n"
    "Prints per N the median round trip of 5 batches (us), the parent's open descriptors\n"
    "and its resident memory (KiB). Defaults: --children 0,200,800 --iters 2000.\n";

#define FORKCHURN_MAX_N 16

static double forkchurn_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int forkchurn_fds(void)
{
    int n = -3; /* ., .. and the directory's own descriptor */
    DIR *d = opendir("/proc/self/fd");
    if (!d)
        return -1;
    while (readdir(d))
        n++;
    closedir(d);
    return n;
}

static long forkchurn_rss_kib(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kib = -1;
    if (!f)
        return -1;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "VmRSS: %ld kB", &kib) == 1)
            break;
    fclose(f);
    return kib;
}

/* The child: a transport, then one message (churn) or iters round trips (probe). */
static void forkchurn_child(csn_netid parent, long iters)
{
    csn_transport *t = NULL;
    char b[8] = "churn";
    if (csn_open(&t) != CSN_OK)
        _exit(1);
    for (long i = 0; i < (iters ? iters : 1); i++) {
        size_t got;
        csn_netid from = parent;
        if (csn_tx(t, parent, b, sizeof b) != CSN_OK ||
            (iters && csn_rx(t, &from, b, sizeof b, &got) != CSN_OK))
            _exit(1);
    }
    csn_close(&t);
    _exit(0);
}

static int forkchurn_fail(const char *what, csn_status s)
{
    fprintf(stderr, "forkchurn: %s: %s\n", what, csn_status_string(s));
    return 1;
}

/* Forks one child and takes its first message; probe: then its round trips, timed. */
static int forkchurn_one(csn_transport *t, long iters, double *us)
{
    csn_netid me = csn_netid_of(t), from = CSN_NULL_NETID;
    char b[8];
    size_t got;
    csn_status s;
    pid_t pid = fork();
    if (pid < 0) {
        perror("forkchurn: fork");
        return 1;
    }
    if (pid == 0)
        forkchurn_child(me, iters);
    /* The child's first message, or its end without one (a wait with a way out). */
    if ((s = csn_rx_nb(t, b, sizeof b, &got)) != CSN_OK)
        return forkchurn_fail("csn_rx_nb", s);
    for (;;) {
        void *buf;
        csn_status op;
        int st;
        s = csn_test(t, CSN_RX, 200000, &from, &buf, &op);
        if (s == CSN_RX_READY && op == CSN_OK)
            break;
        if (s == CSN_RX_READY)
            return forkchurn_fail("csn_rx_nb", op);
        if (s != CSN_TIMEOUT)
            return forkchurn_fail("csn_test", s);
        if (waitpid(pid, &st, WNOHANG) == pid) {
            fprintf(stderr, "forkchurn: a child ended before its first message (%s %d)\n",
                    WIFEXITED(st) ? "status" : "signal",
                    WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
            return 1;
        }
    }
    if (iters) {
        /* The first answer is the one after the batches; the last batch takes the rest. */
        double batch[5];
        long per = (iters - 1) / 5;
        for (int k = 0; k < 5; k++) {
            long n = per + (k == 4 ? (iters - 1) % 5 : 0);
            double t0 = forkchurn_now();
            for (long i = 0; i < n; i++) {
                csn_netid f = from;
                if ((s = csn_tx(t, from, b, sizeof b)) != CSN_OK ||
                    (s = csn_rx(t, &f, b, sizeof b, &got)) != CSN_OK)
                    return forkchurn_fail("round trip", s);
            }
            batch[k] = (forkchurn_now() - t0) / (double)n * 1e6;
        }
        if ((s = csn_tx(t, from, b, sizeof b)) != CSN_OK)
            return forkchurn_fail("csn_tx", s);
        for (int i = 1; i < 5; i++) /* sort for the median */
            for (int j = i; j > 0 && batch[j] < batch[j - 1]; j--) {
                double x = batch[j];
                batch[j] = batch[j - 1];
                batch[j - 1] = x;
            }
        *us = batch[2];
    }
    int st;
    if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        fprintf(stderr, "forkchurn: a child failed\n");
        return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    long ns[FORKCHURN_MAX_N] = {0, 200, 800}, iters = 2000;
    int nn = 3;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            fputs(forkchurn_usage, stdout);
            return 0;
        }
        if (strcmp(a, "--version") == 0) {
            printf("forkchurn %s\n", BENCH_VERSION);
            return 0;
        }
        if (i + 1 >= argc || (strcmp(a, "--children") != 0 && strcmp(a, "--iters") != 0)) {
            fprintf(stderr, "forkchurn: unknown argument '%s' (see --help)\n", a);
            return 2;
        }
        const char *v = argv[++i];
        char *end;
        if (strcmp(a, "--iters") == 0) {
            iters = strtol(v, &end, 10);
            if (end == v || *end || iters < 6 || iters > 100000000) {
                fprintf(stderr, "forkchurn: bad value '%s' for --iters (6 to 100000000)\n", v);
                return 2;
            }
            continue;
        }
        nn = 0;
        for (const char *p = v;; p = end + 1) {
            long x = strtol(p, &end, 10);
            if (end == p || (*end && *end != ',') || x < 0 || x > 1000000 ||
                nn == FORKCHURN_MAX_N || (nn > 0 && x < ns[nn - 1])) {
                fprintf(stderr,
                        "forkchurn: bad value '%s' for --children (at most %d ascending counts "
                        "from 0 to 1000000, comma-separated)\n",
                        v, FORKCHURN_MAX_N);
                return 2;
            }
            ns[nn++] = x;
            if (!*end)
                break;
        }
    }
    csn_transport *t = NULL;
    csn_status s;
    if ((s = csn_open(&t)) != CSN_OK)
        return forkchurn_fail("csn_open", s);
    printf("%10s %14s %6s %10s\n", "children", "round_trip_us", "fds", "rss_kib");
    long gone = 0;
    for (int k = 0; k < nn; k++) {
        for (; gone < ns[k]; gone++)
            if (forkchurn_one(t, 0, NULL) != 0)
                return 1;
        double us = 0;
        if (forkchurn_one(t, iters, &us) != 0)
            return 1;
        gone++; /* the probe has gone too */
        printf("%10ld %14.2f %6d %10ld\n", ns[k], us, forkchurn_fds(), forkchurn_rss_kib());
        fflush(stdout);
    }
    csn_close(&t);
    return 0;
}
