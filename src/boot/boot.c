/* boot.c: reads the job description that csnrun puts in the environment, or asks PMIx for it (see
 * boot.h). */
#include "boot/boot.h"
#include "boot/watch.h"
#include "boot/pmix.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The netid has 24 bits for the process id (netid.h), and forked children get ids >= size. */
#define BOOT_MAX_SIZE (1 << 23)

/* Parses a decimal integer in [lo, hi]; 0 on success. */
static int boot_parse_int(const char *s, long lo, long hi, int *out)
{
    char *end;
    long v;

    if (s == NULL || *s == '\0' || *s == '+' || *s == '-' || *s == ' ')
        return -1;
    errno = 0;
    v = strtol(s, &end, 10);
    if (errno != 0 || *end != '\0' || v < lo || v > hi)
        return -1;
    *out = (int)v;
    return 0;
}

/* Copies an environment value into dst (cap bytes); 0 on success, -1 when too long or empty. */
static int boot_copy(char *dst, size_t cap, const char *src)
{
    size_t n = strlen(src);

    if (n == 0 || n >= cap)
        return -1;
    memcpy(dst, src, n + 1);
    return 0;
}

static int boot_printable_id(const char *s)
{
    for (; *s; s++) {
        if (*s <= 0x20 || *s >= 0x7f || *s == '/')
            return 0;
    }
    return 1;
}

static void boot_hostname(struct csni_boot *b)
{
    if (gethostname(b->host, sizeof b->host) != 0)
        strcpy(b->host, "localhost");
    b->host[sizeof b->host - 1] = '\0';
}

static csn_status boot_bad(const char *var, const char *why)
{
    fprintf(stderr, "csn: environment variable %s %s\n", var, why);
    return CSN_INVALID_ARGUMENT;
}

/* A lone process: a job of size 1 whose names live in the process. Its job id still has to
 * be unique on the host, since shared-memory files are named after it. */
static csn_status boot_lone(struct csni_boot *b)
{
    b->rank = 0;
    b->size = 1;
    b->local_rank = 0;
    b->local_size = 1;
    b->launched = 0;
    snprintf(b->jobid, sizeof b->jobid, "p%ld", (long)getpid());
    boot_hostname(b);
    return CSN_OK;
}

static csn_status boot_from_csnrun(struct csni_boot *b)
{
    const char *v;
    int i;

    if (boot_parse_int(getenv("CSN_SIZE"), 1, BOOT_MAX_SIZE, &b->size) != 0)
        return boot_bad("CSN_SIZE", "must be a number from 1 to 8388608");
    if (boot_parse_int(getenv("CSN_RANK"), 0, b->size - 1, &b->rank) != 0)
        return boot_bad("CSN_RANK", "must be a number from 0 to CSN_SIZE-1");
    /* csnrun always sets the local pair; a hand-made environment may omit it, and then
     * nothing is known about neighbours, so each process counts as alone on its host. */
    b->local_rank = 0;
    b->local_size = 1;
    if ((v = getenv("CSN_LOCAL_SIZE")) != NULL &&
        boot_parse_int(v, 1, b->size, &b->local_size) != 0)
        return boot_bad("CSN_LOCAL_SIZE", "must be a number from 1 to CSN_SIZE");
    if ((v = getenv("CSN_LOCAL_RANK")) != NULL &&
        boot_parse_int(v, 0, b->local_size - 1, &b->local_rank) != 0)
        return boot_bad("CSN_LOCAL_RANK", "must be a number from 0 to CSN_LOCAL_SIZE-1");

    v = getenv("CSN_NS");
    if (v == NULL)
        return boot_bad("CSN_NS", "is missing (CSN_RANK is set)");
    if ((strncmp(v, "unix:/", 6) != 0 && strncmp(v, "tcp:", 4) != 0) ||
        boot_copy(b->ns, sizeof b->ns, v) != 0)
        return boot_bad("CSN_NS", "must be unix:/PATH or tcp:HOST:PORT");

    v = getenv("CSN_JOBKEY");
    if (v == NULL || strlen(v) != 32)
        return boot_bad("CSN_JOBKEY", "must be 32 hexadecimal digits");
    for (i = 0; i < 32; i++) {
        if (!((v[i] >= '0' && v[i] <= '9') || (v[i] >= 'a' && v[i] <= 'f') ||
              (v[i] >= 'A' && v[i] <= 'F')))
            return boot_bad("CSN_JOBKEY", "must be 32 hexadecimal digits");
    }
    memcpy(b->jobkey, v, 33);

    v = getenv("CSN_JOBID");
    if (v == NULL || boot_copy(b->jobid, sizeof b->jobid, v) != 0 || !boot_printable_id(v))
        return boot_bad("CSN_JOBID", "must be 1..63 printable characters without '/'");

    if ((v = getenv("CSN_JOBDIR")) != NULL && *v != '\0' &&
        (v[0] != '/' || boot_copy(b->jobdir, sizeof b->jobdir, v) != 0))
        return boot_bad("CSN_JOBDIR", "must be an absolute path");

    if ((v = getenv("CSN_HOST")) != NULL && *v != '\0') {
        if (boot_copy(b->host, sizeof b->host, v) != 0)
            return boot_bad("CSN_HOST", "is longer than 255 bytes");
    } else {
        boot_hostname(b);
    }
    b->launched = 1;
    csni_watch_start(); /* ends this process if its csnrun agent dies (watch.h) */
    return CSN_OK;
}

csn_status csni_boot_init(struct csni_boot *b)
{
    csn_status st;

    if (b == NULL)
        return CSN_INVALID_ARGUMENT;
    memset(b, 0, sizeof *b);
    if (getenv("CSN_RANK") != NULL) {
        st = boot_from_csnrun(b);
        if (st != CSN_OK)
            memset(b, 0, sizeof *b);
        return st;
    }
#ifdef CSN_HAVE_PMIX
    /* Started by mpirun or srun: the PMIx server's variables are there (boot/pmix.h). When
     * PMIx_Init fails the process runs alone, as without a launcher. */
    if (csni_pmix_present()) {
        st = csni_pmix_boot(b);
        if (st != CSN_NOT_FOUND) {
            if (st != CSN_OK)
                memset(b, 0, sizeof *b);
            return st;
        }
        memset(b, 0, sizeof *b);
    }
#endif
    return boot_lone(b);
}
