/* names_client.c: tests of the boot environment and the name-service client (lone table, and
 * against csnrun's server). */
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "boot/boot.h"
#include "core/netid.h"
#include "names/names.h"
#include "test.h"

/* This program links boot.c and names.c alone (not the whole library), so statuses are
 * compared as numbers. */
#define EXPECT(expr, want)                                                                         \
    do {                                                                                           \
        csn_status e_ = (expr);                                                                    \
        if (e_ != (want)) {                                                                        \
            fprintf(stderr, "%s:%d: %s gave %d, wanted %d (%s)\n", __FILE__, __LINE__, #expr,      \
                    (int)e_, (int)(want), #want);                                                  \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

static uint64_t ms_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* Checks common to both modes: what a name may be. */
static void check_name_rules(int rank)
{
    char n255[257], n256[258];
    csn_netid me = csni_netid_make(rank, 7), got = 0;

    memset(n255, 'a', 255);
    n255[255] = '\0';
    n255[0] = (char)('0' + rank); /* distinct per rank */
    memset(n256, 'b', 256);
    n256[256] = '\0';
    CHECK(csni_name_valid(n255));
    CHECK(!csni_name_valid(n256));
    CHECK(!csni_name_valid(""));
    CHECK(!csni_name_valid(NULL));
    CHECK(!csni_name_valid("tab\there"));
    CHECK(!csni_name_valid("nl\n"));
    CHECK(!csni_name_valid("del\x7f"));
    CHECK(!csni_name_valid("hi\xc3\xa9"));
    CHECK(csni_name_valid(" spaces  inside "));
    EXPECT(csni_names_register(n255, me), CSN_OK);
    EXPECT(csni_names_lookup(n255, 0, &got), CSN_OK);
    CHECK(got == me);
    EXPECT(csni_names_register(n256, me), CSN_INVALID_ARGUMENT);
    EXPECT(csni_names_lookup(n256, 0, &got), CSN_INVALID_ARGUMENT);
    EXPECT(csni_names_register("bell\a", me), CSN_INVALID_ARGUMENT);
    EXPECT(csni_names_register("", me), CSN_INVALID_ARGUMENT);
    EXPECT(csni_kv_put("has space", "v"), CSN_INVALID_ARGUMENT);
    EXPECT(csni_kv_put("k", ""), CSN_INVALID_ARGUMENT);
    EXPECT(csni_names_unregister(n255, me), CSN_OK);
}

/* ---- lone process ---- */

struct waiter {
    const char *name;
    uint64_t timeout_ms; /* 0: 20 s */
    csn_netid got;
    csn_status st;
};

static void *lookup_thread(void *arg)
{
    struct waiter *w = arg;

    w->st = csni_names_lookup(w->name, w->timeout_ms ? w->timeout_ms : 20000, &w->got);
    return NULL;
}

static int test_lone(void)
{
    struct csni_boot b;
    csn_netid a = csni_netid_make(0, 2), c = csni_netid_make(0, 3), got = 0;
    struct waiter w = {.name = "later"};
    pthread_t th;
    char val[16];
    uint64_t t0;
    int id;

    unsetenv("CSN_RANK");
    EXPECT(csni_boot_init(&b), CSN_OK);
    CHECK(b.rank == 0 && b.size == 1 && b.launched == 0 && b.ns[0] == '\0');
    CHECK(b.local_rank == 0 && b.local_size == 1 && b.jobid[0] != '\0');
    EXPECT(csni_names_init(&b), CSN_OK);

    EXPECT(csni_names_register("svc one", a), CSN_OK);
    EXPECT(csni_names_lookup("svc one", 0, &got), CSN_OK);
    CHECK(got == a);
    EXPECT(csni_names_register("svc one", a), CSN_OK); /* again by the holder */
    EXPECT(csni_names_register("svc one", c), CSN_NAME_TAKEN);
    EXPECT(csni_names_unregister("svc one", c), CSN_OK); /* not the holder: no effect */
    EXPECT(csni_names_lookup("svc one", 0, &got), CSN_OK);
    CHECK(got == a);
    EXPECT(csni_names_unregister("svc one", a), CSN_OK);
    EXPECT(csni_names_lookup("svc one", 0, &got), CSN_NOT_FOUND);
    EXPECT(csni_names_register("svc one", c), CSN_OK);

    t0 = ms_now();
    EXPECT(csni_names_lookup("never", 200, &got), CSN_NOT_FOUND);
    CHECK(ms_now() - t0 >= 190);

    /* A lookup that comes first waits for the registration. */
    CHECK(pthread_create(&th, NULL, lookup_thread, &w) == 0);
    usleep(50000);
    EXPECT(csni_names_register("later", c), CSN_OK);
    CHECK(pthread_join(th, NULL) == 0);
    EXPECT(w.st, CSN_OK);
    CHECK(w.got == c);

    EXPECT(csni_kv_put("k1", "v1"), CSN_OK);
    EXPECT(csni_kv_get("k1", 0, val, sizeof val), CSN_OK);
    CHECK(strcmp(val, "v1") == 0);
    EXPECT(csni_kv_put("k1", "v2"), CSN_OK);
    EXPECT(csni_kv_get("k1", 0, val, sizeof val), CSN_OK);
    CHECK(strcmp(val, "v2") == 0);
    EXPECT(csni_kv_get("nokey", 100, val, sizeof val), CSN_NOT_FOUND);
    EXPECT(csni_kv_get("k1", 0, val, 2), CSN_OVERRUN);
    EXPECT(csni_names_alloc_proc(&id), CSN_NOT_FOUND);

    check_name_rules(0);
    csni_names_fini();
    printf("names lone: ok\n");
    return 0;
}

/* ---- under csnrun ---- */

static void kv_wait(const char *key, char *val, size_t cap)
{
    EXPECT(csni_kv_get(key, 20000, val, cap), CSN_OK);
}

static int test_job(void)
{
    struct csni_boot b, bad;
    csn_netid got = 0, mine;
    char val[64], key[64];
    int rank, size, i, ids[3];

    EXPECT(csni_boot_init(&b), CSN_OK);
    CHECK(b.launched == 1 && b.size >= 3 && b.rank < b.size);
    CHECK(strlen(b.jobkey) == 32 && b.jobdir[0] == '/');
    rank = b.rank;
    size = b.size;
    mine = csni_netid_make(rank, 2);
    EXPECT(csni_names_init(&b), CSN_OK);

    if (rank == 0) {
        /* Rank 1 may already be waiting for this name: not required, but the usual case. */
        usleep(100000);
        EXPECT(csni_names_register("svc zero", mine), CSN_OK);
        EXPECT(csni_names_register("svc zero", mine), CSN_OK);
        EXPECT(csni_kv_put("zero.registered", "yes"), CSN_OK);
        /* Rank 1 tried to take the name and to unregister it: it must still be ours. */
        kv_wait("one.tried", val, sizeof val);
        EXPECT(csni_names_lookup("svc zero", 0, &got), CSN_OK);
        CHECK(got == mine);
        EXPECT(csni_names_unregister("svc zero", mine), CSN_OK);
        EXPECT(csni_names_lookup("svc zero", 0, &got), CSN_NOT_FOUND);
        /* Names for rank 2's parked threads. */
        for (i = 0; i < 8; i++) {
            snprintf(key, sizeof key, "late %d", i);
            EXPECT(csni_names_register(key, csni_netid_make(0, 100 + (uint32_t)i)), CSN_OK);
        }
    } else if (rank == 1) {
        EXPECT(csni_names_lookup("svc zero", 20000, &got), CSN_OK);
        CHECK(got == csni_netid_make(0, 2));
        kv_wait("zero.registered", val, sizeof val);
        EXPECT(csni_names_register("svc zero", mine), CSN_NAME_TAKEN);
        EXPECT(csni_names_unregister("svc zero", mine), CSN_OK);
        EXPECT(csni_kv_put("one.tried", "1"), CSN_OK);
    } else if (rank == 2) {
        struct waiter w[8];
        pthread_t th[8];
        char names[8][16];
        uint64_t t0 = ms_now();

        /* Eight parked lookups at once, each on its own connection. */
        for (i = 0; i < 8; i++) {
            snprintf(names[i], sizeof names[i], "late %d", i);
            w[i].name = names[i];
            CHECK(pthread_create(&th[i], NULL, lookup_thread, &w[i]) == 0);
        }
        /* Meanwhile a lookup that times out, and one that must not be held up. */
        EXPECT(csni_names_lookup("nobody has this", 300, &got), CSN_NOT_FOUND);
        CHECK(ms_now() - t0 >= 290);
        for (i = 0; i < 8; i++) {
            CHECK(pthread_join(th[i], NULL) == 0);
            EXPECT(w[i].st, CSN_OK);
            CHECK(w[i].got == csni_netid_make(0, 100 + (uint32_t)i));
        }
        /* A wrong job key is refused (the connection is closed). */
        bad = b;
        memcpy(bad.jobkey, "00000000000000000000000000000000", 33);
        EXPECT(csni_names_init(&bad), CSN_OK);
        t0 = ms_now();
        EXPECT(csni_names_register("intruder", mine), CSN_SYSTEM_ERROR);
        /* Told DENIED, not retried as after an eviction (that would take a minute). */
        CHECK(errno == EACCES);
        CHECK(ms_now() - t0 < 5000);
        EXPECT(csni_names_init(&b), CSN_OK);
    }
    check_name_rules(rank);

    /* Fresh process ids: distinct job-wide and >= size. */
    for (i = 0; i < 3; i++) {
        EXPECT(csni_names_alloc_proc(&ids[i]), CSN_OK);
        CHECK(ids[i] >= size);
    }
    snprintf(key, sizeof key, "proc.%d", rank);
    snprintf(val, sizeof val, "%d,%d,%d", ids[0], ids[1], ids[2]);
    EXPECT(csni_kv_put(key, val), CSN_OK);
    if (rank == 0) {
        int all[64], n = 0, r, j;
        for (r = 0; r < size && r < 20; r++) {
            snprintf(key, sizeof key, "proc.%d", r);
            kv_wait(key, val, sizeof val);
            CHECK(sscanf(val, "%d,%d,%d", &all[n], &all[n + 1], &all[n + 2]) == 3);
            n += 3;
        }
        for (i = 0; i < n; i++) {
            for (j = i + 1; j < n; j++)
                CHECK(all[i] != all[j]);
        }
    }
    /* Everyone stays until rank 0 checked, so that no name vanishes with an early exit. */
    snprintf(key, sizeof key, "done.%d", rank);
    EXPECT(csni_kv_put(key, "1"), CSN_OK);
    for (i = 0; i < size; i++) {
        snprintf(key, sizeof key, "done.%d", i);
        kv_wait(key, val, sizeof val);
    }
    csni_names_fini();
    printf("names job rank %d: ok\n", rank);
    return 0;
}

/* Many parked lookups at once (rank 1), half answered by registrations of rank 0, half
 * timing out: each on its own connection, none waits behind another. */
#define MANY 64
static int test_many(void)
{
    struct csni_boot b;
    char key[32], val[16];
    int i;

    EXPECT(csni_boot_init(&b), CSN_OK);
    CHECK(b.size == 2);
    EXPECT(csni_names_init(&b), CSN_OK);
    if (b.rank == 0) {
        kv_wait("many.started", val, sizeof val);
        for (i = 0; i < MANY; i += 2) {
            snprintf(key, sizeof key, "many %d", i);
            EXPECT(csni_names_register(key, csni_netid_make(0, 10 + (uint32_t)i)), CSN_OK);
        }
    } else {
        static struct waiter w[MANY];
        static pthread_t th[MANY];
        static char names[MANY][16];
        uint64_t t0 = ms_now();

        for (i = 0; i < MANY; i++) {
            snprintf(names[i], sizeof names[i], "many %d", i);
            w[i].name = names[i];
            w[i].timeout_ms = i % 2 ? 300 : 20000;
            CHECK(pthread_create(&th[i], NULL, lookup_thread, &w[i]) == 0);
        }
        EXPECT(csni_kv_put("many.started", "1"), CSN_OK);
        for (i = 0; i < MANY; i++) {
            CHECK(pthread_join(th[i], NULL) == 0);
            if (i % 2) {
                EXPECT(w[i].st, CSN_NOT_FOUND);
            } else {
                EXPECT(w[i].st, CSN_OK);
                CHECK(w[i].got == csni_netid_make(0, 10 + (uint32_t)i));
            }
        }
        /* 32 timeouts of 0.3 s one after another would take 9.6 s. */
        CHECK(ms_now() - t0 < 8000);
        EXPECT(csni_kv_put("many.done", "1"), CSN_OK);
    }
    kv_wait("many.done", val, sizeof val);
    csni_names_fini();
    printf("names many rank %d: ok\n", b.rank);
    return 0;
}

/* The names of a process that ended are dropped: another may take them. */
static int test_ghost(void)
{
    struct csni_boot b;
    csn_netid got;
    char val[16];
    int i;

    EXPECT(csni_boot_init(&b), CSN_OK);
    EXPECT(csni_names_init(&b), CSN_OK);
    if (b.rank == 1) {
        EXPECT(csni_names_register("ghost", csni_netid_make(1, 2)), CSN_OK);
        EXPECT(csni_kv_put("ghost.up", "1"), CSN_OK);
        kv_wait("ghost.taken", val, sizeof val);
    } else if (b.rank == 0) {
        kv_wait("ghost.up", val, sizeof val);
        EXPECT(csni_names_register("ghost", csni_netid_make(0, 2)), CSN_NAME_TAKEN);
        EXPECT(csni_kv_put("ghost.taken", "1"), CSN_OK);
        /* Rank 1 exits now; csnrun hears of it from its agent. */
        for (i = 0; i < 400 && csni_names_lookup("ghost", 0, &got) == CSN_OK; i++)
            usleep(50000);
        EXPECT(csni_names_lookup("ghost", 0, &got), CSN_NOT_FOUND);
        EXPECT(csni_names_register("ghost", csni_netid_make(0, 2)), CSN_OK);
    }
    csni_names_fini();
    printf("names ghost rank %d: ok\n", b.rank);
    return 0;
}

/* ---- the kept connection and the address book's DUMP ---- */

/* How many sockets the process holds; *ino: the inode of the last one found. */
static int count_sockets(unsigned long *ino)
{
    DIR *d = opendir("/proc/self/fd");
    struct dirent *e;
    int n = 0;

    CHECK(d != NULL);
    while ((e = readdir(d)) != NULL) {
        struct stat st;
        char path[300];
        snprintf(path, sizeof path, "/proc/self/fd/%s", e->d_name);
        if (e->d_name[0] != '.' && stat(path, &st) == 0 && S_ISSOCK(st.st_mode)) {
            *ino = (unsigned long)st.st_ino;
            n++;
        }
    }
    closedir(d);
    return n;
}

struct dump_seen {
    int n, bad;
    const char *prefix;
};

/* Checks each key's value: "bk.R" holds "vR", "big.I" holds I's 300-byte value. */
static void big_value(int i, char *v, size_t cap)
{
    int n = snprintf(v, cap, "%d-", i);
    memset(v + n, 'a' + i % 26, 300 - (size_t)n);
    v[300] = '\0';
}

static void dump_each(void *arg, const char *key, const char *value)
{
    struct dump_seen *s = arg;
    char want[320];
    int i;

    if (strncmp(key, s->prefix, strlen(s->prefix)) != 0 ||
        sscanf(key + strlen(s->prefix), "%d", &i) != 1) {
        s->bad++;
        return;
    }
    if (strcmp(s->prefix, "big.") == 0)
        big_value(i, want, sizeof want);
    else
        snprintf(want, sizeof want, "v%d", i);
    s->bad += strcmp(value, want) != 0;
    s->n++;
}

static struct dump_seen dump_count(const char *prefix)
{
    struct dump_seen s = {.prefix = prefix};
    EXPECT(csni_kv_dump(prefix, dump_each, &s), CSN_OK);
    return s;
}

/* One socket to the service, the same one across 200 requests; DUMP of a few keys, of none, and
 * of a megabyte. Fails where every request opens (and closes) its own connection. */
static int test_kept(void)
{
    struct csni_boot b;
    struct dump_seen s;
    unsigned long ino0 = 0, ino = 0;
    char key[32], val[320];
    int base, i;

    EXPECT(csni_boot_init(&b), CSN_OK);
    CHECK(b.size >= 2);
    EXPECT(csni_names_init(&b), CSN_OK);
    base = count_sockets(&ino0);
    snprintf(key, sizeof key, "bk.%d", b.rank);
    snprintf(val, sizeof val, "v%d", b.rank);
    EXPECT(csni_kv_put(key, val), CSN_OK);
    CHECK(count_sockets(&ino0) == base + 1);
    for (i = 0; i < 200; i++) {
        snprintf(key, sizeof key, "bk.%d", b.rank);
        EXPECT(csni_kv_get(key, 0, val, sizeof val), CSN_OK);
    }
    CHECK(count_sockets(&ino) == base + 1 && ino == ino0);
    if (b.rank == 0) {
        for (i = 0; i < 3000; i++) {
            snprintf(key, sizeof key, "big.%d", i);
            big_value(i, val, sizeof val);
            EXPECT(csni_kv_put(key, val), CSN_OK);
        }
        EXPECT(csni_kv_put("big.done", "1"), CSN_OK);
    }
    for (i = 0; i < b.size; i++) {
        snprintf(key, sizeof key, "bk.%d", i);
        kv_wait(key, val, sizeof val);
    }
    s = dump_count("bk.");
    CHECK(s.n == b.size && s.bad == 0);
    s = dump_count("nothing.");
    CHECK(s.n == 0 && s.bad == 0);
    if (b.rank == 1) {
        kv_wait("big.done", val, sizeof val);
        s = dump_count("big.");
        CHECK(s.n == 3000 && s.bad == 1); /* and "big.done", which names no number */
    }
    CHECK(count_sockets(&ino) == base + 1 && ino == ino0);
    snprintf(key, sizeof key, "kept.%d", b.rank);
    EXPECT(csni_kv_put(key, "1"), CSN_OK);
    for (i = 0; i < b.size; i++) {
        snprintf(key, sizeof key, "kept.%d", i);
        kv_wait(key, val, sizeof val);
    }
    csni_names_fini();
    printf("names kept rank %d: ok\n", b.rank);
    return 0;
}

/* More processes keep a connection than the service has room for (run with 320 descriptors:
 * its cap is 256): forked children each keep one, all stay, then each asks again. The idle
 * kept connections make way for new ones, and a child whose connection was closed gets its
 * answer on a new one. Also: a forked child never uses its parent's connection. */
#define KEPT_CHILDREN 300
static int test_kept_fork(void)
{
    struct csni_boot b;
    int go[2], i, failed = 0;
    pid_t kids[KEPT_CHILDREN];
    char val[16];

    EXPECT(csni_boot_init(&b), CSN_OK);
    EXPECT(csni_names_init(&b), CSN_OK);
    EXPECT(csni_kv_put("kf.parent", "v0"), CSN_OK);
    CHECK(pipe(go) == 0);
    for (i = 0; i < KEPT_CHILDREN; i++) {
        kids[i] = fork();
        CHECK(kids[i] >= 0);
        if (kids[i] == 0) {
            char key[32], c;
            close(go[1]);
            snprintf(key, sizeof key, "kf.%d", i);
            if (csni_kv_put(key, "v1") != CSN_OK)
                _exit(3);
            if (read(go[0], &c, 1) != 1)
                _exit(4);
            _exit(csni_kv_get("kf.go", 0, val, sizeof val) == CSN_OK ? 0 : 5);
        }
    }
    close(go[0]);
    for (;;) {
        struct dump_seen s = {.prefix = "kf."};
        EXPECT(csni_kv_dump("kf.", dump_each, &s), CSN_OK);
        if (s.n == KEPT_CHILDREN)
            break;
        usleep(20000);
    }
    EXPECT(csni_kv_put("kf.go", "1"), CSN_OK);
    for (i = 0; i < KEPT_CHILDREN; i++)
        CHECK(write(go[1], "g", 1) == 1);
    for (i = 0; i < KEPT_CHILDREN; i++) {
        int st;
        CHECK(waitpid(kids[i], &st, 0) == kids[i]);
        if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
            fprintf(stderr, "child %d: status %#x\n", i, st);
            failed++;
        }
    }
    CHECK(failed == 0);
    csni_names_fini();
    printf("names kept-fork: ok\n");
    return 0;
}

/* ---- the environment parser and a lost server ---- */

static void set_job_env(void)
{
    setenv("CSN_RANK", "1", 1);
    setenv("CSN_SIZE", "4", 1);
    setenv("CSN_LOCAL_RANK", "1", 1);
    setenv("CSN_LOCAL_SIZE", "2", 1);
    setenv("CSN_NS", "unix:/nonexistent-dir-csn/ns", 1);
    setenv("CSN_JOBKEY", "0123456789abcdef0123456789ABCDEF", 1);
    setenv("CSN_JOBID", "abc123", 1);
    setenv("CSN_JOBDIR", "/tmp", 1);
    setenv("CSN_HOST", "nodeX", 1);
}

static int test_boot(void)
{
    static const char *bad[][2] = {
        {"CSN_RANK", "4"},
        {"CSN_RANK", "-1"},
        {"CSN_RANK", "x"},
        {"CSN_RANK", ""},
        {"CSN_SIZE", "0"},
        {"CSN_SIZE", "3x"},
        {"CSN_LOCAL_RANK", "2"},
        {"CSN_LOCAL_SIZE", "5"},
        {"CSN_NS", "http://x"},
        {"CSN_JOBKEY", "123"},
        {"CSN_JOBKEY", "0123456789abcdef0123456789abcdeg"},
        {"CSN_JOBID", "a/b"},
        {"CSN_JOBDIR", "relative"},
    };
    struct csni_boot b;
    csn_netid got;
    size_t i;
    int id;
    uint64_t t0;

    set_job_env();
    EXPECT(csni_boot_init(&b), CSN_OK);
    CHECK(b.rank == 1 && b.size == 4 && b.local_rank == 1 && b.local_size == 2 && b.launched);
    CHECK(strcmp(b.ns, "unix:/nonexistent-dir-csn/ns") == 0);
    CHECK(strcmp(b.jobid, "abc123") == 0 && strcmp(b.jobdir, "/tmp") == 0);
    CHECK(strcmp(b.host, "nodeX") == 0);
    for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        set_job_env();
        setenv(bad[i][0], bad[i][1], 1);
        fprintf(stderr, "(expected) ");
        EXPECT(csni_boot_init(&b), CSN_INVALID_ARGUMENT);
    }
    set_job_env();
    unsetenv("CSN_NS");
    EXPECT(csni_boot_init(&b), CSN_INVALID_ARGUMENT);

    /* No server at the address: every call fails at once, none hangs. */
    set_job_env();
    EXPECT(csni_boot_init(&b), CSN_OK);
    EXPECT(csni_names_init(&b), CSN_OK);
    t0 = ms_now();
    EXPECT(csni_names_register("x", csni_netid_make(1, 2)), CSN_SYSTEM_ERROR);
    EXPECT(csni_names_lookup("x", 60000, &got), CSN_SYSTEM_ERROR);
    EXPECT(csni_names_alloc_proc(&id), CSN_SYSTEM_ERROR);
    CHECK(ms_now() - t0 < 5000);
    csni_names_fini();

    /* A TCP address nobody listens on (port 1 of loopback) fails the same way. */
    setenv("CSN_NS", "tcp:127.0.0.1:1", 1);
    EXPECT(csni_boot_init(&b), CSN_OK);
    EXPECT(csni_names_init(&b), CSN_OK);
    EXPECT(csni_kv_put("a", "b"), CSN_SYSTEM_ERROR);
    csni_names_fini();
    printf("boot: ok\n");
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "lone") == 0)
        return test_lone();
    if (argc == 2 && strcmp(argv[1], "job") == 0)
        return test_job();
    if (argc == 2 && strcmp(argv[1], "boot") == 0)
        return test_boot();
    if (argc == 2 && strcmp(argv[1], "many") == 0)
        return test_many();
    if (argc == 2 && strcmp(argv[1], "ghost") == 0)
        return test_ghost();
    if (argc == 2 && strcmp(argv[1], "kept") == 0)
        return test_kept();
    if (argc == 2 && strcmp(argv[1], "kept-fork") == 0)
        return test_kept_fork();
    fprintf(stderr, "usage: %s lone|job|boot|many|ghost|kept|kept-fork\n", argv[0]);
    return 2;
}
