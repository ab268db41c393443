/* errors.c: status strings and the one place where errno becomes a csn_status. */
#include <errno.h>

#include "core/errors.h"

csn_status csni_errno_status(int err)
{
    errno = err; /* the contract: on CSN_SYSTEM_ERROR, errno tells which call failed how */
    return err == ENOMEM ? CSN_NO_HEAP : CSN_SYSTEM_ERROR;
}

const char *csn_status_string(csn_status s)
{
    switch (s) {
    case CSN_OK:
        return "ok";
    case CSN_TX_READY:
        return "transmit ready";
    case CSN_RX_READY:
        return "receive ready";
    case CSN_TIMEOUT:
        return "timeout";
    case CSN_NO_HEAP:
        return "out of memory";
    case CSN_ILLEGAL_NETID:
        return "illegal netid";
    case CSN_UNINITIALISED_TRANSPORT:
        return "uninitialised transport";
    case CSN_NAME_TAKEN:
        return "name taken";
    case CSN_OVERRUN:
        return "overrun: message longer than the receive buffer";
    case CSN_BUSY:
        return "busy: too many outstanding operations";
    case CSN_NOT_FOUND:
        return "name not found";
    case CSN_PEER_LOST:
        return "peer lost";
    case CSN_INVALID_ARGUMENT:
        return "invalid argument";
    case CSN_SYSTEM_ERROR:
        return "system error";
    }
    return "unknown status";
}
