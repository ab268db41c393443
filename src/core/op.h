/* op.h: operations (a posted transmit or receive), their send requests, and op lists. */
#ifndef CSNI_OP_H
#define CSNI_OP_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "csn.h"
#include "wire/frame.h"

struct csni_peer;

/* ---- a send request: one frame (header + optional payload) queued on a connection ---- */
struct csni_sendreq {
    struct csni_sendreq *next;
    uint8_t hdr[CSNI_FRAME_SIZE];
    const void *payload;
    size_t paylen;
    size_t off; /* bytes of header+payload (of this chunk) already written */
    /* chunked (DATA): the payload leaves as several frames, each with its own header
     * (csni_frame_set_chunk); sent: payload bytes of the chunks before; chunk: payload bytes
     * of the one being written, as its header says (set with it, by the writer). */
    bool chunked;
    size_t sent, chunk;
    struct csni_op *op; /* the op completed when an EAGER or DATA frame is written, or NULL */
    bool heap;          /* malloc'd (csni_sendreq_new): freed by the writer once written */
    /* Written also while its connection is paused (a move's OK, ahead of all unwritten; or
     * queued before the pause: csni_conn_pause). */
    bool urgent;
    /* True while the request sits on a connection's queue: the connection owns it. The
     * writer clears it (release) as its very last access, so an owner that sees it false
     * (acquire) may reuse the memory. */
    _Atomic bool queued;
};

/* A heap request carrying frame f and no payload (a control frame that is no op's own);
 * NULL when memory is short. */
struct csni_sendreq *csni_sendreq_new(const struct csni_frame *f);

/* ---- operations ---- */
enum csni_op_kind { CSNI_OP_TX = 1, CSNI_OP_RX = 2 };
enum csni_op_state {
    CSNI_ST_FREE = 0,
    CSNI_ST_POSTED,    /* rx: on the posted queue; tx: being sent (eager or RTS) */
    CSNI_ST_WAIT_CTS,  /* tx: RTS written, waiting for the receiver */
    CSNI_ST_WAIT_DATA, /* rx: matched an RTS or a partial eager message, waiting for payload */
    CSNI_ST_SELF_WAIT, /* tx to a transport of this process, parked until a receive matches */
    CSNI_ST_DONE
};

struct csni_op {
    struct csni_op *next; /* link on exactly one list: posted, peer wait list, cq, free list */
    csn_transport *t;
    uint8_t kind;
    _Atomic uint8_t state; /* DONE is stored last, after status and received */
    bool blocking;         /* completion is for the blocking caller, never put on the cq */
    bool large;            /* rx: longer than half the shm eager size, counted in t->large_rx */
    bool pull_asked;       /* tx: its RTS gave our address, for the receiver to pull */
    bool split;            /* rx: pulled in part, waits for the sender's part (CTS SPLIT) */
    csn_status status;     /* CSN_OK, CSN_OVERRUN or CSN_PEER_LOST when done */
    csn_netid peer; /* tx: destination; rx: source filter (CSN_NULL_NETID = any), then sender */
    void *buf;
    size_t len;
    size_t *received; /* rx: where the delivered length is written (may be NULL) */
    size_t msglen;    /* rx: length of the matched message */
    size_t got;       /* rx: bytes of a chunked DATA payload placed so far */
    uint64_t token;   /* rendezvous token, unique within the process */
    /* tx: handed to the fabric provider with its RTS (CSNI_RTS_PUSHED), so done only when the
     * provider says; refused: the receiver's answer that its transport is gone (CSN_OK: none),
     * the status given then. */
    bool pushed;
    csn_status refused;
    struct csni_peer *pp;   /* the remote process involved, if any */
    struct csni_sendreq sr; /* tx: EAGER/RTS then DATA; rx: CTS */
};

/* Bytes a receive delivers of its matched message. */
static inline size_t csni_op_deliver(const struct csni_op *op)
{
    return op->msglen < op->len ? op->msglen : op->len;
}

/* op.c. The transport's lock is held for take, alloc and free. take: an op counted in t's
 * outstanding ones, its fields as its last use left them (or unset), whose request no writer
 * owns; alloc: the same, then csni_op_init. Both NULL when t has max_ops outstanding or memory
 * is short. */
struct csni_op *csni_op_take(csn_transport *t, unsigned max_ops);
struct csni_op *csni_op_alloc(csn_transport *t, unsigned max_ops);
void csni_op_init(struct csni_op *op, csn_transport *t); /* a fresh op of t, not on a list */
void csni_op_free(csn_transport *t, struct csni_op *op);
/* Waits until a connection's writer has let go of op's request (a few instructions after its
 * last byte left, or a dead connection's clean-up). */
void csni_op_wait_released(struct csni_op *op);

/* ---- op lists (the caller holds the lock of the list's owner) ---- */
struct csni_oplist {
    struct csni_op *head, *tail;
};

static inline void csni_oplist_push(struct csni_oplist *l, struct csni_op *op)
{
    op->next = NULL;
    if (l->tail)
        l->tail->next = op;
    else
        l->head = op;
    l->tail = op;
}

/* Unlinks op, whose predecessor on l is prev (NULL: op is the head). */
static inline void csni_oplist_unlink(struct csni_oplist *l, struct csni_op *prev,
                                      struct csni_op *op)
{
    if (prev)
        prev->next = op->next;
    else
        l->head = op->next;
    if (l->tail == op)
        l->tail = prev;
    op->next = NULL;
}

/* Unlinks and returns the first op with this token, or NULL. */
static inline struct csni_op *csni_oplist_take_token(struct csni_oplist *l, uint64_t token)
{
    for (struct csni_op *op = l->head, *prev = NULL; op; prev = op, op = op->next)
        if (op->token == token) {
            csni_oplist_unlink(l, prev, op);
            return op;
        }
    return NULL;
}

static inline struct csni_op *csni_oplist_find_token(const struct csni_oplist *l, uint64_t token)
{
    struct csni_op *op = l->head;
    while (op && op->token != token)
        op = op->next;
    return op;
}

static inline void csni_oplist_remove(struct csni_oplist *l, struct csni_op *want)
{
    for (struct csni_op *op = l->head, *prev = NULL; op; prev = op, op = op->next)
        if (op == want) {
            csni_oplist_unlink(l, prev, op);
            return;
        }
}

#endif
