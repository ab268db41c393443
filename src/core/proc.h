/* proc.h: the process's start-up. */
#ifndef CSNI_PROC_H
#define CSNI_PROC_H

#include "csn.h"

struct csni_proc;

/* The process's state, built at the first call: boot, tunables, name service, network,
 * progress thread. CSN_OK, or the status of what failed (a line on stderr names a bad
 * setting). */
csn_status csni_proc_get(struct csni_proc **pp);

#endif
