/* agent_proto: the node agent's side of csnrun's line protocol (tools/csnrun/agent.c,
 * agent_setup_line, and proto_decode/proto_split in proto.c): each input is a job description
 * as the launcher (or anything that can write to the agent's stream) would send it, one line
 * per '\n', fed to a fresh agent up to START, as agent_main does. The line reader linebuf is
 * fed the same bytes through a pipe. */
#include "../common/fuzz_argv.h"
#define main agent_unused_main
#include "../../../tools/csnrun/agent.c"
#undef main

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct agent a;
    char *copy = malloc(size + 1), *line, *next;
    int p[2], started = 0;

    if (copy == NULL)
        return 0;
    memcpy(copy, data, size);
    copy[size] = '\0';
    memset(&a, 0, sizeof a);
    a.rfd = a.wfd = a.guard_fd = -1;
    for (line = copy; !started && line != NULL && line < copy + size; line = next) {
        int s;
        char dec[4096];
        size_t n;

        next = memchr(line, '\n', (size_t)(copy + size - line));
        if (next != NULL)
            *next++ = '\0';
        n = strlen(line);
        if (n < sizeof dec) { /* proto_decode alone, on a copy */
            long len;
            memcpy(dec, line, n + 1);
            len = proto_decode(dec);
            if (len > (long)n)
                abort();
        }
        s = agent_setup_line(&a, line);
        if (s < 0)
            break;
        started = s == 1;
    }
    agent_free(&a);
    free(copy);

    /* The same bytes through linebuf (what agent_main reads with). */
    if (size <= 65536 && pipe(p) == 0) {
        struct linebuf lb = {0};
        if (write(p[1], data, size) == (ssize_t)size) {
            close(p[1]);
            p[1] = -1;
            while (linebuf_fill(&lb, p[0]) > 0) {
                while ((line = linebuf_next(&lb)) != NULL)
                    (void)strlen(line);
            }
            while ((line = linebuf_next(&lb)) != NULL)
                (void)strlen(line);
        }
        linebuf_free(&lb);
        if (p[1] >= 0)
            close(p[1]);
        close(p[0]);
    }
    return 0;
}
