/* csnrun_args: csnrun's command line (tools/csnrun/main.c, parse_command_line): options,
 * -np, --host lists, -x, and the program (resolved on PATH; nothing is started). */
#include "../common/csnrun_main.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct job job;
    struct pool pool;
    char **argv;
    int argc = fuzz_argv(data, size, "csnrun", &argv);

    int i;

    /* A valid -np N allocates N ranks: beyond 65536 that only measures the allocator (the
     * parser itself is linear since the fuzzer found it quadratic). */
    for (i = 1; i < argc; i++) {
        char *end;
        if (strtol(argv[i], &end, 10) > 65536 && *end == '\0') {
            fuzz_argv_free(argc, argv);
            return 0;
        }
    }
    fuzz_csnrun_init();
    memset(&job, 0, sizeof job);
    memset(&pool, 0, sizeof pool);
    job.rsh = "ssh";
    (void)parse_command_line(&job, &pool, argc, argv);
    free(pool.host);
    free(pool.slots);
    job_free(&job);
    fuzz_argv_free(argc, argv);
    return 0;
}
