/* pipeline_args: pipeline's command line (bench/pipeline/options.c, pl_parse). */
#include "../common/fuzz_argv.h"
#include "pipeline.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct pl_opts o;
    char **argv;
    int argc = fuzz_argv(data, size, "pipeline", &argv);

    memset(&o, 0, sizeof o);
    (void)pl_parse(argc, argv, &o, 0);
    fuzz_argv_free(argc, argv);
    return 0;
}
