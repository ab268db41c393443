/* tport.c: the table of the process's transports: ids, lock-free lookup, reuse of closed ones. */
#include <stdlib.h>

#include "core/netid.h"
#include "core/tport.h"

void csni_table_init(struct csni_table *tab)
{
    csni_rwlock_init(&tab->lock, CSNI_RANK_TABLE);
    atomic_init(&tab->slots, NULL);
    atomic_init(&tab->n, 0);
    tab->cap = 0;
    tab->graveyard = NULL;
}

/* Room for one more id (table lock held): false when memory is short. */
static bool tport_grow(struct csni_table *tab)
{
    uint32_t n = atomic_load_explicit(&tab->n, memory_order_relaxed);
    if (n + 1 < tab->cap)
        return true;
    uint32_t cap = tab->cap ? tab->cap * 2 : 64, gen = 0;
    csn_transport *_Atomic *old = atomic_load_explicit(&tab->slots, memory_order_relaxed);
    while (old && gen < 32 && tab->retired[gen])
        gen++;
    csn_transport *_Atomic *s = gen < 32 ? calloc(cap, sizeof *s) : NULL;
    if (!s)
        return false;
    for (uint32_t i = 0; i < tab->cap; i++)
        atomic_init(&s[i], atomic_load_explicit(&old[i], memory_order_relaxed));
    if (old)
        tab->retired[gen] = old; /* lock-free readers may still hold it */
    atomic_store_explicit(&tab->slots, s, memory_order_release);
    tab->cap = cap;
    return true;
}

csn_status csni_tport_create(struct csni_table *tab, int me, csn_transport **out)
{
    csn_transport *t;
    csni_wrlock(&tab->lock);
    if ((t = tab->graveyard) != NULL) {
        tab->graveyard = t->next_free;
    } else if ((t = calloc(1, sizeof *t)) != NULL) {
        csni_lock_init_biased(&t->lock, CSNI_RANK_TPORT);
    }
    if (t && !tport_grow(tab)) {
        t->next_free = tab->graveyard;
        tab->graveyard = t;
        t = NULL;
    }
    if (!t) {
        csni_rwunlock(&tab->lock);
        return CSN_NO_HEAP;
    }
    if (atomic_load(&tab->n) == 0)
        atomic_store(&tab->n, CSNI_SYS_TPORT); /* id 0 is never used; the first is the system one */
    uint32_t tid = atomic_fetch_add(&tab->n, 1);
    csni_rwunlock(&tab->lock);
    /* The transport lock ranks above the table's, but the structure is in no table yet:
     * initialise it outside the table lock, then publish it. */
    csni_lock(&t->lock);
    t->tid = tid;
    t->id = csni_netid_make(me, tid);
    t->posted.head = t->posted.tail = NULL;
    atomic_store_explicit(&t->large_rx, 0, memory_order_relaxed);
    atomic_store_explicit(&t->pulled_tx, 0, memory_order_relaxed);
    t->cq.head = t->cq.tail = NULL;
    atomic_store_explicit(&t->empty_seq, atomic_load_explicit(&t->done_seq, memory_order_relaxed),
                          memory_order_relaxed);
    t->ux.head = t->ux.tail = NULL;
    t->nops = 0;
    t->names = NULL;
    t->nnames = 0;
    t->next_free = NULL;
    atomic_store(&t->magic, CSNI_TPORT_MAGIC);
    csni_unlock(&t->lock);
    csni_wrlock(&tab->lock);
    atomic_store(&atomic_load(&tab->slots)[tid], t);
    csni_rwunlock(&tab->lock);
    *out = t;
    return CSN_OK;
}

static csn_transport *tport_slot(struct csni_table *tab, uint32_t tid)
{
    csn_transport *_Atomic *s = atomic_load_explicit(&tab->slots, memory_order_acquire);
    return s && tid < atomic_load_explicit(&tab->n, memory_order_acquire) ? atomic_load(&s[tid])
                                                                          : NULL;
}

/* Without the table lock. csn_close empties the slot before its drain takes t->lock, so a
 * finder that still sees t in its slot once it holds t->lock runs before the drain (which
 * then cleans up after it), and one that locks after the drain sees the slot empty. A
 * structure reused from the graveyard has a new id, never this one. */
csn_transport *csni_tport_find(struct csni_table *tab, uint32_t tid)
{
    csn_transport *t = tport_slot(tab, tid);
    if (!t)
        return NULL;
    csni_lock(&t->lock);
    if (tport_slot(tab, tid) != t) {
        csni_unlock(&t->lock);
        return NULL;
    }
    return t;
}

bool csni_tport_exists(struct csni_table *tab, uint32_t tid)
{
    return tport_slot(tab, tid) != NULL;
}

void csni_tport_unpublish(struct csni_table *tab, csn_transport *t)
{
    csni_wrlock(&tab->lock);
    atomic_store(&atomic_load(&tab->slots)[t->tid], NULL);
    csni_rwunlock(&tab->lock);
}

void csni_tport_bury(struct csni_table *tab, csn_transport *t)
{
    csni_wrlock(&tab->lock);
    t->next_free = tab->graveyard;
    tab->graveyard = t;
    csni_rwunlock(&tab->lock);
}
