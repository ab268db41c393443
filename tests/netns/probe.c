/* probe.c: a rank for the testbed's intrusion test: publishes where the job listens, waits for the
 * intruder, then proves the job still works. */
#include <csn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "names/names.h"

/* Usage: probe DIR. Rank 0 writes DIR/ns (CSN_NS) and DIR/ep (one "RANK ENDPOINT" line per
 * rank) and then DIR/ready; every rank waits for DIR/go (the intruder is done), then sends
 * its rank round the ring (names probe.RANK), checks what it got, meets the others in a barrier and
 * exits 0. */

/* CSN_TB_TRACE=1: each step on stderr, to find where a job stands. */
static void probe_step(const char *what)
{
    static int on = -1;

    if (on < 0)
        on = getenv("CSN_TB_TRACE") != NULL;
    if (on)
        fprintf(stderr, "probe: rank %d: %s\n", csn_job_rank(), what);
}

static int probe_fail(const char *what, csn_status s)
{
    fprintf(stderr, "probe: rank %d: %s: %s\n", csn_job_rank(), what, csn_status_string(s));
    return 1;
}

static int probe_write(const char *dir, const char *name, const char *text)
{
    char path[4096], tmp[4200];
    FILE *f;

    snprintf(path, sizeof path, "%s/%s", dir, name);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    f = fopen(tmp, "w");
    if (f == NULL || fputs(text, f) == EOF || fclose(f) != 0 || rename(tmp, path) != 0) {
        fprintf(stderr, "probe: cannot write %s: %s\n", path, strerror(errno));
        return -1;
    }
    return 0;
}

/* Rank 0: what an outsider would need to know to reach the job. */
static int probe_publish(const char *dir, int size)
{
    char line[1200], *all = calloc((size_t)size, sizeof line);
    const char *ns = getenv("CSN_NS");
    int r, rc = -1;

    if (all == NULL)
        return -1;
    for (r = 0; r < size; r++) {
        char ep[1024];
        csn_status s =
            csni_kv_get((snprintf(line, sizeof line, "ep.%d", r), line), 10000, ep, sizeof ep);
        if (s != CSN_OK) {
            probe_fail("endpoint lookup", s);
            goto out;
        }
        snprintf(line, sizeof line, "%d %s\n", r, ep);
        strcat(all, line);
    }
    snprintf(line, sizeof line, "%s\n", ns != NULL ? ns : "");
    if (probe_write(dir, "ns", line) == 0 && probe_write(dir, "ep", all) == 0 &&
        probe_write(dir, "ready", "ready\n") == 0)
        rc = 0;
out:
    free(all);
    return rc;
}

int main(int argc, char **argv)
{
    csn_transport *t = NULL;
    csn_status s;
    int me, size, waited = 0, got = -1;
    char go[4096];
    csn_netid next, from = CSN_NULL_NETID;
    size_t n = 0;
    void *done;
    csn_status op;

    if (argc != 2 || strcmp(argv[1], "--help") == 0) {
        fputs("usage: probe DIR   (under csnrun; see tests/netns/testbed.sh)\n",
              argc == 2 ? stdout : stderr);
        return argc == 2 ? 0 : 2;
    }
    if ((s = csn_open(&t)) != CSN_OK)
        return probe_fail("csn_open", s);
    me = csn_job_rank();
    size = csn_job_size();
    snprintf(go, sizeof go, "probe.%d", me);
    if ((s = csn_register_name(t, go)) != CSN_OK)
        return probe_fail("register", s);
    probe_step("registered");
    if ((s = csn_job_barrier(t)) != CSN_OK)
        return probe_fail("first barrier", s);
    probe_step("first barrier done");
    if (me == 0 && probe_publish(argv[1], size) != 0)
        return 1;
    snprintf(go, sizeof go, "%s/go", argv[1]);
    while (access(go, F_OK) != 0) {
        if (++waited > 1200) {
            fprintf(stderr, "probe: rank %d: %s did not appear within 60 s\n", me, go);
            return 1;
        }
        nanosleep(&(struct timespec){.tv_nsec = 50000000}, NULL);
    }
    snprintf(go, sizeof go, "probe.%d", (me + 1) % size);
    if ((s = csn_lookup_name(&next, go)) != CSN_OK)
        return probe_fail("lookup of the next rank", s);
    probe_step("next rank found");
    if ((s = csn_tx_nb(t, next, &me, sizeof me)) != CSN_OK)
        return probe_fail("send", s);
    if ((s = csn_rx(t, &from, &got, sizeof got, &n)) != CSN_OK)
        return probe_fail("receive", s);
    probe_step("received");
    if ((s = csn_test(t, CSN_TX, CSN_FOREVER, &next, &done, &op)) != CSN_TX_READY || op != CSN_OK)
        return probe_fail("send completion", s == CSN_TX_READY ? op : s);
    if (n != sizeof got || got != (me + size - 1) % size) {
        fprintf(stderr, "probe: rank %d: got %d (%zu bytes), expected %d\n", me, got, n,
                (me + size - 1) % size);
        return 1;
    }
    probe_step("sent");
    if ((s = csn_job_barrier(t)) != CSN_OK)
        return probe_fail("last barrier", s);
    printf("probe: rank %d ok\n", me);
    csn_close(&t);
    return 0;
}
