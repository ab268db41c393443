/* options.c: command line of pipeline (parsing, --help text with the exact data permutation). */
#include "parse_size.h"
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline.h"

const char pl_none[] = "none";

void pl_usage(FILE *f)
{
    fputs(
        "usage: csnrun -np NNODE pipeline [options]\n"
        "\n"
        "All-to-all pipeline through the switch (seed 000). Every rank is one node. The node\n"
        "process forks NPHASE phase processes; phase p > 0 forks NNODE receivers, phase\n"
        "p < NPHASE-1 forks NNODE senders. Sender j of phase p on node A sends block j of\n"
        "its buffer to receiver A of phase p+1 on node j (names \"pl.<phase>.<node>.recv.<j>\");\n"
        "so every one of the NPHASE-1 stage boundaries is an all-to-all between the nodes.\n"
        "Each phase has two buffers of NNODE blocks: receivers (or the first phase's reader)\n"
        "fill buffer k while senders (or the last phase's writer) drain buffer !k; a buffer\n"
        "is refilled only after all NNODE blocks of it were drained, and drained only after\n"
        "all NNODE blocks were filled; the first phase hands its buffer to the senders and\n"
        "the last phase gives its buffer back to the receivers block by block. Senders and\n"
        "receivers keep the operations of both buffers in flight. Signalling between them:\n"
        "futexes on counters in a MAP_SHARED|MAP_ANONYMOUS mapping created by the node\n"
        "process before forking (a few sched_yield turns before sleeping; a wake system\n"
        "call only when a waiter's count is reached and someone may be asleep). csn waits\n"
        "spin for 100 us with --threads and sleep at once otherwise (CSN_SPIN_US=100 or 0\n"
        "unless set in the environment).\n"
        "Every process dies with its parent (PR_SET_PDEATHSIG), so nothing outlives a node.\n"
        "Flow control across the nodes (--lead): the first phase fills buffer i only once\n"
        "its node's last phase consumed buffer i-LEAD, so that blocks seldom reach a node\n"
        "before its receivers asked for them (csn would buffer them: a copy more each).\n"
        "Without it (--lead 0) a phase can run ahead of the next by what csn buffers for\n"
        "receivers that have not asked yet (CSN_UNEXPECTED_LIMIT per process, default\n"
        "64 MiB): a sender held back waits while that backlog drains, so keep --timeout\n"
        "well above the time it takes.\n"
        "Every wait gives up after --timeout seconds, or when the node aborts (a process\n"
        "failed or died, SIGTERM/SIGINT): the job then exits non-zero.\n"
        "\n"
        "options:\n"
        "  --nphase N       phases per node, 2..64 (default 3); NPHASE-1 stage boundaries\n"
        "  --bufsize SIZE   bytes of one block = one message (default 64K); a buffer is\n"
        "                   NNODE blocks. SIZE: bytes, or with suffix K, M, G (1024-based)\n"
        "  --nbuf N         buffers streamed through every phase (default 100)\n"
        "  --source mem|none|FILE  first phase reads its buffers from memory (copy of one\n"
        "                   buffer-sized area) or from FILE (default mem); none: it hands\n"
        "                   them on unfilled (diagnostic: the transfers without that copy;\n"
        "                   a file named none is ./none)\n"
        "  --sink mem|none|FILE  last phase writes its buffers to memory or to FILE (default\n"
        "                   mem); none: it gives them back unread\n"
        "  --json FILE      also write the results as JSON (rank 0)\n"
        "  --jsonl FILE     also write one JSON Lines record per measurement\n"
        "                   (docs/results-jsonl.md)\n"
        "  --timeout SEC    longest single wait before a process gives up (default 60)\n"
        "  --threads        phases, senders and receivers are threads of the node process,\n"
        "                   each sender and receiver with its own csn transport (default:\n"
        "                   processes, as in the seed)\n"
        "  --lead N         the first phase stays at most N buffers ahead of its node's\n"
        "                   last phase (default 2*NPHASE; 0: no limit)\n"
        "  --sched batch|normal  scheduling policy of the node and everything it starts\n"
        "                   (default batch: SCHED_BATCH, a woken stage does not preempt\n"
        "                   the one that woke it, which then hands over more blocks per\n"
        "                   turn; normal: SCHED_OTHER as inherited)\n"
        "  --die-after N    testing: sender 0 of phase NPHASE-2 on the last node kills\n"
        "                   itself (SIGKILL) after sending N blocks (with --threads this\n"
        "                   kills the whole node process)\n"
        "  --help           this text\n"
        "  --version        the version\n"
        BENCH_SIZE_RULES
        "\n"
        "Files and the permutation. Let B = bufsize, S = NBUF*NNODE*B (bytes per node).\n"
        "Node A's data is slice A of FILE: bytes [A*S, (A+1)*S); the source file must hold\n"
        "at least NNODE*S bytes. If the name contains %r, it is replaced by the node number\n"
        "and each node uses its own file from offset 0 (then each holds S bytes). The sink\n"
        "is created (mode 0644) and sized to NNODE*S (S with %r), node A writing slice A.\n"
        "Buffer i of node A is bytes [i*NNODE*B, (i+1)*NNODE*B) of its slice; block j of it\n"
        "is bytes [j*B, (j+1)*B) of the buffer. One stage moves block j of buffer i of node\n"
        "A to block A of buffer i of node j (a transpose). After the NPHASE-1 stages:\n"
        "  NPHASE even: sink block j of buffer i of node A = source block A, buffer i, node j\n"
        "  NPHASE odd : sink slice of node A = source slice of node A (two transposes)\n"
        "\n"
        "Timing: each node process starts its first phase once every node is connected\n"
        "(after a job barrier) and the last phase notes when it consumed its last buffer.\n"
        "Reported: completion time per node; bytes crossing each stage boundary\n"
        "(NNODE*NNODE*B*NBUF, of which NNODE*(NNODE-1)*B*NBUF between different nodes);\n"
        "aggregate throughput = bytes over all boundaries / longest node time; between-node\n"
        "throughput counts only bytes between different nodes (comparable to nettest's\n"
        "Chaos2 in Ptotal mode); per node = bytes the node sent / its own time. MB = 10^6 B.\n"
        "\n"
        "Start it with csnrun: forked processes find each other through the job's name\n"
        "service (only --threads also runs as a lone process, as one node).\n",
        f);
}

/* One line on stderr (when talk) and the usage exit code. */
static int pl_bad(int talk, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int pl_bad(int talk, const char *fmt, ...)
{
    if (talk) {
        va_list ap;
        va_start(ap, fmt);
        fputs("pipeline: ", stderr);
        vfprintf(stderr, fmt, ap);
        fputs(" (see --help)\n", stderr);
        va_end(ap);
    }
    return 2;
}

/* Unsigned decimal; with `suffix`, a size in the benchmarks' one syntax (bench_parse_size:
 * K, Ki, KiB, KB = 1024, M = 2^20, G = 2^30). */
static int pl_parse_u64(const char *s, int suffix, uint64_t *out)
{
    char *end;
    uint64_t mul = 1;
    if (suffix) {
        size_t v;
        if (bench_parse_size(s, SIZE_MAX, &v) != 0)
            return -1;
        *out = v;
        return 0;
    }
    if (!s || *s < '0' || *s > '9')
        return -1;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno)
        return -1;
    if (suffix && *end) {
        switch (*end) {
        case 'k':
        case 'K':
            mul = 1ull << 10;
            break;
        case 'm':
        case 'M':
            mul = 1ull << 20;
            break;
        case 'g':
        case 'G':
            mul = 1ull << 30;
            break;
        default:
            return -1;
        }
        end++;
        if (*end == 'B' || *end == 'b')
            end++;
    }
    if (*end)
        return -1;
    if (v > UINT64_MAX / mul)
        return -1;
    *out = v * mul;
    return 0;
}

int pl_parse(int argc, char **argv, struct pl_opts *o, int talk)
{
    memset(o, 0, sizeof *o);
    o->nphase = 3;
    o->bufsize = 64 * 1024;
    o->nbuf = 100;
    o->timeout_s = 60;

    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (!strcmp(arg, "--help") || !strcmp(arg, "-h")) {
            if (talk)
                pl_usage(stdout);
            return 1;
        }
        if (strncmp(arg, "--", 2) != 0)
            return pl_bad(talk, "unexpected argument '%s'", arg);
        if (!strcmp(arg, "--threads")) {
            o->threads = 1;
            continue;
        }
        /* --name VALUE or --name=VALUE */
        char name[32];
        const char *val = NULL;
        const char *eq = strchr(arg, '=');
        size_t nlen = eq ? (size_t)(eq - arg) : strlen(arg);
        if (nlen >= sizeof name)
            return pl_bad(talk, "unknown option '%s'", arg);
        memcpy(name, arg, nlen);
        name[nlen] = '\0';
        static const char *const known[] = {"--nphase", "--bufsize", "--nbuf",    "--source",
                                            "--sink",   "--json",    "--timeout", "--die-after",
                                            "--lead",   "--sched"};
        int found = 0;
        for (size_t q = 0; q < sizeof known / sizeof known[0]; q++)
            found |= !strcmp(name, known[q]);
        if (!found)
            return pl_bad(talk, "unknown option '%s'", name);
        if (eq)
            val = eq + 1;
        else if (i + 1 < argc)
            val = argv[++i];
        else
            return pl_bad(talk, "option %s needs a value", name);

        uint64_t v = 0;
        if (!strcmp(name, "--nphase")) {
            if (pl_parse_u64(val, 0, &v) || v < 2 || v > PL_MAX_PHASE)
                return pl_bad(talk, "--nphase '%s': want an integer 2..64", val);
            o->nphase = (int)v;
        } else if (!strcmp(name, "--bufsize")) {
            if (pl_parse_u64(val, 1, &v) || v < 1 || v > PL_MAX_BUFSIZE)
                return pl_bad(talk, "--bufsize '%s': want 1..1G bytes (suffix K, M, G)", val);
            o->bufsize = v;
        } else if (!strcmp(name, "--nbuf")) {
            if (pl_parse_u64(val, 0, &v) || v < 1 || v > 100000000)
                return pl_bad(talk, "--nbuf '%s': want an integer 1..100000000", val);
            o->nbuf = v;
        } else if (!strcmp(name, "--source") || !strcmp(name, "--sink")) {
            if (!*val)
                return pl_bad(talk, "%s: empty file name (use 'mem' for memory)", name);
            const char *f = !strcmp(val, "mem") ? NULL : !strcmp(val, "none") ? pl_none : val;
            if (f && strlen(f) >= 4000)
                return pl_bad(talk, "%s: file name too long", name);
            if (name[3] == 'o')
                o->source = f;
            else
                o->sink = f;
        } else if (!strcmp(name, "--json")) {
            if (!*val)
                return pl_bad(talk, "--json: empty file name");
            o->json = val;
        } else if (!strcmp(name, "--timeout")) {
            if (pl_parse_u64(val, 0, &v) || v < 1 || v > 86400)
                return pl_bad(talk, "--timeout '%s': want seconds 1..86400", val);
            o->timeout_s = (unsigned)v;
        } else if (!strcmp(name, "--lead")) {
            if (pl_parse_u64(val, 0, &v) || v > 100000000)
                return pl_bad(talk, "--lead '%s': want an integer 0..100000000", val);
            o->lead = v;
            o->lead_set = 1;
        } else if (!strcmp(name, "--sched")) {
            if (strcmp(val, "batch") && strcmp(val, "normal"))
                return pl_bad(talk, "--sched '%s': want batch or normal", val);
            o->sched_normal = !strcmp(val, "normal");
        } else {
            if (pl_parse_u64(val, 0, &v) || v < 1)
                return pl_bad(talk, "--die-after '%s': want a positive integer", val);
            o->die_after = v;
        }
    }
    if (!o->lead_set)
        o->lead = 2 * (uint64_t)o->nphase;
    return 0;
}
