/* test_reader.c: the connection engine's reader (src/core/conn.c) fed by a fake connection (a
 * socket pair written in random pieces): frames split anywhere, EAGER payloads staged or read,
 * chunked DATA placed where the placements say, discards, and the HELLO rules; corrupt headers
 * and a peer that dies mid-payload fail the connection and hand back the placement. */
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/conn.h"
#include "core/state.h"
#include "../test.h"

static struct csni_proc P;
/* The peer of the test's connections: a connection made to it becomes its sending one
 * (csni_conn_new takes its lock); nothing else of it is read. */
static struct csni_peer PEER_S;
static struct csni_peer *const PEER = &PEER_S;

static void proc_fake(void)
{
    P.epfd = epoll_create1(0);
    P.evfd = eventfd(0, EFD_NONBLOCK);
    CHECK(P.epfd >= 0 && P.evfd >= 0);
    csni_conns_init(&P.conns);
    csni_lock_init(&PEER_S.lock, CSNI_RANK_PEER);
    P.tun.eager_max = 65536;
    memset(P.key, 0x5a, sizeof P.key);
}

/* A connection whose other end (*w) the test writes. */
static struct csni_conn *conn_fake(struct csni_peer *pp, int *w)
{
    int sv[2];
    CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
    struct csni_conn *c = csni_conn_new(&P, sv[0], pp, pp ? 1 : -1, NULL);
    CHECK(c);
    *w = sv[1];
    return c;
}

/* The byte script: frames with payloads, appended into one buffer. */
static uint8_t script[1 << 20];
static size_t slen;

static void put(const struct csni_frame *f, const uint8_t *pay, size_t n)
{
    csni_frame_encode(f, script + slen);
    slen += CSNI_FRAME_SIZE;
    if (n) /* a frame without payload passes NULL */
        memcpy(script + slen, pay, n);
    slen += n;
}

static void pattern(uint8_t *b, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        b[i] = (uint8_t)(seed + i * 7);
}

#define BIG 300000u
static uint8_t small[10], mid[5000], cut[2000], big[BIG];
static uint8_t got_small[10], got_mid[5000], got_cut[100], got_big[BIG];

static void test_stream(unsigned seed)
{
    int w;
    struct csni_conn *c = conn_fake(PEER, &w);
    srand(seed);
    slen = 0;
    pattern(small, sizeof small, 1);
    pattern(mid, sizeof mid, 2);
    pattern(cut, sizeof cut, 3);
    pattern(big, sizeof big, 4);
    memset(got_small, 0, sizeof got_small);
    memset(got_mid, 0, sizeof got_mid);
    memset(got_cut, 0, sizeof got_cut);
    memset(got_big, 0, sizeof got_big);
    struct csni_frame f = csni_frame_eager(2, 3, sizeof small);
    put(&f, small, sizeof small);
    f = csni_frame_eager(2, 3, sizeof mid);
    put(&f, mid, sizeof mid);
    f = csni_frame_eager(2, 3, sizeof cut); /* the receive takes 100 bytes, the rest dropped */
    put(&f, cut, sizeof cut);
    f = csni_frame_rts(2, 3, BIG, 77, 0, false);
    put(&f, NULL, 0);
    for (uint64_t off = 0; off < BIG; off += CSNI_DATA_CHUNK) {
        uint64_t n = BIG - off < CSNI_DATA_CHUNK ? BIG - off : CSNI_DATA_CHUNK;
        f = csni_frame_data(CSNI_CTS_OK, n, 9, off);
        put(&f, big + off, (size_t)n);
    }
    f = csni_frame_credit(12345);
    put(&f, NULL, 0);
    /* Fed in random pieces; the reader is driven after each until it has nothing more. */
    int frames = 0, placed = 0, eager = 0, data = 0;
    size_t sent = 0;
    while (sent < slen || frames != placed) {
        if (sent < slen) {
            size_t n = 1 + (size_t)rand() % 9000;
            if (n > slen - sent)
                n = slen - sent;
            CHECK(write(w, script + sent, n) == (ssize_t)n);
            sent += n;
        }
        csni_conn_rx_lock(c);
        for (;;) {
            const uint8_t *staged;
            struct csni_place done, pl = {0};
            enum csni_rx_event ev = csni_conn_next(c, &staged, &done);
            if (ev == CSNI_RX_DRAINED)
                break;
            CHECK(ev == CSNI_RX_FRAME || ev == CSNI_RX_PLACED);
            const struct csni_frame *h = csni_conn_frame(c);
            if (ev == CSNI_RX_PLACED) {
                placed++;
                CHECK(done.want == 0 && done.discard == 0);
                continue;
            }
            frames++;
            if (h->type == CSNI_F_EAGER) {
                uint8_t *dst = eager == 0 ? got_small : eager == 1 ? got_mid : got_cut;
                size_t take = eager == 2 ? sizeof got_cut : h->len;
                CHECK(h->len == (eager == 0 ? sizeof small : eager == 1 ? sizeof mid : sizeof cut));
                eager++;
                if (staged) {
                    memcpy(dst, staged, take);
                } else {
                    pl.dst = dst;
                    pl.want = take;
                    pl.discard = h->len - take;
                }
            } else if (h->type == CSNI_F_DATA) {
                CHECK(csni_frame_chunk_offset(h) == (uint64_t)data * CSNI_DATA_CHUNK);
                pl.dst = got_big + csni_frame_chunk_offset(h);
                pl.want = h->len;
                data++;
            } else if (h->type == CSNI_F_RTS) {
                CHECK(csni_frame_sender_token(h) == 77 && h->len == BIG);
            } else {
                CHECK(h->type == CSNI_F_CREDIT && h->len == 12345);
            }
            csni_conn_place(c, &pl);
        }
        csni_conn_rx_unlock(c);
    }
    CHECK(frames == 8 && placed == 8 && eager == 3 && data == 3);
    CHECK(memcmp(got_small, small, sizeof small) == 0);
    CHECK(memcmp(got_mid, mid, sizeof mid) == 0);
    CHECK(memcmp(got_cut, cut, sizeof got_cut) == 0);
    CHECK(memcmp(got_big, big, sizeof big) == 0);
    CHECK(!c->dead);
    close(w);
}

/* Drives the reader once to its first event other than FRAME/PLACED. */
static enum csni_rx_event drive(struct csni_conn *c, struct csni_place *done)
{
    const uint8_t *staged;
    enum csni_rx_event ev;
    csni_conn_rx_lock(c);
    while ((ev = csni_conn_next(c, &staged, done)) == CSNI_RX_FRAME ||
           ev == CSNI_RX_PLACED)
        if (ev == CSNI_RX_FRAME) {
            struct csni_place pl = {.dst = got_big, .want = csni_conn_frame(c)->len,
                                    .op = (struct csni_op *)&P};
            csni_conn_place(c, &pl);
        }
    csni_conn_rx_unlock(c);
    return ev;
}

static void test_hello(void)
{
    uint8_t buf[CSNI_FRAME_SIZE + CSNI_KEY_BYTES];
    struct csni_place done;
    int w;
    /* The right key: HELLO, then the connection may be bound. */
    struct csni_conn *c = conn_fake(NULL, &w);
    struct csni_frame f = csni_frame_hello(4, 0, 0, 0);
    csni_frame_encode(&f, buf);
    memcpy(buf + CSNI_FRAME_SIZE, P.key, CSNI_KEY_BYTES);
    CHECK(write(w, buf, 17) == 17); /* split inside the header */
    CHECK(drive(c, &done) == CSNI_RX_DRAINED);
    CHECK(write(w, buf + 17, sizeof buf - 17) == (ssize_t)(sizeof buf - 17));
    CHECK(drive(c, &done) == CSNI_RX_HELLO);
    CHECK(csni_frame_hello_proc(csni_conn_frame(c)) == 4);
    close(w);
    /* A wrong key. */
    c = conn_fake(NULL, &w);
    buf[CSNI_FRAME_SIZE] ^= 1;
    CHECK(write(w, buf, sizeof buf) == (ssize_t)sizeof buf);
    CHECK(drive(c, &done) == CSNI_RX_FAILED && c->dead);
    close(w);
    /* Anything but HELLO first. */
    c = conn_fake(NULL, &w);
    f = csni_frame_credit(1);
    csni_frame_encode(&f, buf);
    CHECK(write(w, buf, CSNI_FRAME_SIZE) == CSNI_FRAME_SIZE);
    CHECK(drive(c, &done) == CSNI_RX_FAILED && c->dead);
    close(w);
    /* A second HELLO on a bound connection. */
    c = conn_fake(PEER, &w);
    f = csni_frame_hello(4, 0, 0, 0);
    csni_frame_encode(&f, buf);
    CHECK(write(w, buf, sizeof buf) == (ssize_t)sizeof buf);
    CHECK(drive(c, &done) == CSNI_RX_FAILED && c->dead);
    close(w);
}

static void test_failures(void)
{
    uint8_t buf[CSNI_FRAME_SIZE + 100];
    struct csni_place done;
    int w;
    /* A corrupt header. */
    struct csni_conn *c = conn_fake(PEER, &w);
    memset(buf, 0xee, CSNI_FRAME_SIZE);
    CHECK(write(w, buf, CSNI_FRAME_SIZE) == CSNI_FRAME_SIZE);
    CHECK(drive(c, &done) == CSNI_RX_FAILED && c->dead);
    CHECK(csni_conn_take_ended(c) && !csni_conn_take_ended(c)); /* reported once */
    close(w);
    /* An eager message longer than the eager limit. */
    c = conn_fake(PEER, &w);
    struct csni_frame f = csni_frame_eager(2, 3, P.tun.eager_max + 1);
    csni_frame_encode(&f, buf);
    CHECK(write(w, buf, CSNI_FRAME_SIZE) == CSNI_FRAME_SIZE);
    CHECK(drive(c, &done) == CSNI_RX_FAILED);
    close(w);
    /* The peer dies in the middle of a payload: the placement comes back. */
    c = conn_fake(PEER, &w);
    f = csni_frame_eager(2, 3, 100);
    csni_frame_encode(&f, buf);
    CHECK(write(w, buf, CSNI_FRAME_SIZE + 30) == CSNI_FRAME_SIZE + 30);
    CHECK(drive(c, &done) == CSNI_RX_DRAINED);
    close(w);
    CHECK(drive(c, &done) == CSNI_RX_FAILED);
    CHECK(done.op == (struct csni_op *)&P && done.want == 70);
}

int main(void)
{
    proc_fake();
    for (unsigned seed = 1; seed <= 20; seed++)
        test_stream(seed);
    printf("stream: 20 random splittings of 8 frames (staged, read, cut, chunked DATA)\n");
    test_hello();
    printf("hello: split, right key, wrong key, no hello, second hello\n");
    test_failures();
    printf("failures: corrupt header, over-long eager, end of stream mid-payload\n");
    return 0;
}
