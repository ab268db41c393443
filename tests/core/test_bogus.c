/* test_bogus.c (2 ranks under csnrun): transmits, eager-sized and rendezvous-sized, to a
 * transport of a live process that never existed fail with CSN_ILLEGAL_NETID, blocking and
 * not; to a transport that closed with CSN_PEER_LOST; messages to a transport opened later
 * (after the sender first heard of the process's transports) arrive, in order; a sender
 * closed while its first transmit to a new transport is held returns; the job goes on
 * working. */
#include <stdlib.h>
#include <string.h>

#include "csn.h"
#include "../test.h"

/* A netid of rank r with transport id tid (the layout of src/core/netid.h). */
static csn_netid netid(int r, uint32_t tid)
{
    return (csn_netid)0xC5 << 56 | (uint64_t)(uint32_t)r << 32 | tid;
}

int main(void)
{
    csn_transport *t, *t2 = NULL;
    static char big[1 << 20];
    char small[8] = "bogus", buf[16];
    size_t got;
    CHECK_OK(csn_open(&t));
    if (csn_job_size() != 2) {
        fprintf(stderr, "run with csnrun -np 2\n");
        return 2;
    }
    int me = csn_job_rank();
    /* Rank 0's first transport exists only once rank 0 is here: a transmit to it before then
     * fails with CSN_ILLEGAL_NETID, as it should. */
    CHECK_OK(csn_job_barrier(t));
    enum { LATE = 5 };
    csn_transport *t3 = NULL;
    if (me == 1) {
        /* A second transport, closed before rank 0 sends to it. */
        CHECK_OK(csn_open(&t2));
        csn_netid id2 = csn_netid_of(t2);
        CHECK_OK(csn_tx(t, netid(0, csn_netid_of(t) & 0xffffffffu), &id2, sizeof id2));
        CHECK_OK(csn_close(&t2));
    } else {
        csn_netid from = CSN_NULL_NETID, id2;
        CHECK_OK(csn_rx(t, &from, &id2, sizeof id2, &got));
        CHECK_OK(csn_job_barrier(t));
        csn_netid id;
        void *b;
        csn_status st;
        /* Never existed: rendezvous-sized, then eager-sized, blocking and not. */
        CHECK_EQ_STATUS(csn_tx(t, netid(1, 100000), big, sizeof big), CSN_ILLEGAL_NETID);
        CHECK_OK(csn_tx_nb(t, netid(1, 100001), big, sizeof big));
        CHECK_EQ_STATUS(csn_test(t, CSN_TX, 10000000, &id, &b, &st), CSN_TX_READY);
        CHECK(b == big && st == CSN_ILLEGAL_NETID);
        CHECK_EQ_STATUS(csn_tx(t, netid(1, 100002), small, sizeof small), CSN_ILLEGAL_NETID);
        CHECK_OK(csn_tx_nb(t, netid(1, 100003), small, sizeof small));
        CHECK_EQ_STATUS(csn_test(t, CSN_TX, 10000000, &id, &b, &st), CSN_TX_READY);
        CHECK(b == small && st == CSN_ILLEGAL_NETID);
        /* Closed: both sizes. */
        CHECK_EQ_STATUS(csn_tx(t, id2, big, sizeof big), CSN_PEER_LOST);
        CHECK_EQ_STATUS(csn_tx(t, id2, small, sizeof small), CSN_PEER_LOST);
        /* The pair still works. */
        CHECK_OK(csn_tx(t, from, small, sizeof small));
        printf("bogus: never-existing transport refused (eager and rendezvous, blocking and "
               "not); closed one lost\n");
    }
    if (me == 1) {
        CHECK_OK(csn_job_barrier(t));
        csn_netid from = CSN_NULL_NETID;
        CHECK_OK(csn_rx(t, &from, buf, sizeof buf, &got));
        CHECK(got == sizeof small && strcmp(buf, "bogus") == 0);
        /* A transport opened after rank 0 first heard of ours: its messages arrive, in order. */
        CHECK_OK(csn_open(&t3));
        csn_netid id3 = csn_netid_of(t3);
        CHECK_OK(csn_tx(t, from, &id3, sizeof id3));
        for (int i = 0; i < LATE; i++) {
            int v;
            csn_netid any = CSN_NULL_NETID;
            CHECK_OK(csn_rx(t3, &any, &v, sizeof v, &got));
            CHECK(got == sizeof v && v == i);
        }
        CHECK_OK(csn_close(&t3));
    } else {
        csn_netid from = CSN_NULL_NETID, id3, id;
        void *b;
        csn_status st;
        static int v[LATE];
        CHECK_OK(csn_rx(t, &from, &id3, sizeof id3, &got));
        for (int i = 0; i < LATE; i++) {
            v[i] = i;
            CHECK_OK(csn_tx_nb(t, id3, &v[i], sizeof v[i]));
        }
        for (int i = 0; i < LATE; i++) {
            CHECK_EQ_STATUS(csn_test(t, CSN_TX, 10000000, &id, &b, &st), CSN_TX_READY);
            CHECK_OK(st);
        }
        printf("bogus: %d messages to a transport opened late arrived in order\n", LATE);
    }
    /* A sending transport closed while its first transmit to a new transport is held for the
     * answer (or being sent by it): the close returns, nothing crashes or hangs, the pair goes
     * on working. Eager-sized and rendezvous-sized, ROUNDS times (a new id each time). */
    enum { ROUNDS = 20 };
    for (int r = 0; r < ROUNDS; r++) {
        csn_netid from = CSN_NULL_NETID, id5;
        if (me == 1) {
            csn_transport *t5 = NULL;
            CHECK_OK(csn_open(&t5));
            id5 = csn_netid_of(t5);
            CHECK_OK(csn_tx(t, netid(0, csn_netid_of(t) & 0xffffffffu), &id5, sizeof id5));
            CHECK_OK(csn_rx(t, &from, buf, sizeof buf, &got)); /* rank 0 closed its sender */
            CHECK_OK(csn_close(&t5));
        } else {
            csn_transport *t4 = NULL;
            CHECK_OK(csn_rx(t, &from, &id5, sizeof id5, &got));
            CHECK_OK(csn_open(&t4));
            CHECK_OK(
                csn_tx_nb(t4, id5, r & 1 ? (void *)big : small, r & 1 ? sizeof big : sizeof small));
            CHECK_OK(csn_close(&t4));
            CHECK_OK(csn_tx(t, from, small, sizeof small));
        }
    }
    if (me == 0)
        printf("bogus: %d senders closed with their first transmit held: no crash, no hang\n",
               ROUNDS);
    CHECK_OK(csn_job_barrier(t));
    CHECK_OK(csn_close(&t));
    return 0;
}
