/* nb_count.c: a loop of small non-blocking sends and their csn_test, for counting the
 * instructions of csn_tx_nb + csn_test (callgrind on rank 0) and timing them.
 *
 * usage: csnrun -np 2 nb-count [ITERS [WINDOW [SIZE]]]   (defaults 2000, 64, 8)
 * Rank 0: ITERS times, WINDOW csn_tx_nb of SIZE bytes, then WINDOW csn_test(CSN_TX), then a
 * blocking receive of rank 1's 4-byte ack. Rank 1: WINDOW blocking receives, then the ack.
 * Prints ns per message (send + test) on rank 0. Counting (BENCHMARKS.md, "Issue 19"):
 *   csnrun -np 2 sh -c 'if [ "$CSN_RANK" = 0 ]; then exec valgrind --tool=callgrind \
 *     --toggle-collect=csn_tx_nb --toggle-collect=csn_test nb-count; else exec nb-count; fi'
 * and Ir / (ITERS * WINDOW) is the count per message.
 * NB_COUNT_RX=1: rank 1 instead posts WINDOW csn_rx_nb_from (all into one buffer) and takes
 * their completions with csn_test(CSN_RX): run callgrind on rank 1 with
 * --toggle-collect=csn_rx_nb_from --toggle-collect=csn_test to count the receive side. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <csn.h>

static double nb_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int nb_arg(int argc, char **argv, int i, long dflt, long max, long *out)
{
    if (argc <= i) {
        *out = dflt;
        return 0;
    }
    char *end;
    long v = strtol(argv[i], &end, 10);
    if (*argv[i] == '\0' || *end != '\0' || v < 1 || v > max) {
        fprintf(stderr, "nb-count: bad argument '%s' (usage: nb-count [ITERS [WINDOW [SIZE]]])\n",
                argv[i]);
        return -1;
    }
    *out = v;
    return 0;
}

/* Takes n completions of kind (CSN_TX or CSN_RX) with csn_test: CSN_OK, or the first
 * failure (of the test, or of an operation). */
static csn_status nb_take(csn_transport *t, unsigned kind, long n)
{
    csn_status ready = kind == CSN_TX ? CSN_TX_READY : CSN_RX_READY;
    for (long j = 0; j < n; j++) {
        csn_status op = CSN_OK;
        csn_status st = csn_test(t, kind, 10000000, NULL, NULL, &op);
        if (st != ready)
            return st;
        if (op != CSN_OK)
            return op;
    }
    return CSN_OK;
}

int main(int argc, char **argv)
{
    long iters, window, size;
    if (argc > 4 || nb_arg(argc, argv, 1, 2000, 100000000, &iters) != 0 ||
        nb_arg(argc, argv, 2, 64, 1024, &window) != 0 ||
        nb_arg(argc, argv, 3, 8, 65536, &size) != 0) {
        if (argc > 4)
            fprintf(stderr, "nb-count: usage: nb-count [ITERS [WINDOW [SIZE]]]\n");
        return 2;
    }
    if (csn_job_size() != 2) {
        fprintf(stderr, "nb-count: needs exactly 2 ranks (csnrun -np 2 nb-count)\n");
        return 2;
    }
    int me = csn_job_rank(), rc = 1;
    csn_transport *t = NULL;
    csn_netid peer;
    char name[32];
    unsigned char *buf = calloc(1, (size_t)size);
    uint32_t ack = 0;
    csn_status st;
    if (!buf)
        goto fail;
    if ((st = csn_open(&t)) != CSN_OK)
        goto fail_st;
    snprintf(name, sizeof name, "nbcount.%d", me);
    if ((st = csn_register_name(t, name)) != CSN_OK)
        goto fail_st;
    snprintf(name, sizeof name, "nbcount.%d", 1 - me);
    if ((st = csn_lookup_name(&peer, name)) != CSN_OK)
        goto fail_st;
    const char *nbrx = getenv("NB_COUNT_RX");
    int rx_nb = nbrx != NULL && strcmp(nbrx, "1") == 0;
    double t0 = nb_now();
    for (long i = 0; i < iters; i++) {
        if (me == 0) {
            for (long j = 0; j < window; j++)
                if ((st = csn_tx_nb(t, peer, buf, (size_t)size)) != CSN_OK)
                    goto fail_st;
            if ((st = nb_take(t, CSN_TX, window)) != CSN_OK)
                goto fail_st;
            csn_netid from = peer;
            if ((st = csn_rx(t, &from, &ack, sizeof ack, NULL)) != CSN_OK)
                goto fail_st;
        } else if (rx_nb) {
            for (long j = 0; j < window; j++)
                if ((st = csn_rx_nb_from(t, peer, buf, (size_t)size, NULL)) != CSN_OK)
                    goto fail_st;
            if ((st = nb_take(t, CSN_RX, window)) != CSN_OK)
                goto fail_st;
            if ((st = csn_tx(t, peer, &ack, sizeof ack)) != CSN_OK)
                goto fail_st;
        } else {
            for (long j = 0; j < window; j++) {
                csn_netid from = peer;
                if ((st = csn_rx(t, &from, buf, (size_t)size, NULL)) != CSN_OK)
                    goto fail_st;
            }
            if ((st = csn_tx(t, peer, &ack, sizeof ack)) != CSN_OK)
                goto fail_st;
        }
    }
    double dt = nb_now() - t0;
    if (me == 0)
        printf("nb-count: %ld x %ld messages of %ld B: %.1f ns per message (send, test, "
               "one ack per window)\n",
               iters, window, size, dt / (double)(iters * window) * 1e9);
    rc = 0;
    goto out;
fail_st:
    fprintf(stderr, "nb-count: rank %d: %s\n", me, csn_status_string(st));
    goto out;
fail:
    fprintf(stderr, "nb-count: out of memory\n");
out:
    if (t && csn_close(&t) != CSN_OK)
        rc = 1;
    free(buf);
    return rc;
}
