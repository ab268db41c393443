/* test_api.c: the CSN calls' semantics inside one process (a job of size 1): transports talking to
 * each other. */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "csn.h"
#include "../test.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void test_status_strings(void)
{
    for (int s = CSN_OK; s <= CSN_SYSTEM_ERROR; s++)
        CHECK(csn_status_string((csn_status)s) &&
              strcmp(csn_status_string((csn_status)s), "unknown status") != 0);
    CHECK(strcmp(csn_status_string((csn_status)999), "unknown status") == 0);
}

static void test_bad_arguments(void)
{
    csn_transport *a, *b, *dead;
    csn_netid id;
    char buf[8];
    size_t got;
    void *p;
    csn_status st;
    CHECK_EQ_STATUS(csn_open(NULL), CSN_INVALID_ARGUMENT);
    CHECK_OK(csn_open(&a));
    CHECK_OK(csn_open(&b));
    CHECK_EQ_STATUS(csn_tx_nb(NULL, csn_netid_of(b), buf, 1), CSN_UNINITIALISED_TRANSPORT);
    CHECK_EQ_STATUS(csn_tx_nb(a, 12345, buf, 1), CSN_ILLEGAL_NETID);
    CHECK_EQ_STATUS(csn_tx_nb(a, CSN_NULL_NETID, buf, 1), CSN_ILLEGAL_NETID);
    CHECK_EQ_STATUS(csn_tx_nb(a, ~(csn_netid)0, buf, 1), CSN_ILLEGAL_NETID);
    CHECK_EQ_STATUS(csn_tx_nb(a, csn_netid_of(b) + 1000, buf, 1), CSN_ILLEGAL_NETID);
    CHECK_EQ_STATUS(csn_tx_nb(a, csn_netid_of(b), NULL, 1), CSN_INVALID_ARGUMENT);
    CHECK_EQ_STATUS(csn_rx_nb(a, NULL, 4, &got), CSN_INVALID_ARGUMENT);
    CHECK_EQ_STATUS(csn_rx(a, NULL, buf, 4, &got), CSN_INVALID_ARGUMENT);
    CHECK_EQ_STATUS(csn_test(a, 0, 0, &id, &p, &st), CSN_INVALID_ARGUMENT);
    CHECK_EQ_STATUS(csn_test(a, 4, 0, &id, &p, &st), CSN_INVALID_ARGUMENT);
    CHECK_EQ_STATUS(csn_register_name(a, NULL), CSN_INVALID_ARGUMENT);
    CHECK_EQ_STATUS(csn_register_name(a, ""), CSN_INVALID_ARGUMENT);
    CHECK_EQ_STATUS(csn_register_name(a, "tab\there"), CSN_INVALID_ARGUMENT);
    char longname[300];
    memset(longname, 'x', sizeof longname);
    longname[256] = 0;
    CHECK_EQ_STATUS(csn_register_name(a, longname), CSN_INVALID_ARGUMENT);
    longname[255] = 0;
    CHECK_OK(csn_register_name(a, longname));
    CHECK_EQ_STATUS(csn_lookup_name(NULL, "x"), CSN_INVALID_ARGUMENT);
    dead = b;
    CHECK_OK(csn_close(&b));
    CHECK(b == NULL);
    CHECK_EQ_STATUS(csn_close(&b), CSN_UNINITIALISED_TRANSPORT);
    CHECK_EQ_STATUS(csn_tx_nb(dead, csn_netid_of(a), buf, 1), CSN_UNINITIALISED_TRANSPORT);
    CHECK_EQ_STATUS(csn_test(dead, CSN_TX, 0, &id, &p, &st), CSN_UNINITIALISED_TRANSPORT);
    CHECK_OK(csn_close(&a));
}

static void test_blocking_and_overrun(void)
{
    csn_transport *a, *b;
    char out[64] = "hello world", in[64], small[4];
    size_t got = 0;
    csn_netid from = CSN_NULL_NETID;
    CHECK_OK(csn_open(&a));
    CHECK_OK(csn_open(&b));
    /* a small message is buffered: the blocking transmit returns before the receive */
    CHECK_OK(csn_tx(a, csn_netid_of(b), out, 12));
    CHECK_OK(csn_rx(b, &from, in, sizeof in, &got));
    CHECK(from == csn_netid_of(a) && got == 12 && strcmp(in, "hello world") == 0);
    /* overrun: first len bytes delivered, the status says so, nothing else lost */
    CHECK_OK(csn_tx(a, csn_netid_of(b), out, 12));
    CHECK_OK(csn_tx(a, csn_netid_of(b), "next", 5));
    from = CSN_NULL_NETID;
    CHECK_EQ_STATUS(csn_rx(b, &from, small, sizeof small, &got), CSN_OVERRUN);
    CHECK(got == 4 && memcmp(small, "hell", 4) == 0);
    CHECK_OK(csn_rx(b, &from, in, sizeof in, &got));
    CHECK(got == 5 && strcmp(in, "next") == 0);
    /* zero-length messages */
    CHECK_OK(csn_tx(a, csn_netid_of(b), NULL, 0));
    CHECK_OK(csn_rx(b, &from, in, sizeof in, &got));
    CHECK(got == 0);
    CHECK_OK(csn_close(&a));
    CHECK_OK(csn_close(&b));
}

static void test_nonblocking_and_test(void)
{
    enum { N = 200 };
    csn_transport *a, *b;
    static uint32_t out[N], in[N];
    size_t got[N];
    csn_netid id;
    void *buf;
    csn_status st;
    CHECK_OK(csn_open(&a));
    CHECK_OK(csn_open(&b));
    /* poll with nothing outstanding: timeout at once; a timed wait really waits */
    CHECK_EQ_STATUS(csn_test(a, CSN_TX | CSN_RX, 0, &id, &buf, &st), CSN_TIMEOUT);
    double t0 = now_s();
    CHECK_EQ_STATUS(csn_test(a, CSN_RX, 50000, &id, &buf, &st), CSN_TIMEOUT);
    double dt = now_s() - t0;
    CHECK(dt >= 0.045 && dt < 5.0);
    /* many outstanding receives, matched in posting order; FIFO per pair */
    for (int i = 0; i < N; i++)
        CHECK_OK(csn_rx_nb(b, &in[i], sizeof in[i], &got[i]));
    for (int i = 0; i < N; i++) {
        out[i] = (uint32_t)i * 7u + 1;
        CHECK_OK(csn_tx_nb(a, csn_netid_of(b), &out[i], sizeof out[i]));
    }
    for (int i = 0; i < N; i++) {
        CHECK_EQ_STATUS(csn_test(b, CSN_RX, CSN_FOREVER, &id, &buf, &st), CSN_RX_READY);
        CHECK(st == CSN_OK && id == csn_netid_of(a) && buf == &in[i]);
        CHECK(in[i] == (uint32_t)i * 7u + 1 && got[i] == 4);
    }
    /* flags select: TX completions are not reported to an RX-only test */
    CHECK_EQ_STATUS(csn_test(a, CSN_RX, 0, &id, &buf, &st), CSN_TIMEOUT);
    for (int i = 0; i < N; i++) {
        CHECK_EQ_STATUS(csn_test(a, CSN_TX, 0, &id, &buf, &st), CSN_TX_READY);
        CHECK(st == CSN_OK && id == csn_netid_of(b) && buf == &out[i]);
    }
    CHECK_EQ_STATUS(csn_test(a, CSN_TX, 0, &id, &buf, &st), CSN_TIMEOUT);
    /* a blocking call never consumes another operation's completion */
    uint32_t x = 5, y = 0, z = 0;
    size_t gy, gz;
    csn_netid from = csn_netid_of(a);
    CHECK_OK(csn_rx_nb(b, &y, sizeof y, &gy));
    CHECK_OK(csn_tx_nb(a, csn_netid_of(b), &x, sizeof x));
    CHECK_OK(csn_tx(a, csn_netid_of(b), &x, sizeof x));
    CHECK_OK(csn_rx(b, &from, &z, sizeof z, &gz));
    CHECK(z == 5);
    CHECK_EQ_STATUS(csn_test(b, CSN_RX, CSN_FOREVER, &id, &buf, &st), CSN_RX_READY);
    CHECK(buf == &y && y == 5);
    CHECK_EQ_STATUS(csn_test(a, CSN_TX, CSN_FOREVER, &id, &buf, &st), CSN_TX_READY);
    CHECK(buf == &x);
    CHECK_OK(csn_close(&a));
    CHECK_OK(csn_close(&b));
}

static void test_one_source(void)
{
    csn_transport *a, *b, *c;
    int va = 1, vb = 2, r = 0;
    size_t got;
    CHECK_OK(csn_open(&a));
    CHECK_OK(csn_open(&b));
    CHECK_OK(csn_open(&c));
    CHECK_OK(csn_tx(a, csn_netid_of(c), &va, sizeof va));
    CHECK_OK(csn_tx(b, csn_netid_of(c), &vb, sizeof vb));
    csn_netid from = csn_netid_of(b);
    CHECK_OK(csn_rx(c, &from, &r, sizeof r, &got));
    CHECK(r == 2 && from == csn_netid_of(b));
    from = CSN_NULL_NETID;
    CHECK_OK(csn_rx(c, &from, &r, sizeof r, &got));
    CHECK(r == 1 && from == csn_netid_of(a));
    /* csn_rx_nb_from only takes its source's message */
    int q = 0;
    CHECK_OK(csn_rx_nb_from(c, csn_netid_of(a), &q, sizeof q, &got));
    CHECK_OK(csn_tx(b, csn_netid_of(c), &vb, sizeof vb));
    csn_netid id;
    void *buf;
    csn_status st;
    CHECK_EQ_STATUS(csn_test(c, CSN_RX, 1000, &id, &buf, &st), CSN_TIMEOUT);
    CHECK_OK(csn_tx(a, csn_netid_of(c), &va, sizeof va));
    CHECK_EQ_STATUS(csn_test(c, CSN_RX, CSN_FOREVER, &id, &buf, &st), CSN_RX_READY);
    CHECK(buf == &q && q == 1 && id == csn_netid_of(a));
    from = CSN_NULL_NETID;
    CHECK_OK(csn_rx(c, &from, &r, sizeof r, &got));
    CHECK(r == 2);
    CHECK_OK(csn_close(&a));
    CHECK_OK(csn_close(&b));
    CHECK_OK(csn_close(&c));
}

struct lookup_arg {
    csn_netid id;
    csn_status st;
};

static void *lookup_thread(void *arg)
{
    struct lookup_arg *la = arg;
    la->st = csn_lookup_name(&la->id, "late name");
    return NULL;
}

static void test_names(void)
{
    csn_transport *a, *b;
    csn_netid id;
    pthread_t th;
    struct lookup_arg la = {0};
    CHECK_OK(csn_open(&a));
    CHECK_OK(csn_open(&b));
    /* a lookup that comes first waits for the registration */
    CHECK(pthread_create(&th, NULL, lookup_thread, &la) == 0);
    struct timespec ts = {0, 50 * 1000 * 1000};
    nanosleep(&ts, NULL);
    CHECK_OK(csn_register_name(a, "late name"));
    pthread_join(th, NULL);
    CHECK_OK(la.st);
    CHECK(la.id == csn_netid_of(a));
    CHECK_EQ_STATUS(csn_register_name(b, "late name"), CSN_NAME_TAKEN);
    CHECK_OK(csn_close(&a));
    /* closing drops the name: it may be taken again */
    CHECK_OK(csn_register_name(b, "late name"));
    CHECK_OK(csn_lookup_name(&id, "late name"));
    CHECK(id == csn_netid_of(b));
    CHECK_OK(csn_close(&b));
}

static void test_lookup_timeout(void)
{
    csn_netid id;
    double t0 = now_s();
    CHECK_EQ_STATUS(csn_lookup_name(&id, "nobody registers this"), CSN_NOT_FOUND);
    CHECK(now_s() - t0 >= 0.9);
}

/* Closing a transport cancels its parked transmits and its receivers' view of them. */
static void test_close_with_pending(void)
{
    static char big[1 << 20];
    csn_transport *a, *b;
    csn_netid id;
    void *buf;
    csn_status st;
    size_t got;
    char small[8];
    CHECK_OK(csn_open(&a));
    CHECK_OK(csn_open(&b));
    csn_netid bid = csn_netid_of(b);
    CHECK_OK(csn_tx_nb(a, bid, big, sizeof big)); /* too big to buffer: parked */
    CHECK_OK(csn_rx_nb(a, small, sizeof small, &got));
    CHECK_OK(csn_close(&a));
    /* b must not find a message from a closed transport pointing into freed memory */
    CHECK_EQ_STATUS(csn_test(b, CSN_RX, 0, &id, &buf, &st), CSN_TIMEOUT);
    CHECK_OK(csn_rx_nb(b, small, sizeof small, &got));
    CHECK_EQ_STATUS(csn_test(b, CSN_RX, 1000, &id, &buf, &st), CSN_TIMEOUT);
    /* a receiver that closes: the parked transmit towards it completes with PEER_LOST */
    csn_transport *c;
    CHECK_OK(csn_open(&a));
    CHECK_OK(csn_open(&c));
    csn_netid cid = csn_netid_of(c);
    CHECK_OK(csn_tx_nb(a, cid, big, sizeof big));
    CHECK_OK(csn_close(&c));
    CHECK_EQ_STATUS(csn_test(a, CSN_TX, CSN_FOREVER, &id, &buf, &st), CSN_TX_READY);
    CHECK(st == CSN_PEER_LOST && buf == big);
    CHECK_EQ_STATUS(csn_tx_nb(a, cid, big, 1), CSN_ILLEGAL_NETID);
    CHECK_OK(csn_close(&a));
    CHECK_OK(csn_close(&b));
    /* messages of a transport that closed since stay receivable by a one-source receive;
     * once they are taken, such a receive completes with CSN_PEER_LOST */
    int v = 42, w = 0;
    CHECK_OK(csn_open(&a));
    CHECK_OK(csn_open(&b));
    csn_netid aid = csn_netid_of(a);
    CHECK_OK(csn_tx(a, csn_netid_of(b), &v, sizeof v));
    CHECK_OK(csn_close(&a));
    csn_netid from = aid;
    CHECK_OK(csn_rx(b, &from, &w, sizeof w, &got));
    CHECK(w == 42 && from == aid);
    CHECK_EQ_STATUS(csn_rx(b, &from, &w, sizeof w, &got), CSN_PEER_LOST);
    CHECK_OK(csn_close(&b));
}

/* Many threads, each with its own transport, in one process: a ring of blocking exchanges. */
#define RING_THREADS 8
static csn_netid ring_ids[RING_THREADS];
static csn_transport *ring_t[RING_THREADS];

static void *ring_thread(void *arg)
{
    int me = (int)(intptr_t)arg, right = (me + 1) % RING_THREADS;
    for (int i = 0; i < 2000; i++) {
        int v = me * 100000 + i, w = -1;
        size_t got;
        csn_netid from = ring_ids[(me + RING_THREADS - 1) % RING_THREADS];
        CHECK_OK(csn_tx_nb(ring_t[me], ring_ids[right], &v, sizeof v));
        CHECK_OK(csn_rx(ring_t[me], &from, &w, sizeof w, &got));
        CHECK(w == ((me + RING_THREADS - 1) % RING_THREADS) * 100000 + i);
        csn_netid id;
        void *buf;
        csn_status st;
        CHECK_EQ_STATUS(csn_test(ring_t[me], CSN_TX, CSN_FOREVER, &id, &buf, &st), CSN_TX_READY);
        CHECK(buf == &v && st == CSN_OK);
    }
    return NULL;
}

static void test_threads(void)
{
    pthread_t th[RING_THREADS];
    for (int i = 0; i < RING_THREADS; i++) {
        CHECK_OK(csn_open(&ring_t[i]));
        ring_ids[i] = csn_netid_of(ring_t[i]);
    }
    for (int i = 0; i < RING_THREADS; i++)
        CHECK(pthread_create(&th[i], NULL, ring_thread, (void *)(intptr_t)i) == 0);
    for (int i = 0; i < RING_THREADS; i++)
        pthread_join(th[i], NULL);
    for (int i = 0; i < RING_THREADS; i++)
        CHECK_OK(csn_close(&ring_t[i]));
}

static void test_job_helpers(void)
{
    csn_transport *a;
    CHECK(csn_job_rank() == 0 && csn_job_size() == 1);
    CHECK_OK(csn_open(&a));
    CHECK_OK(csn_job_barrier(a));
    CHECK_EQ_STATUS(csn_job_barrier(NULL), CSN_UNINITIALISED_TRANSPORT);
    CHECK_OK(csn_close(&a));
}

int main(void)
{
    test_status_strings();
    test_bad_arguments();
    test_blocking_and_overrun();
    test_nonblocking_and_test();
    test_one_source();
    test_names();
    test_lookup_timeout();
    test_close_with_pending();
    test_threads();
    test_job_helpers();
    return 0;
}
