/* node.c: a node's phases, senders and receivers (processes, or threads with --threads). */
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "csn.h"
#include "pipeline.h"

#define PL_TEST_SLICE_US 50000
/* Operations a sender or receiver keeps in flight: one per buffer of the double buffer. */
#define PL_INFLIGHT 2

/* Waits in slices for the oldest completed operation of the kinds in flags, so that abort
 * and the timeout are seen. Returns the operation's status (CSN_OK, CSN_OVERRUN,
 * CSN_PEER_LOST, ...) with its peer and buffer, or CSN_TIMEOUT after --timeout seconds /
 * when the node aborts (*aborted set). */
static csn_status pl_complete(struct pl_ctx *c, csn_transport *t, unsigned flags, csn_netid *peer,
                              void **buf, int *aborted)
{
    double t0 = pl_now();
    *aborted = 0;
    for (;;) {
        csn_netid id;
        void *b;
        csn_status op;
        csn_status s = csn_test(t, flags, PL_TEST_SLICE_US, &id, &b, &op);
        if (s == CSN_TX_READY || s == CSN_RX_READY) {
            *peer = id;
            if (buf)
                *buf = b;
            return op;
        }
        if (s != CSN_TIMEOUT)
            return s;
        if (atomic_load(&c->n->sh->abort)) {
            *aborted = 1;
            return CSN_TIMEOUT;
        }
        if (pl_now() - t0 > c->n->o->timeout_s)
            return CSN_TIMEOUT;
    }
}

/* Starts one operation and waits for it. *peer is the destination of a send; a receive
 * accepts any sender and sets *peer to it. */
static csn_status pl_xfer(struct pl_ctx *c, csn_transport *t, int is_tx, csn_netid *peer, void *buf,
                          size_t len, size_t *received, int *aborted)
{
    csn_status s = is_tx ? csn_tx_nb(t, *peer, buf, len) : csn_rx_nb(t, buf, len, received);
    csn_netid id = CSN_NULL_NETID;
    *aborted = 0;
    if (s != CSN_OK)
        return s;
    s = pl_complete(c, t, is_tx ? CSN_TX : CSN_RX, &id, NULL, aborted);
    if (!is_tx)
        *peer = id;
    return s;
}

/* One line for a failed csn operation (quiet when the node is already aborting). */
static int pl_csn_fail(struct pl_ctx *c, const char *what, csn_status s, int aborted)
{
    if (!aborted && !atomic_load(&c->n->sh->abort)) {
        if (s == CSN_TIMEOUT)
            fprintf(stderr, "pipeline: %s: %s: no completion within %u s\n", c->who, what,
                    c->n->o->timeout_s);
        else
            fprintf(stderr, "pipeline: %s: %s: %s\n", c->who, what, csn_status_string(s));
    }
    pl_abort(c->n->sh, c->n->o->nphase);
    return 1;
}

static int pl_open(struct pl_ctx *c, csn_transport **t)
{
    csn_status s = csn_open(t);
    if (s != CSN_OK) {
        fprintf(stderr,
                "pipeline: %s: csn_open in a forked process failed: %s (started by csnrun?)\n",
                c->who, csn_status_string(s));
        pl_abort(c->n->sh, c->n->o->nphase);
        return 1;
    }
    return 0;
}

/* Where block j stands in the order in which the first phase fills a buffer and the last
 * phase empties one: the blocks of the other nodes first, starting with the next node (so
 * that the nodes' first sends go to different nodes), this node's own block last. */
static uint32_t pl_block_pos(const struct pl_node *n, int j)
{
    return (uint32_t)((j - n->node - 1 + 2 * n->nnode) % n->nnode);
}

/* Sender j of phase p: drains block j of each filled buffer to receiver <node> of phase
 * p+1 on node j. */
static int pl_sender(struct pl_ctx *c, int p, int j)
{
    struct pl_node *n = c->n;
    struct pl_sync *sy = &n->sh->phase[p];
    csn_transport *t = NULL;
    csn_netid to;
    char name[96];
    int aborted, rc = 1;
    csn_status s;

    if (pl_open(c, &t))
        return 1;
    snprintf(name, sizeof name, "pl.%d.%d.recv.%d", p + 1, j, n->node);
    s = csn_lookup_name(&to, name);
    if (s != CSN_OK) {
        pl_csn_fail(c, name, s, 0);
        goto out;
    }
    /* An empty hello makes the connection before the clock starts (seed: all socket
     * connections are established first). */
    char hello = 0;
    s = pl_xfer(c, t, 1, &to, &hello, 0, NULL, &aborted);
    if (s != CSN_OK) {
        pl_csn_fail(c, "hello", s, aborted);
        goto out;
    }
    pl_add_wake(&n->sh->ready, 1);

    /* Both buffers' sends may be in flight at once (PL_INFLIGHT): the send of buffer i+1
     * starts as soon as it is filled, without waiting for the completion of buffer i's.
     * The first phase hands its buffer over block by block (pl_first): there, sender j
     * waits only for its own block, and only for wakes of its block's bit. */
    uint32_t nn = (uint32_t)n->nnode;
    uint32_t own = p == 0 ? pl_block_pos(n, j) + 1 : nn, bits = 1u << (j % 32);
    uint64_t b = n->o->bufsize, nbuf = n->o->nbuf, posted = 0, done = 0;
    while (done < nbuf) {
        while (posted < nbuf && posted < done + PL_INFLIGHT) {
            int k = (int)(posted & 1);
            uint32_t need = nn * (uint32_t)(posted / 2) + own;
            if (atomic_load_explicit(&sy->filled[k].v, memory_order_acquire) < need) {
                if (posted > done)
                    break; /* complete what is in flight first */
                if (pl_wait_count(c, &sy->filled[k], need, p == 0 ? bits : FUTEX_BITSET_MATCH_ANY,
                                  "a filled buffer"))
                    goto out;
            }
            s = csn_tx_nb(t, to, pl_buf(n, p, k) + j * b, b);
            if (s != CSN_OK) {
                pl_csn_fail(c, "send", s, 0);
                goto out;
            }
            posted++;
        }
        csn_netid id;
        s = pl_complete(c, t, CSN_TX, &id, NULL, &aborted);
        if (s != CSN_OK) {
            char what[48];
            snprintf(what, sizeof what, "send of buffer %llu", (unsigned long long)done);
            pl_csn_fail(c, what, s, aborted);
            goto out;
        }
        /* Sends to one receiver complete in order: this was buffer `done`. */
        pl_count_add(&sy->drained[done & 1], FUTEX_BITSET_MATCH_ANY, nn);
        done++;
        if (n->o->die_after && done == n->o->die_after && j == 0 && p == n->o->nphase - 2 &&
            n->node == n->nnode - 1)
            raise(SIGKILL);
    }
    rc = 0;
out:
    csn_close(&t);
    return rc;
}

/* Receiver j of phase p: fills block j of each free buffer with what sender <node> of
 * phase p-1 on node j sends. */
static int pl_receiver(struct pl_ctx *c, int p, int j)
{
    struct pl_node *n = c->n;
    struct pl_sync *sy = &n->sh->phase[p];
    csn_transport *t = NULL;
    csn_netid from = CSN_NULL_NETID, sender = CSN_NULL_NETID;
    char name[96], hello[1];
    size_t got[2] = {0, 0}; /* received lengths, one per buffer */
    int aborted, rc = 1;
    csn_status s;

    if (pl_open(c, &t))
        return 1;
    snprintf(name, sizeof name, "pl.%d.%d.recv.%d", p, n->node, j);
    s = csn_register_name(t, name);
    if (s != CSN_OK) {
        pl_csn_fail(c, name, s, 0);
        goto out;
    }
    /* The hello names our one sender; all data must come from it. (Receives accept any
     * sender: a transport closed after its last send would not pass a from-filter.) */
    s = pl_xfer(c, t, 0, &sender, hello, sizeof hello, &got[0], &aborted);
    if (s != CSN_OK || got[0] != 0) {
        pl_csn_fail(c, "hello", s != CSN_OK ? s : CSN_OVERRUN, aborted);
        goto out;
    }
    pl_add_wake(&n->sh->ready, 1);

    /* The receives of both buffers are posted as soon as each is free (PL_INFLIGHT), so
     * that a block finds its receive waiting more often and is copied once, straight into
     * the buffer. The last phase gives its buffer back block by block (pl_last): there,
     * receiver j waits only for its own block, and only for wakes of its block's bit. */
    uint32_t nn = (uint32_t)n->nnode;
    int last = p == n->o->nphase - 1;
    uint32_t own = last ? pl_block_pos(n, j) + 1 : nn, bits = 1u << (j % 32);
    uint64_t b = n->o->bufsize, nbuf = n->o->nbuf, posted = 0, done = 0;
    while (done < nbuf) {
        while (posted < nbuf && posted < done + PL_INFLIGHT) {
            int k = (int)(posted & 1);
            /* Round r of buffer k needs round r-1's block given back. */
            uint32_t r = (uint32_t)(posted / 2), need = r ? nn * (r - 1) + own : 0;
            if (atomic_load_explicit(&sy->drained[k].v, memory_order_acquire) < need) {
                if (posted > done)
                    break; /* complete what is in flight first */
                if (pl_wait_count(c, &sy->drained[k], need, last ? bits : FUTEX_BITSET_MATCH_ANY,
                                  "a drained buffer"))
                    goto out;
            }
            s = csn_rx_nb(t, pl_buf(n, p, k) + j * b, b, &got[k]);
            if (s != CSN_OK) {
                pl_csn_fail(c, "receive", s, 0);
                goto out;
            }
            posted++;
        }
        int k = (int)(done & 1);
        void *where = NULL;
        s = pl_complete(c, t, CSN_RX, &from, &where, &aborted);
        if (s == CSN_OK && (got[k] != b || from != sender || where != pl_buf(n, p, k) + j * b)) {
            if (!atomic_load(&n->sh->abort))
                fprintf(stderr,
                        "pipeline: %s: buffer %llu: %zu bytes from netid %#llx, expected %llu "
                        "from %#llx\n",
                        c->who, (unsigned long long)done, got[k], (unsigned long long)from,
                        (unsigned long long)b, (unsigned long long)sender);
            pl_abort(n->sh, n->o->nphase);
            goto out;
        }
        if (s != CSN_OK) {
            char what[48];
            snprintf(what, sizeof what, "receive of buffer %llu", (unsigned long long)done);
            pl_csn_fail(c, what, s, aborted);
            goto out;
        }
        pl_count_add(&sy->filled[k], FUTEX_BITSET_MATCH_ANY, nn);
        done++;
    }
    rc = 0;
out:
    csn_close(&t);
    return rc;
}

/* Reads exactly len bytes at off, or writes them; -1 with errno on failure or EOF. */
static int pl_pio(int fd, int is_write, unsigned char *p, size_t len, uint64_t off)
{
    while (len > 0) {
        ssize_t r = is_write ? pwrite(fd, p, len, (off_t)off) : pread(fd, p, len, (off_t)off);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            if (r == 0)
                errno = EIO;
            return -1;
        }
        p += r;
        len -= (size_t)r;
        off += (uint64_t)r;
    }
    return 0;
}

/* The first or last phase's end of the data: the file at path (opened with flags), or, when
 * path is empty, a buffer of blen bytes in memory, or nothing (opt is pl_none: *fd stays -1
 * and *mem NULL). 0, or 1 after one line on stderr. */
static int pl_end_open(struct pl_ctx *c, const char *opt, const char *path, int flags, size_t blen,
                       int *fd, unsigned char **mem)
{
    if (opt == pl_none)
        return 0;
    if (path[0]) {
        if ((*fd = open(path, flags | O_CLOEXEC)) < 0) {
            fprintf(stderr, "pipeline: %s: %s: %s\n", c->who, path, strerror(errno));
            return 1;
        }
    } else if ((*mem = aligned_alloc(4096, (blen + 4095) & ~(size_t)4095)) == NULL) {
        fprintf(stderr, "pipeline: %s: out of memory (%zu bytes)\n", c->who, blen);
        return 1;
    }
    return 0;
}

/* Moves block j of buffer round i between a phase buffer (blk) and the first or last phase's
 * end (pl_end_open): the file at path from byte off0 on, the memory buffer, or nothing.
 * is_write: to the end (the last phase), else from it. 0, or 1 after one line on stderr. */
static int pl_end_block(struct pl_ctx *c, const char *path, int fd, unsigned char *mem,
                        int is_write, unsigned char *blk, uint64_t off0, uint64_t i, int j)
{
    size_t b = c->n->o->bufsize, blen = (size_t)c->n->nnode * b;
    if (fd < 0) {
        if (mem) {
            unsigned char *m = mem + (size_t)j * b;
            memcpy(is_write ? m : blk, is_write ? blk : m, b);
        }
        return 0;
    }
    if (pl_pio(fd, is_write, blk, b, off0 + i * blen + (uint64_t)j * b) == 0)
        return 0;
    fprintf(stderr, "pipeline: %s: %s %s: %s\n", c->who, is_write ? "writing" : "reading", path,
            strerror(errno));
    return 1;
}

/* First phase: fills buffer k from the source, then lets the senders have it. */
static int pl_first(struct pl_ctx *c)
{
    struct pl_node *n = c->n;
    struct pl_sync *sy = &n->sh->phase[0];
    size_t b = n->o->bufsize, blen = (size_t)n->nnode * b;
    uint32_t nn = (uint32_t)n->nnode;
    uint64_t lead = n->o->lead;
    unsigned char *mem = NULL;
    int fd = -1, rc = 1;

    if (pl_end_open(c, n->o->source, n->source_path, O_RDONLY, blen, &fd, &mem))
        goto fail;
    if (mem)
        for (size_t q = 0; q < blen; q++)
            mem[q] = (unsigned char)(q * 131u + (unsigned)n->node * 7u);
    if (pl_wait_ge(c, &n->sh->start, 1, "the start signal"))
        goto fail;
    int k = 0;
    for (uint64_t i = 0; i < n->o->nbuf; i++) {
        if (pl_wait_count(c, &sy->drained[k], nn * (uint32_t)(i / 2), FUTEX_BITSET_MATCH_ANY,
                          "a drained buffer"))
            goto fail;
        /* The lead (flow control across the nodes): blocks sent far ahead of the receives
         * of the next phase arrive as unexpected messages, which csn buffers (a copy more
         * per block, and fresh memory, i.e. page faults, while that store grows to up to
         * CSN_UNEXPECTED_LIMIT); this node's last phase having consumed buffer i-lead
         * tells that the nodes' receivers got that far. Its give-back of this node's own
         * block completes a buffer (pl_last's order): only that wake concerns us. */
        if (lead && i >= lead) {
            uint64_t u = i - lead;
            if (pl_wait_count(c, &n->sh->phase[n->o->nphase - 1].drained[u & 1],
                              nn * (uint32_t)(u / 2 + 1), 1u << (n->node % 32),
                              "the last phase (--lead)"))
                goto fail;
        }
        /* Block by block, each handed to its sender at once: sender j's transfer overlaps
         * the filling of the next blocks. */
        for (uint32_t q = 0; q < nn; q++) {
            int j = (n->node + 1 + (int)q) % n->nnode;
            if (pl_end_block(c, n->source_path, fd, mem, 0, pl_buf(n, 0, k) + (size_t)j * b,
                             n->source_off, i, j))
                goto fail;
            pl_count_add(&sy->filled[k], 1u << (j % 32), 1);
        }
        k = !k;
    }
    /* The seed's last "wait for the senders' signal": every block went out. */
    uint64_t half = n->o->nbuf / 2;
    if (pl_wait_count(c, &sy->drained[0], nn * (uint32_t)(n->o->nbuf - half),
                      FUTEX_BITSET_MATCH_ANY, "the last sends") ||
        pl_wait_count(c, &sy->drained[1], nn * (uint32_t)half, FUTEX_BITSET_MATCH_ANY,
                      "the last sends"))
        goto fail;
    rc = 0;
fail:
    if (rc)
        pl_abort(n->sh, n->o->nphase);
    if (fd >= 0)
        close(fd);
    free(mem);
    return rc;
}

/* Last phase: takes each filled buffer to the sink, then gives it back to the receivers. */
static int pl_last(struct pl_ctx *c)
{
    struct pl_node *n = c->n;
    int p = n->o->nphase - 1;
    struct pl_sync *sy = &n->sh->phase[p];
    size_t b = n->o->bufsize, blen = (size_t)n->nnode * b;
    uint32_t nn = (uint32_t)n->nnode;
    unsigned char *mem = NULL;
    int fd = -1, rc = 1;

    if (pl_end_open(c, n->o->sink, n->sink_path, O_WRONLY, blen, &fd, &mem))
        goto fail;
    int k = 0;
    for (uint64_t i = 0; i < n->o->nbuf; i++) {
        if (pl_wait_count(c, &sy->filled[k], nn * (uint32_t)(i / 2 + 1), FUTEX_BITSET_MATCH_ANY,
                          "a filled buffer"))
            goto fail;
        /* Block by block, each given back to its receiver at once (the order of pl_first),
         * so that receiver j posts its next receive before its sender's next block comes. */
        for (uint32_t q = 0; q < nn; q++) {
            int j = (n->node + 1 + (int)q) % n->nnode;
            if (pl_end_block(c, n->sink_path, fd, mem, 1, pl_buf(n, p, k) + (size_t)j * b,
                             n->sink_off, i, j))
                goto fail;
            pl_count_add(&sy->drained[k], 1u << (j % 32), 1);
        }
        k = !k;
    }
    n->sh->t_end = pl_now();
    pl_add_wake(&n->sh->done, 1);
    rc = 0;
fail:
    if (rc)
        pl_abort(n->sh, n->o->nphase);
    if (fd >= 0)
        close(fd);
    free(mem);
    return rc;
}

static int pl_phase(struct pl_ctx *c, int p);

/* A child thread (--threads): its own context, its result. */
struct pl_thread {
    pthread_t id;
    struct pl_ctx c;
    enum pl_role role;
    int p, j, rc, started;
};

static int pl_run(struct pl_ctx *c, enum pl_role role, int p, int j)
{
    switch (role) {
    case PL_ROLE_PHASE:
        return pl_phase(c, p);
    case PL_ROLE_RECEIVER:
        return pl_receiver(c, p, j);
    default:
        return pl_sender(c, p, j);
    }
}

/* Names the calling process or thread after its part ("pl.s2.1": phase 2's sender 1;
 * "pl.r", "pl.p" for receivers and phase processes), so ps, top and perf tell them apart. */
static void pl_name_self(enum pl_role role, int p, int j)
{
    char nm[16];
    if (role == PL_ROLE_PHASE)
        snprintf(nm, sizeof nm, "pl.p%d", p);
    else
        snprintf(nm, sizeof nm, "pl.%c%d.%d", role == PL_ROLE_SENDER ? 's' : 'r', p, j);
    prctl(PR_SET_NAME, nm);
}

static void *pl_thread_main(void *arg)
{
    struct pl_thread *t = arg;
    pl_name_self(t->role, t->p, t->j);
    t->rc = pl_run(&t->c, t->role, t->p, t->j);
    return NULL;
}

int pl_children(struct pl_ctx *c, int max)
{
    c->kids = calloc((size_t)max, sizeof *c->kids);
    c->kid_name = calloc((size_t)max, sizeof *c->kid_name);
    c->th = calloc((size_t)max, sizeof *c->th);
    if (c->kids && c->kid_name && c->th)
        return 0;
    fprintf(stderr, "pipeline: %s: out of memory\n", c->who);
    return -1;
}

void pl_children_free(struct pl_ctx *c)
{
    free(c->kids);
    free(c->kid_name);
    free(c->th);
    c->kids = NULL;
    c->kid_name = NULL;
    c->th = NULL;
}

/* Starts one child: a process that _exits with the role's result (the parent's atexit
 * handlers and stdio buffers are not the child's to run), or a thread. */
int pl_start(struct pl_ctx *c, enum pl_role role, int p, int j)
{
    int idx = c->nkids;
    struct pl_ctx cc = {.n = c->n};
    if (role == PL_ROLE_PHASE) {
        snprintf(c->kid_name[idx], sizeof c->kid_name[idx], "phase %d", p);
        snprintf(cc.who, sizeof cc.who, "node %d phase %d", c->n->node, p);
    } else {
        const char *r = role == PL_ROLE_SENDER ? "sender" : "receiver";
        snprintf(c->kid_name[idx], sizeof c->kid_name[idx], "%s %d", r, j);
        snprintf(cc.who, sizeof cc.who, "node %d phase %d %s %d", c->n->node, p, r, j);
    }
    if (c->n->o->threads) {
        struct pl_thread *t = &c->th[idx];
        t->c = cc;
        t->role = role;
        t->p = p;
        t->j = j;
        int e = pthread_create(&t->id, NULL, pl_thread_main, t);
        if (e) {
            fprintf(stderr, "pipeline: %s: pthread_create: %s\n", c->who, strerror(e));
            return -1;
        }
        t->started = 1;
        c->nkids++;
        return 0;
    }
    pid_t me = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        fprintf(stderr, "pipeline: %s: fork: %s\n", c->who, strerror(errno));
        return -1;
    }
    if (pid == 0) {
        cc.parent = me;
        if (pl_child_setup(me))
            _exit(1);
        pl_name_self(role, p, j);
        _exit(pl_run(&cc, role, p, j));
    }
    c->kids[idx] = pid;
    c->nkids++;
    c->kids_left++;
    return 0;
}

int pl_finish(struct pl_ctx *c, double grace_s)
{
    if (!c->n->o->threads)
        return pl_reap_all(c, grace_s);
    int rc = 0;
    struct timespec dl;
    clock_gettime(CLOCK_REALTIME, &dl);
    dl.tv_sec += (time_t)grace_s + 1;
    for (int i = 0; i < c->nkids; i++) {
        struct pl_thread *t = &c->th[i];
        if (!t->started)
            continue;
        /* A thread cannot be killed: one stuck (say in a name lookup) is left to the
         * process exit. */
        if (pthread_timedjoin_np(t->id, NULL, &dl) != 0)
            return -2;
        t->started = 0;
        if (t->rc) {
            pl_abort(c->n->sh, c->n->o->nphase);
            rc = -1;
        }
    }
    return rc;
}

/* One phase: starts its receivers and senders, then plays the first or last phase's part
 * or (middle phases) just watches its children. */
static int pl_phase(struct pl_ctx *c, int p)
{
    struct pl_node *n = c->n;
    int last = n->o->nphase - 1;
    int rc = 1;

    if (pl_children(c, 2 * n->nnode))
        goto fail;
    for (int j = 0; j < n->nnode && p > 0; j++)
        if (pl_start(c, PL_ROLE_RECEIVER, p, j))
            goto fail;
    for (int j = 0; j < n->nnode && p < last; j++)
        if (pl_start(c, PL_ROLE_SENDER, p, j))
            goto fail;

    if (p == 0)
        rc = pl_first(c);
    else if (p == last)
        rc = pl_last(c);
    else if (!n->o->threads) {
        /* Middle phases only watch their children (seed: "step away"). */
        while (c->kids_left > 0 && !atomic_load(&n->sh->abort)) {
            if (pl_reap(c))
                break;
            struct timespec ts = {0, 20 * 1000 * 1000L};
            nanosleep(&ts, NULL);
        }
        rc = c->kids_left > 0 || atomic_load(&n->sh->abort) ? 1 : 0;
    } else {
        rc = 0; /* threads: pl_finish below is the watching */
    }
    if (rc)
        pl_abort(n->sh, n->o->nphase);
    /* Children finish on their own (normally, or on abort within a wait slice). */
    int f = pl_finish(c, rc ? 3.0 : (double)n->o->timeout_s);
    if (f == -2)
        return 1; /* threads left running: the node process ends them by exiting */
    if (f)
        rc = 1;
    goto out;
fail:
    pl_abort(n->sh, n->o->nphase);
    if (pl_finish(c, 3.0) == -2)
        return 1;
    rc = 1;
out:
    pl_children_free(c);
    return rc;
}
