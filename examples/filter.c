/* filter.c: the seed's source -> filter -> sink pipeline (Figures 4, 5) and Table 1 throughput. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <csn.h>

static const char filter_usage[] =
    "usage: filter [source|filter|sink] [OPTIONS]\n"
    "The CSN filter example: a source streams buffers to a filter, which transforms each\n"
    "one (inverts every byte) and passes it on to a sink, which checks every byte. The\n"
    "filter runs the seed's loop: csn_test(TX|RX, forever); a received buffer is filtered\n"
    "and sent on with csn_tx_nb; a sent one is posted again with csn_rx_nb. With N filter\n"
    "buffers (MaxFilterBuffers) N receives are outstanding: 2 is double buffering.\n"
    "Run as  csnrun -np 3 filter  (ranks 0, 1, 2: source, filter, sink) or from a spec file\n"
    "naming the role of each line (see filter.spec). The source's options decide the runs;\n"
    "the filter and the sink follow what it announces. The sink prints MB/s (1e6 B/s).\n"
    "Options:\n"
    "  --buffers N   filter buffers: 1 to 64 (default: each of 1, 2 and 4)\n"
    "  --min SIZE    smallest buffer size (default 4K); sizes double up to --max\n"
    "  --max SIZE    largest buffer size (default 4M)\n"
    "  --bytes SIZE  bytes streamed per buffer size and buffer count (default 64M)\n"
    "  --help        this text\n"
    "SIZE: bytes, or with K, M, G (powers of 1024); sizes are multiples of 8.\n";

#define FILTER_MAGIC 0xC5F17E8ull
#define FILTER_MAX_COUNTS 8
#define FILTER_MAX_BUFFERS 64
#define FILTER_MAX_SIZES 40
/* The transform the filter applies and the sink undoes: every bit inverted. */
#define FILTER_MASK (~(uint64_t)0)

/* Announces one run (a buffer size and a buffer count) from the source to the filter, which
 * forwards it to the sink. size 0 ends the job. All processes run on machines of one byte
 * order (the pipeline is a local example). */
struct filter_run {
    uint64_t magic;
    uint64_t size;     /* bytes per message */
    uint64_t messages; /* data messages in this run */
    uint64_t buffers;  /* the filter's buffer count */
    uint64_t column;   /* index of buffers in counts[] */
    uint64_t ncounts;
    uint64_t counts[FILTER_MAX_COUNTS];
    uint64_t seed; /* pattern seed of this run */
};

struct filter_opts {
    uint64_t counts[FILTER_MAX_COUNTS];
    int ncounts;
    size_t min, max, bytes;
};

/* The 2006 figures of the seed's Table 1 (free CSN on a dual-core Opteron 175), MB/s. */
static const struct {
    size_t size;
    const char *mbs;
} filter_paper[] = {{16 << 10, "~137"}, {128 << 10, "~297"}};

static double filter_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Prints what failed (for CSN_SYSTEM_ERROR, errno says how) and gives the exit status. */
static int filter_fail(const char *role, const char *what, csn_status s)
{
    const char *how = s == CSN_SYSTEM_ERROR ? strerror(errno) : NULL;
    fprintf(stderr, "filter: %s: %s: %s%s%s\n", role, what, csn_status_string(s), how ? ": " : "",
            how ? how : "");
    return 1;
}

/* Parses "4096", "64K", "4M", "1G" (powers of 1024) into *out; returns 0 or -1. */
static int filter_parse_size(const char *s, size_t *out)
{
    if (s[0] < '0' || s[0] > '9')
        return -1;
    errno = 0;
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    unsigned shift = 0;
    if (*end == 'K' || *end == 'k')
        shift = 10;
    else if (*end == 'M' || *end == 'm')
        shift = 20;
    else if (*end == 'G' || *end == 'g')
        shift = 30;
    if (shift != 0)
        end++;
    if (errno != 0 || *end != '\0' || v > (1ull << 40) >> shift)
        return -1;
    *out = (size_t)(v << shift);
    return 0;
}

/* Word k of the payload of one run; word 0 of each message carries its sequence number. */
static inline uint64_t filter_word(uint64_t seed, size_t k)
{
    uint64_t x = (uint64_t)(k + 1) * 0x9E3779B97F4A7C15ull ^ seed;
    return x ^ (x >> 29);
}

/* Returns 0 to run, 1 after --help, 2 on a usage error (one line printed). role is set
 * to the positional argument, or NULL. */
static int filter_parse(int argc, char **argv, struct filter_opts *o, const char **role)
{
    o->ncounts = 3;
    o->counts[0] = 1;
    o->counts[1] = 2;
    o->counts[2] = 4;
    o->min = 4 << 10;
    o->max = 4 << 20;
    o->bytes = 64 << 20;
    *role = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            fputs(filter_usage, stdout);
            return 1;
        }
        if (strcmp(a, "source") == 0 || strcmp(a, "filter") == 0 || strcmp(a, "sink") == 0) {
            if (*role != NULL) {
                fprintf(stderr, "filter: two roles given ('%s' and '%s')\n", *role, a);
                return 2;
            }
            *role = a;
            continue;
        }
        const char *opt = NULL;
        static const char *const names[] = {"--buffers", "--min", "--max", "--bytes"};
        const char *v = NULL;
        for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
            size_t n = strlen(names[k]);
            if (strncmp(a, names[k], n) == 0 && (a[n] == '\0' || a[n] == '=')) {
                opt = names[k];
                if (a[n] == '=')
                    v = a + n + 1;
                else if (i + 1 < argc)
                    v = argv[++i];
                break;
            }
        }
        if (opt == NULL) {
            fprintf(stderr, "filter: unknown argument '%s' (see --help)\n", a);
            return 2;
        }
        if (v == NULL) {
            fprintf(stderr, "filter: option %s needs a value\n", opt);
            return 2;
        }
        size_t x;
        if (strcmp(opt, "--buffers") == 0) {
            char *end;
            errno = 0;
            long n = strtol(v, &end, 10);
            if (errno != 0 || *end != '\0' || end == v || n < 1 || n > FILTER_MAX_BUFFERS) {
                fprintf(stderr, "filter: bad value '%s' for --buffers (1 to %d)\n", v,
                        FILTER_MAX_BUFFERS);
                return 2;
            }
            o->ncounts = 1;
            o->counts[0] = (uint64_t)n;
            continue;
        }
        if (filter_parse_size(v, &x) != 0 || x == 0 || x % 8 != 0) {
            fprintf(stderr,
                    "filter: bad value '%s' for %s (a multiple of 8 bytes such as 4K or 4M)\n", v,
                    opt);
            return 2;
        }
        if (strcmp(opt, "--min") == 0)
            o->min = x;
        else if (strcmp(opt, "--max") == 0)
            o->max = x;
        else
            o->bytes = x;
    }
    if (o->min > o->max) {
        fprintf(stderr, "filter: --min (%zu) is larger than --max (%zu)\n", o->min, o->max);
        return 2;
    }
    if (o->max > ((size_t)1 << 30)) {
        fprintf(stderr, "filter: --max above 1G\n");
        return 2;
    }
    return 0;
}

/* The source: for each size and buffer count, announce the run, stream the data with
 * blocking transmits, then one empty message per filter buffer (each retires one buffer,
 * see filter_filter). */
static int filter_source(const struct filter_opts *o)
{
    const char *me = "source";
    csn_transport *tpt = NULL;
    csn_netid filter_id;
    csn_status s;
    unsigned char *buf = NULL;
    int rc = 1;
    if ((s = csn_open(&tpt)) != CSN_OK)
        return filter_fail(me, "csn_open", s);
    if ((s = csn_lookup_name(&filter_id, "filter")) != CSN_OK) {
        rc = filter_fail(me, "csn_lookup_name(\"filter\")", s);
        goto fail;
    }
    if ((buf = malloc(o->max)) == NULL) {
        fprintf(stderr, "filter: source: out of memory (%zu bytes)\n", o->max);
        goto fail;
    }
    uint64_t run = 0;
    for (size_t size = o->min; size <= o->max; size *= 2) {
        for (int c = 0; c < o->ncounts; c++, run++) {
            struct filter_run r = {.magic = FILTER_MAGIC,
                                   .size = size,
                                   .messages = o->bytes / size ? o->bytes / size : 1,
                                   .buffers = o->counts[c],
                                   .column = (uint64_t)c,
                                   .ncounts = (uint64_t)o->ncounts,
                                   .seed = run * 0x100000001b3ull + 7};
            memcpy(r.counts, o->counts, sizeof r.counts);
            for (size_t k = 1; k < size / 8; k++) {
                uint64_t w = filter_word(r.seed, k);
                memcpy(buf + 8 * k, &w, 8);
            }
            if ((s = csn_tx(tpt, filter_id, &r, sizeof r)) != CSN_OK) {
                rc = filter_fail(me, "csn_tx (run announcement)", s);
                goto fail;
            }
            for (uint64_t m = 0; m < r.messages; m++) {
                memcpy(buf, &m, 8);
                if ((s = csn_tx(tpt, filter_id, buf, size)) != CSN_OK) {
                    rc = filter_fail(me, "csn_tx (data)", s);
                    goto fail;
                }
            }
            for (uint64_t b = 0; b < r.buffers; b++) {
                if ((s = csn_tx(tpt, filter_id, buf, 0)) != CSN_OK) {
                    rc = filter_fail(me, "csn_tx (end of run)", s);
                    goto fail;
                }
            }
        }
        if (size > o->max / 2)
            break;
    }
    struct filter_run end = {.magic = FILTER_MAGIC, .size = 0};
    if ((s = csn_tx(tpt, filter_id, &end, sizeof end)) != CSN_OK) {
        rc = filter_fail(me, "csn_tx (end)", s);
        goto fail;
    }
    rc = 0;
fail:
    free(buf);
    csn_close(&tpt);
    return rc;
}

/* Receives a run announcement with a blocking receive and checks it. */
static int filter_get_run(csn_transport *tpt, const char *me, struct filter_run *r)
{
    csn_netid from = CSN_NULL_NETID;
    size_t got = 0;
    csn_status s = csn_rx(tpt, &from, r, sizeof *r, &got);
    if (s != CSN_OK)
        return filter_fail(me, "csn_rx (run announcement)", s);
    if (got != sizeof *r || r->magic != FILTER_MAGIC ||
        (r->size != 0 &&
         (r->size % 8 != 0 || r->buffers < 1 || r->buffers > FILTER_MAX_BUFFERS || r->ncounts < 1 ||
          r->ncounts > FILTER_MAX_COUNTS || r->column >= r->ncounts))) {
        fprintf(stderr, "filter: %s: malformed run announcement (%zu bytes)\n", me, got);
        return 1;
    }
    return 0;
}

/* One run of the filter: Figure 4 (post a receive on every buffer), then the Figure 5 loop.
 * Figure 4's Modula-2 loop (FOR i := 0 TO MaxFilterBuffers) would post one buffer more than
 * MaxFilterBuffers; the text ("set to two ... double buffering") is followed: N buffers.
 * Each buffer is always in exactly one place: posted, being filtered, or being sent. The
 * source ends a run with one empty message per buffer; a buffer that receives one retires
 * (it is not posted again), so when all have retired, every send has completed and no
 * receive is left posted for the next run's announcement to fall into. */
static int filter_one_run(csn_transport *tpt, csn_netid sink_id, const struct filter_run *r)
{
    const char *me = "filter";
    int nbuf = (int)r->buffers, retired = 0, rc = 1;
    size_t size = (size_t)r->size;
    unsigned char *bufs[FILTER_MAX_BUFFERS] = {0};
    size_t actual[FILTER_MAX_BUFFERS];
    csn_status s;
    for (int i = 0; i < nbuf; i++) {
        if ((bufs[i] = malloc(size)) == NULL) {
            fprintf(stderr, "filter: filter: out of memory (%d x %zu bytes)\n", nbuf, size);
            goto fail;
        }
        if ((s = csn_rx_nb(tpt, bufs[i], size, &actual[i])) != CSN_OK) {
            rc = filter_fail(me, "csn_rx_nb", s);
            goto fail;
        }
    }
    while (retired < nbuf) {
        csn_netid netid = CSN_NULL_NETID;
        void *buffer = NULL;
        csn_status status = CSN_OK;
        s = csn_test(tpt, CSN_TX | CSN_RX, CSN_FOREVER, &netid, &buffer, &status);
        int i = 0;
        while (i < nbuf && bufs[i] != buffer)
            i++;
        if ((s != CSN_TX_READY && s != CSN_RX_READY) || i == nbuf || status != CSN_OK) {
            fprintf(stderr, "filter: filter: csn_test gave %s (operation: %s)%s\n",
                    csn_status_string(s), csn_status_string(status),
                    i == nbuf ? ", not one of our buffers" : "");
            goto fail;
        }
        if (s == CSN_TX_READY) {
            if ((s = csn_rx_nb(tpt, buffer, size, &actual[i])) != CSN_OK) {
                rc = filter_fail(me, "csn_rx_nb", s);
                goto fail;
            }
        } else if (actual[i] == 0) {
            retired++;
        } else {
            /* The "filtering": invert every byte (the seed sets them to zero; this transform
             * lets the sink check the data). Sizes are multiples of 8. */
            unsigned char *p = buffer;
            for (size_t k = 0; k < actual[i]; k += 8) {
                uint64_t w;
                memcpy(&w, p + k, 8);
                w ^= FILTER_MASK;
                memcpy(p + k, &w, 8);
            }
            if ((s = csn_tx_nb(tpt, sink_id, buffer, actual[i])) != CSN_OK) {
                rc = filter_fail(me, "csn_tx_nb", s);
                goto fail;
            }
        }
    }
    /* The sink's end of run: an empty message after all the data (same sender, in order). */
    if ((s = csn_tx(tpt, sink_id, bufs[0], 0)) != CSN_OK) {
        rc = filter_fail(me, "csn_tx (end of run)", s);
        goto fail;
    }
    rc = 0;
fail:
    for (int i = 0; i < nbuf; i++)
        free(bufs[i]);
    return rc;
}

static int filter_filter(void)
{
    const char *me = "filter";
    csn_transport *tpt = NULL;
    csn_netid sink_id;
    csn_status s;
    int rc = 1;
    if ((s = csn_open(&tpt)) != CSN_OK)
        return filter_fail(me, "csn_open", s);
    if ((s = csn_register_name(tpt, "filter")) != CSN_OK) {
        rc = filter_fail(me, "csn_register_name(\"filter\")", s);
        goto fail;
    }
    if ((s = csn_lookup_name(&sink_id, "sink")) != CSN_OK) {
        rc = filter_fail(me, "csn_lookup_name(\"sink\")", s);
        goto fail;
    }
    for (;;) {
        struct filter_run r;
        if (filter_get_run(tpt, me, &r) != 0)
            goto fail;
        if ((s = csn_tx(tpt, sink_id, &r, sizeof r)) != CSN_OK) {
            rc = filter_fail(me, "csn_tx (run announcement)", s);
            goto fail;
        }
        if (r.size == 0)
            break;
        if (filter_one_run(tpt, sink_id, &r) != 0)
            goto fail;
    }
    rc = 0;
fail:
    csn_close(&tpt);
    return rc;
}

static void filter_print_header(const struct filter_run *r)
{
    /* Every run streams the same byte count (the first run tells it). */
    printf("# filter pipeline: source -> filter -> sink over csn (%s), %llu KiB per run (one run "
           "per buffer size and count); MB/s = 1e6 B/s\n",
           csn_transport_name(), (unsigned long long)(r->messages * r->size >> 10));
    printf("# the filter inverts every byte, the sink checks every byte; 2006: the seed's free "
           "CSN on a dual-core Opteron 175 (Table 1)\n");
    printf("%9s", "size");
    for (uint64_t c = 0; c < r->ncounts; c++) {
        char h[32];
        snprintf(h, sizeof h, "%llu buf", (unsigned long long)r->counts[c]);
        printf(" %10s", h);
    }
    for (uint64_t c = 1; c < r->ncounts; c++) {
        char h[48];
        snprintf(h, sizeof h, "%llu/%llu", (unsigned long long)r->counts[c],
                 (unsigned long long)r->counts[0]);
        printf(" %7s", h);
    }
    printf(" %8s\n", "2006");
    fflush(stdout);
}

static void filter_print_row(size_t size, const struct filter_run *r, const double *mbs)
{
    char sz[32];
    if (size % (1 << 20) == 0)
        snprintf(sz, sizeof sz, "%zuM", size >> 20);
    else if (size % 1024 == 0)
        snprintf(sz, sizeof sz, "%zuK", size >> 10);
    else
        snprintf(sz, sizeof sz, "%zu", size);
    printf("%9s", sz);
    for (uint64_t c = 0; c < r->ncounts; c++)
        printf(" %10.1f", mbs[c]);
    for (uint64_t c = 1; c < r->ncounts; c++)
        printf(" %7.2f", mbs[0] > 0 ? mbs[c] / mbs[0] : 0.0);
    const char *paper = "";
    for (size_t k = 0; k < sizeof filter_paper / sizeof filter_paper[0]; k++)
        if (filter_paper[k].size == size)
            paper = filter_paper[k].mbs;
    if (*paper != '\0')
        printf(" %8s", paper);
    printf("\n");
    fflush(stdout);
}

/* The sink: blocking receives of the announced size; checks the sequence number and every
 * byte of every message; times each run from its announcement to its empty message. */
static int filter_sink(void)
{
    const char *me = "sink";
    csn_transport *tpt = NULL;
    csn_status s;
    unsigned char *buf = NULL;
    size_t cap = 0;
    double mbs[FILTER_MAX_COUNTS] = {0};
    int rc = 1, header = 0;
    if ((s = csn_open(&tpt)) != CSN_OK)
        return filter_fail(me, "csn_open", s);
    if ((s = csn_register_name(tpt, "sink")) != CSN_OK) {
        rc = filter_fail(me, "csn_register_name(\"sink\")", s);
        goto fail;
    }
    for (;;) {
        struct filter_run r;
        if (filter_get_run(tpt, me, &r) != 0)
            goto fail;
        if (r.size == 0)
            break;
        double t0 = filter_now();
        size_t size = (size_t)r.size;
        if (size > cap) {
            free(buf);
            if ((buf = malloc(size)) == NULL) {
                fprintf(stderr, "filter: sink: out of memory (%zu bytes)\n", size);
                goto fail;
            }
            cap = size;
        }
        if (!header) {
            filter_print_header(&r);
            header = 1;
        }
        uint64_t m = 0;
        for (;;) {
            csn_netid from = CSN_NULL_NETID;
            size_t got = 0;
            if ((s = csn_rx(tpt, &from, buf, size, &got)) != CSN_OK) {
                rc = filter_fail(me, "csn_rx", s);
                goto fail;
            }
            if (got == 0)
                break;
            if (got != size || m >= r.messages) {
                fprintf(stderr, "filter: sink: message %llu of %zu bytes, expected %llu of %zu\n",
                        (unsigned long long)m, got, (unsigned long long)r.messages, size);
                goto fail;
            }
            for (size_t k = 0; k < size / 8; k++) {
                uint64_t w, want = (k == 0 ? m : filter_word(r.seed, k)) ^ FILTER_MASK;
                memcpy(&w, buf + 8 * k, 8);
                if (w != want) {
                    fprintf(stderr,
                            "filter: sink: wrong data in message %llu of size %zu at byte %zu\n",
                            (unsigned long long)m, size, 8 * k);
                    goto fail;
                }
            }
            m++;
        }
        double t = filter_now() - t0;
        if (m != r.messages) {
            fprintf(stderr, "filter: sink: run ended after %llu of %llu messages\n",
                    (unsigned long long)m, (unsigned long long)r.messages);
            goto fail;
        }
        mbs[r.column] = (double)size * (double)m / t / 1e6;
        if (r.column + 1 == r.ncounts)
            filter_print_row(size, &r, mbs);
    }
    printf("# sink: all runs checked\n");
    rc = 0;
fail:
    free(buf);
    csn_close(&tpt);
    return rc;
}

int main(int argc, char **argv)
{
    struct filter_opts o;
    const char *role;
    int rc = filter_parse(argc, argv, &o, &role);
    if (rc != 0)
        return rc == 1 ? 0 : 2;
    if (role == NULL) {
        if (csn_job_size() != 3) {
            fprintf(stderr, "filter: needs 3 processes (csnrun -np 3 filter) or a role: source, "
                            "filter or sink\n");
            return 2;
        }
        static const char *const roles[] = {"source", "filter", "sink"};
        role = roles[csn_job_rank()];
    }
    if (strcmp(role, "source") == 0)
        return filter_source(&o);
    if (strcmp(role, "filter") == 0)
        return filter_filter();
    return filter_sink();
}
