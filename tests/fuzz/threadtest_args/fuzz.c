/* threadtest_args: threadtest's command line (bench/threadtest/threadtest.c, tt_parse_args,
 * which exits on a usage error: exit() returns here instead). */
#include "../common/fuzz_argv.h"
#define exit fuzz_exit
#define main threadtest_main
#include "../../../bench/threadtest/threadtest.c"
#undef main
#undef exit

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct tt_opts defaults;
    static int saved;
    char **argv;
    volatile int argc = fuzz_argv(data, size, "threadtest", &argv);

    if (!saved) {
        defaults = tt_o;
        saved = 1;
    }
    tt_o = defaults;
    fuzz_exit_armed = 1;
    if (setjmp(fuzz_exit_jb) == 0)
        tt_parse_args(argc, argv);
    fuzz_exit_armed = 0;
    fuzz_argv_free(argc, argv);
    return 0;
}
