/* test_bogus.c (2 ranks under csnrun): rendezvous-sized transmits to a transport of a live
 * process that never existed fail with CSN_ILLEGAL_NETID, blocking and not; to a transport that
 * closed with CSN_PEER_LOST; the job goes on working. (Eager-sized ones are still dropped
 * silently: see the closing note of issue 16.) */
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
        csn_netid bogus = netid(1, 100000);
        CHECK_EQ_STATUS(csn_tx(t, bogus, big, sizeof big), CSN_ILLEGAL_NETID);
        CHECK_OK(csn_tx_nb(t, netid(1, 100001), big, sizeof big));
        csn_netid id;
        void *b;
        csn_status st;
        CHECK_EQ_STATUS(csn_test(t, CSN_TX, 10000000, &id, &b, &st), CSN_TX_READY);
        CHECK(b == big && st == CSN_ILLEGAL_NETID);
        CHECK_EQ_STATUS(csn_tx(t, id2, big, sizeof big), CSN_PEER_LOST);
        /* The pair still works. */
        CHECK_OK(csn_tx(t, from, small, sizeof small));
        printf("bogus: never-existing transport refused (rendezvous, blocking and not); "
               "closed one lost\n");
    }
    if (me == 1) {
        CHECK_OK(csn_job_barrier(t));
        csn_netid from = CSN_NULL_NETID;
        CHECK_OK(csn_rx(t, &from, buf, sizeof buf, &got));
        CHECK(got == sizeof small && strcmp(buf, "bogus") == 0);
    }
    CHECK_OK(csn_job_barrier(t));
    CHECK_OK(csn_close(&t));
    return 0;
}
