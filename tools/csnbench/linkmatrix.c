/* linkmatrix.c: per-pair bandwidth of every pair of ranks, each pair alone and all pairs at once
 * (the all-to-all load), as mpiGraph draws it: a bad cable or port stands out as a cold cell.
 * Built on the bench comm layer, so linkmatrix-mpi is the same program over MPI. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comm.h"
#include "jsonl.h"
#include "parse_size.h"

#define LM_HOST 128
#define LM_MAX_SIZE ((size_t)1 << 28)
#define LM_MAX_ITERS 100000

static const char lm_usage[] =
    "usage: csnrun -np N linkmatrix [--size SIZE] [--iters N] [--jsonl FILE]\n"
    "       (MPI twin: mpirun -np N linkmatrix-mpi ...)\n"
    "Bandwidth of every ordered pair of ranks (receiver row, sender column), MB/s = 1e6 B/s:\n"
    "  alone:  one pair at a time exchanges N messages of SIZE in both directions while the\n"
    "          others wait; the rate is what the receiver got over the pair's exchange\n"
    "  loaded: every rank sends N messages of SIZE to every other at once (all-to-all); the\n"
    "          rate from a peer is what arrived from it over the time its last message took\n"
    "  --size SIZE   message size, K/M/G suffixes (default 1M)\n"
    "  --iters N     messages per pair and direction (default 10)\n"
    "  --jsonl FILE  one JSON Lines record per matrix cell (docs/results-jsonl.md)\n"
    "  --help        this text\n";

/* Rank 0 prints one matrix. */
static void lm_print(const char *title, const double *m, int np, const char *hosts)
{
    printf("# %s: MB/s received by the row's rank from the column's rank\n%8s", title,
           "recv\\send");
    for (int j = 0; j < np; j++)
        printf(" %9d", j);
    printf("\n");
    for (int i = 0; i < np; i++) {
        printf("%8d ", i);
        for (int j = 0; j < np; j++) {
            if (i == j)
                printf(" %9s", "-");
            else
                printf(" %9.1f", m[(size_t)i * np + j]);
        }
        printf("   %s\n", hosts + (size_t)i * LM_HOST);
    }
    fflush(stdout);
}

static void lm_check(const comm_req *r, int n)
{
    for (int k = 0; k < n; k++)
        if (r[k].status != 0)
            comm_abort(1, "linkmatrix: %s %s rank %d failed: %s", r[k].is_send ? "send" : "receive",
                       r[k].is_send ? "to" : "from", r[k].peer, comm_status_string(r[k].status));
}

int main(int argc, char **argv)
{
    const char *jsonl_path = NULL;
    size_t size = 1 << 20;
    long iters = 10;
    if (bench_jsonl_take_arg(&argc, argv, "linkmatrix", &jsonl_path) != 0)
        return 2;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--help") == 0) {
            fputs(lm_usage, stdout);
            return 0;
        } else if (strcmp(a, "--size") == 0 && v) {
            if (bench_parse_size(v, LM_MAX_SIZE, &size) != 0 || size == 0) {
                fprintf(stderr, "linkmatrix: bad --size '%s' (1 .. 256M)\n", v);
                return 2;
            }
            i++;
        } else if (strcmp(a, "--iters") == 0 && v) {
            char *end;
            iters = strtol(v, &end, 10);
            if (*end != '\0' || end == v || iters < 1 || iters > LM_MAX_ITERS) {
                fprintf(stderr, "linkmatrix: bad --iters '%s' (1 .. %d)\n", v, LM_MAX_ITERS);
                return 2;
            }
            i++;
        } else {
            fprintf(stderr, "linkmatrix: unknown or incomplete argument '%s' (see --help)\n", a);
            return 2;
        }
    }
    if (comm_init(&argc, &argv) != 0)
        return 1;
    double t_begin = comm_wtime();
    int me = comm_rank(), np = comm_size(), rc = 0, ok = 1;
    FILE *jsonl = NULL;
    if (np < 2) {
        if (me == 0)
            fprintf(stderr, "linkmatrix: needs at least 2 ranks, got %d\n", np);
        comm_finalize();
        return 2;
    }
    if (me == 0 && jsonl_path && !(jsonl = bench_jsonl_open(jsonl_path, "linkmatrix")))
        ok = 0;
    comm_bcast_int(&ok, 1);
    if (!ok) {
        comm_finalize();
        return 2;
    }
    size_t n = (size_t)np;
    char *hosts = calloc(n, LM_HOST), *sbuf = malloc(size), *rbuf = malloc(size * n);
    double *row = calloc(n, sizeof *row), *alone = calloc(n * n, sizeof *alone),
           *loaded = calloc(n * n, sizeof *loaded);
    comm_req *req = calloc(2 * n, sizeof *req);
    if (!hosts || !sbuf || !rbuf || !row || !alone || !loaded || !req)
        comm_abort(1, "linkmatrix: out of memory for %d ranks of %zu bytes", np, size);
    memset(sbuf, 0x5a, size);
    memset(rbuf, 0, size * n);
    comm_gather_str(comm_hostname(), hosts, LM_HOST);

    /* Each pair alone: a and b exchange iters messages both ways; the others wait. */
    for (int a = 0; a < np; a++) {
        for (int b = a + 1; b < np; b++) {
            comm_barrier();
            if (me != a && me != b)
                continue;
            int peer = me == a ? b : a;
            double t0 = 0;
            for (long k = -1; k < iters; k++) { /* k = -1: warm-up (connection set-up) */
                if (k == 0)
                    t0 = comm_wtime();
                comm_irecv(rbuf, size, peer, &req[0]);
                comm_isend(sbuf, size, peer, &req[1]);
                comm_waitall(2, req);
                lm_check(req, 2);
            }
            row[peer] = (double)size * (double)iters / (comm_wtime() - t0) / 1e6;
        }
    }
    comm_gather_doubles(row, np, alone);

    /* All pairs at once: every rank sends to and receives from every other, iters rounds;
     * the time of the last message from each peer gives that peer's rate. */
    memset(row, 0, n * sizeof *row);
    comm_barrier();
    double t0 = comm_wtime();
    for (long k = -1; k < iters; k++) { /* k = -1: warm-up, then a barrier starts the clock */
        if (k == 0) {
            comm_barrier();
            t0 = comm_wtime();
        }
        int nr = 0;
        for (int j = 1; j < np; j++) {
            int from = (me - j + np) % np, to = (me + j) % np;
            comm_irecv(rbuf + (size_t)from * size, size, from, &req[nr++]);
            comm_isend(sbuf, size, to, &req[nr++]);
        }
        for (int left = nr; left > 0; left--) {
            int idx;
            comm_waitany(nr, req, &idx);
            lm_check(&req[idx], 1);
            if (!req[idx].is_send && k == iters - 1)
                row[req[idx].peer] = (double)size * (double)iters / (comm_wtime() - t0) / 1e6;
        }
    }
    comm_gather_doubles(row, np, loaded);

    if (me == 0) {
        for (int i = 0; i < np; i++)
            hosts[(size_t)i * LM_HOST + LM_HOST - 1] = '\0';
        printf("# linkmatrix: %s over %s, %d ranks, %zu-byte messages, %ld per pair and "
               "direction\n",
               comm_library(), comm_transport(), np, size, iters);
        lm_print("each pair alone", alone, np, hosts);
        lm_print("all pairs at once (all-to-all)", loaded, np, hosts);
        if (jsonl) {
            char opts[96];
            snprintf(opts, sizeof opts, "{\"size\":%zu,\"iters\":%ld}", size, iters);
            struct bench_jsonl_prov h = {.tool = "linkmatrix",
                                         .flavour = bench_jsonl_flavour(comm_library()),
                                         .library = comm_library(),
                                         .version = comm_library(),
                                         .transport = comm_transport(),
                                         .hosts = hosts,
                                         .host_each = LM_HOST,
                                         .nhosts = np,
                                         .argc = argc,
                                         .argv = argv,
                                         .options = opts};
            bench_jsonl_header(jsonl, &h);
            for (int pass = 0; pass < 2; pass++) {
                const double *m = pass == 0 ? alone : loaded;
                for (int i = 0; i < np; i++)
                    for (int j = 0; j < np; j++) {
                        if (i == j)
                            continue;
                        struct bench_jsonl_rec e = bench_jsonl_rec_init(
                            pass == 0 ? "alone" : "loaded", "bandwidth", "MB/s", "sample");
                        e.size = (long long)size;
                        e.pair_a = j; /* sender */
                        e.pair_b = i; /* receiver */
                        e.n = iters;
                        e.value = m[(size_t)i * n + j];
                        bench_jsonl_write(jsonl, "linkmatrix", &e);
                    }
            }
            if (bench_jsonl_close(jsonl, "linkmatrix", jsonl_path, "ok", comm_wtime() - t_begin) !=
                0)
                rc = 1;
        }
    }
    comm_barrier();
    free(hosts);
    free(sbuf);
    free(rbuf);
    free(row);
    free(alone);
    free(loaded);
    free(req);
    comm_finalize();
    return rc;
}
