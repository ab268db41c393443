/* unex.h: the unexpected-message store: messages (or announcements of them) that arrived
 * before a matching receive was posted, kept per transport in arrival order, and the buffer
 * pool their payloads live in. */
#ifndef CSNI_UNEX_H
#define CSNI_UNEX_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "csn.h"
#include "core/lock.h"

struct csni_peer;
struct csni_op;

enum csni_unex_kind { CSNI_UX_EAGER = 1, CSNI_UX_RTS, CSNI_UX_SELF };
struct csni_unex {
    struct csni_unex *next;
    uint8_t kind;
    bool complete; /* EAGER: the whole payload is in data */
    csn_netid src;
    size_t len;           /* message length */
    void *data;           /* EAGER: pool buffer of len bytes */
    uint64_t token;       /* RTS: the sender's token */
    struct csni_peer *pp; /* EAGER/RTS: the sending process */
    uint64_t raddr;       /* RTS: the sender's buffer, for a pull (0: none) */
    pid_t pid;            /* RTS with raddr: the sender's pid */
    struct csni_conn *conn; /* RTS: the connection it came on (never freed) */
    bool pushed;            /* RTS: its payload comes by the fabric provider (CSNI_RTS_PUSHED) */
    struct csni_op *txop; /* SELF: the parked transmit of this process */
    struct csni_op *rxop; /* EAGER, incomplete: the receive that matched it meanwhile */
};

/* A transport's unexpected messages, oldest first (the transport's lock held). */
struct csni_uxlist {
    struct csni_unex *head, *tail;
};

static inline void csni_ux_push(struct csni_uxlist *l, struct csni_unex *u)
{
    u->next = NULL;
    if (l->tail)
        l->tail->next = u;
    else
        l->head = u;
    l->tail = u;
}

/* Unlinks u, whose predecessor is prev (NULL: u is the head). */
static inline void csni_ux_unlink(struct csni_uxlist *l, struct csni_unex *prev, struct csni_unex *u)
{
    if (prev)
        prev->next = u->next;
    else
        l->head = u->next;
    if (l->tail == u)
        l->tail = prev;
    u->next = NULL;
}

/* Small payload buffers and records are carved from slabs (CSNI_SLAB bytes, kept for the
 * process's life like everything in the store): a buffer of 64 B from aligned_alloc would hold
 * twice that, and credit must charge what memory really holds. */
#define CSNI_SLAB ((size_t)64 << 10)
#define CSNI_SLAB_MAX_CLASS 10u /* buffers up to 2^10 bytes come from slabs */
struct csni_carver {
    uint8_t *next; /* the free rest of the current slab */
    size_t left;
};

/* The process's store: free records and payload buffers by power-of-two class. Its lock is a
 * leaf (rank LISTS): taken under any other, never holding one. */
struct csni_store {
    csni_mutex_t lock;
    struct csni_unex *free_unex;
    void *pool[64];
    struct csni_carver bufs, recs;
    void *slabs; /* every slab, linked through its first word */
    _Atomic size_t self_bytes; /* bytes of unexpected in-process messages held */
};

void csni_store_init(struct csni_store *s);
/* A zeroed record; NULL when memory is short. */
struct csni_unex *csni_unex_alloc(struct csni_store *s);
void csni_unex_free(struct csni_store *s, struct csni_unex *u);
/* A payload buffer of at least len bytes (len 0 counts as 1), on a cache line; NULL when
 * memory is short. */
void *csni_pool_get(struct csni_store *s, size_t len);
void csni_pool_put(struct csni_store *s, void *buf, size_t len);
/* The buffer class of a payload of len bytes: 2^class bytes, 64 the smallest. */
static inline unsigned csni_unex_class(size_t len)
{
    return len <= 64 ? 6u : 64u - (unsigned)__builtin_clzll((unsigned long long)(len - 1));
}

/* The size a record really takes in its slab. */
#define CSNI_UNEX_REC ((sizeof(struct csni_unex) + 15u) & ~(size_t)15u)
/* Memory an unexpected message of len bytes really holds (its buffer's class and its record,
 * both carved from slabs; above CSNI_SLAB_MAX_CLASS the buffer comes from aligned_alloc, whose
 * alignment and header cost up to 80 bytes more): what eager credit charges for it, so that
 * CSN_UNEXPECTED_LIMIT bounds memory for small messages too. */
static inline int64_t csni_unex_cost(size_t len)
{
    unsigned c = csni_unex_class(len);
    return (int64_t)(((size_t)1 << c) + CSNI_UNEX_REC + (c > CSNI_SLAB_MAX_CLASS ? 80u : 0u));
}

#endif
