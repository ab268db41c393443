/* tool.h: what every benchmark does alike before its communication starts: --version, and
 * printing usage text and usage errors from one process only (rank 0 of the launch). */
#ifndef BENCH_TOOL_H
#define BENCH_TOOL_H

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifndef BENCH_VERSION
#define BENCH_VERSION "unknown"
#endif

/* The rank before the comm layer starts, from the launchers' environment (csnrun, Open MPI,
 * PMIx, PMI, Slurm); -1 when not launched. */
static inline int bench_env_rank(void)
{
    static const char *const vars[] = {"CSN_RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK",
                                       "PMI_RANK", "SLURM_PROCID"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        const char *v = getenv(vars[i]);
        if (v != NULL && *v != '\0')
            return atoi(v);
    }
    return -1;
}

/* The program's name as invoked (argv[0] without its directory). */
static inline const char *bench_prog(const char *argv0)
{
    const char *s = argv0 != NULL ? strrchr(argv0, '/') : NULL;
    return s != NULL ? s + 1 : argv0 != NULL ? argv0 : "?";
}

/* The launcher that starts prog: mpirun for the -mpi twins, csnrun for the rest. */
static inline const char *bench_launcher(const char *prog)
{
    size_t n = strlen(prog);
    return n > 4 && strcmp(prog + n - 4, "-mpi") == 0 ? "mpirun" : "csnrun";
}

/* --version anywhere before "--": prints "PROG VERSION" (rank 0 only) and returns 1. */
static inline int bench_version(int argc, char **argv)
{
    for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++) {
        if (strcmp(argv[i], "--version") == 0) {
            if (bench_env_rank() <= 0)
                printf("%s %s\n", bench_prog(argv[0]), BENCH_VERSION);
            return 1;
        }
    }
    return 0;
}

/* Ranks other than 0 parse their command line with stdout and stderr on /dev/null, so that
 * --help and usage errors appear once. bench_quiet_end restores them; saved[2] is the
 * caller's. */
static inline void bench_quiet_begin(int saved[2])
{
    int null;

    saved[0] = saved[1] = -1;
    if (bench_env_rank() <= 0 || (null = open("/dev/null", O_WRONLY | O_CLOEXEC)) < 0)
        return;
    fflush(stdout);
    fflush(stderr);
    saved[0] = dup(1);
    saved[1] = dup(2);
    if (saved[0] < 0 || saved[1] < 0 || dup2(null, 1) < 0 || dup2(null, 2) < 0) {
        if (saved[0] >= 0)
            dup2(saved[0], 1);
        if (saved[1] >= 0)
            dup2(saved[1], 2);
    }
    close(null);
}

/* Restores stdout and stderr. After a usage error (status 2) a quiet rank waits a moment
 * before it exits, so that a launcher which stops the job at the first failure lets rank 0
 * say why. */
static inline void bench_quiet_end(int saved[2], int status)
{
    if (saved[0] < 0 && saved[1] < 0)
        return;
    fflush(stdout);
    fflush(stderr);
    for (int i = 0; i < 2; i++) {
        if (saved[i] >= 0) {
            dup2(saved[i], i + 1);
            close(saved[i]);
        }
    }
    if (status == 2)
        nanosleep(&(struct timespec){.tv_sec = 0, .tv_nsec = 300 * 1000 * 1000L}, NULL);
}

#endif
