/* test_conns.c: the list of ring connections the pollers walk without a lock (core/conn.c):
 * csni_conns_prune_rings takes the dead ones off and keeps the live ones in their order; a
 * walker running beside inserts, deaths and prunes always ends, never visits a node twice in
 * one walk, and always sees the connections that stay alive. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "../test.h"
#include "core/conn.h"

#define CONNS_MAX 4096
#define CONNS_KEPT 8 /* alive for the whole concurrent part: every walk must see them */

static struct csni_conns cs;
static struct csni_conn *all[CONNS_MAX];
static _Atomic int made;
static _Atomic bool stop;

static struct csni_conn *conns_new(int id)
{
    struct csni_conn *c = calloc(1, sizeof *c);
    CHECK(c != NULL);
    c->proc = id;
    atomic_init(&c->dead, false);
    all[id] = c;
    atomic_store(&made, id + 1);
    csni_conns_add_ring(&cs, c);
    return c;
}

static void conns_kill(struct csni_conn *c)
{
    atomic_store(&c->dead, true);
    atomic_fetch_add(&cs.ndead_rings, 1);
}

/* The ids of a walk from the head, into ids[]; the count. */
static int conns_walk(int *ids, int cap)
{
    int n = 0;
    for (struct csni_conn *c = csni_conns_rings(&cs); c; c = csni_conn_next_ring(c)) {
        CHECK(n < cap);
        ids[n++] = c->proc;
    }
    return n;
}

static void test_prune(void)
{
    for (int i = 0; i < 20; i++)
        conns_new(i);
    for (int i = 0; i < 20; i += 3)
        conns_kill(all[i]);
    conns_kill(all[19]); /* the head */
    conns_kill(all[1]);  /* the tail's neighbour */
    csni_conns_prune_rings(&cs);
    CHECK(atomic_load(&cs.ndead_rings) == 0);
    int ids[64], n = conns_walk(ids, 64), want = 19;
    for (int k = 0; k < n; k++) {
        while (want >= 0 && (want % 3 == 0 || want == 19 || want == 1))
            want--;
        CHECK(ids[k] == want);
        want--;
    }
    while (want >= 0 && (want % 3 == 0 || want == 19 || want == 1))
        want--;
    CHECK(want == -1);
    csni_conns_prune_rings(&cs); /* nothing to do: the same list */
    int again[64];
    CHECK(conns_walk(again, 64) == n);
    for (int i = 0; i < 20; i++) /* everyone dead: an empty list */
        if (!atomic_load(&all[i]->dead))
            conns_kill(all[i]);
    csni_conns_prune_rings(&cs);
    CHECK(csni_conns_rings(&cs) == NULL);
    CHECK(atomic_load(&cs.ndead_rings) == 0);
}

static void *conns_walker(void *arg)
{
    static int ids[CONNS_MAX];
    long *walks = arg;
    while (!atomic_load(&stop)) {
        int n = conns_walk(ids, CONNS_MAX);
        int upto = atomic_load(&made);
        static unsigned char seen[CONNS_MAX];
        for (int i = 0; i < upto; i++)
            seen[i] = 0;
        for (int k = 0; k < n; k++) {
            CHECK(ids[k] >= 0 && ids[k] < CONNS_MAX);
            CHECK(!seen[ids[k]]); /* forward only: never a node twice */
            seen[ids[k]] = 1;
        }
        for (int i = 20; i < 20 + CONNS_KEPT; i++)
            CHECK(seen[i]);
        ++*walks;
    }
    return NULL;
}

static void test_concurrent(void)
{
    for (int i = 20; i < 20 + CONNS_KEPT; i++)
        conns_new(i);
    long walks = 0;
    pthread_t th;
    CHECK(pthread_create(&th, NULL, conns_walker, &walks) == 0);
    unsigned seed = (unsigned)time(NULL);
    for (int id = 20 + CONNS_KEPT; id < CONNS_MAX; id++) {
        conns_new(id);
        /* kill a random live one that is not kept, now and then prune */
        int victim = 20 + CONNS_KEPT + (int)(rand_r(&seed) % (unsigned)(id - 19 - CONNS_KEPT));
        if (!atomic_load(&all[victim]->dead))
            conns_kill(all[victim]);
        if (atomic_load(&cs.ndead_rings) >= CSNI_DEAD_RINGS_MAX)
            csni_conns_prune_rings(&cs);
    }
    atomic_store(&stop, true);
    CHECK(pthread_join(th, NULL) == 0);
    csni_conns_prune_rings(&cs);
    int live = 0;
    for (int i = 20; i < CONNS_MAX; i++)
        live += !atomic_load(&all[i]->dead);
    static int ids[CONNS_MAX];
    CHECK(conns_walk(ids, CONNS_MAX) == live);
    printf("concurrent: %d connections, %d alive at the end, %ld walks beside\n", CONNS_MAX - 20,
           live, walks);
}

int main(void)
{
    csni_conns_init(&cs);
    test_prune();
    test_concurrent();
    for (int i = 0; i < CONNS_MAX; i++)
        free(all[i]);
    printf("PASS\n");
    return 0;
}
