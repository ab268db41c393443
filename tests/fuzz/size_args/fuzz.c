/* size_args: the benchmarks' size syntax (bench/common/parse_size.h, bench_parse_size: 64K,
 * 1M, ...), which copyalign and switchcost parse their arguments with, and the other
 * benchmarks their sizes. Checks the result against its bound. */
#include "../common/fuzz_argv.h"
#include "parse_size.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const size_t bounds[] = {0, 1, 1000, (size_t)64 << 20, (size_t)1 << 40, SIZE_MAX};
    char *s = malloc(size + 1);
    size_t i, v;

    if (s == NULL)
        return 0;
    memcpy(s, data, size);
    s[size] = '\0';
    for (i = 0; i < sizeof bounds / sizeof bounds[0]; i++) {
        v = 12345;
        if (bench_parse_size(s, bounds[i], &v) == 0 && v > bounds[i])
            abort();
    }
    free(s);
    return 0;
}
