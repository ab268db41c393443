/* frame.c: encoding, decoding and validation of frame headers. */
#include "wire/frame.h"
#include <string.h>

static void frame_put16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}
static void frame_put32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}
static void frame_put64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}
static uint16_t frame_get16(const uint8_t *p)
{
    return (uint16_t)(p[0] | p[1] << 8);
}
static uint32_t frame_get32(const uint8_t *p)
{
    uint32_t v = 0;
    for (int i = 3; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}
static uint64_t frame_get64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

void csni_frame_encode(const struct csni_frame *f, uint8_t out[CSNI_FRAME_SIZE])
{
    frame_put16(out, CSNI_FRAME_MAGIC);
    out[2] = f->type;
    out[3] = 0;
    frame_put32(out + 4, f->dst);
    frame_put32(out + 8, f->src);
    frame_put32(out + 12, f->aux);
    frame_put64(out + 16, f->len);
    frame_put64(out + 24, f->cookie);
    frame_put64(out + 32, f->cookie2);
}

int csni_frame_decode(const uint8_t in[CSNI_FRAME_SIZE], uint64_t eager_max, struct csni_frame *f,
                      const char **why)
{
    if (frame_get16(in) != CSNI_FRAME_MAGIC) {
        *why = "bad magic";
        return -1;
    }
    f->type = in[2];
    if (f->type == 0 || f->type >= CSNI_F_TYPE_MAX) {
        *why = "unknown frame type";
        return -1;
    }
    if (in[3] != 0) {
        *why = "unknown flags";
        return -1;
    }
    f->dst = frame_get32(in + 4);
    f->src = frame_get32(in + 8);
    f->aux = frame_get32(in + 12);
    f->len = frame_get64(in + 16);
    f->cookie = frame_get64(in + 24);
    f->cookie2 = frame_get64(in + 32);
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
        break;
    case CSNI_F_CTS:
    case CSNI_F_DATA:
        if (f->aux != CSNI_CTS_OK && f->aux != CSNI_CTS_GONE &&
            !(f->aux == CSNI_CTS_PULLED && f->type == CSNI_F_CTS)) {
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
    }
    *why = NULL;
    return 0;
}
