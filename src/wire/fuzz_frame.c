/* fuzz_frame.c: libFuzzer target for the frame decoder: any 40 bytes decode or are refused, never
 * crash, and what decodes re-encodes to the same bytes. */
#include <stdint.h>
#include <string.h>

#include "wire/frame.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint8_t in[CSNI_FRAME_SIZE] = {0}, out[CSNI_FRAME_SIZE];
    struct csni_frame f;
    const char *why;
    memcpy(in, data, size < sizeof in ? size : sizeof in);
    if (csni_frame_decode(in, 65536, &f, &why) == 0) {
        csni_frame_encode(&f, out);
        if (memcmp(in, out, sizeof in) != 0)
            __builtin_trap();
    } else if (!why) {
        __builtin_trap();
    }
    return 0;
}
