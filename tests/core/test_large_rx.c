/* test_large_rx.c: the count of large receives outstanding (csn_transport.large_rx, which
 * makes every rendezvous and every message longer than half the shm eager size a pulled one
 * while it is above zero: both ways at once, core/match.c), under csnrun with 2 ranks. It must
 * be zero again after each kind of receive completed: a blocking receive longer than half the
 * eager size that took a small message straight from the ring (the direct path, which
 * completes without csni_complete), a non-blocking one taken by csn_test, a truncated one,
 * and an exchange both ways at 40 KiB, 64 KiB and 1 MiB with every receive posted first. A count
 * left above zero made every later large message of the transport pulled, a one-way stream
 * at half its rate. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "csn.h"
#include "core/tport.h"
#include "../test.h"

static csn_transport *T;
static csn_netid peer;
static int rank;

static unsigned large_rx(void)
{
    return atomic_load(&T->large_rx);
}

/* Rank 0 sends n bytes, rank 1 takes them with a blocking receive of cap bytes. */
static void one_way(size_t n, size_t cap, csn_status want)
{
    uint8_t *b = calloc(1, cap > n ? cap : n);
    CHECK(b);
    if (rank == 0) {
        memset(b, 0x3c, n);
        CHECK_OK(csn_tx(T, peer, b, n));
    } else {
        csn_netid from = peer;
        size_t got = 0;
        CHECK_EQ_STATUS(csn_rx(T, &from, b, cap, &got), want);
        CHECK(got == (n < cap ? n : cap) && (n == 0 || b[0] == 0x3c));
    }
    CHECK(large_rx() == 0);
    CHECK_OK(csn_job_barrier(T));
    free(b);
}

int main(void)
{
    CHECK(csn_job_size() == 2);
    rank = csn_job_rank();
    CHECK_OK(csn_open(&T));
    char name[32];
    snprintf(name, sizeof name, "lrx.%d", rank);
    CHECK_OK(csn_register_name(T, name));
    snprintf(name, sizeof name, "lrx.%d", 1 - rank);
    CHECK_OK(csn_lookup_name(&peer, name));
    CHECK(large_rx() == 0);

    one_way(8, 1u << 20, CSN_OK);          /* small message, large blocking receive */
    one_way(40000, 1u << 20, CSN_OK);      /* eager into a large receive */
    one_way(1u << 20, 1u << 20, CSN_OK);   /* rendezvous */
    one_way(1u << 20, 50000, CSN_OVERRUN); /* truncated */

    /* A non-blocking large receive that takes a small message. */
    uint8_t *b = calloc(1, 1u << 20);
    CHECK(b);
    size_t got = 0;
    csn_netid id;
    void *buf;
    csn_status st;
    if (rank == 1) {
        CHECK_OK(csn_rx_nb_from(T, peer, b, 1u << 20, &got));
        CHECK(large_rx() == 1);
    }
    CHECK_OK(csn_job_barrier(T));
    if (rank == 0) {
        CHECK_OK(csn_tx(T, peer, "x", 1));
    } else {
        CHECK_EQ_STATUS(csn_test(T, CSN_RX, CSN_FOREVER, &id, &buf, &st), CSN_RX_READY);
        CHECK(st == CSN_OK && got == 1 && b[0] == 'x');
    }
    CHECK(large_rx() == 0);
    CHECK_OK(csn_job_barrier(T));

    /* Both ways at once, receives first. */
    static const size_t sizes[] = {40000, 65536, 1u << 20};
    uint8_t *out = malloc(1u << 20);
    CHECK(out);
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        size_t n = sizes[k];
        memset(out, (int)(0x40 + k + (size_t)rank), n);
        CHECK_OK(csn_rx_nb_from(T, peer, b, n, &got)); /* done at once if the peer's was here */
        CHECK(large_rx() <= 1);
        CHECK_OK(csn_tx_nb(T, peer, out, n));
        for (int seen = 0; seen < 2; seen++) {
            csn_status r = csn_test(T, CSN_TX | CSN_RX, CSN_FOREVER, &id, &buf, &st);
            CHECK((r == CSN_TX_READY || r == CSN_RX_READY) && st == CSN_OK);
        }
        CHECK(got == n && b[0] == (uint8_t)(0x40 + k + (size_t)(1 - rank)) && b[n - 1] == b[0]);
        CHECK(large_rx() == 0);
        CHECK_OK(csn_job_barrier(T));
    }
    free(out);
    free(b);
    CHECK_OK(csn_close(&T));
    return 0;
}
