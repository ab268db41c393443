/* errors.h: the one place where errno becomes a csn_status. */
#ifndef CSNI_ERRORS_H
#define CSNI_ERRORS_H

#include "csn.h"

/* err as a status (ENOMEM: CSN_NO_HEAP, else CSN_SYSTEM_ERROR), with errno set to err. */
csn_status csni_errno_status(int err);

#endif
