/* names.h: the client side of the job's name service (csn_register_name, csn_lookup_name) and its
 * key-value store. */
#ifndef CSNI_NAMES_H
#define CSNI_NAMES_H

#include <stdint.h>
#include "csn.h"
#include "boot/boot.h"

/* Name-service wire protocol (server in names/nsserv.c, client here). A stream connection
 * (Unix or TCP) carries one request at a time, each sent after the previous reply was read
 * whole; the client keeps it for its next request, the server may close it while idle.
 * Text lines ending in '\n':
 *   client: "KEY <jobkey>\n"                  first line, always; wrong key => closed, logged
 *   client: "REG <netid-hex> <name>\n"        server: "OK\n" | "TAKEN\n"
 *   client: "UNREG <netid-hex> <name>\n"      server: "OK\n" (only the holder's netid removes)
 *   client: "LOOKUP <timeout-ms> <name>\n"    server: "OK <netid-hex>\n" | "NOTFOUND\n"
 *                                             (parks until registered or timeout)
 *   client: "PUT <key> <value>\n"             server: "OK\n"
 *   client: "GET <timeout-ms> <key>\n"        server: "OK <value>\n" | "NOTFOUND\n" (parks)
 *   client: "DUMP <prefix>\n"                 server: "OK <n>\n" then n lines "<key> <value>\n":
 *                                             every key that starts with prefix (an address
 *                                             book in one exchange; at most 64 MiB)
 *   client: "PROC\n"                          server: "OK <id>\n": a new process id >= size for
 *                                             a process forked by a rank (ids are never reused)
 * A name is the rest of the line (it may contain spaces): 1..255 printable ASCII bytes.
 * Keys and values are 1..1023 bytes without spaces or control characters. */

csn_status csni_names_init(const struct csni_boot *b); /* once, at first csn_open */
void csni_names_fini(void);

/* CSN_NAME_TAKEN when another netid holds the name. */
csn_status csni_names_register(const char *name, csn_netid id);
csn_status csni_names_unregister(const char *name, csn_netid id);
/* Waits up to timeout_ms for the name; CSN_NOT_FOUND after that. */
csn_status csni_names_lookup(const char *name, uint64_t timeout_ms, csn_netid *id);

/* Job-wide key-value store (endpoint addresses "ep.<rank>", ...). */
csn_status csni_kv_put(const char *key, const char *value);
csn_status csni_kv_get(const char *key, uint64_t timeout_ms, char *value, size_t cap);
/* Copies a value into value[0..cap) (cap > 0); CSN_OVERRUN, with a truncated, terminated copy,
 * when cap is too small. */
csn_status csni_kv_copy(char *value, size_t cap, const char *src);
/* Calls each(arg, key, value) for every key that starts with prefix, as the store holds them
 * now (in the lone process under its lock: each must not call this module). CSN_NOT_FOUND
 * under PMIx, whose keys are per process. */
csn_status csni_kv_dump(const char *prefix,
                        void (*each)(void *arg, const char *key, const char *value), void *arg);

/* A fresh job-wide process id for a forked child (netid rank field); CSN_NOT_FOUND when the
 * process was not launched (no name service). */
csn_status csni_names_alloc_proc(int *id);

/* 1 when name is 1..255 bytes of printable ASCII (0x20..0x7e). */
int csni_name_valid(const char *name);

#endif
