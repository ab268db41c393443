/* pl_check.c: pipeline test helper: makes a random source file, checks a sink's permutation. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int check_usage(void)
{
    fputs("usage: pl_check gen FILE BYTES SEED\n"
          "       pl_check verify SOURCE SINK NNODE NPHASE NBUF BUFSIZE\n",
          stderr);
    return 2;
}

static unsigned char *check_load(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    unsigned char *p = NULL;
    long n;
    if (!f || fseek(f, 0, SEEK_END) || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET))
        goto fail;
    p = malloc((size_t)n + 1);
    if (!p || fread(p, 1, (size_t)n, f) != (size_t)n)
        goto fail;
    fclose(f);
    *len = (size_t)n;
    return p;
fail:
    fprintf(stderr, "pl_check: cannot read %s\n", path);
    if (f)
        fclose(f);
    free(p);
    return NULL;
}

static int check_gen(const char *path, unsigned long long bytes, unsigned long long seed)
{
    FILE *f = fopen(path, "wb");
    uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
    if (!f) {
        fprintf(stderr, "pl_check: cannot create %s\n", path);
        return 1;
    }
    for (unsigned long long i = 0; i < bytes; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        fputc((int)(x >> 24) & 0xff, f);
    }
    return fclose(f) ? 1 : 0;
}

/* The permutation of pipeline --help: each stage moves block j of buffer i of node A to
 * block A of buffer i of node j; NPHASE-1 stages. */
static int check_verify(char **a)
{
    size_t slen, olen;
    unsigned long long nn = strtoull(a[2], NULL, 10), nphase = strtoull(a[3], NULL, 10);
    unsigned long long nbuf = strtoull(a[4], NULL, 10), b = strtoull(a[5], NULL, 10);
    unsigned long long s = nbuf * nn * b;
    int rc = 1;
    unsigned char *src = check_load(a[0], &slen), *out = check_load(a[1], &olen);
    if (!src || !out)
        goto done;
    if (slen < nn * s || olen != nn * s) {
        fprintf(stderr, "pl_check: sizes: source %zu (need >= %llu), sink %zu (need %llu)\n", slen,
                nn * s, olen, nn * s);
        goto done;
    }
    int odd_stages = (nphase - 1) % 2 == 1;
    for (unsigned long long node = 0; node < nn; node++)
        for (unsigned long long i = 0; i < nbuf; i++)
            for (unsigned long long j = 0; j < nn; j++) {
                unsigned long long at = node * s + i * nn * b + j * b;
                unsigned long long from = odd_stages ? j * s + i * nn * b + node * b : at;
                if (memcmp(out + at, src + from, b) != 0) {
                    fprintf(stderr,
                            "pl_check: sink node %llu buffer %llu block %llu (offset %llu) differs "
                            "from source offset %llu\n",
                            node, i, j, at, from);
                    goto done;
                }
            }
    rc = 0;
done:
    free(src);
    free(out);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc == 5 && !strcmp(argv[1], "gen"))
        return check_gen(argv[2], strtoull(argv[3], NULL, 10), strtoull(argv[4], NULL, 10));
    if (argc == 8 && !strcmp(argv[1], "verify"))
        return check_verify(argv + 2);
    return check_usage();
}
