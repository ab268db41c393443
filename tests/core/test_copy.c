/* test_copy.c: csni_copy (src/core/copy.h), the eager payload's copy: every length from 0 to
 * 80 at every offset of source and destination within a word moves exactly those bytes (none
 * before or after the range touched), and a length of 0 accepts NULL buffers. */
#include <stdint.h>
#include <string.h>

#include "../test.h"
#include "core/copy.h"

#define COPY_MAX 80
#define COPY_GUARD 16

int main(void)
{
    uint8_t src[COPY_MAX + 2 * COPY_GUARD], dst[COPY_MAX + 2 * COPY_GUARD];
    for (size_t i = 0; i < sizeof src; i++)
        src[i] = (uint8_t)(i * 7 + 1);
    for (size_t n = 0; n <= COPY_MAX; n++)
        for (size_t so = 0; so < 8; so++)
            for (size_t d_o = 0; d_o < 8; d_o++) {
                memset(dst, 0xee, sizeof dst);
                csni_copy(dst + COPY_GUARD + d_o, src + COPY_GUARD + so, n);
                for (size_t i = 0; i < sizeof dst; i++) {
                    size_t at = COPY_GUARD + d_o;
                    uint8_t want = i >= at && i < at + n ? src[COPY_GUARD + so + (i - at)] : 0xee;
                    CHECK(dst[i] == want);
                }
            }
    csni_copy(NULL, NULL, 0); /* an empty message may have no buffers */
    return 0;
}
