/* main.c: the node process (one csn rank): sets up, starts the phases, times the run, reports. */
#include "tool.h"
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "csn.h"
#include "jsonl.h"
#include "pipeline.h"
#include "report.h"

#define PL_MSG_READY 1u
#define PL_MSG_GO 2u
#define PL_MSG_RESULT 3u
#define PL_MAX_MAP (16ull << 30)

/* Control messages between node processes (transports named "pl.nsp.<node>"). */
struct pl_msg {
    uint32_t kind;
    int32_t node;
    double seconds;
    char host[64];
};

/* Rank from the environment, only to decide who prints usage errors (csn is not open yet). */
static int pl_env_rank(void)
{
    const char *r = getenv("CSN_RANK");
    return r ? atoi(r) : 0;
}

/* Errors every node finds alike (options, a shared file) are printed by node 0 only. The
 * other nodes leave a moment later, so that csnrun, which stops the job at the first
 * failure, lets node 0 say why. */
static int pl_quiet_exit(int node, int code)
{
    if (node != 0) {
        struct timespec ts = {0, 300 * 1000 * 1000L};
        nanosleep(&ts, NULL);
    }
    return code;
}

/* Expands %r to the node number; 1 when the name had one. */
static int pl_expand(const char *in, int node, char *out, size_t cap)
{
    const char *r = strstr(in, "%r");
    if (!r) {
        snprintf(out, cap, "%s", in);
        return 0;
    }
    snprintf(out, cap, "%.*s%d%s", (int)(r - in), in, node, r + 2);
    return 1;
}

/* Checks the source and prepares the sink before anything is forked. */
static int pl_files(struct pl_node *n)
{
    const struct pl_opts *o = n->o;
    uint64_t slice = o->nbuf * (uint64_t)n->nnode * o->bufsize;
    if (o->source && o->source != pl_none) {
        int own = pl_expand(o->source, n->node, n->source_path, sizeof n->source_path);
        n->source_off = own ? 0 : (uint64_t)n->node * slice;
        int talk = own || n->node == 0;
        struct stat st;
        int fd = open(n->source_path, O_RDONLY | O_CLOEXEC);
        if (fd < 0 || fstat(fd, &st) != 0) {
            if (talk)
                fprintf(stderr, "pipeline: --source %s: %s\n", n->source_path, strerror(errno));
            if (fd >= 0)
                close(fd);
            return -1;
        }
        close(fd);
        if ((uint64_t)st.st_size < n->source_off + slice) {
            if (talk)
                fprintf(stderr,
                        "pipeline: --source %s: %llu bytes, need %llu (%s NBUF*NNODE*bufsize = "
                        "%llu)\n",
                        n->source_path, (unsigned long long)st.st_size,
                        (unsigned long long)(n->source_off + slice),
                        own ? "one slice of" : "NNODE slices of", (unsigned long long)slice);
            return -1;
        }
    }
    if (o->sink && o->sink != pl_none) {
        int own = pl_expand(o->sink, n->node, n->sink_path, sizeof n->sink_path);
        n->sink_off = own ? 0 : (uint64_t)n->node * slice;
        uint64_t size = own ? slice : slice * (uint64_t)n->nnode;
        int fd = open(n->sink_path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
        /* Every node sets the same size before the start barrier, so no write is cut. */
        if (fd < 0 || ftruncate(fd, (off_t)size) != 0) {
            if (own || n->node == 0)
                fprintf(stderr, "pipeline: --sink %s: %s\n", n->sink_path, strerror(errno));
            if (fd >= 0)
                close(fd);
            return -1;
        }
        close(fd);
    }
    return 0;
}

static int pl_map(struct pl_node *n)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t head = sizeof(struct pl_shared) + (size_t)n->o->nphase * sizeof(struct pl_sync);
    uint64_t blen = (uint64_t)n->nnode * n->o->bufsize;
    head = (head + page - 1) / page * page;
    n->buf_stride = (size_t)((blen + page - 1) / page * page);
    uint64_t total = head + 2ull * (uint64_t)n->o->nphase * n->buf_stride;
    if (blen > PL_MAX_MAP || total > PL_MAX_MAP) {
        if (n->node == 0)
            fprintf(stderr, "pipeline: buffers need %llu bytes per node (over %llu)\n",
                    (unsigned long long)total, PL_MAX_MAP);
        return -1;
    }
    void *m = mmap(NULL, (size_t)total, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) {
        fprintf(stderr, "pipeline: node %d: mmap of %llu bytes: %s\n", n->node,
                (unsigned long long)total, strerror(errno));
        return -1;
    }
    n->map_len = (size_t)total;
    n->sh = m;
    n->bufs = (unsigned char *)m + head;
    return 0;
}

/* Sends one control message to node `to` and, if `in`, receives one; with the timeout
 * and the node's children watched. */
static int pl_ctl(struct pl_ctx *c, csn_transport *t, csn_netid *peers, int to,
                  const struct pl_msg *out, struct pl_msg *in)
{
    csn_status s = CSN_OK;
    const char *what = "send";
    char name[32];
    size_t got;
    if (out) {
        if (peers[to] == CSN_NULL_NETID) {
            snprintf(name, sizeof name, "pl.nsp.%d", to);
            what = name;
            s = csn_lookup_name(&peers[to], name);
            if (s != CSN_OK)
                goto fail;
        }
        what = "send";
        s = csn_tx_nb(t, peers[to], out, sizeof *out);
    } else {
        what = "receive";
        s = csn_rx_nb(t, in, sizeof *in, &got);
    }
    if (s != CSN_OK)
        goto fail;
    double t0 = pl_now();
    for (;;) {
        csn_netid id;
        void *b;
        csn_status op;
        s = csn_test(t, out ? CSN_TX : CSN_RX, 50000, &id, &b, &op);
        if (s == CSN_TX_READY || s == CSN_RX_READY) {
            s = op;
            if (s != CSN_OK)
                goto fail;
            return 0;
        }
        if (s != CSN_TIMEOUT)
            goto fail;
        if (atomic_load(&c->n->sh->abort) || (c->kids_left > 0 && pl_reap(c)))
            return -1;
        if (pl_now() - t0 > c->n->o->timeout_s)
            goto fail;
    }
fail:
    if (!atomic_load(&c->n->sh->abort))
        fprintf(stderr, "pipeline: node %d: control %s: %s\n", c->n->node, what,
                csn_status_string(s));
    pl_abort(c->n->sh, c->n->o->nphase);
    return -1;
}

/* Job-wide start: every node reports ready to node 0, which answers "go" to all. */
static int pl_barrier(struct pl_ctx *c, csn_transport *t, csn_netid *peers)
{
    struct pl_msg m = {.kind = PL_MSG_READY, .node = c->n->node};
    if (c->n->node != 0)
        return pl_ctl(c, t, peers, 0, &m, NULL) || pl_ctl(c, t, peers, 0, NULL, &m) ||
                       m.kind != PL_MSG_GO
                   ? -1
                   : 0;
    for (int i = 1; i < c->n->nnode; i++)
        if (pl_ctl(c, t, peers, 0, NULL, &m) || m.kind != PL_MSG_READY)
            return -1;
    m.kind = PL_MSG_GO;
    for (int i = 1; i < c->n->nnode; i++)
        if (pl_ctl(c, t, peers, i, &m, NULL))
            return -1;
    return 0;
}

int main(int argc, char **argv)
{
    struct pl_opts o;
    struct pl_node n;
    struct pl_ctx c;
    csn_transport *t = NULL;
    csn_netid *peers = NULL;
    struct pl_result *res = NULL;
    int rc = 1;
    const char *jsonl_path = NULL;
    FILE *jsonl = NULL;
    if (bench_jsonl_take_arg(&argc, argv, "pipeline", &jsonl_path) != 0)
        return pl_quiet_exit(pl_env_rank(), 2);

    if (bench_version(argc, argv))
        return 0;

    int pr = pl_parse(argc, argv, &o, pl_env_rank() == 0);
    if (pr)
        return pr == 1 ? 0 : pl_quiet_exit(pl_env_rank(), 2);
    if (!o.threads && !getenv("CSN_RANK") && !getenv("PMIX_RANK")) {
        fprintf(stderr, "pipeline: not started by csnrun: forked processes need the job's name "
                        "service (use csnrun -np NNODE pipeline ..., or --threads)\n");
        return 2;
    }

    memset(&n, 0, sizeof n);
    memset(&c, 0, sizeof c);
    n.o = &o;
    /* A csn wait spins briefly (threads) or sleeps at once (processes) unless the user asks
     * otherwise. With 2*NNODE*(NPHASE-1) stages per node handing blocks to each other, a
     * process's spin (yielding, 1 ms by default beyond the host's CPUs) only delays the
     * process that would bring its block; a thread's short spin lets a block that arrives
     * within a few turns of the others in its process be taken without the doorbell and
     * wake-up a sleep costs (measured in bench/pipeline/RESULTS.md). Inherited. */
    setenv("CSN_SPIN_US", o.threads ? "100" : "0", 0);
    /* SCHED_BATCH before any thread or fork, so that all inherit it: a stage woken by a
     * hand-over does not preempt the one that woke it, which goes on handing over blocks
     * (threads: +10 % measured in bench/pipeline/RESULTS.md). Any user may choose it. */
    if (!o.sched_normal) {
        struct sched_param sp = {0};
        if (sched_setscheduler(0, SCHED_BATCH, &sp) != 0)
            fprintf(stderr, "pipeline: sched_setscheduler(SCHED_BATCH): %s (going on)\n",
                    strerror(errno));
    }
    csn_status s = csn_open(&t);
    if (s != CSN_OK) {
        fprintf(stderr, "pipeline: csn_open: %s\n", csn_status_string(s));
        return 1;
    }
    n.node = csn_job_rank();
    n.nnode = csn_job_size();
    c.n = &n;
    if (n.node == 0 && jsonl_path && !(jsonl = bench_jsonl_open(jsonl_path, "pipeline"))) {
        rc = 2;
        goto out_close;
    }
    snprintf(c.who, sizeof c.who, "node %d", n.node);
    if (n.nnode > PL_MAX_NODE || (uint64_t)n.nnode * o.nbuf > 0x7fffffffu) {
        if (n.node == 0)
            fprintf(stderr,
                    "pipeline: NNODE %d (limit %d) or NNODE*NBUF (limit 2^31-1) too large\n",
                    n.nnode, PL_MAX_NODE);
        goto out_close;
    }
    peers = calloc((size_t)n.nnode, sizeof *peers);
    res = calloc((size_t)n.nnode, sizeof *res);
    if (!peers || !res || pl_children(&c, o.nphase) || pl_files(&n) || pl_map(&n))
        goto out_close;

    char myname[32];
    snprintf(myname, sizeof myname, "pl.nsp.%d", n.node);
    s = csn_register_name(t, myname);
    if (s != CSN_OK) {
        fprintf(stderr, "pipeline: node %d: register %s: %s\n", n.node, myname,
                csn_status_string(s));
        goto out_unmap;
    }
    if (n.node == 0)
        pl_report_header(stdout, &o, n.nnode);
    fflush(stdout);
    fflush(stderr);
    pl_install_signals(n.sh, o.nphase);

    for (int p = 0; p < o.nphase; p++)
        if (pl_start(&c, PL_ROLE_PHASE, p, 0))
            goto abort;

    /* Seed: once all connections exist, each node starts its first phase and notes the
     * time; the last phase notes the completion. */
    uint32_t nchild = 2u * (uint32_t)(o.nphase - 1) * (uint32_t)n.nnode;
    if (pl_wait_ge(&c, &n.sh->ready, nchild, "the phases to connect") || pl_barrier(&c, t, peers))
        goto abort;
    n.sh->t_start = pl_now();
    pl_add_wake(&n.sh->start, 1);
    /* The run may last long: the rank waits without its own timeout (every phase process
     * has one per wait) but still sees dead children and aborts. */
    c.no_timeout = 1;
    if (pl_wait_ge(&c, &n.sh->done, 1, "the last phase"))
        goto abort;
    if (pl_finish(&c, (double)o.timeout_s))
        goto abort;

    struct pl_msg m = {
        .kind = PL_MSG_RESULT, .node = n.node, .seconds = n.sh->t_end - n.sh->t_start};
    gethostname(m.host, sizeof m.host - 1);
    if (n.node != 0) {
        if (pl_ctl(&c, t, peers, 0, &m, NULL))
            goto abort;
    } else {
        res[0].node = 0;
        res[0].seconds = m.seconds;
        memcpy(res[0].host, m.host, sizeof m.host);
        for (int i = 1; i < n.nnode; i++) {
            if (pl_ctl(&c, t, peers, 0, NULL, &m))
                goto abort;
            if (m.kind != PL_MSG_RESULT || m.node < 1 || m.node >= n.nnode) {
                fprintf(stderr, "pipeline: node 0: unexpected control message %u\n", m.kind);
                goto abort;
            }
            res[m.node].node = m.node;
            res[m.node].seconds = m.seconds;
            memcpy(res[m.node].host, m.host, sizeof m.host);
            res[m.node].host[sizeof res[m.node].host - 1] = '\0';
        }
        pl_report_table(stdout, &o, n.nnode, res);
        if (o.json && pl_report_json(o.json, &o, n.nnode, res)) {
            fprintf(stderr, "pipeline: --json %s: %s\n", o.json, strerror(errno));
            goto out_unmap;
        }
        if (jsonl) {
            FILE *f = jsonl;
            jsonl = NULL;
            if (pl_report_jsonl(f, jsonl_path, &o, n.nnode, res, argc, argv))
                goto out_unmap;
        }
    }
    rc = 0;
    goto out_unmap;

abort:
    pl_abort(n.sh, o.nphase);
    if (pl_finish(&c, 5.0) == -2) {
        /* --threads: some thread is stuck in a csn call; leave without running the
         * library's exit handlers under it. */
        fflush(stdout);
        _exit(pl_got_signal ? 128 + pl_got_signal : 1);
    }
out_unmap:
    munmap(n.sh, n.map_len);
out_close:
    if (jsonl)
        fclose(jsonl);
    csn_close(&t);
    pl_children_free(&c);
    free(peers);
    free(res);
    if (rc && !n.sh)
        rc = pl_quiet_exit(n.node, rc); /* failed before the run: maybe silently */
    if (pl_got_signal) {
        /* Ended by csnrun (or the user): leave with that signal, as the shell expects. */
        signal(pl_got_signal, SIG_DFL);
        raise(pl_got_signal);
    }
    return rc;
}
