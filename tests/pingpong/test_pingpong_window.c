/* test_pingpong_window.c: pingpong's window traffic on the csn API, order and bytes checked. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <csn.h>

#include "../test.h"

#define WINDOW 64
#define ROUNDS 4

/* What runs now, for the failure messages. */
static char window_phase[96];

/* Word k of message seq of the given size: differs per message, so a message delivered
 * twice, lost or reordered is caught. Filled and checked a word at a time (sanitizer builds
 * instrument every access). */
static uint64_t window_word(size_t size, uint64_t seq, size_t k)
{
    uint64_t x = (seq + 1) * 0x9E3779B97F4A7C15ull ^ (k + 1) * 0xD6E8FEB86659FD93ull ^ size;
    return x ^ (x >> 31);
}

static void window_fill(unsigned char *p, size_t size, uint64_t seq)
{
    for (size_t k = 0; 8 * k < size; k++) {
        uint64_t w = window_word(size, seq, k);
        size_t n = size - 8 * k < 8 ? size - 8 * k : 8;
        memcpy(p + 8 * k, &w, n);
    }
}

static void window_check(const unsigned char *p, size_t size, uint64_t seq, int me)
{
    for (size_t k = 0; 8 * k < size; k++) {
        uint64_t w = window_word(size, seq, k);
        size_t n = size - 8 * k < 8 ? size - 8 * k : 8;
        if (memcmp(p + 8 * k, &w, n) != 0) {
            fprintf(stderr, "rank %d: %s: message %llu wrong in bytes %zu..%zu\n", me, window_phase,
                    (unsigned long long)seq, 8 * k, 8 * k + n - 1);
            CHECK(0);
        }
    }
}

/* Waits for n completions (any mix of sends and receives) and checks them: receives must
 * complete in the order they were posted, each with size bytes. */
static void window_wait(csn_transport *t, int n, unsigned char *rbuf, size_t size, size_t *got,
                        int *next_rx)
{
    for (int k = 0; k < n; k++) {
        csn_netid id;
        void *buf;
        csn_status op;
        csn_status s = csn_test(t, CSN_TX | CSN_RX, CSN_FOREVER, &id, &buf, &op);
        if (op != CSN_OK)
            fprintf(stderr, "rank %d: %s: csn_test %s, operation %s\n", csn_job_rank(),
                    window_phase, csn_status_string(s), csn_status_string(op));
        CHECK(op == CSN_OK);
        CHECK(s == CSN_TX_READY || s == CSN_RX_READY);
        if (s == CSN_RX_READY) {
            if (buf != rbuf + (size_t)*next_rx * size)
                fprintf(stderr, "rank %d: %s: receive %ld completed where %d was next\n",
                        csn_job_rank(), window_phase,
                        (long)(((unsigned char *)buf - rbuf) / (long)(size ? size : 1)), *next_rx);
            CHECK(buf == rbuf + (size_t)*next_rx * size);
            CHECK(got[*next_rx] == size);
            (*next_rx)++;
        }
    }
}

/* A 4-byte ack from `from` to the other rank (the end of each pingpong window). */
static void window_ack(csn_transport *t, csn_netid peer, int me, int from)
{
    uint32_t ack = 0xAC4u;
    if (me == from) {
        CHECK_OK(csn_tx(t, peer, &ack, sizeof ack));
    } else {
        csn_netid src = peer;
        size_t n = 0;
        ack = 0;
        CHECK_OK(csn_rx(t, &src, &ack, sizeof ack, &n));
        CHECK(n == sizeof ack && ack == 0xAC4u && src == peer);
    }
}

int main(int argc, char **argv)
{
    size_t maxsize = argc > 1 ? strtoul(argv[1], NULL, 0) : 128 << 10;
    if (csn_job_size() != 2) {
        fprintf(stderr, "test_pingpong_window: run under csnrun -np 2\n");
        return TEST_SKIP;
    }
    int me = csn_job_rank();
    csn_transport *t = NULL;
    csn_netid peer;
    char name[32];
    CHECK_OK(csn_open(&t));
    snprintf(name, sizeof name, "window.%d", me);
    CHECK_OK(csn_register_name(t, name));
    snprintf(name, sizeof name, "window.%d", 1 - me);
    CHECK_OK(csn_lookup_name(&peer, name));

    unsigned char *sbuf = malloc(WINDOW * maxsize + 1), *rbuf = malloc(WINDOW * maxsize + 1);
    size_t *got = calloc(WINDOW, sizeof *got);
    CHECK(sbuf != NULL && rbuf != NULL && got != NULL);
    uint64_t sent = 0, received = 0; /* message sequence numbers, per direction */
    /* shared: every send of a window from one buffer (as pingpong does; the messages of a
     * window are then equal), else one buffer per message. */
    for (int shared = 0; shared <= 1; shared++) {
        for (size_t size = 1; size <= maxsize; size *= 4) {
            for (int both = 0; both <= 1; both++) {
                for (int r = 0; r < ROUNDS; r++) {
                    snprintf(window_phase, sizeof window_phase,
                             "size %zu, %s, %s send buffer, round %d", size,
                             both ? "both ways" : "one way", shared ? "one" : "per-message", r);
                    int sends = both || me == 0, recvs = both || me == 1, next_rx = 0, n = 0;
                    if (recvs) {
                        for (int j = 0; j < WINDOW; j++)
                            CHECK_OK(
                                csn_rx_nb_from(t, peer, rbuf + (size_t)j * size, size, &got[j]));
                        n += WINDOW;
                    }
                    if (sends) {
                        if (shared)
                            window_fill(sbuf, size, sent++);
                        for (int j = 0; j < WINDOW; j++) {
                            unsigned char *p = shared ? sbuf : sbuf + (size_t)j * size;
                            if (!shared)
                                window_fill(p, size, sent++);
                            CHECK_OK(csn_tx_nb(t, peer, p, size));
                        }
                        n += WINDOW;
                    }
                    window_wait(t, n, rbuf, size, got, &next_rx);
                    if (recvs) {
                        for (int j = 0; j < WINDOW; j++)
                            window_check(rbuf + (size_t)j * size, size,
                                         shared ? received : received + (uint64_t)j, me);
                        received += shared ? 1 : WINDOW;
                    }
                    window_ack(t, peer, me, 1);
                    if (both)
                        window_ack(t, peer, me, 0);
                }
            }
        }
    }
    CHECK_OK(csn_job_barrier(t));
    CHECK_OK(csn_close(&t));
    free(got);
    free(rbuf);
    free(sbuf);
    if (me == 0)
        printf("window traffic checked up to %zu bytes\n", maxsize);
    return 0;
}
