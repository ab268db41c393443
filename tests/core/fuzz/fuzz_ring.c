/* fuzz_ring.c: libFuzzer target for the shared-memory ring's record reader (the consumer side
 * of src/transport/shm/shm.c). The input is a hostile peer's image of the inbound ring: its
 * consumer index (the peer can write it too: it lives in the shared segment), the ring's bytes,
 * and a script of consumer calls (peek then consume part or all, or read into a buffer of some
 * size); a short record peek returns is decoded as the connection would (csni_frame_decode_short).
 * Whatever the bytes, the reader must only report records inside the ring and never read outside
 * it: everything of the segment but the inbound ring is poisoned for ASan. Build (clang): see
 * tests/core.cmake or .ci/run. Input layout: [0,8) head   [8,24) script (16 ops)   [24, ...) ring
 * bytes (ring of 4096, rest zero) */
#include <sanitizer/asan_interface.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "transport/shm/shm.c" /* the static helpers and the ring's layout */
#include "wire/frame.c"        /* a short record's header: csni_frame_decode_short */

#define FUZZ_RING 4096u

/* shm.c's assertion (core/lockcheck.c in the library) */
void csni_assert_fail(const char *what, const char *file, int line)
{
    (void)what, (void)file, (void)line;
    abort();
}

static uint8_t *fz_seg;
static struct csni_shm *fz_s;

static void fuzz_ring_setup(void)
{
    size_t size = shm_seg_size(FUZZ_RING);
    fz_seg = aligned_alloc(4096, size);
    if (!fz_seg || shm_map(fz_seg, FUZZ_RING, 0, false, &fz_s) != CSN_OK)
        abort();
    /* side 0: in is ring 1. Only its header fields and its data are the reader's. */
    ASAN_POISON_MEMORY_REGION(fz_seg, size);
    ASAN_UNPOISON_MEMORY_REGION(fz_s->in, sizeof(struct shm_ring) + FUZZ_RING);
}

static void fuzz_check(const uint8_t *at, size_t n)
{
    const uint8_t *lo = fz_s->in->data, *hi = lo + FUZZ_RING;
    if (at < lo || at > hi || n > (size_t)(hi - at))
        abort(); /* a record reported outside the ring */
    volatile uint8_t sink = 0;
    for (size_t i = 0; i < n; i++)
        sink ^= at[i]; /* ASan sees every byte the caller may read */
    (void)sink;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static uint8_t buf[2 * FUZZ_RING];
    if (!fz_seg)
        fuzz_ring_setup();
    if (size < 24)
        return 0;
    uint64_t head;
    memcpy(&head, data, 8);
    const uint8_t *script = data + 8;
    size_t n = size - 24 > FUZZ_RING ? FUZZ_RING : size - 24;
    struct shm_ring *r = fz_s->in;
    memset(r->data, 0, FUZZ_RING);
    memcpy(r->data, data + 24, n);
    atomic_store(&r->head, head);
    atomic_store(&r->tail, head + FUZZ_RING);
    fz_s->rec_off = 0;
    for (int i = 0; i < 16; i++) {
        uint8_t op = script[i];
        if (op & 1) {
            size_t want = (size_t)(op >> 1) * 37u % (sizeof buf + 1);
            ssize_t got = csni_shm_read(fz_s, buf, want);
            if (got > (ssize_t)want)
                abort();
            if (got < 0)
                break; /* nothing there, or a corrupt record: the connection would end */
        } else {
            const uint8_t *at;
            size_t len;
            int k = csni_shm_peek(fz_s, &at, &len);
            if (k <= 0)
                break;
            fuzz_check(at, len);
            if (k == 2) {
                struct csni_frame f;
                const char *why;
                if (len < CSNI_SHORT_SIZE ||
                    (csni_frame_decode_short(at, len - CSNI_SHORT_SIZE, FUZZ_RING, &f, &why) == 0 &&
                     (f.type != CSNI_F_EAGER || f.len != len - CSNI_SHORT_SIZE || !f.dst ||
                      !f.src)))
                    abort(); /* a short record too short for its ids, or decoded wrong */
            }
            size_t take = (op & 2) ? len : (size_t)(op >> 2) % (len + 1);
            csni_shm_consume(fz_s, take);
        }
        (void)csni_shm_has_data(fz_s, 4096); /* with the prefetch: the header is the peer's */
    }
    return 0;
}
