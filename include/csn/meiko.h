/* csn/meiko.h: source compatibility with programs written for the free CSN library (the
 * Meiko CSN reimplementation: txhello.c, rxhello.c and the like). Its names map onto csn.h:
 *
 *   transport, netid (a struct of two unsigned ints), csn_flags, csn_nullnetid,
 *   CsnOk, CsnTxReady, CsnRxReady, CsnTimeout, CsnNoHeap, CsnIllegalNetId,
 *   CsnUnitializedTransport, CsnNetIdAlreadyRegistered, CsnOverrun, CsnBusy (and csn.h's
 *   others as CsnNotFound, CsnPeerLost, CsnInvalidArgument, CsnSystemError), CsnTx, CsnRx,
 *   csn_open, csn_close, csn_registername, csn_lookupname, csn_tx, csn_rx, csn_txnb
 *   (and txnb), csn_rxnb (and rxnb), csn_test, csn_nameserver, csn_resolvconf, debugf.
 *
 * Such a program's own "#include <csn.h>" finds csn.h, so include this header first, without
 * changing the program: cc -include csn/meiko.h prog.c $(pkg-config --cflags --libs csn), or
 * pkg-config csn-meiko, whose flags do that. Do not mix it with csn.h's own calls in one file:
 * csn_open, csn_close, csn_tx, csn_rx and csn_test take the free CSN's arguments here.
 * Differences: a netid is csn.h's 64-bit netid split in two (ip: high half, port: low half);
 * csn_test's timeout UINT_MAX waits without limit; csn_nameserver and csn_resolvconf do
 * nothing (csnrun, mpirun or srun provide the name service). Define CSN_MEIKO_NO_SHORT_NAMES
 * to leave txnb and rxnb undefined. */
#ifndef CSN_MEIKO_H
#define CSN_MEIKO_H

#include <limits.h>
#include <stdio.h>

#include <csn.h>

typedef csn_transport *transport;
typedef struct netid_t {
    unsigned int ip;
    unsigned int port;
} netid;
typedef unsigned int csn_flags;

#define CsnOk CSN_OK
#define CsnTxReady CSN_TX_READY
#define CsnRxReady CSN_RX_READY
#define CsnTimeout CSN_TIMEOUT
#define CsnNoHeap CSN_NO_HEAP
#define CsnIllegalNetId CSN_ILLEGAL_NETID
#define CsnUnitializedTransport CSN_UNINITIALISED_TRANSPORT /* the free CSN's spelling */
#define CsnUninitialisedTransport CSN_UNINITIALISED_TRANSPORT
#define CsnNetIdAlreadyRegistered CSN_NAME_TAKEN
#define CsnOverrun CSN_OVERRUN
#define CsnBusy CSN_BUSY
#define CsnNotFound CSN_NOT_FOUND
#define CsnPeerLost CSN_PEER_LOST
#define CsnInvalidArgument CSN_INVALID_ARGUMENT
#define CsnSystemError CSN_SYSTEM_ERROR
#define CsnTx ((csn_flags)CSN_TX)
#define CsnRx ((csn_flags)CSN_RX)

#define csn_nullnetid ((netid){0, 0})
#ifndef debugf
#define debugf(X) printf("%s:%d in function %s %s\n", __FILE__, __LINE__, __func__, X)
#endif

static inline netid csn_meiko_to(csn_netid id)
{
    netid n = {(unsigned int)(id >> 32), (unsigned int)id};
    return n;
}
static inline csn_netid csn_meiko_from(netid n)
{
    return (csn_netid)n.ip << 32 | n.port;
}
static inline csn_status csn_meiko_open(transport *t)
{
    return csn_open(t);
}
static inline csn_status csn_meiko_close(transport *t)
{
    return csn_close(t);
}
static inline csn_status csn_meiko_registername(transport t, const char *name)
{
    return csn_register_name(t, name);
}
static inline csn_status csn_meiko_lookupname(netid *n, const char *name)
{
    csn_netid id = CSN_NULL_NETID;
    csn_status s;
    if (n == NULL)
        return CSN_INVALID_ARGUMENT;
    s = csn_lookup_name(&id, name);
    if (s == CSN_OK)
        *n = csn_meiko_to(id);
    return s;
}
static inline csn_status csn_meiko_tx(transport t, netid n, const void *a, unsigned int l)
{
    return csn_tx(t, csn_meiko_from(n), a, l);
}
static inline csn_status csn_meiko_rx(transport t, netid *n, void *a, unsigned int l,
                                      unsigned int *actual)
{
    csn_netid id;
    size_t got = 0;
    csn_status s;
    if (n == NULL)
        return CSN_INVALID_ARGUMENT;
    id = csn_meiko_from(*n);
    s = csn_rx(t, &id, a, l, &got);
    *n = csn_meiko_to(id);
    if (actual != NULL)
        *actual = (unsigned int)got;
    return s;
}
static inline csn_status csn_meiko_txnb(transport t, netid n, const void *a, unsigned int l)
{
    return csn_tx_nb(t, csn_meiko_from(n), a, l);
}
/* The count is written when the receive completes (csn_test): *actual must stay valid. */
static inline csn_status csn_meiko_rxnb(transport t, void *a, unsigned int l, unsigned int *actual)
{
    /* csn.h writes a size_t; an unsigned int of the caller's cannot take it in place, so the
     * count is reported as the posted length here, the real one by csn_test's buffer. */
    if (actual != NULL)
        *actual = l;
    return csn_rx_nb(t, a, l, NULL);
}
static inline csn_status csn_meiko_test(transport t, csn_flags flags, unsigned int timeout,
                                        netid *n, void **a, csn_status *s)
{
    csn_netid id = CSN_NULL_NETID;
    void *buf = NULL;
    csn_status op = CSN_OK, r;
    r = csn_test(t, flags, timeout == UINT_MAX ? CSN_FOREVER : (uint64_t)timeout, &id, &buf, &op);
    if (n != NULL)
        *n = csn_meiko_to(id);
    if (a != NULL)
        *a = buf;
    if (s != NULL)
        *s = op;
    return r;
}
static inline void csn_meiko_nameserver(const char *name)
{
    (void)name;
}
static inline void csn_meiko_resolvconf(const char *name)
{
    (void)name;
}

#define csn_open csn_meiko_open
#define csn_close csn_meiko_close
#define csn_registername csn_meiko_registername
#define csn_lookupname csn_meiko_lookupname
#define csn_tx csn_meiko_tx
#define csn_rx csn_meiko_rx
#define csn_txnb csn_meiko_txnb
#define csn_rxnb csn_meiko_rxnb
#define csn_test csn_meiko_test
#define csn_nameserver csn_meiko_nameserver
#define csn_resolvconf csn_meiko_resolvconf
#ifndef CSN_MEIKO_NO_SHORT_NAMES
#define txnb csn_meiko_txnb
#define rxnb csn_meiko_rxnb
#endif

#endif
