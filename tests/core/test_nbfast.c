/* test_nbfast.c: csn_tx_nb's direct path (issue 19): a small message written straight into
 * the ring still respects CSN_MAX_OPS (CSN_BUSY before anything leaves), its completions come
 * back from csn_test oldest first with their buffers, and every message arrives once, in order.
 * Then the receive side: a message csn_test reads from the ring itself into a posted receive
 * is handed to it without the completion queue unless an older completion waits there; either
 * way csn_test reports the receives oldest first with their buffers, the bytes received and
 * CSN_OVERRUN for a short buffer, and a queued transmit's completion is not lost or reordered.
 * Run: CSN_MAX_OPS=4 csnrun -np 2 test_nbfast */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <csn.h>

#include "../test.h"

#define NB_OPS 4 /* CSN_MAX_OPS of the test */
#define NB_ROUNDS 200
/* Receives posted at once, the last one 4 bytes short: with one transmit, NB_OPS. */
#define NB_RX 3

/* Rank 1 posts NB_RX receives, then takes their completions: in even rounds with nothing else
 * queued (csn_test's look at the ring hands each over), in odd ones behind its ack's completion
 * (csn_tx_nb, queued first: the receives' completions queue behind it). Rank 0 sends NB_RX
 * messages and takes the ack. */
static void nbfast_rx(csn_transport *t, csn_netid peer, int me)
{
    for (int r = 0; r < NB_ROUNDS; r++) {
        uint32_t ack = (uint32_t)r;
        if (me == 0) {
            for (int i = 0; i < NB_RX; i++) {
                uint64_t v = (uint64_t)r * 100 + (uint64_t)i;
                CHECK_OK(csn_tx(t, peer, &v, sizeof v));
            }
            csn_netid from = peer;
            CHECK_OK(csn_rx(t, &from, &ack, sizeof ack, NULL));
            CHECK(ack == (uint32_t)r);
            continue;
        }
        uint64_t v[NB_RX];
        size_t got[NB_RX];
        for (int i = 0; i < NB_RX; i++) {
            v[i] = UINT64_MAX;
            got[i] = SIZE_MAX;
            CHECK_OK(csn_rx_nb_from(t, peer, &v[i], i == NB_RX - 1 ? 4 : sizeof v[i], &got[i]));
        }
        bool queued = r % 2 == 1;
        if (queued)
            CHECK_OK(csn_tx_nb(t, peer, &ack, sizeof ack));
        for (int i = 0; i < NB_RX; i++) {
            csn_netid id = CSN_NULL_NETID;
            void *buf = NULL;
            csn_status op = CSN_PEER_LOST;
            CHECK_EQ_STATUS(
                csn_test(t, queued ? CSN_RX : CSN_TX | CSN_RX, 10000000, &id, &buf, &op),
                CSN_RX_READY);
            uint64_t want = (uint64_t)r * 100 + (uint64_t)i;
            CHECK(id == peer && buf == &v[i]);
            if (i < NB_RX - 1) {
                CHECK(op == CSN_OK && got[i] == sizeof v[i] && v[i] == want);
            } else {
                CHECK(op == CSN_OVERRUN && got[i] == 4 && memcmp(&v[i], &want, 4) == 0);
            }
        }
        if (queued) {
            void *buf = NULL;
            CHECK_EQ_STATUS(csn_test(t, CSN_TX | CSN_RX, 10000000, NULL, &buf, NULL), CSN_TX_READY);
            CHECK(buf == &ack);
        } else {
            CHECK_OK(csn_tx(t, peer, &ack, sizeof ack));
        }
        CHECK_EQ_STATUS(csn_test(t, CSN_TX | CSN_RX, 0, NULL, NULL, NULL), CSN_TIMEOUT);
    }
}

int main(void)
{
    if (csn_job_size() != 2) {
        fprintf(stderr, "test_nbfast: run under csnrun -np 2\n");
        return TEST_SKIP;
    }
    int me = csn_job_rank();
    csn_transport *t = NULL;
    csn_netid peer;
    char name[32];
    CHECK_OK(csn_open(&t));
    snprintf(name, sizeof name, "nbfast.%d", me);
    CHECK_OK(csn_register_name(t, name));
    snprintf(name, sizeof name, "nbfast.%d", 1 - me);
    CHECK_OK(csn_lookup_name(&peer, name));
    uint64_t msg[NB_OPS + 1];
    uint32_t ack = 0;
    for (int r = 0; r < NB_ROUNDS; r++) {
        if (me == 0) {
            for (int i = 0; i < NB_OPS; i++) {
                msg[i] = (uint64_t)r * 100 + (uint64_t)i;
                CHECK_OK(csn_tx_nb(t, peer, &msg[i], sizeof msg[i]));
            }
            /* At the cap: refused, and nothing sent (the receiver counts). */
            msg[NB_OPS] = UINT64_MAX;
            CHECK_EQ_STATUS(csn_tx_nb(t, peer, &msg[NB_OPS], sizeof msg[NB_OPS]), CSN_BUSY);
            for (int i = 0; i < NB_OPS; i++) {
                csn_netid id = CSN_NULL_NETID;
                void *buf = NULL;
                csn_status op = CSN_PEER_LOST;
                CHECK_EQ_STATUS(csn_test(t, CSN_TX | CSN_RX, 10000000, &id, &buf, &op),
                                CSN_TX_READY);
                CHECK(op == CSN_OK && id == peer && buf == &msg[i]);
            }
            CHECK_EQ_STATUS(csn_test(t, CSN_TX, 0, NULL, NULL, NULL), CSN_TIMEOUT);
            csn_netid from = peer;
            CHECK_OK(csn_rx(t, &from, &ack, sizeof ack, NULL));
            CHECK(ack == (uint32_t)r);
        } else {
            for (int i = 0; i < NB_OPS; i++) {
                uint64_t v = 0;
                size_t got = 0;
                csn_netid from = peer;
                CHECK_OK(csn_rx(t, &from, &v, sizeof v, &got));
                CHECK(got == sizeof v && v == (uint64_t)r * 100 + (uint64_t)i);
            }
            ack = (uint32_t)r;
            CHECK_OK(csn_tx(t, peer, &ack, sizeof ack));
        }
    }
    nbfast_rx(t, peer, me);
    /* Nothing more came: the refused message never left. */
    if (me == 1) {
        uint64_t v = 0;
        CHECK_OK(csn_rx_nb(t, &v, sizeof v, NULL));
        CHECK_EQ_STATUS(csn_test(t, CSN_RX, 100000, NULL, NULL, NULL), CSN_TIMEOUT);
    }
    CHECK_OK(csn_job_barrier(t));
    CHECK_OK(csn_close(&t));
    return 0;
}
