/* fuzz_argv.h: shared by the argument-parser fuzz targets: an input becomes argv (arguments
 * separated by NUL bytes, at most FUZZ_MAX_ARGS), and exit() inside a parser returns to the
 * harness instead of ending the fuzzer (a usage error is an answer, not a crash). */
#ifndef FUZZ_ARGV_H
#define FUZZ_ARGV_H

#include <setjmp.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FUZZ_MAX_ARGS 64

static jmp_buf fuzz_exit_jb;
static int fuzz_exit_armed;

static void fuzz_exit(int code) __attribute__((noreturn, unused));
static void fuzz_exit(int code)
{
    if (!fuzz_exit_armed)
        _exit(code);
    longjmp(fuzz_exit_jb, code + 1);
}

/* Splits data into argv (argv[0] = prog); returns argc. Frees with fuzz_argv_free. */
static inline int fuzz_argv(const uint8_t *data, size_t size, const char *prog, char ***out)
{
    char **argv = calloc(FUZZ_MAX_ARGS + 2, sizeof *argv);
    size_t i = 0;
    int argc = 1;

    if (argv == NULL)
        abort();
    argv[0] = strdup(prog);
    while (i < size && argc <= FUZZ_MAX_ARGS) {
        const uint8_t *nul = memchr(data + i, 0, size - i);
        size_t n = nul ? (size_t)(nul - (data + i)) : size - i;
        argv[argc] = malloc(n + 1);
        if (argv[argc] == NULL)
            abort();
        memcpy(argv[argc], data + i, n);
        argv[argc][n] = '\0';
        argc++;
        i += n + 1;
    }
    argv[argc] = NULL;
    *out = argv;
    return argc;
}

static inline void fuzz_argv_free(int argc, char **argv)
{
    int i;

    for (i = 0; i < argc; i++)
        free(argv[i]);
    free(argv);
}

#endif
