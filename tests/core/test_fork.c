/* test_fork.c: a process forks right after csn_open returned, and its child opens the library
 * and talks with it (the pattern of bench/pipeline's processes), round after round.
 *   usage (under csnrun -np 1): test_fork [ROUNDS]
 * Each round is a fresh process (forked by the test) that opens, forks at once, looks up the
 * name its child registers and sends it a message. A child that has not received it within
 * 10 s is reported as hung: the library's threads were still starting when the fork came and
 * left locks held (AddressSanitizer's thread registry: bench/pipeline's CI failure). */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "csn.h"
#include "../test.h"

#define FORK_CHILD_LIMIT_S 10

static void fork_child(int round)
{
    csn_transport *t;
    csn_netid from = CSN_NULL_NETID; /* csn_rx reads it: accept from any */
    char name[32], buf[8];
    size_t len = 0;

    alarm(FORK_CHILD_LIMIT_S);
    CHECK_OK(csn_open(&t));
    snprintf(name, sizeof name, "fork.%d", round);
    CHECK_OK(csn_register_name(t, name));
    CHECK_OK(csn_rx(t, &from, buf, sizeof buf, &len));
    CHECK(len == 8 && memcmp(buf, "forktest", 8) == 0);
    CHECK_OK(csn_close(&t));
    _exit(0);
}

/* One round's process: opens, forks at once, then reaches the child by name. */
static void fork_round(int round)
{
    csn_transport *t;
    csn_netid child;
    char name[32];
    int st;

    CHECK_OK(csn_open(&t));
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0)
        fork_child(round);
    snprintf(name, sizeof name, "fork.%d", round);
    csn_status s = csn_lookup_name(&child, name);
    if (s == CSN_OK)
        s = csn_tx(t, child, "forktest", 8);
    CHECK(waitpid(pid, &st, 0) == pid);
    if (WIFSIGNALED(st) && WTERMSIG(st) == SIGALRM) {
        fprintf(stderr,
                "test_fork: round %d: the child forked right after csn_open hung for %d s\n", round,
                FORK_CHILD_LIMIT_S);
        _exit(1);
    }
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    CHECK_OK(s);
    CHECK_OK(csn_close(&t));
    _exit(0);
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 60;
    if (rounds < 1 || rounds > 100000) {
        fprintf(stderr, "usage: test_fork [ROUNDS 1..100000]\n");
        return 2;
    }
    if (getenv("CSN_NS") == NULL) {
        fprintf(stderr, "test_fork: not under csnrun: skip\n");
        return TEST_SKIP;
    }
    for (int r = 0; r < rounds; r++) {
        int st;
        pid_t pid = fork();
        CHECK(pid >= 0);
        if (pid == 0)
            fork_round(r);
        CHECK(waitpid(pid, &st, 0) == pid);
        if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
            fprintf(stderr, "test_fork: round %d failed\n", r);
            return 1;
        }
    }
    printf("test_fork: %d rounds ok\n", rounds);
    return 0;
}
