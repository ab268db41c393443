/* nettest_args: nettest's command line parser (bench/nettest/params.c, nt_parse). */
#include "../common/fuzz_argv.h"
#include "nettest.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct nt_params p;
    char err[256], **argv;
    int argc = fuzz_argv(data, size, "nettest", &argv);

    memset(&p, 0, sizeof p);
    if (nt_parse(argc, argv, &p, err, sizeof err) == 0 && !p.help) {
        /* A valid set of sizes: the first few, bounded (nt_sizes counts them all). */
        if (p.unit_bytes == 0 || p.min > p.max)
            abort();
    } else if (!p.help && strlen(err) == 0) {
        abort(); /* a refusal must say why */
    }
    fuzz_argv_free(argc, argv);
    return 0;
}
