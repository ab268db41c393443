/* unex.c: the unexpected-message store's records and payload buffers. */
#include <stdlib.h>
#include <string.h>

#include "core/unex.h"

static unsigned unex_class(size_t len)
{
    return csni_unex_class(len);
}

void csni_store_init(struct csni_store *s)
{
    csni_mutex_init(&s->lock, CSNI_RANK_LISTS);
    s->free_unex = NULL;
    memset(s->pool, 0, sizeof s->pool);
    s->bufs = s->recs = (struct csni_carver){NULL, 0};
    s->slabs = NULL;
    atomic_init(&s->self_bytes, 0);
}

/* n bytes (a multiple of 16; of 64 for buffers, which then stay on cache lines) from the
 * carver's slab, a new slab when it is used up (store lock held). NULL when memory is short. */
static void *unex_carve(struct csni_store *s, struct csni_carver *cv, size_t n)
{
    if (cv->left < n) {
        uint8_t *slab = aligned_alloc(64, CSNI_SLAB);
        if (!slab)
            return NULL;
        *(void **)slab = s->slabs; /* the first cache line links the slabs */
        s->slabs = slab;
        cv->next = slab + 64;
        cv->left = CSNI_SLAB - 64;
    }
    void *b = cv->next;
    cv->next += n;
    cv->left -= n;
    return b;
}

void *csni_pool_get(struct csni_store *s, size_t len)
{
    unsigned c = unex_class(len);
    void *b = NULL;
    csni_mutex_lock(&s->lock);
    if (s->pool[c]) {
        b = s->pool[c];
        s->pool[c] = *(void **)b;
    } else if (c <= CSNI_SLAB_MAX_CLASS) {
        b = unex_carve(s, &s->bufs, (size_t)1 << c);
    }
    csni_mutex_unlock(&s->lock);
    /* On a cache line: a copy into a destination off a 16-byte boundary can run many times
     * slower (bench/copyalign). Sizes are powers of two from 64, as aligned_alloc wants. */
    return b || c <= CSNI_SLAB_MAX_CLASS ? b : aligned_alloc(64, (size_t)1 << c);
}

void csni_pool_put(struct csni_store *s, void *buf, size_t len)
{
    unsigned c = unex_class(len);
    csni_mutex_lock(&s->lock);
    *(void **)buf = s->pool[c];
    s->pool[c] = buf;
    csni_mutex_unlock(&s->lock);
}

struct csni_unex *csni_unex_alloc(struct csni_store *s)
{
    struct csni_unex *u;
    csni_mutex_lock(&s->lock);
    u = s->free_unex;
    if (u)
        s->free_unex = u->next;
    else
        u = unex_carve(s, &s->recs, CSNI_UNEX_REC);
    csni_mutex_unlock(&s->lock);
    if (!u)
        return NULL;
    memset(u, 0, sizeof *u);
    return u;
}

void csni_unex_free(struct csni_store *s, struct csni_unex *u)
{
    csni_mutex_lock(&s->lock);
    u->next = s->free_unex;
    s->free_unex = u;
    csni_mutex_unlock(&s->lock);
}
