/* specfile: csnrun's spec file parser (tools/csnrun/main.c, parse_spec: COUNT [@HOSTS] PROGRAM
 * [ARGS...] per line, quotes, escapes, comments). */
#include "../common/csnrun_main.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct job job;
    struct pool pool;
    char path[64];
    int fd;

    size_t i = 0;

    /* A valid "COUNT PROGRAM" line allocates COUNT ranks: beyond 65536 that only measures
     * the allocator (3333331 ranks took a minute under ASan; linear since the csnrun_args
     * target found -np quadratic). Any number above it anywhere skips the input. */
    while (i < size) {
        unsigned long long v = 0;
        while (i < size && data[i] >= '0' && data[i] <= '9' && v <= 65536)
            v = v * 10 + (data[i++] - '0');
        if (v > 65536)
            return 0;
        i++;
    }
    fuzz_csnrun_init();
    memset(&job, 0, sizeof job);
    memset(&pool, 0, sizeof pool);
    pool_add(&job, &pool, this_host, 0); /* as parse_command_line does without --host */
    fd = fuzz_file(data, size, path, sizeof path);
    (void)parse_spec(&job, &pool, path);
    close(fd);
    free(pool.host);
    free(pool.slots);
    job_free(&job);
    return 0;
}
