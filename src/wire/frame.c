/* frame.c: encoding, decoding and validation of frame headers. */
#include "wire/frame.h"
#include <string.h>

/* Fields are little-endian on the wire; memcpy compiles to one load or store. */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define FRAME_LE32(v) __builtin_bswap32(v)
#define FRAME_LE64(v) __builtin_bswap64(v)
#else
#define FRAME_LE32(v) (v)
#define FRAME_LE64(v) (v)
#endif

static uint32_t frame_get32(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, sizeof v);
    return FRAME_LE32(v);
}
static uint64_t frame_get64(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, sizeof v);
    return FRAME_LE64(v);
}

void csni_frame_encode(const struct csni_frame *f, uint8_t out[CSNI_FRAME_SIZE])
{
    csni_frame_put(out, f->type, f->dst, f->src, f->aux, f->len, f->cookie, f->cookie2);
}

void csni_frame_set_chunk(uint8_t hdr[CSNI_FRAME_SIZE], uint64_t len, uint64_t offset)
{
    csni_frame_put64(hdr + 16, len);
    csni_frame_put64(hdr + 32, offset);
}

/* An EAGER frame that frame_check accepts, in one test: every message of the small-message
 * path is one, and the type, flag and range checks with the switch took its header's peek from
 * 130 to 141 instructions (an 8 B ping-pong's turnaround; BENCHMARKS.md, issue 19). False sends
 * the frame through frame_check, which names what is wrong (tests/wire checks that the two
 * agree). */
static bool frame_eager_ok(const struct csni_frame *f, uint64_t eager_max)
{
    return f->type == CSNI_F_EAGER && f->dst != 0 && f->src != 0 && f->len <= eager_max &&
           f->len <= CSNI_MAX_MSG;
}

/* The checks of a decoded frame's fields, by type (both encodings). */
static int frame_check(const struct csni_frame *f, uint64_t eager_max, const char **why)
{
    if (frame_eager_ok(f, eager_max)) {
        *why = NULL;
        return 0;
    }
    switch (f->type) {
    case CSNI_F_HELLO:
        if (f->len != CSNI_KEY_BYTES || f->aux != CSNI_PROTO_VERSION || f->dst > 1) {
            *why = "bad hello";
            return -1;
        }
        break;
    case CSNI_F_EAGER:
        if (f->len > eager_max) {
            *why = "eager message longer than the eager limit";
            return -1;
        }
        /* fallthrough */
    case CSNI_F_RTS:
        if (f->dst == 0 || f->src == 0) {
            *why = "message without transport ids";
            return -1;
        }
        if (f->len > CSNI_MAX_MSG) {
            *why = "message length out of range";
            return -1;
        }
        if (f->type == CSNI_F_RTS &&
            (f->aux > CSNI_RTS_WITHDRAWN || (f->aux == CSNI_RTS_WITHDRAWN && f->len != 0))) {
            *why = "bad request-to-send kind";
            return -1;
        }
        break;
    case CSNI_F_CTS:
    case CSNI_F_DATA:
        if (f->aux != CSNI_CTS_OK && f->aux != CSNI_CTS_GONE && f->aux != CSNI_CTS_SPLIT &&
            !(f->aux >= CSNI_CTS_PULLED && f->aux <= CSNI_CTS_FABRIC && f->type == CSNI_F_CTS)) {
            *why = "bad rendezvous status";
            return -1;
        }
        if (f->type == CSNI_F_DATA && f->aux == CSNI_CTS_GONE && f->len != 0) {
            *why = "payload after a gone status";
            return -1;
        }
        /* fallthrough */
    case CSNI_F_CREDIT:
        if (f->len > CSNI_MAX_MSG) {
            *why = "length out of range";
            return -1;
        }
        break;
    case CSNI_F_TIDS:
        if (f->aux > CSNI_TIDS_GONE || f->len > UINT32_MAX ||
            (f->aux == CSNI_TIDS_QUERY && f->len != 0)) {
            *why = "bad transport-id note";
            return -1;
        }
        break;
    case CSNI_F_MOVE:
        if (f->aux > CSNI_MOVE_OK || f->len != 0) {
            *why = "bad move";
            return -1;
        }
        break;
    }
    *why = NULL;
    return 0;
}

int csni_frame_decode(const uint8_t in[CSNI_FRAME_SIZE], uint64_t eager_max, struct csni_frame *f,
                      const char **why)
{
    /* The fields first, in words, then the checks: an EAGER frame's magic, type and flags are
     * one compare of the first four bytes. */
    uint64_t w0 = frame_get64(in), w1 = frame_get64(in + 8);
    f->type = in[2];
    f->dst = (uint32_t)(w0 >> 32);
    f->src = (uint32_t)w1;
    f->aux = (uint32_t)(w1 >> 32);
    f->len = frame_get64(in + 16);
    f->cookie = frame_get64(in + 24);
    f->cookie2 = frame_get64(in + 32);
    if ((uint32_t)w0 == (CSNI_FRAME_MAGIC | (uint32_t)CSNI_F_EAGER << 16) &&
        frame_eager_ok(f, eager_max)) {
        *why = NULL;
        return 0;
    }
    if ((uint16_t)w0 != CSNI_FRAME_MAGIC) {
        *why = "bad magic";
        return -1;
    }
    if (f->type == 0 || f->type >= CSNI_F_TYPE_MAX) {
        *why = "unknown frame type";
        return -1;
    }
    if (in[3] != 0) {
        *why = "unknown flags";
        return -1;
    }
    return frame_check(f, eager_max, why);
}

int csni_frame_decode_short(const uint8_t in[CSNI_SHORT_SIZE], uint64_t len, uint64_t eager_max,
                            struct csni_frame *f, const char **why)
{
    *f = csni_frame_eager(frame_get32(in), frame_get32(in + 4), len);
    return frame_check(f, eager_max, why);
}
