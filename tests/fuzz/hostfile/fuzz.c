/* hostfile: csnrun's --hostfile parser (tools/csnrun/main.c, parse_hostfile), then the
 * placement of ranks on the hosts it gave. */
#include "../common/csnrun_main.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct job job;
    struct pool pool;
    char path[64];
    int fd, i;

    fuzz_csnrun_init();
    memset(&job, 0, sizeof job);
    memset(&pool, 0, sizeof pool);
    fd = fuzz_file(data, size, path, sizeof path);
    if (parse_hostfile(&job, &pool, path) == 0) {
        for (i = 0; i < 64; i++) {
            int h = pool_next(&pool);
            if (h < 0 || h >= job.nhosts)
                abort();
        }
    }
    close(fd);
    free(pool.host);
    free(pool.slots);
    job_free(&job);
    return 0;
}
