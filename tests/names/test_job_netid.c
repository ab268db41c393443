/* test_job_netid.c: csn_job_netid gives every rank's first transport without a lookup: after
 * a barrier each rank sends its rank to the next one's csn_job_netid and receives from the
 * previous one, with the sender's netid matching; out-of-range ranks give CSN_NULL_NETID.
 * csn_job_transport names the transport of each pair: "self" for a rank and itself, the
 * intra-host one between ranks of this (single-host) job, NULL out of range (across hosts:
 * tests/netns/testbed.sh nettest). */
#include <csn.h>
#include <stdio.h>
#include <string.h>

#define CHECK(c)                                                                                   \
    do {                                                                                           \
        if (!(c)) {                                                                                \
            fprintf(stderr, "test_job_netid: rank %d: %s failed (line %d)\n", me, #c, __LINE__);   \
            goto fail;                                                                             \
        }                                                                                          \
    } while (0)

int main(void)
{
    csn_transport *t = NULL, *second = NULL;
    int me = csn_job_rank(), n = csn_job_size(), got = -1;
    csn_netid from;
    size_t len = 0;

    CHECK(csn_job_netid(-1) == CSN_NULL_NETID);
    CHECK(csn_job_netid(n) == CSN_NULL_NETID);
    CHECK(csn_open(&t) == CSN_OK);
    CHECK(csn_netid_of(t) == csn_job_netid(me));
    CHECK(csn_open(&second) == CSN_OK);
    CHECK(csn_netid_of(second) != csn_job_netid(me));
    CHECK(csn_netid_rank(csn_job_netid(n - 1)) == n - 1);
    CHECK(csn_job_barrier(t) == CSN_OK);
    CHECK(csn_tx_nb(t, csn_job_netid((me + 1) % n), &me, sizeof me) == CSN_OK);
    from = csn_job_netid((me + n - 1) % n);
    CHECK(csn_rx(t, &from, &got, sizeof got, &len) == CSN_OK);
    CHECK(len == sizeof got && got == (me + n - 1) % n);
    {
        csn_netid id;
        void *buf;
        csn_status op;
        CHECK(csn_test(t, CSN_TX, CSN_FOREVER, &id, &buf, &op) == CSN_TX_READY && op == CSN_OK);
    }
    CHECK(csn_job_barrier(t) == CSN_OK);
    CHECK(csn_job_transport(me, me) != NULL && strcmp(csn_job_transport(me, me), "self") == 0);
    CHECK(csn_job_transport(-1, 0) == NULL && csn_job_transport(0, n) == NULL);
    for (int r = 0; r < n; r++)
        CHECK(r == me || (csn_job_transport(me, r) != NULL &&
                          strcmp(csn_job_transport(me, r), csn_transport_name()) == 0));
    csn_close(&second);
    csn_close(&t);
    if (me == 0)
        printf("job_netid: %d ranks reached without a lookup\n", n);
    return 0;
fail:
    csn_close(&second);
    csn_close(&t);
    return 1;
}
