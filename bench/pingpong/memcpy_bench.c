/* memcpy_bench.c: one-thread memcpy bandwidth per size, measured as pingpong measures bandwidth. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ppcommon.h"

static const char memcpy_usage[] =
    "usage: memcpy-bench [OPTIONS]\n"
    "memcpy bandwidth of one thread, per size, as pingpong measures bandwidth: a window is\n"
    "one copy from the source buffer into each of the window's destination buffers (as\n"
    "many as pingpong's receiver posts), so large windows do not stay in the cache.\n"
    "Warm-up, then timed batches; median and max in MB/s (1e6 B/s).\n"
    "Options:\n" PP_COMMON_HELP "  --help             this text\n";

/* Keeps the copies observable, so the compiler cannot drop them. */
static volatile unsigned char memcpy_sink;

static double memcpy_batch(unsigned char *dst, const unsigned char *src, size_t size, int window,
                           long n)
{
    double t0 = pp_now();
    for (long i = 0; i < n; i++)
        for (int j = 0; j < window; j++)
            memcpy(dst + (size_t)j * size, src, size);
    double t = pp_now() - t0;
    memcpy_sink = dst[(size_t)(window - 1) * size + size - 1];
    return t;
}

static long memcpy_calibrate(unsigned char *dst, const unsigned char *src, size_t size, int window,
                             const struct pp_common *o)
{
    if (o->iters > 0) {
        long w = o->warmup >= 0 ? o->warmup : (o->iters / 10 > 0 ? o->iters / 10 : 1);
        if (w > 0)
            memcpy_batch(dst, src, size, window, w);
        return o->iters;
    }
    double budget = o->sample_ms * 1e-3, total = 0.0, per_iter = 0.0;
    /* At least three batches, as pingpong's calibration: the first touches fresh pages. */
    for (long n = 1;; n *= 2) {
        double t = memcpy_batch(dst, src, size, window, n);
        total += t;
        if (per_iter == 0.0 || t / (double)n < per_iter)
            per_iter = t / (double)n;
        if ((total >= budget && n >= 4) || n >= (1L << 22))
            break;
    }
    if (o->warmup > 0)
        memcpy_batch(dst, src, size, window, o->warmup);
    double want = per_iter > 0.0 ? ceil(budget / per_iter) : 1.0;
    return want > 1e7 ? 10000000 : (want < 1.0 ? 1 : (long)want);
}

int main(int argc, char **argv)
{
    struct pp_common o;
    pp_common_defaults(&o);
    for (int i = 1; i < argc; i++) {
        int r = pp_common_arg(argc, argv, &i, &o, "memcpy-bench");
        if (r < 0)
            return 2;
        if (r > 0)
            continue;
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            fputs(memcpy_usage, stdout);
            return 0;
        }
        fprintf(stderr, "memcpy-bench: unknown argument '%s' (see --help)\n", argv[i]);
        return 2;
    }
    if (pp_common_finish(&o, "memcpy-bench") != 0)
        return 2;

    int rc = 1;
    FILE *json = NULL;
    unsigned char *src = NULL, *dst = NULL;
    if (o.json != NULL && (json = fopen(o.json, "w")) == NULL) {
        perror(o.json);
        return 2;
    }
    size_t maxsize = 0, arena = 0;
    for (int i = 0; i < o.sizes.n; i++) {
        size_t s = o.sizes.v[i];
        size_t a = s * (size_t)pp_window_for(s, o.window, o.window_bytes);
        maxsize = s > maxsize ? s : maxsize;
        arena = a > arena ? a : arena;
    }
    src = pp_alloc(maxsize);
    dst = pp_alloc(arena);
    if (src == NULL || dst == NULL) {
        fprintf(stderr, "memcpy-bench: out of memory (%zu + %zu bytes)\n", maxsize, arena);
        goto fail;
    }
    pp_fill(src, maxsize, 1);

    char wb[32];
    printf("# memcpy-bench: one thread, MB/s (1e6 B/s), median and max of %d batches; window of "
           "%d copies into distinct buffers (at most %s bytes per window)\n",
           o.samples, o.window, pp_size_str(o.window_bytes, wb, sizeof wb));
    printf("%10s %10s %10s %9s %7s\n", "size", "bw_med", "bw_max", "iters", "window");
    if (json != NULL)
        fprintf(json,
                "{\n\"benchmark\": \"memcpy\",\n\"samples\": %d,\n\"window\": %d,\n"
                "\"window_bytes\": %zu,\n\"units\": {\"bw\": \"MB/s (1e6 B/s)\"},\n"
                "\"results\": [\n",
                o.samples, o.window, o.window_bytes);
    for (int i = 0; i < o.sizes.n; i++) {
        size_t size = o.sizes.v[i];
        const char *sep = i + 1 < o.sizes.n ? "," : "";
        if (size == 0) {
            printf("%10zu %10s %10s %9s %7s\n", size, "-", "-", "-", "-");
            if (json != NULL)
                fprintf(json, "{\"size\": 0, \"memcpy_MBps\": null}%s\n", sep);
            continue;
        }
        int window = pp_window_for(size, o.window, o.window_bytes);
        long iters = memcpy_calibrate(dst, src, size, window, &o);
        double v[PP_MAX_SAMPLES];
        for (int s = 0; s < o.samples; s++) {
            double t = memcpy_batch(dst, src, size, window, iters);
            v[s] = (double)size * window * (double)iters / t / 1e6;
        }
        if (pp_check(dst + (size_t)(window - 1) * size, size, 1) != (size_t)-1) {
            fprintf(stderr, "memcpy-bench: copy of %zu bytes does not match its source\n", size);
            goto fail;
        }
        double best = pp_max(v, o.samples), med = pp_median(v, o.samples);
        printf("%10zu %10.1f %10.1f %9ld %7d\n", size, med, best, iters, window);
        fflush(stdout);
        if (json != NULL)
            fprintf(json,
                    "{\"size\": %zu, \"memcpy_MBps\": {\"median\": %.6g, \"max\": %.6g, "
                    "\"iters\": %ld, \"window\": %d}}%s\n",
                    size, med, best, iters, window, sep);
    }
    if (json != NULL) {
        fprintf(json, "]\n}\n");
        int bad = ferror(json);
        if (fclose(json) != 0 || bad) {
            json = NULL;
            perror(o.json);
            goto fail;
        }
        json = NULL;
    }
    rc = 0;
fail:
    if (json != NULL)
        fclose(json);
    pp_free(dst);
    pp_free(src);
    return rc;
}
