/* hello.c: the seed's first example (Figures 2, 3): a source sends "Hello world" to the sink. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <csn.h>

static const char hello_usage[] =
    "usage: hello [sink|source]\n"
    "The CSN hello example. Run as  csnrun -np 2 hello  (rank 0 is the sink, every other\n"
    "rank a source) or from a spec file naming the role of each line (see hello.spec).\n"
    "The sink registers the name \"sink\" and receives one message from each source with\n"
    "CSN_NULL_NETID (any sender); a source looks \"sink\" up and sends \"Hello world\".\n";

#define HELLO_TEXT "Hello world"

/* Prints what failed (for CSN_SYSTEM_ERROR, errno says how) and gives the exit status. */
static int hello_fail(const char *what, csn_status s)
{
    const char *how = s == CSN_SYSTEM_ERROR ? strerror(errno) : NULL;
    fprintf(stderr, "hello: rank %d: %s: %s%s%s\n", csn_job_rank(), what, csn_status_string(s),
            how ? ": " : "", how ? how : "");
    return 1;
}

/* Figure 3: register, then a blocking receive from anyone, once per source. */
static int hello_sink(int sources)
{
    csn_transport *tpt = NULL;
    csn_status s;
    int rc = 1;
    if ((s = csn_open(&tpt)) != CSN_OK)
        return hello_fail("csn_open", s);
    if ((s = csn_register_name(tpt, "sink")) != CSN_OK) {
        rc = hello_fail("csn_register_name(\"sink\")", s);
        goto fail;
    }
    for (int i = 0; i < sources; i++) {
        char buffer[13]; /* the seed's ARRAY [0..12] OF CHAR */
        size_t actual = 0;
        csn_netid netid = CSN_NULL_NETID;
        memset(buffer, 0, sizeof buffer);
        if ((s = csn_rx(tpt, &netid, buffer, sizeof buffer, &actual)) != CSN_OK) {
            rc = hello_fail("csn_rx", s);
            goto fail;
        }
        /* The payload is checked: exactly the string and its terminating NUL. */
        if (actual != sizeof HELLO_TEXT || memcmp(buffer, HELLO_TEXT, sizeof HELLO_TEXT) != 0) {
            fprintf(stderr, "hello: sink got %zu unexpected bytes from rank %d\n", actual,
                    csn_netid_rank(netid));
            goto fail;
        }
        printf("sink received string: %s\n", buffer);
        fflush(stdout);
    }
    rc = 0;
fail:
    csn_close(&tpt);
    return rc;
}

/* Figure 2: look the sink up (this waits until it has registered), then a blocking send. */
static int hello_source(void)
{
    csn_transport *tpt = NULL;
    csn_netid sink_id;
    csn_status s;
    int rc = 1;
    if ((s = csn_open(&tpt)) != CSN_OK)
        return hello_fail("csn_open", s);
    if ((s = csn_lookup_name(&sink_id, "sink")) != CSN_OK) {
        rc = hello_fail("csn_lookup_name(\"sink\")", s);
        goto fail;
    }
    char buffer[13];
    strcpy(buffer, HELLO_TEXT);
    if ((s = csn_tx(tpt, sink_id, buffer, strlen(buffer) + 1)) != CSN_OK) {
        rc = hello_fail("csn_tx", s);
        goto fail;
    }
    rc = 0;
fail:
    csn_close(&tpt);
    return rc;
}

int main(int argc, char **argv)
{
    const char *role = NULL;
    if (argc > 2) {
        fprintf(stderr, "hello: too many arguments (see --help)\n");
        return 2;
    }
    if (argc == 2) {
        if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
            fputs(hello_usage, stdout);
            return 0;
        }
        if (strcmp(argv[1], "sink") != 0 && strcmp(argv[1], "source") != 0) {
            fprintf(stderr, "hello: unknown role '%s' (sink or source)\n", argv[1]);
            return 2;
        }
        role = argv[1];
    }
    int size = csn_job_size();
    if (size < 2) {
        /* 1 also where this process could not join its job: csn_open says why. */
        csn_transport *tpt = NULL;
        csn_status s = csn_open(&tpt);
        if (s != CSN_OK)
            return hello_fail("csn_open", s);
        csn_close(&tpt);
        fprintf(stderr, "hello: needs a sink and a source: csnrun -np 2 hello\n");
        return 2;
    }
    if (role == NULL)
        role = csn_job_rank() == 0 ? "sink" : "source";
    /* Every process but the sink is a source (in a spec file too: one sink line). */
    return strcmp(role, "sink") == 0 ? hello_sink(size - 1) : hello_source();
}
