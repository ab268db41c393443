/* tport.h: the CSN endpoint ("Transport" in the seed's words, csn_transport in the API; not to
 * be confused with a network kind, src/transport/) and the process's table of them by id. */
#ifndef CSNI_TPORT_H
#define CSNI_TPORT_H

#include <stdatomic.h>
#include <stdint.h>

#include "csn.h"
#include "core/lock.h"
#include "core/op.h"
#include "core/unex.h"

#define CSNI_TPORT_MAGIC 0x7C5A7C5Au
#define CSNI_TPORT_DEAD 0xDEADC5A1u

struct csni_conn;

struct csn_transport {
    _Atomic uint32_t magic;
    uint32_t tid;
    csn_netid id;
    csni_lock_t lock;          /* protects everything below */
    struct csni_oplist posted; /* receives in posting order */
    struct csni_uxlist ux;     /* unexpected messages in arrival order */
    struct csni_oplist cq;     /* completed non-blocking operations, oldest first */
    /* Bumped at every completion queued on cq, under lock, by a plain store (no locked
     * instruction per message): what spinners in csn_test watch. */
    _Atomic uint32_t done_seq;
    /* done_seq when cq was last seen empty under lock (written under lock, only when it
     * changes): while done_seq still reads the same, nothing was queued since, and csn_test
     * looks at the rings before it takes the lock to look at cq. */
    _Atomic uint32_t empty_seq;
    _Atomic uint32_t wake_seq; /* futex word: bumped at a completion that sleepers may await */
    _Atomic int sleepers;      /* threads asleep on wake_seq */
    unsigned nops;             /* outstanding operations (CSN_BUSY bound) */
    struct csni_op *free_ops;
    char **names; /* registered names, dropped at close */
    size_t nnames;
    csn_transport *next_free; /* graveyard link: closed structures are reused, never freed */
    struct csni_lane {        /* CSN_CONN_PER_TRANSPORT: this transport's own connections */
        int proc;
        struct csni_conn *conn;
    } * lanes;
    unsigned nlanes;
    _Atomic unsigned pulling; /* deferred pulls into this transport's buffers under way */
    /* Receives longer than half the shm eager size posted and not yet complete: while there
     * are, a message of that size we send over shm is a rendezvous that asks to be pulled
     * (core/match.c: match_pulled_both_ways, csni_rndv_pull). */
    _Atomic unsigned large_rx;
    /* Bytes of our transmits whose RTS asked the receiver to pull them, not yet complete: a
     * wait for any completion spins while the receiver copies them (core/wait.c). */
    _Atomic uint64_t pulled_tx;
};

/* Transports by id. Readers look without a lock (csni_tport_find): slots and the array pointer
 * are atomics, and an outgrown array is retired, never freed, so a reader holding the old one
 * still reads valid (if stale) slots. Writers and walkers hold lock. */
struct csni_table {
    csni_rwlock_t lock;
    csn_transport *_Atomic *_Atomic slots;
    _Atomic uint32_t n; /* ids below n have been handed out */
    uint32_t cap;
    csn_transport *_Atomic *retired[32];
    csn_transport *graveyard;
};

void csni_table_init(struct csni_table *tab);
/* A new transport of process me with the next id. CSN_OK or CSN_NO_HEAP. Takes the table lock
 * and the new transport's: the caller holds neither. */
csn_status csni_tport_create(struct csni_table *tab, int me, csn_transport **out);
/* Returns with t->lock held, or NULL when tid is not open. No other transport lock held. */
csn_transport *csni_tport_find(struct csni_table *tab, uint32_t tid);
/* Whether tid is open, without taking its lock (callers may hold another). */
bool csni_tport_exists(struct csni_table *tab, uint32_t tid);
/* csn_close: out of the table (before the drain: see csni_tport_find), then, drained, into
 * the graveyard for reuse. */
void csni_tport_unpublish(struct csni_table *tab, csn_transport *t);
void csni_tport_bury(struct csni_table *tab, csn_transport *t);
/* Walking every open transport: between rdlock and unlock, slots 0..n-1 (NULL: closed). */
static inline void csni_table_rdlock(struct csni_table *tab)
{
    csni_rdlock(&tab->lock);
}
static inline void csni_table_unlock(struct csni_table *tab)
{
    csni_rwunlock(&tab->lock);
}
static inline uint32_t csni_table_size(struct csni_table *tab)
{
    return atomic_load(&tab->n);
}
static inline csn_transport *csni_table_at(struct csni_table *tab, uint32_t i)
{
    return atomic_load(&atomic_load(&tab->slots)[i]);
}

#endif
