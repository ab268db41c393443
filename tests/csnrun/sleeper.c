/* sleeper.c: a csn program that opens a transport and sleeps (argv[1] seconds, default 60): a
 * rank, or a rank's child, for the launcher-death tests (tests/csnrun/orphans.sh). */
#include <csn.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    csn_transport *t = NULL;
    int secs = argc > 1 ? atoi(argv[1]) : 60;

    if (csn_open(&t) != CSN_OK) {
        fprintf(stderr, "sleeper: csn_open failed\n");
        return 1;
    }
    printf("sleeper %d up\n", csn_job_rank());
    fflush(stdout);
    sleep((unsigned)secs);
    csn_close(&t);
    return 0;
}
