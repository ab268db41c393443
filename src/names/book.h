/* book.h: the job's address book: every rank's published endpoint ("ep.<rank>", core/proc.c),
 * each fetched from the name service once and kept for the life of the process. */
#ifndef CSNI_BOOK_H
#define CSNI_BOOK_H

#include <stddef.h>
#include <stdint.h>

#include "csn.h"

/* Rank's endpoint into addr[0..cap), waiting up to wait_ms for it to be published; size is the
 * job's. A rank with few peers asks for each, one request each on the kept connection; from
 * the BOOK_FIRST_DUMP-th rank not yet in the book the whole book comes in one exchange (and
 * again at each doubling of that count, for ranks published since). Process ids beyond the
 * job's ranks (forked processes) are asked for each time. CSN_NOT_FOUND after wait_ms,
 * CSN_OVERRUN (truncated, terminated) when cap is too small. */
csn_status csni_book_get(int size, int rank, uint64_t wait_ms, char *addr, size_t cap);

#endif
