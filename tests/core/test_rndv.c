/* test_rndv.c: a streamed receive (rendezvous DATA in chunks, src/core/rndv.c) stays on its
 * peer's wait list until its last byte is placed, so that a pull of the same sender's next
 * message is refused until then (one sender's receives complete in order); a receive the
 * peer's loss took meanwhile is not touched when its chunk lands. In one process, with a fake
 * peer, connection and transport. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/conn.h"
#include "core/peer.h"
#include "core/rndv.h"
#include "core/state.h"
#include "core/tport.h"
#include "../test.h"

#define LEN ((size_t)3 * CSNI_DATA_CHUNK / 2)

static struct csni_proc P;
static struct csni_peer PEER;
static struct csni_conn CONN;
static struct csn_transport T;
static uint8_t src[LEN], dst[LEN], other[LEN];

/* A receive waiting for its data; blocking, so that completing it needs no completion queue. */
static void rx_init(struct csni_op *op, void *buf, uint64_t token)
{
    memset(op, 0, sizeof *op);
    op->t = &T;
    op->kind = CSNI_OP_RX;
    op->blocking = true;
    op->pp = &PEER;
    op->buf = buf;
    op->len = op->msglen = LEN;
    op->token = token;
    op->state = CSNI_ST_WAIT_DATA;
}

static bool listed(const struct csni_op *op)
{
    for (const struct csni_op *o = PEER.wait_data.head; o; o = o->next)
        if (o == op)
            return true;
    return false;
}

/* The DATA chunk of op at offset off, placed the way the reader does: decided, copied, told. */
static void chunk(struct csni_op *op, size_t off)
{
    size_t n = LEN - off < CSNI_DATA_CHUNK ? LEN - off : CSNI_DATA_CHUNK;
    struct csni_frame f = csni_frame_data(CSNI_CTS_OK, n, op->token, off);
    struct csni_place pl = {0};
    csni_rndv_on_data(&CONN, &f, &pl);
    CHECK(pl.op == op && pl.listed && pl.want == n && pl.dst == (uint8_t *)op->buf + off);
    memcpy(pl.dst, src + off, n);
    csni_rndv_data_placed(&CONN, &f, &pl);
}

int main(void)
{
    csni_p = &P;
    P.cma = true; /* the pull below is refused before any copy */
    csni_lock_init(&PEER.lock, CSNI_RANK_PEER);
    csni_lock_init(&T.lock, CSNI_RANK_TPORT);
    CONN.pp = &PEER;
    for (size_t i = 0; i < LEN; i++)
        src[i] = (uint8_t)(i * 13 + 1);

    /* A receive streamed in two chunks; the last one being placed (its bytes still coming). */
    struct csni_op a, b;
    rx_init(&a, dst, 11);
    rx_init(&b, other, 12);
    csni_oplist_push(&PEER.wait_data, &a);
    chunk(&a, 0);
    CHECK(listed(&a) && a.got == CSNI_DATA_CHUNK && a.state == CSNI_ST_WAIT_DATA);
    size_t off = CSNI_DATA_CHUNK, n = LEN - off;
    struct csni_frame last = csni_frame_data(CSNI_CTS_OK, n, a.token, off);
    struct csni_place pl = {0};
    csni_rndv_on_data(&CONN, &last, &pl);
    CHECK(pl.op == &a && pl.listed);
    /* Still waiting for data: the next message of the same sender may not be pulled now (it
     * would complete first), and the refusal comes before any copy. */
    CHECK(listed(&a));
    CHECK(!csni_rndv_pull(&b, getpid(), (uint64_t)(uintptr_t)src, 99, false));
    CHECK(b.state == CSNI_ST_WAIT_DATA && memcmp(other, src, 16) != 0);
    memcpy(pl.dst, src + off, n);
    csni_rndv_data_placed(&CONN, &last, &pl);
    CHECK(!listed(&a) && a.state == CSNI_ST_DONE && a.status == CSN_OK);
    CHECK(memcmp(dst, src, LEN) == 0);

    /* The peer's loss takes a receive off the list while its chunk is being placed: the
     * placement's end leaves it alone. */
    struct csni_op c;
    rx_init(&c, dst, 13);
    csni_oplist_push(&PEER.wait_data, &c);
    struct csni_frame f = csni_frame_data(CSNI_CTS_OK, CSNI_DATA_CHUNK, c.token, 0);
    csni_rndv_on_data(&CONN, &f, &pl);
    CHECK(pl.op == &c && pl.listed);
    csni_oplist_remove(&PEER.wait_data, &c); /* as csni_peer_lost takes it, and fails it */
    c.state = CSNI_ST_DONE;
    c.status = CSN_PEER_LOST;
    csni_rndv_data_placed(&CONN, &f, &pl);
    CHECK(c.got == 0 && c.status == CSN_PEER_LOST && !listed(&c));
    return 0;
}
