/* test_match.c: the matcher, in one process (transports of one process send to each other
 * through the same posting and matching code as messages from peers): receives are matched
 * in posting order, one-source receives take only their source, an over-long message is cut
 * with CSN_OVERRUN, and the unexpected store holds at most CSN_UNEXPECTED_LIMIT bytes before
 * transmits stay incomplete until a receive is posted. */
#include <stdlib.h>
#include <string.h>

#include "csn.h"
#include "../test.h"

static csn_transport *a, *b, *c;

/* The next completion of t, which must come within a second. */
static csn_status next(csn_transport *t, unsigned flags, void **buf, csn_status *st)
{
    csn_netid id;
    return csn_test(t, flags, 1000000, &id, buf, st);
}

static void test_order(void)
{
    char m1[] = "first", m2[] = "second", r1[16], r2[16];
    size_t g1, g2;
    void *buf;
    csn_status st;
    CHECK_OK(csn_rx_nb(b, r1, sizeof r1, &g1));
    CHECK_OK(csn_rx_nb(b, r2, sizeof r2, &g2));
    CHECK_OK(csn_tx(a, csn_netid_of(b), m1, sizeof m1));
    CHECK_OK(csn_tx(a, csn_netid_of(b), m2, sizeof m2));
    CHECK_EQ_STATUS(next(b, CSN_RX, &buf, &st), CSN_RX_READY);
    CHECK(buf == r1 && st == CSN_OK && g1 == sizeof m1 && strcmp(r1, m1) == 0);
    CHECK_EQ_STATUS(next(b, CSN_RX, &buf, &st), CSN_RX_READY);
    CHECK(buf == r2 && st == CSN_OK && g2 == sizeof m2 && strcmp(r2, m2) == 0);
}

static void test_source(void)
{
    char from_a[] = "from a", from_c[] = "from c", r1[16], r2[16];
    size_t g1, g2;
    void *buf;
    csn_status st;
    /* Posted first, but only from c: a's message goes to the second (any) receive. */
    CHECK_OK(csn_rx_nb_from(b, csn_netid_of(c), r1, sizeof r1, &g1));
    CHECK_OK(csn_rx_nb(b, r2, sizeof r2, &g2));
    CHECK_OK(csn_tx(a, csn_netid_of(b), from_a, sizeof from_a));
    CHECK_EQ_STATUS(next(b, CSN_RX, &buf, &st), CSN_RX_READY);
    CHECK(buf == r2 && strcmp(r2, from_a) == 0);
    CHECK_EQ_STATUS(csn_test(b, CSN_RX, 0, NULL, NULL, NULL), CSN_TIMEOUT);
    CHECK_OK(csn_tx(c, csn_netid_of(b), from_c, sizeof from_c));
    CHECK_EQ_STATUS(next(b, CSN_RX, &buf, &st), CSN_RX_READY);
    CHECK(buf == r1 && strcmp(r1, from_c) == 0);
    /* Unexpected first: a one-source receive skips the other source's older message. */
    CHECK_OK(csn_tx(a, csn_netid_of(b), from_a, sizeof from_a));
    CHECK_OK(csn_tx(c, csn_netid_of(b), from_c, sizeof from_c));
    csn_netid src = csn_netid_of(c);
    CHECK_OK(csn_rx(b, &src, r1, sizeof r1, &g1));
    CHECK(src == csn_netid_of(c) && strcmp(r1, from_c) == 0);
    src = CSN_NULL_NETID;
    CHECK_OK(csn_rx(b, &src, r1, sizeof r1, &g1));
    CHECK(src == csn_netid_of(a) && strcmp(r1, from_a) == 0);
}

static void test_overrun(void)
{
    char msg[] = "0123456789", r[4];
    size_t got = 99;
    csn_netid src = CSN_NULL_NETID;
    CHECK_OK(csn_tx(a, csn_netid_of(b), msg, sizeof msg));
    CHECK_EQ_STATUS(csn_rx(b, &src, r, sizeof r, &got), CSN_OVERRUN);
    CHECK(got == sizeof r && memcmp(r, msg, sizeof r) == 0);
    /* Nothing else was lost: the next message is whole. */
    CHECK_OK(csn_tx(a, csn_netid_of(b), msg, 3));
    CHECK_OK(csn_rx(b, &src, r, sizeof r, &got));
    CHECK(got == 3 && memcmp(r, msg, 3) == 0);
}

/* CSN_UNEXPECTED_LIMIT is 4096 (set by the test's environment). */
static void test_bound(void)
{
    static char m[3][2000], r[2000];
    void *buf;
    csn_status st;
    size_t got;
    for (int i = 0; i < 3; i++) {
        memset(m[i], 'a' + i, sizeof m[i]);
        CHECK_OK(csn_tx_nb(a, csn_netid_of(b), m[i], sizeof m[i]));
    }
    /* Two fit the store and complete at once; the third waits for a receive. */
    CHECK_EQ_STATUS(next(a, CSN_TX, &buf, &st), CSN_TX_READY);
    CHECK(buf == m[0]);
    CHECK_EQ_STATUS(next(a, CSN_TX, &buf, &st), CSN_TX_READY);
    CHECK(buf == m[1]);
    CHECK_EQ_STATUS(csn_test(a, CSN_TX, 100000, NULL, NULL, NULL), CSN_TIMEOUT);
    for (int i = 0; i < 3; i++) {
        csn_netid src = CSN_NULL_NETID;
        CHECK_OK(csn_rx(b, &src, r, sizeof r, &got));
        CHECK(got == sizeof r && r[0] == 'a' + i && r[sizeof r - 1] == 'a' + i);
    }
    CHECK_EQ_STATUS(next(a, CSN_TX, &buf, &st), CSN_TX_READY);
    CHECK(buf == m[2] && st == CSN_OK);
}

int main(void)
{
    if (!getenv("CSN_UNEXPECTED_LIMIT") || strcmp(getenv("CSN_UNEXPECTED_LIMIT"), "4096") != 0) {
        fprintf(stderr, "run with CSN_UNEXPECTED_LIMIT=4096\n");
        return 2;
    }
    CHECK_OK(csn_open(&a));
    CHECK_OK(csn_open(&b));
    CHECK_OK(csn_open(&c));
    test_order();
    test_source();
    test_overrun();
    test_bound();
    CHECK_OK(csn_close(&a));
    CHECK_OK(csn_close(&b));
    CHECK_OK(csn_close(&c));
    printf("matcher: posting order, one source, overrun, unexpected-store bound\n");
    return 0;
}
