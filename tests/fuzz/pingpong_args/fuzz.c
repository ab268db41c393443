/* pingpong_args: pingpong's command line (bench/pingpong/pingpong.c, pingpong_parse, and the
 * options shared with logp and threadtest in ppcommon.c). */
#include "../common/fuzz_argv.h"
#define main pingpong_main
#include "../../../bench/pingpong/pingpong.c"
#undef main

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct pingpong_opts o;
    char **argv;
    int argc = fuzz_argv(data, size, "pingpong", &argv);

    memset(&o, 0, sizeof o);
    (void)pingpong_parse(argc, argv, &o);
    fuzz_argv_free(argc, argv);
    return 0;
}
