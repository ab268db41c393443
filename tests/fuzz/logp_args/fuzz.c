/* logp_args: logp's command line (bench/logp/logp.c, logp_parse_args, with getopt_long). */
#include "../common/fuzz_argv.h"
#include <getopt.h>
#define exit fuzz_exit
#define main logp_main
#include "../../../bench/logp/logp.c"
#undef main
#undef exit

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static logp_opts o;
    char **argv;
    volatile int argc = fuzz_argv(data, size, "logp", &argv);

    memset(&o, 0, sizeof o);
    optind = 0; /* glibc: a full re-initialisation of getopt */
    fuzz_exit_armed = 1;
    if (setjmp(fuzz_exit_jb) == 0)
        (void)logp_parse_args(argc, argv, &o);
    fuzz_exit_armed = 0;
    free(o.sizes);
    fuzz_argv_free(argc, argv);
    return 0;
}
