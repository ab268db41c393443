/* test_lastword.c: a process sends its last message over a connection it makes just before it
 * exits, and that message arrives; the peer is not declared lost first.
 *   usage (under csnrun -np 1, CSN_CONN_PER_TRANSPORT=1): test_lastword [ROUNDS]
 * Each round forks a child. The child opens two transports, sends the id of the second over
 * the first (its own connection), then one message over the second (a new connection, still
 * in the receiver's listen queue or being heard when the child is gone) and exits at once. The
 * receiver waits for the second message by its source: with the first connection ended and the
 * second not yet counted, it used to see the child lost (CI: core_mp_lanes_shm, where rank 0
 * answers a barrier over a new connection and exits). */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "csn.h"
#include "../test.h"

#define LASTWORD_LIMIT_US (10 * 1000000)

static void lastword_child(void)
{
    csn_transport *a, *b;
    csn_netid to, from = CSN_NULL_NETID;
    char go[2];
    size_t len;
    alarm(LASTWORD_LIMIT_US / 1000000);
    CHECK_OK(csn_open(&a));
    CHECK_OK(csn_open(&b));
    CHECK_OK(csn_lookup_name(&to, "lastword"));
    csn_netid second = csn_netid_of(b);
    CHECK_OK(csn_tx(a, to, &second, sizeof second));
    CHECK_OK(csn_rx(a, &from, go, sizeof go, &len)); /* the receive for b is posted */
    CHECK_OK(csn_tx(b, to, "lastword", 8));
    _exit(0); /* no csn_close: the process is simply gone */
}

/* Waits for the receive posted on t, giving up after the limit; *from: the sender. */
static csn_status lastword_wait(csn_transport *t, csn_netid *from)
{
    void *got;
    csn_status st, rv = csn_test(t, CSN_RX, LASTWORD_LIMIT_US, from, &got, &st);
    return rv == CSN_RX_READY ? st : rv;
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 200;
    csn_transport *t;
    if (rounds < 1 || rounds > 100000) {
        fprintf(stderr, "usage: test_lastword [ROUNDS 1..100000]\n");
        return 2;
    }
    if (getenv("CSN_NS") == NULL) {
        fprintf(stderr, "test_lastword: not under csnrun: skip\n");
        return TEST_SKIP;
    }
    CHECK_OK(csn_open(&t));
    CHECK_OK(csn_register_name(t, "lastword"));
    for (int r = 0; r < rounds; r++) {
        csn_netid second = CSN_NULL_NETID, first, from;
        char word[8];
        size_t len = 0;
        int st;
        pid_t pid = fork();
        CHECK(pid >= 0);
        if (pid == 0)
            lastword_child();
        CHECK_OK(csn_rx_nb(t, &second, sizeof second, &len));
        CHECK_OK(lastword_wait(t, &first));
        CHECK(len == sizeof second && second != CSN_NULL_NETID);
        CHECK_OK(csn_rx_nb_from(t, second, word, sizeof word, &len));
        CHECK_OK(csn_tx(t, first, "go", 2));
        csn_status s = lastword_wait(t, &from);
        if (s != CSN_OK || len != 8 || memcmp(word, "lastword", 8) != 0) {
            fprintf(stderr, "test_lastword: round %d: the last message gave %s (%zu bytes)\n", r,
                    csn_status_string(s), len);
            return 1;
        }
        CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0);
    }
    CHECK_OK(csn_close(&t));
    printf("test_lastword: %d rounds ok\n", rounds);
    return 0;
}
