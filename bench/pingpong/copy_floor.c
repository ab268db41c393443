/* copy_floor.c: the floor of a shared-memory ping-pong of SIZE bytes for a layer that passes the
 * payload through memory of its own, no library in between. The sender copies the payload into a
 * slot of shared memory and writes the slot's 8-byte header word last (release); the receiver
 * polls that word, copies the payload out into its own buffer and answers the same way. Two
 * copies per message and the cache lines they move between the CPUs: what an eager message costs
 * any library that sends it so (csn's rings, Open MPI's fast boxes), with none of a library's
 * matching or bookkeeping. Two slot layouts, alternated within every sample:
 *   fixed  one slot per direction, reused by every message (as a few fast boxes are);
 *   ring   each message after the last in a ring per direction (--ring bytes, default 256 KiB,
 *          csn's CSN_SHM_RING), line-aligned, starting over at its end.
 * The payload follows the header word; from 512 bytes on it starts on the next cache line (as
 * csn places it). Each process copies from and into a page-aligned buffer of its own. */
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ppcommon.h"

#define CF_LINE 64u
#define CF_PAD_MIN 512u          /* from this size on the payload starts on its own line */
#define CF_MAX ((size_t)1 << 20) /* the largest size (an eager message is far smaller) */
#define CF_MODES 2
#define CF_STOP UINT64_MAX

/* The batch A asks of B: written before go (release), read after it (acquire). */
struct cf_ctl {
    _Alignas(64) _Atomic uint64_t go; /* batch number, or CF_STOP */
    size_t size;
    int mode;
    long iters;
    uint64_t base; /* the message counter before the batch: headers never repeat */
    _Alignas(64) _Atomic int ready;
};

struct cf_run {
    struct cf_ctl *ctl;
    uint8_t *box[2]; /* [0] A to B, [1] B to A: ring bytes each */
    size_t ring;
    uint8_t *sbuf, *rbuf;
    pid_t child; /* A's: B, checked while A waits */
};

static size_t cf_payload_off(size_t n)
{
    return n >= CF_PAD_MIN ? CF_LINE : 8;
}

static size_t cf_rec_bytes(size_t n)
{
    return (cf_payload_off(n) + n + CF_LINE - 1) & ~(size_t)(CF_LINE - 1);
}

/* Waits until the header word at hdr reads want. A: every million turns, whether B still
 * lives (-1 when not). */
static int cf_wait(const struct cf_run *r, _Atomic uint64_t *hdr, uint64_t want)
{
    for (unsigned long spin = 1; atomic_load_explicit(hdr, memory_order_acquire) != want; spin++)
        if (r->child > 0 && spin % (1ul << 20) == 0 && waitpid(r->child, NULL, WNOHANG) != 0)
            return -1;
    return 0;
}

/* One batch from one side: A (side 0) sends first, B answers. Returns 0 or -1 (B gone). */
static int cf_batch(const struct cf_run *r, int side, size_t n, int mode, long iters, uint64_t base)
{
    size_t rec = cf_rec_bytes(n), off = 0, poff = cf_payload_off(n);
    uint8_t *out = r->box[side], *in = r->box[!side];
    for (long k = 1; k <= iters; k++) {
        uint64_t ctr = base + (uint64_t)k;
        if (side == 1) {
            if (cf_wait(r, (_Atomic uint64_t *)(void *)(in + off), ctr) != 0)
                return -1;
            memcpy(r->rbuf, in + off + poff, n);
        }
        memcpy(out + off + poff, r->sbuf, n);
        atomic_store_explicit((_Atomic uint64_t *)(void *)(out + off), ctr, memory_order_release);
        if (side == 0) {
            if (cf_wait(r, (_Atomic uint64_t *)(void *)(in + off), ctr) != 0)
                return -1;
            memcpy(r->rbuf, in + off + poff, n);
        }
        if (mode == 1 && (off += rec) + rec > r->ring)
            off = 0;
    }
    return 0;
}

/* B: the batches A asks for, until CF_STOP. */
static void cf_child(const struct cf_run *r)
{
    atomic_store(&r->ctl->ready, 1);
    for (uint64_t b = 1;; b++) {
        uint64_t g;
        while ((g = atomic_load_explicit(&r->ctl->go, memory_order_acquire)) != b && g != CF_STOP)
            ;
        if (g == CF_STOP)
            _exit(0);
        (void)cf_batch(r, 1, r->ctl->size, r->ctl->mode, r->ctl->iters, r->ctl->base);
    }
}

/* A: one batch of iters round trips; its half round trip in us, or -1 (B gone). */
static double cf_timed(struct cf_run *r, uint64_t *batch, uint64_t *base, size_t n, int mode,
                       long iters)
{
    r->ctl->size = n;
    r->ctl->mode = mode;
    r->ctl->iters = iters;
    r->ctl->base = *base;
    atomic_store_explicit(&r->ctl->go, ++*batch, memory_order_release);
    double t0 = pp_now();
    int rc = cf_batch(r, 0, n, mode, iters, *base);
    double t = pp_now() - t0;
    *base += (uint64_t)iters;
    return rc != 0 ? -1 : t / (double)iters / 2 * 1e6;
}

static void cf_usage(FILE *f)
{
    fprintf(
        f, "usage: copy-floor [OPTIONS]\n"
           "The floor of a shared-memory ping-pong of SIZE bytes through memory of a layer's own,\n"
           "no library: the sender copies the payload into a shared slot and writes its header\n"
           "word last, the receiver polls it and copies the payload out, then answers alike.\n"
           "Half round trip in us (median and min of the samples) for two slot layouts,\n"
           "alternated: fixed (one slot per direction, reused) and ring (each message after the\n"
           "last in a ring of --ring bytes, as csn's shm rings).\n"
           "Options:\n"
           "  --sizes LIST       comma-separated sizes (e.g. 8,256,1K); overrides --min/--max\n"
           "  --min SIZE         smallest size (default 0); sizes double from it\n"
           "  --max SIZE         largest size (default 64K; at most 1M)\n"
           "  --samples N        timed batches per size and layout (default 7)\n"
           "  --iters N          round trips per batch (default: calibrated to --sample-ms)\n"
           "  --sample-ms MS     target length of one batch when calibrating (default 10)\n"
           "  --ring SIZE        bytes of the ring per direction (default 256K)\n"
           "  --bind             the two processes on the first two CPUs, one each (as csnrun\n"
           "                     --bind-to core and mpirun's default place two ranks)\n"
           "  --json FILE        also write the results as JSON (lat_us: fixed, lat_ring_us)\n"
           "  --help             this text\n");
}

int main(int argc, char **argv)
{
    struct pp_common o;
    const char *val;
    size_t ring = 256u << 10;
    int bind = 0;
    pp_common_defaults(&o);
    o.max = 64u << 10;
    for (int i = 1; i < argc; i++) {
        int k;
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            cf_usage(stdout);
            return 0;
        } else if (strcmp(argv[i], "--bind") == 0) {
            bind = 1;
        } else if ((k = pp_opt(argc, argv, &i, "--ring", &val)) != 0) {
            if (k < 0 || pp_parse_size(val, &ring) != 0 || ring < 4096 || ring > (1u << 30)) {
                fprintf(stderr, "copy-floor: --ring needs a size from 4K to 1G\n");
                return 2;
            }
        } else if (strncmp(argv[i], "--window", 8) == 0 ||
                   (k = pp_common_arg(argc, argv, &i, &o, "copy-floor")) == 0) {
            fprintf(stderr, "copy-floor: unknown option %s (see --help)\n", argv[i]);
            return 2;
        } else if (k < 0) {
            return 2;
        }
    }
    if (pp_common_finish(&o, "copy-floor") != 0)
        return 2;
    size_t max = 0;
    for (int i = 0; i < o.sizes.n; i++)
        max = o.sizes.v[i] > max ? o.sizes.v[i] : max;
    if (max > CF_MAX) {
        fprintf(stderr, "copy-floor: sizes up to 1M (an eager message's range)\n");
        return 2;
    }
    if (ring < 2 * cf_rec_bytes(max))
        ring = 2 * cf_rec_bytes(max);
    int cpu[2];
    if (bind && pp_two_cpus(cpu) != 0) {
        fprintf(stderr, "copy-floor: --bind needs two CPUs to run on: %s\n", strerror(errno));
        return 1;
    }
    struct cf_run r = {.ring = ring};
    size_t shared = sizeof *r.ctl + 2 * ring + CF_LINE;
    uint8_t *m = mmap(NULL, shared, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) {
        perror("copy-floor: mmap");
        return 1;
    }
    r.ctl = (struct cf_ctl *)(void *)m;
    r.box[0] = m + ((sizeof *r.ctl + CF_LINE - 1) & ~(size_t)(CF_LINE - 1));
    r.box[1] = r.box[0] + ring;
    /* Touched before the fork, then each side writes its own: its pages, not shared ones. */
    r.sbuf = pp_alloc(max ? max : 1);
    r.rbuf = pp_alloc(max ? max : 1);
    int rc = 0;
    pid_t parent = getpid(), child = -1;
    FILE *json = NULL;
    if (!r.sbuf || !r.rbuf) {
        fprintf(stderr, "copy-floor: out of memory\n");
        rc = 1;
        goto out;
    }
    if ((child = fork()) < 0) {
        perror("copy-floor: fork");
        rc = 1;
        goto out;
    }
    if (child == 0) {
        /* B spins while it waits: it must not outlive A. */
        if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent)
            _exit(1);
        if (bind && pp_bind_cpu(cpu[1]) != 0) {
            fprintf(stderr, "copy-floor: --bind: CPU %d: %s\n", cpu[1], strerror(errno));
            _exit(1);
        }
        memset(r.sbuf, 0x5b, max);
        memset(r.rbuf, 0, max);
        cf_child(&r);
    }
    r.child = child;
    if (bind && pp_bind_cpu(cpu[0]) != 0) {
        fprintf(stderr, "copy-floor: --bind: CPU %d: %s\n", cpu[0], strerror(errno));
        rc = 1;
        goto out;
    }
    memset(r.sbuf, 0xa5, max);
    memset(r.rbuf, 0, max);
    while (!atomic_load(&r.ctl->ready))
        if (waitpid(child, NULL, WNOHANG) == child) {
            fprintf(stderr, "copy-floor: the second process ended before it started\n");
            child = -1;
            rc = 1;
            goto out;
        }
    if (o.json && !(json = fopen(o.json, "w"))) {
        fprintf(stderr, "copy-floor: cannot write %s: %s\n", o.json, strerror(errno));
        rc = 1;
        goto out;
    }
    printf("# copy-floor: two copies through shared memory, no library; half round trip in us, "
           "median and min of %d batches per layout; ring %zu bytes per direction%s\n",
           o.samples, ring, bind ? "; bound to two CPUs" : "");
    printf("%10s %10s %10s %10s %10s %10s\n", "size", "fixed_med", "fixed_min", "ring_med",
           "ring_min", "iters");
    if (json)
        fprintf(json,
                "{\n\"benchmark\": \"copy-floor\",\n\"samples\": %d,\n\"ring_bytes\": %zu,\n"
                "\"bind\": %s,\n\"units\": {\"lat\": \"us, half round trip\"},\n\"results\": [\n",
                o.samples, ring, bind ? "true" : "false");
    uint64_t batch = 0, base = 0;
    double v[CF_MODES][PP_MAX_SAMPLES];
    for (int si = 0; si < o.sizes.n && rc == 0; si++) {
        size_t n = o.sizes.v[si];
        long iters = o.iters;
        if (iters <= 0) { /* calibration, which warms both layouts up too */
            double worst = 0;
            for (int mode = 0; mode < CF_MODES; mode++) {
                double us = cf_timed(&r, &batch, &base, n, mode, 2000);
                worst = us > worst ? us : worst;
                if (us < 0)
                    worst = -1;
            }
            if (worst < 0) {
                rc = 1;
                break;
            }
            iters = (long)(o.sample_ms * 1e3 / (2 * worst + 1e-3));
            iters = iters < 100 ? 100 : iters > 10000000 ? 10000000 : iters;
        }
        for (int s = 0; s < o.samples && rc == 0; s++)
            for (int j = 0; j < CF_MODES; j++) {
                int mode = (s + j) % CF_MODES; /* which layout goes first alternates */
                if ((v[mode][s] = cf_timed(&r, &batch, &base, n, mode, iters)) < 0)
                    rc = 1;
            }
        if (rc != 0)
            break;
        double med[CF_MODES], mn[CF_MODES];
        for (int mode = 0; mode < CF_MODES; mode++) {
            mn[mode] = pp_min(v[mode], o.samples);
            med[mode] = pp_median(v[mode], o.samples);
        }
        printf("%10zu %10.3f %10.3f %10.3f %10.3f %10ld\n", n, med[0], mn[0], med[1], mn[1], iters);
        fflush(stdout);
        if (json)
            fprintf(json,
                    "{\"size\": %zu, \"lat_us\": {\"median\": %g, \"min\": %g, \"iters\": %ld}, "
                    "\"lat_ring_us\": {\"median\": %g, \"min\": %g, \"iters\": %ld}}%s\n",
                    n, med[0], mn[0], iters, med[1], mn[1], iters, si + 1 < o.sizes.n ? "," : "");
    }
    if (rc != 0)
        fprintf(stderr, "copy-floor: the second process ended during the run\n");
    if (json) {
        fprintf(json, "]\n}\n");
        FILE *f = json;
        json = NULL;
        if (fclose(f) != 0) {
            fprintf(stderr, "copy-floor: cannot write %s: %s\n", o.json, strerror(errno));
            rc = 1;
        }
    }
out:
    if (json)
        fclose(json);
    if (child > 0) {
        atomic_store_explicit(&r.ctl->go, CF_STOP, memory_order_release);
        waitpid(child, NULL, 0);
    }
    pp_free(r.sbuf);
    pp_free(r.rbuf);
    munmap(m, shared);
    return rc;
}
