/* csnrun_main.h: csnrun's main.c inside a fuzz target (its parsers are static): main is
 * renamed, and this_host is set as main would set it. A parser's input file is a memfd. */
#ifndef FUZZ_CSNRUN_MAIN_H
#define FUZZ_CSNRUN_MAIN_H

#include "fuzz_argv.h"
#include <sys/mman.h>
#define main csnrun_main
#include "../../../tools/csnrun/main.c"
#undef main

static void fuzz_csnrun_init(void)
{
    if (this_host[0] == '\0' && gethostname(this_host, sizeof this_host) != 0)
        strcpy(this_host, "localhost");
    this_host[sizeof this_host - 1] = '\0';
}

/* A file holding data, named /proc/self/fd/N (closed by the caller with close(fd)). */
static inline int fuzz_file(const uint8_t *data, size_t size, char *path, size_t cap)
{
    int fd = memfd_create("fuzz", MFD_CLOEXEC);

    if (fd < 0)
        abort();
    if (size > 0 && write(fd, data, size) != (ssize_t)size)
        abort();
    snprintf(path, cap, "/proc/self/fd/%d", fd);
    return fd;
}

#endif
