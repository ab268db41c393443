/* test_frame.c: the frame header: round trips, and every kind of corrupt header refused with a
 * reason; plus a random sweep. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "wire/frame.h"
#include "../test.h"

static void roundtrip(struct csni_frame f)
{
    uint8_t b[CSNI_FRAME_SIZE], c[CSNI_FRAME_SIZE];
    struct csni_frame g;
    const char *why = "x";
    csni_frame_encode(&f, b);
    CHECK(csni_frame_decode(b, 65536, &g, &why) == 0 && why == NULL);
    CHECK(g.type == f.type && g.dst == f.dst && g.src == f.src && g.aux == f.aux);
    CHECK(g.len == f.len && g.cookie == f.cookie && g.cookie2 == f.cookie2);
    csni_frame_encode(&g, c);
    CHECK(memcmp(b, c, sizeof b) == 0);
}

static void refused(struct csni_frame f, int byte, uint8_t value)
{
    uint8_t b[CSNI_FRAME_SIZE];
    struct csni_frame g;
    const char *why = NULL;
    csni_frame_encode(&f, b);
    if (byte >= 0)
        b[byte] = value;
    CHECK(csni_frame_decode(b, 65536, &g, &why) != 0 && why != NULL);
}

/* An EAGER header on every side of each of its checks (the decoder accepts most in one test
 * before the general checks: both must agree), full and short, against the rule written out. */
static void eager_edges(void)
{
    const uint32_t ids[] = {0, 1, 0xffffffffu};
    const uint64_t maxes[] = {0, 65536, UINT64_MAX};
    for (int m = 0; m < 3; m++) {
        uint64_t emax = maxes[m];
        const uint64_t lens[] = {0,         1, 65535, 65536, 65537, CSNI_MAX_MSG, CSNI_MAX_MSG + 1,
                                 UINT64_MAX};
        for (int d = 0; d < 3; d++)
            for (int r = 0; r < 3; r++)
                for (int l = 0; l < 8; l++)
                    for (int flags = 0; flags < 2; flags++) {
                        uint32_t dst = ids[d], src = ids[r];
                        uint64_t len = lens[l];
                        bool ok = dst && src && len <= emax && len <= CSNI_MAX_MSG;
                        uint8_t b[CSNI_FRAME_SIZE];
                        struct csni_frame g;
                        const char *why = "x";
                        csni_frame_put_eager(b, dst, src, len);
                        b[3] = (uint8_t)flags;
                        int rv = csni_frame_decode(b, emax, &g, &why);
                        CHECK(ok && !flags ? rv == 0 && why == NULL : rv != 0 && why != NULL);
                        if (rv == 0)
                            CHECK(g.type == CSNI_F_EAGER && g.dst == dst && g.src == src &&
                                  g.len == len && g.aux == 0 && g.cookie == 0 && g.cookie2 == 0);
                        b[0] ^= 1; /* the magic */
                        CHECK(csni_frame_decode(b, emax, &g, &why) != 0 && why != NULL);
                        csni_frame_put_short(b, dst, src);
                        why = "x";
                        rv = csni_frame_decode_short(b, len, emax, &g, &why);
                        CHECK(ok ? rv == 0 && why == NULL : rv != 0 && why != NULL);
                    }
    }
}

int main(void)
{
    eager_edges();
    roundtrip((struct csni_frame){.type = CSNI_F_EAGER, .dst = 2, .src = 3, .len = 65536});
    roundtrip((struct csni_frame){.type = CSNI_F_EAGER, .dst = 0xffffffffu, .src = 1, .len = 0});
    roundtrip((struct csni_frame){.type = CSNI_F_RTS,
                                  .dst = 5,
                                  .src = 9,
                                  .len = (1ull << 48),
                                  .cookie = 0x123456789abcdefull,
                                  .cookie2 = 0x7fff0000ull});
    roundtrip((struct csni_frame){
        .type = CSNI_F_CTS, .aux = CSNI_CTS_PULLED, .len = 7, .cookie = 1, .cookie2 = 2});
    roundtrip((struct csni_frame){.type = CSNI_F_DATA, .aux = CSNI_CTS_GONE, .cookie = 3});
    roundtrip((struct csni_frame){.type = CSNI_F_CTS,
                                  .aux = CSNI_CTS_SPLIT,
                                  .dst = 0x89abcdefu,
                                  .src = 0x01234567u,
                                  .len = 1u << 24,
                                  .cookie = 5,
                                  .cookie2 = 0x7f0000001000ull});
    roundtrip((struct csni_frame){.type = CSNI_F_DATA, .aux = CSNI_CTS_SPLIT, .len = 8u << 20});
    CHECK(csni_split_at(1u << 24) == 1u << 23);
    CHECK(csni_split_at(3 * 4096 + 5) == 4096); /* half, down to a page */
    CHECK(csni_split_at(100) == 0);
    {
        /* The next chunk of a DATA frame: only len and cookie2 change. */
        uint8_t h[CSNI_FRAME_SIZE];
        struct csni_frame d = {.type = CSNI_F_DATA, .len = CSNI_DATA_CHUNK, .cookie = 77}, g;
        const char *why;
        csni_frame_encode(&d, h);
        csni_frame_set_chunk(h, 5, 3 * CSNI_DATA_CHUNK);
        CHECK(csni_frame_decode(h, 0, &g, &why) == 0);
        CHECK(g.type == CSNI_F_DATA && g.len == 5 && g.cookie == 77 &&
              g.cookie2 == 3 * CSNI_DATA_CHUNK);
    }
    roundtrip((struct csni_frame){.type = CSNI_F_CREDIT, .len = 1u << 20});
    roundtrip((struct csni_frame){.type = CSNI_F_HELLO,
                                  .dst = 1,
                                  .aux = CSNI_PROTO_VERSION,
                                  .len = CSNI_KEY_BYTES,
                                  .cookie = 17});
    struct csni_frame e = {.type = CSNI_F_EAGER, .dst = 2, .src = 3, .len = 10};
    refused(e, 0, 0x00);            /* magic */
    refused(e, 2, 0);               /* type 0 */
    refused(e, 2, CSNI_F_TYPE_MAX); /* unknown type */
    refused(e, 3, 1);               /* flags */
    roundtrip(csni_frame_cts(CSNI_CTS_NOTID, 0, 99, 0));
    refused((struct csni_frame){.type = CSNI_F_DATA, .aux = CSNI_CTS_NOTID}, -1, 0);
    roundtrip(csni_frame_cts(CSNI_CTS_FABRIC, 1u << 20, 5, 6));
    refused((struct csni_frame){.type = CSNI_F_DATA, .aux = CSNI_CTS_FABRIC}, -1, 0);
    refused((struct csni_frame){.type = CSNI_F_CTS, .aux = CSNI_CTS_FABRIC + 1}, -1, 0);
    refused((struct csni_frame){.type = CSNI_F_EAGER, .dst = 2, .src = 3, .len = 65537}, -1, 0);
    refused((struct csni_frame){.type = CSNI_F_EAGER, .dst = 0, .src = 3}, -1, 0);
    refused((struct csni_frame){.type = CSNI_F_RTS, .dst = 1, .src = 0, .len = 5}, -1, 0);
    refused((struct csni_frame){.type = CSNI_F_RTS, .dst = 1, .src = 1, .len = (1ull << 48) + 1},
            -1, 0);
    refused((struct csni_frame){.type = CSNI_F_CTS, .aux = 9}, -1, 0);
    /* RTS kinds: asked, pushed to the fabric provider, withdrawn (no length) */
    roundtrip(csni_frame_rts(5, 9, 1u << 20, 77, 0, true));
    struct csni_frame pushed = csni_frame_rts(5, 9, 1, 77, 0, true);
    CHECK(csni_frame_rts_kind(&pushed) == CSNI_RTS_PUSHED);
    roundtrip(csni_frame_rts_withdrawn(5, 9, 77));
    refused(
        (struct csni_frame){
            .type = CSNI_F_RTS, .dst = 1, .src = 1, .aux = CSNI_RTS_WITHDRAWN, .len = 5},
        -1, 0);
    refused(
        (struct csni_frame){.type = CSNI_F_RTS, .dst = 1, .src = 1, .aux = CSNI_RTS_WITHDRAWN + 1},
        -1, 0);
    roundtrip(csni_frame_move(CSNI_MOVE_LAST));
    roundtrip(csni_frame_move(CSNI_MOVE_OK));
    CHECK(csni_frame_move_kind(&(struct csni_frame){.type = CSNI_F_MOVE, .aux = 1}) ==
          CSNI_MOVE_OK);
    refused((struct csni_frame){.type = CSNI_F_MOVE, .aux = CSNI_MOVE_OK + 1}, -1, 0);
    refused((struct csni_frame){.type = CSNI_F_MOVE, .len = 1}, -1, 0);
    refused((struct csni_frame){.type = CSNI_F_DATA, .aux = CSNI_CTS_PULLED}, -1, 0);
    refused((struct csni_frame){.type = CSNI_F_DATA, .aux = CSNI_CTS_GONE, .len = 1}, -1, 0);
    refused((struct csni_frame){.type = CSNI_F_HELLO, .aux = 2, .len = CSNI_KEY_BYTES}, -1, 0);
    refused((struct csni_frame){.type = CSNI_F_HELLO, .aux = 1, .len = 3}, -1, 0);
    refused((struct csni_frame){.type = CSNI_F_HELLO, .dst = 2, .aux = 1, .len = CSNI_KEY_BYTES},
            -1, 0);
    /* random headers: decode or refuse with a reason, never crash; accepted ones round-trip */
    srand(12345);
    for (int i = 0; i < 200000; i++) {
        uint8_t b[CSNI_FRAME_SIZE], c[CSNI_FRAME_SIZE];
        struct csni_frame g;
        const char *why = NULL;
        for (int k = 0; k < CSNI_FRAME_SIZE; k++)
            b[k] = (uint8_t)rand();
        if (i & 1) { /* keep the magic often, so the deeper checks are reached */
            b[0] = 0xA1;
            b[1] = 0xC5;
            b[2] = (uint8_t)(b[2] % (CSNI_F_TYPE_MAX + 1));
            b[3] = 0;
        }
        if (csni_frame_decode(b, 65536, &g, &why) == 0) {
            csni_frame_encode(&g, c);
            CHECK(memcmp(b, c, sizeof b) == 0);
        } else {
            CHECK(why != NULL);
        }
    }
    return 0;
}
