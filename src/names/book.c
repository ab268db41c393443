/* book.c: the job's address book (book.h). Endpoints are written once per rank per job (a
 * process's state, and so its address, lives as long as the process), so a copy never goes
 * stale. It calls only down, into the name service's store. */
#include "names/book.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/assert.h"
#include "names/names.h"

#define BOOK_PREFIX "ep."
/* The first ranks a process looks up come one request each (a ring or a tree barrier needs
 * two or three); the next miss brings the whole book, which costs the service O(size). */
#define BOOK_FIRST_DUMP 4u

/* Under book_lock (a leaf: nothing else is taken or called while it is held). The table is
 * as big as the job and never freed. */
static pthread_mutex_t book_lock = PTHREAD_MUTEX_INITIALIZER;
static char **book_tab;
static int book_size;
static unsigned book_misses, book_next_dump = BOOK_FIRST_DUMP;

/* A thread of the parent may hold the lock when another forks: the child's copy starts free.
 * (Only a pointer store or a count can be cut short by the fork: the table stays usable.) No
 * prepare handler takes it: the library's other fork handler (core/proc.c) takes its own lock,
 * and two handlers' locks in an order the registration decides would be an inversion. */
static void book_atfork_child(void)
{
    pthread_mutex_init(&book_lock, NULL);
}

__attribute__((constructor)) static void book_register_atfork(void)
{
    CSNI_ASSERT(pthread_atfork(NULL, NULL, book_atfork_child) == 0);
}

/* Enters value as rank's endpoint unless it is there already (book_lock held). */
static void book_enter(int rank, const char *value)
{
    if (rank >= 0 && rank < book_size && book_tab[rank] == NULL)
        book_tab[rank] = strdup(value); /* out of memory: asked for again next time */
}

/* csni_kv_dump's callback: "ep.<rank>" and its endpoint. */
static void book_fill(void *arg, const char *key, const char *value)
{
    char *end;
    long r = strtol(key + sizeof BOOK_PREFIX - 1, &end, 10);

    (void)arg;
    if (*end != '\0' || end == key + sizeof BOOK_PREFIX - 1)
        return; /* another key of the prefix */
    pthread_mutex_lock(&book_lock);
    book_enter((int)(r < 0 || r > 0x7fffffff ? -1 : r), value);
    pthread_mutex_unlock(&book_lock);
}

/* rank's endpoint if the book has it: 1 with *st set, else 0. Also counts the miss and says
 * whether this one brings the whole book. */
static int book_look(int size, int rank, char *addr, size_t cap, csn_status *st, int *dump)
{
    int found = 0;

    pthread_mutex_lock(&book_lock);
    if (book_tab == NULL) {
        book_tab = calloc((size_t)size, sizeof *book_tab);
        book_size = book_tab != NULL ? size : 0;
    }
    if (rank < book_size && book_tab[rank] != NULL) {
        *st = csni_kv_copy(addr, cap, book_tab[rank]);
        found = 1;
    } else if (dump != NULL && ++book_misses >= book_next_dump) {
        *dump = 1;
        book_next_dump *= 2;
    }
    pthread_mutex_unlock(&book_lock);
    return found;
}

csn_status csni_book_get(int size, int rank, uint64_t wait_ms, char *addr, size_t cap)
{
    char key[32];
    csn_status st;
    int dump = 0;

    if (addr == NULL || cap == 0)
        return CSN_INVALID_ARGUMENT;
    snprintf(key, sizeof key, BOOK_PREFIX "%d", rank);
    if (rank < 0 || rank >= size)
        return csni_kv_get(key, wait_ms, addr, cap);
    if (book_look(size, rank, addr, cap, &st, &dump))
        return st;
    /* A failed dump (PMIx has none) leaves the single request below. */
    if (dump && csni_kv_dump(BOOK_PREFIX, book_fill, NULL) == CSN_OK &&
        book_look(size, rank, addr, cap, &st, NULL))
        return st;
    if ((st = csni_kv_get(key, wait_ms, addr, cap)) != CSN_OK)
        return st;
    pthread_mutex_lock(&book_lock);
    book_enter(rank, addr);
    pthread_mutex_unlock(&book_lock);
    return CSN_OK;
}
