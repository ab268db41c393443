/* netid.h: the layout of a csn_netid (which process, which transport in it). */
#ifndef CSNI_NETID_H
#define CSNI_NETID_H

#include <stdint.h>
#include "csn.h"

/* bits 63..56: tag 0xC5, 55..32: rank (24 bits), 31..0: transport id within the process
 * (never 0). Transport id 1 is the hidden per-process system transport (barrier). */
#define CSNI_NETID_TAG 0xC5ull
#define CSNI_SYS_TPORT 1u

static inline csn_netid csni_netid_make(int rank, uint32_t tid)
{
    return (CSNI_NETID_TAG << 56) | ((uint64_t)(uint32_t)rank & 0xFFFFFFu) << 32 | tid;
}
static inline int csni_netid_rank(csn_netid id)
{
    return (int)((id >> 32) & 0xFFFFFFu);
}
static inline uint32_t csni_netid_tid(csn_netid id)
{
    return (uint32_t)id;
}
static inline int csni_netid_wellformed(csn_netid id)
{
    return (id >> 56) == CSNI_NETID_TAG && (uint32_t)id != 0;
}

#endif
