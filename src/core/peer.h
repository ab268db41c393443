/* peer.h: the other processes of the job: the peer table, and making connections to them. */
#ifndef CSNI_PEER_H
#define CSNI_PEER_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "csn.h"
#include "core/lock.h"
#include "core/op.h"

struct csni_proc;
struct csni_conn;

struct csni_peer {
    int proc;
    csni_lock_t lock; /* protects conn choice and the lists below */
    /* The connection this process sends on: set under the lock, read without it once ready
     * is seen true (atomic: a HELLO may set it while a sender looks). Set once, or twice
     * when both ends connected at once (peer_move): frames a sender still gives the old
     * one then go to the new one (csni_conn_move). */
    struct csni_conn *_Atomic conn;
    bool lost;
    /* We made a connection to it (or tried, for a large message), and any move to it began
     * (stored with release after it, under connecting): conn is final from then on, so a
     * message handed to the fabric provider on conn has its RTS on conn too (match.c). */
    _Atomic bool own;
    int nconns;                   /* live connections; it is lost when the last one ends */
    _Atomic bool ready;           /* conn set or lost (final): no need to connect */
    _Atomic int64_t credit;       /* eager bytes we may still send to it (no lock) */
    _Atomic size_t eager_max;     /* largest message sent eagerly to it (read without lock) */
    struct csni_oplist wait_cts;  /* our transmits waiting for its CTS */
    struct csni_oplist wait_data; /* our receives waiting for its DATA */
    _Atomic int64_t owed;         /* eager credit we owe it */
    /* What we know of its transports (core/rtids.h): ids below tids were handed out there
     * (only grows); gone: the first CSNI_GONE_TIDS ids, a bit each, set once known closed
     * (NULL until one is). Written under the lock, read without it. */
    _Atomic uint32_t tids;
    _Atomic uint64_t *_Atomic gone;
    bool asked;                   /* our question of its ids is on its way */
    uint64_t asked_gen;           /* the number of our last question */
    struct csni_oplist wait_tids; /* our transmits held for an answer */
    _Atomic int releasing;        /* answers sending held transmits now (csn_close waits) */
    csni_mutex_t connecting;      /* held while connecting (not on the fast path) */
    struct csni_peer *next;
};

#define CSNI_PEER_TAB 4096
struct csni_peers {
    csni_mutex_t lock; /* the list (rank LISTS) */
    struct csni_peer *list;
    struct csni_peer *_Atomic tab[CSNI_PEER_TAB]; /* peers by process id, lock-free */
    _Atomic int nlost;                            /* peers lost so far */
    _Atomic unsigned ngone; /* peers' transports they told us closed (TIDS GONE notes) */
};

void csni_peers_init(struct csni_peers *ps);
/* The peer of process proc if it is known and final (connected or lost), without a lock; NULL
 * otherwise (take csni_peer_get). */
static inline struct csni_peer *csni_peer_ready(struct csni_peers *ps, int proc)
{
    struct csni_peer *pp = proc >= 0 && proc < CSNI_PEER_TAB
                               ? atomic_load_explicit(&ps->tab[proc], memory_order_acquire)
                               : NULL;
    return pp && atomic_load_explicit(&pp->ready, memory_order_acquire) ? pp : NULL;
}
/* Finds or creates the peer of process proc (no connection made); NULL: no memory. */
struct csni_peer *csni_peer_lookup(struct csni_proc *p, int proc);
/* The peer, connected (may block while its address is not yet published, up to the lookup
 * timeout). NULL with *rv CSN_ILLEGAL_NETID or CSN_NO_HEAP; a peer that cannot be reached is
 * returned with *rv CSN_PEER_LOST: the caller declares it lost. No lock held by the caller. */
struct csni_peer *csni_peer_get(struct csni_proc *p, int proc, csn_status *rv);
/* The connection t sends to pp on: the process's shared one, or, with CSN_CONN_PER_TRANSPORT,
 * one of t's own (made at first use). No lock held by the caller. */
struct csni_conn *csni_peer_send_conn(csn_transport *t, struct csni_peer *pp);
/* An accepted connection proved the key (its HELLO is c's current frame): attach its rings and
 * give it to its peer, or fail it. c's reader lock held. */
void csni_peer_accept(struct csni_proc *p, struct csni_conn *c);
/* Sends a control frame (no payload, no op: a CTS of no op's own, a note, returned credit) on
 * pp's connection. False when pp is lost or memory is short (nothing sent). Never blocks; may
 * be called under a transport lock. */
bool csni_peer_send_frame(struct csni_peer *pp, const struct csni_frame *f);
/* A CSNI_F_MOVE frame read on c (c's reader lock held): a LAST is answered with an OK on c;
 * an OK lets our frames out on the connection we moved to from c. */
void csni_peer_on_move(struct csni_conn *c, const struct csni_frame *f);
/* A transmit of len bytes to pp, with p->tun.own_sends (a fabric whose provider moves large
 * messages itself): the first such message makes this process's own connection to pp, if it
 * has none, and moves its sends there. May block while connecting, as csni_peer_get; no lock
 * held. */
void csni_peer_own(struct csni_proc *p, struct csni_peer *pp, size_t len);
/* One of pp's connections ended: true when it was its last. */
bool csni_peer_conn_ended(struct csni_peer *pp);
/* Whether pp has a live connection. */
bool csni_peer_has_conns(struct csni_peer *pp);
/* Whether pp is lost (its lock taken briefly: callers may hold a transport lock). */
bool csni_peer_is_lost(struct csni_peer *pp);

#endif
