/* ring_stream.c: csn's shared-memory ring alone (src/transport/shm), with no matching, queue or
 * progress engine around it: pingpong's bandwidth pattern (a window of messages one way, each
 * written as one eager record and copied out into its own buffer, then an ack back) between two
 * processes on the first two CPUs it may use. It isolates the ring's policies (its size, the
 * compact part, the stall mark) from the library's noise: compare builds or settings with
 * bench/placement.sh (CONFIG NAME=ring:BUILD[,VAR=VALUE]).
 *
 * usage: ring-stream [--sizes LIST] [--samples N] [--windows N] [--window N] [--test bw]
 * CSN_SHM_RING and CSN_SHM_COMPACT set the ring and its compact part as they do for the library
 * (defaults 256K and 8K). Prints pingpong's table: per size the median and best MB/s (1e6 B/s)
 * of payload over the samples, and the windows of one sample. */
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ppcommon.h"
#include "transport/shm/shm.h"
#include "wire/frame.h"

#define RS_MAX_WINDOW 1024
#define RS_MAX_PAYLOAD (64u << 10)
#define RS_ACK 8

static const char rs_usage[] =
    "usage: ring-stream [OPTIONS]\n"
    "csn's shared-memory ring alone (no library around it): a window of messages one way,\n"
    "each one eager record copied out into its own buffer, then an ack; per size the median\n"
    "and best MB/s (1e6 B/s) of payload. CSN_SHM_RING and CSN_SHM_COMPACT set the ring\n"
    "(default 256K) and its compact part (default 8K) as for the library.\n"
    "Options:\n"
    "  --sizes LIST   comma-separated payload sizes, each at most 64K (default 8,256,1K,4K)\n"
    "  --samples N    timed batches per size (default 7)\n"
    "  --windows N    windows per batch (default 2000; a tenth of it first as warm-up)\n"
    "  --window N     messages per window (default 64, at most 1024)\n"
    "  --test bw      the one test there is (accepted for bench/placement.sh)\n"
    "  --help         this text\n";

/* A tunable as the library reads it: bytes with an optional K/M suffix. */
static int rs_env_bytes(const char *name, size_t def, size_t *out)
{
    const char *v = getenv(name);
    if (!v || !*v) {
        *out = def;
        return 0;
    }
    if (pp_parse_size(v, out) != 0) {
        fprintf(stderr, "ring-stream: %s=%s: not a size\n", name, v);
        return -1;
    }
    return 0;
}

/* The consumer's pid in the producer (0 in the consumer, which the kernel ends with its parent):
 * the producer, spinning on it, checks now and then that it is still there, so that a crash
 * ends the run instead of hanging it. */
static pid_t rs_peer;
static char rs_path[96]; /* the segment's file, unlinked once the consumer mapped it */

static void rs_check_peer(unsigned long *spins)
{
    int st;
    if (rs_peer && ++*spins % (1ul << 20) == 0 && waitpid(rs_peer, &st, WNOHANG) != 0) {
        fprintf(stderr, "ring-stream: the other process ended\n");
        unlink(rs_path);
        exit(1);
    }
}

/* Waits for one record and returns it (its frame header first, a whole one or a short one:
 * *hdr its bytes); the caller consumes *n bytes. A corrupt record ends the run. */
static const uint8_t *rs_wait(struct csni_shm *s, size_t *n, size_t *hdr)
{
    const uint8_t *at;
    unsigned long spins = 0;
    int k;
    while ((k = csni_shm_peek(s, &at, n)) == 0)
        rs_check_peer(&spins);
    *hdr = k == 2 ? CSNI_SHORT_SIZE : CSNI_FRAME_SIZE;
    if (k < 0 || *n < *hdr) {
        fprintf(stderr, "ring-stream: a corrupt record in the ring\n");
        exit(1);
    }
    return at;
}

static void rs_send(struct csni_shm *s, const void *pay, size_t len)
{
    unsigned long spins = 0;
    while (!csni_shm_write_eager(s, 1, 0, pay, len))
        rs_check_peer(&spins);
}

/* The consumer's side of n windows of size: each message copied into its own buffer, then an
 * ack. */
static void rs_consume(struct csni_shm *s, size_t size, long n, long window, uint8_t *dst)
{
    uint8_t ack[RS_ACK] = {0};
    for (long w = 0; w < n; w++) {
        for (long j = 0; j < window; j++) {
            size_t len, hdr;
            const uint8_t *at = rs_wait(s, &len, &hdr);
            memcpy(dst + (size_t)j * size, at + hdr, len - hdr);
            csni_shm_consume(s, len);
        }
        rs_send(s, ack, sizeof ack);
    }
}

/* The producer's side of n windows of size; returns the MB/s of payload. */
static double rs_produce(struct csni_shm *s, size_t size, long n, long window, const uint8_t *src)
{
    double t0 = pp_now();
    for (long w = 0; w < n; w++) {
        for (long j = 0; j < window; j++)
            rs_send(s, src, size);
        size_t len, hdr;
        rs_wait(s, &len, &hdr);
        csni_shm_consume(s, len);
    }
    return (double)n * (double)window * (double)size / (pp_now() - t0) / 1e6;
}

static int rs_bad(const char *arg)
{
    fprintf(stderr, "ring-stream: bad or missing value at '%s' (see --help)\n", arg);
    return 2;
}

int main(int argc, char **argv)
{
    struct pp_sizes sz;
    long samples = 7, windows = 2000, window = 64;
    size_t ring, compact;
    pp_parse_size_list("8,256,1K,4K", &sz);
    for (int i = 1; i < argc; i++) {
        const char *v;
        int k;
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            fputs(rs_usage, stdout);
            return 0;
        }
        if ((k = pp_opt(argc, argv, &i, "--sizes", &v)) != 0) {
            if (k < 0 || pp_parse_size_list(v, &sz) != 0)
                return rs_bad(argv[i]);
        } else if ((k = pp_opt(argc, argv, &i, "--samples", &v)) != 0) {
            if (k < 0 || pp_parse_long(v, 1, PP_MAX_SAMPLES, &samples) != 0)
                return rs_bad(argv[i]);
        } else if ((k = pp_opt(argc, argv, &i, "--windows", &v)) != 0) {
            if (k < 0 || pp_parse_long(v, 10, 100000000, &windows) != 0)
                return rs_bad(argv[i]);
        } else if ((k = pp_opt(argc, argv, &i, "--window", &v)) != 0) {
            if (k < 0 || pp_parse_long(v, 1, RS_MAX_WINDOW, &window) != 0)
                return rs_bad(argv[i]);
        } else if ((k = pp_opt(argc, argv, &i, "--test", &v)) != 0) {
            if (k < 0 || strcmp(v, "bw") != 0)
                return rs_bad(argv[i]);
        } else {
            return rs_bad(argv[i]);
        }
    }
    for (int i = 0; i < sz.n; i++)
        if (sz.v[i] > RS_MAX_PAYLOAD) {
            fprintf(stderr, "ring-stream: size %zu is above 64K (an eager record)\n", sz.v[i]);
            return 2;
        }
    if (rs_env_bytes("CSN_SHM_RING", 256u << 10, &ring) != 0 ||
        rs_env_bytes("CSN_SHM_COMPACT", 8u << 10, &compact) != 0)
        return 2;
    if (ring < 4096 || (ring & (ring - 1)) != 0) {
        fprintf(stderr, "ring-stream: CSN_SHM_RING=%zu: expected a power of two from 4096\n", ring);
        return 2;
    }
    /* A whole record (8 bytes of length, the frame header, the payload, in lines) fits at any
     * place of the ring, or after a wrap to its start, while it is at most half the ring less
     * a line: larger ones could wait for ever (the library would split them). */
    for (int i = 0; i < sz.n; i++)
        if (((8 + CSNI_FRAME_SIZE + sz.v[i] + 63) & ~(size_t)63) + 64 > ring / 2) {
            fprintf(stderr, "ring-stream: size %zu is too large for a %zu-byte ring\n", sz.v[i],
                    ring);
            return 2;
        }

    snprintf(rs_path, sizeof rs_path, "/dev/shm/csn-ring-stream.%d", (int)getpid());
    size_t maxsz = 1;
    for (int i = 0; i < sz.n; i++)
        maxsz = sz.v[i] > maxsz ? sz.v[i] : maxsz;
    uint8_t *src = pp_alloc(maxsz), *dst = pp_alloc((size_t)window * maxsz);
    double *v = calloc((size_t)samples, sizeof *v);
    struct csni_shm *me, *peer;
    if (!src || !dst || !v) {
        fprintf(stderr, "ring-stream: out of memory\n");
        return 1;
    }
    if (csni_shm_create(rs_path, ring, false, true, &me) != CSN_OK) {
        fprintf(stderr, "ring-stream: cannot create the ring %s\n", rs_path);
        return 1;
    }
    long warm = windows / 10 ? windows / 10 : 1;
    fflush(stdout);
    /* The two sides on the first two CPUs we may use, so that they never share one while a
     * second is there (none bound where there is one). */
    int cpu[2];
    bool bind = pp_two_cpus(cpu) == 0;
    pid_t pid = fork();
    if (pid < 0) {
        perror("ring-stream: fork");
        unlink(rs_path);
        return 1;
    }
    if (pid == 0) {
        if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() == 1)
            _exit(1);
        if (bind && pp_bind_cpu(cpu[1]) != 0)
            perror("ring-stream: sched_setaffinity");
        if (csni_shm_attach(rs_path, false, true, &peer) != CSN_OK) /* unlinks it */
            _exit(1);
        csni_shm_set_compact(peer, compact);
        for (int i = 0; i < sz.n; i++)
            rs_consume(peer, sz.v[i], warm + samples * windows, window, dst);
        _exit(0);
    }
    rs_peer = pid;
    if (bind && pp_bind_cpu(cpu[0]) != 0)
        perror("ring-stream: sched_setaffinity");
    csni_shm_set_compact(me, compact);
    printf("# ring-stream: ring %zu, compact %llu, window %ld, %ld windows a batch\n", ring,
           (unsigned long long)csni_shm_compact_bytes(ring, compact), window, windows);
    printf("%10s %10s %10s %9s\n", "size", "bw_med", "bw_max", "iters");
    for (int i = 0; i < sz.n; i++) {
        rs_produce(me, sz.v[i], warm, window, src);
        for (long b = 0; b < samples; b++)
            v[b] = rs_produce(me, sz.v[i], windows, window, src);
        double best = pp_max(v, (int)samples);
        printf("%10zu %10.1f %10.1f %9ld\n", sz.v[i], pp_median(v, (int)samples), best, windows);
        fflush(stdout);
    }
    int st = 0, rc = 0;
    if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        fprintf(stderr, "ring-stream: the consumer failed\n");
        rc = 1;
    }
    unlink(rs_path); /* gone already unless the consumer failed before it attached */
    csni_shm_unmap(me);
    free(v);
    pp_free(src);
    pp_free(dst);
    return rc;
}
