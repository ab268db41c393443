/* fuzz_conn.c: libFuzzer target for the connection reader with the protocol behind it: a lone
 * process (csn_open: a job of one) with two transports and receives posted takes a fake
 * accepted connection (a socket pair; the harness writes the other end) and reads the fuzz
 * bytes from it as a stream of frames, driven by core/poll.c's csni_poll_serve as for a
 * connection: csni_conn_next -> csni_proto_frame + csni_conn_place / csni_proto_placed /
 * csni_peer_accept / csni_proto_abandon. Each input is one connection from a fresh process id:
 * a valid HELLO (the job key) first, then the input's frames, then end of stream.
 * Input: records of [ctrl byte][40-byte header][payload], the payload as long as the header
 * says (EAGER, DATA; what the input has left). ctrl: bits 0-1 the destination of an EAGER or
 * RTS (transport 1, 2, the hidden system transport, or the header as it is); bit 2: the
 * header bytes are sent raw, not re-encoded; bit 7: let the reader run here (a split point).
 * Build (clang): see tests/core.cmake or .ci/run. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/complete.h"
#include "core/conn.h"
#include "core/match.h"
#include "core/peer.h"
#include "core/poll.h"
#include "core/state.h"
#include "csn.h"
#include "wire/frame.h"

static csn_transport *fz_t[2];
static int fz_proc = 1;
static int fz_posted[2];
static uint8_t fz_small[64], fz_mid[4096], fz_big[300000];

static void fz_post(int i)
{
    size_t got;
    static size_t sink[8];
    while (fz_posted[i] < 3) {
        void *b = fz_posted[i] == 0 ? (void *)fz_small : fz_posted[i] == 1 ? (void *)fz_mid : fz_big;
        size_t n = fz_posted[i] == 0 ? sizeof fz_small : fz_posted[i] == 1 ? sizeof fz_mid
                                                                          : sizeof fz_big;
        if (csn_rx_nb(fz_t[i], b, n, &sink[fz_posted[i]]) != CSN_OK)
            abort();
        fz_posted[i]++;
    }
    (void)got;
}

/* Takes every completion there is; what the store holds for nobody is taken too (big
 * receives), so that nothing grows from input to input. */
static void fz_drain(void)
{
    for (int i = 0; i < 2; i++) {
        for (int k = 0; k < 100000; k++) {
            csn_netid id;
            void *b;
            csn_status st;
            csn_status r = csn_test(fz_t[i], CSN_TX | CSN_RX, 0, &id, &b, &st);
            if (r == CSN_RX_READY) {
                fz_posted[i]--;
                fz_post(i);
                continue;
            }
            if (r == CSN_TX_READY)
                continue;
            break;
        }
    }
}

/* Writes n bytes to the fake peer's end, letting the reader run whenever the socket is full;
 * what we send back (CTS, CREDIT) is read and dropped. */
static void fz_write(struct csni_proc *p, struct csni_conn *c, int w, const uint8_t *b, size_t n)
{
    uint8_t junk[65536];
    while (n > 0) {
        while (recv(w, junk, sizeof junk, MSG_DONTWAIT) > 0)
            ;
        ssize_t k = send(w, b, n, MSG_DONTWAIT | MSG_NOSIGNAL);
        if (k > 0) {
            b += k;
            n -= (size_t)k;
            continue;
        }
        if (k < 0 && errno != EAGAIN && errno != EINTR)
            return;
        if (atomic_load(&c->dead))
            return; /* the reader gave up: the rest would never be read */
        csni_poll_serve(p, c, true);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static uint8_t out[1 << 17];
    if (!fz_t[0]) {
        if (csn_open(&fz_t[0]) != CSN_OK || csn_open(&fz_t[1]) != CSN_OK)
            abort();
        fz_post(0);
        fz_post(1);
        /* a job of one has no network: give it the epoll set a connection registers with */
        if (csni_p->epfd < 0)
            csni_p->epfd = epoll_create1(EPOLL_CLOEXEC);
        if (csni_p->evfd < 0)
            csni_p->evfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
        if (csni_p->epfd < 0 || csni_p->evfd < 0)
            abort();
    }
    struct csni_proc *p = csni_p;
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv) != 0)
        abort();
    struct csni_conn *c = csni_conn_new(p, sv[0], NULL, -1, NULL);
    if (!c)
        abort();
    /* only this harness reads it (not the progress thread): deterministic runs */
    (void)epoll_ctl(p->epfd, EPOLL_CTL_DEL, sv[0], NULL);
    int proc = fz_proc++;
    if (fz_proc >= (1 << 24))
        fz_proc = 1;
    struct csni_frame hello = csni_frame_hello((uint64_t)proc, 0, 0, 0);
    uint8_t h[CSNI_FRAME_SIZE + CSNI_KEY_BYTES];
    csni_frame_encode(&hello, h);
    memcpy(h + CSNI_FRAME_SIZE, p->key, CSNI_KEY_BYTES);
    fz_write(p, c, sv[1], h, sizeof h);
    size_t pos = 0, olen = 0;
    while (pos + 1 + CSNI_FRAME_SIZE <= size) {
        uint8_t ctrl = data[pos];
        uint8_t hdr[CSNI_FRAME_SIZE];
        memcpy(hdr, data + pos + 1, CSNI_FRAME_SIZE);
        pos += 1 + CSNI_FRAME_SIZE;
        struct csni_frame f;
        const char *why;
        size_t pay = 0;
        if (csni_frame_decode(hdr, UINT64_MAX, &f, &why) == 0) {
            if (!(ctrl & 4) && (f.type == CSNI_F_EAGER || f.type == CSNI_F_RTS) && (ctrl & 3) != 3) {
                f.dst = (ctrl & 3) == 2 ? 1u : fz_t[ctrl & 1]->tid;
                csni_frame_encode(&f, hdr);
            }
            if (f.type == CSNI_F_EAGER || f.type == CSNI_F_DATA || f.type == CSNI_F_HELLO)
                pay = f.len < size - pos ? (size_t)f.len : size - pos;
        }
        if (olen + CSNI_FRAME_SIZE + pay > sizeof out) {
            fz_write(p, c, sv[1], out, olen);
            olen = 0;
        }
        if (CSNI_FRAME_SIZE + pay <= sizeof out) {
            memcpy(out + olen, hdr, CSNI_FRAME_SIZE);
            memcpy(out + olen + CSNI_FRAME_SIZE, data + pos, pay);
            olen += CSNI_FRAME_SIZE + pay;
        }
        pos += pay;
        if (ctrl & 0x80) {
            fz_write(p, c, sv[1], out, olen);
            olen = 0;
            csni_poll_serve(p, c, true);
        }
    }
    fz_write(p, c, sv[1], out, olen);
    if (pos < size)
        fz_write(p, c, sv[1], data + pos, size - pos); /* a cut frame at the end */
    csni_poll_serve(p, c, true);
    shutdown(sv[1], SHUT_WR); /* end of stream: the connection fails, its placement abandoned */
    for (int i = 0; i < 1000 && !atomic_load(&c->dead); i++)
        csni_poll_serve(p, c, true);
    if (!atomic_load(&c->dead))
        abort(); /* the reader must notice the end of the stream */
    close(sv[1]);
    csni_poll(p); /* the ended connection reported: its peer is lost */
    fz_drain();
    /* A peer's connection keeps its descriptor and buffer for the life of the process: the
     * harness lets them go (each input is a new peer). */
    csni_conn_rx_lock(c);
    if (c->fd >= 0 && c->pp) {
        close(c->fd);
        c->fd = -1;
        free(c->rbuf);
        c->rbuf = NULL;
    }
    csni_conn_rx_unlock(c);
    return 0;
}
