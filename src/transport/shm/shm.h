/* shm.h: the shared-memory transport's interface to the stream core and the progress engine. */
#ifndef CSNI_SHM_H
#define CSNI_SHM_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct csni_proc;
struct csni_conn;
struct shm_ring;

/* One pair's segment as seen by one side. head_cache is the producer's copy of the
 * outbound head (tx_lock); rec_off the bytes already taken of the inbound record at head
 * (rx_lock). */
struct csni_shm {
    void *base;
    size_t size;
    uint64_t ring_bytes; /* power of two */
    struct shm_ring *in, *out;
    int side;
    uint64_t head_cache, rec_off;
};

/* The connecting side creates the pair's segment (both rings), the accepting side maps and
 * unlinks it. CSN_OK, CSN_NO_HEAP or CSN_SYSTEM_ERROR (a line on stderr says why). */
csn_status csni_shm_create(struct csni_proc *p, int peer, uint32_t lane, struct csni_shm **out);
csn_status csni_shm_attach(struct csni_proc *p, int peer, uint32_t lane, struct csni_shm **out);
void csni_shm_path(const struct csni_proc *p, int from, int to, uint32_t lane, char *out,
                   size_t cap);
pid_t csni_shm_peer_pid(const struct csni_conn *c);
bool csni_shm_has_data(const struct csni_shm *s); /* inbound ring not empty (lock-free) */
/* Producer (tx_lock held): writes header and payload as one record if all of it fits now;
 * false (nothing written) when the ring has no room. */
bool csni_shm_write_frame(struct csni_conn *c, const uint8_t *hdr, const void *payload, size_t len);
/* Consumer (rx_lock held): the unread bytes of the inbound record at the read position, in
 * place (0: none yet); csni_shm_consume(c, n) then takes n of them (n <= what peek gave). */
size_t csni_shm_peek(struct csni_shm *s, const uint8_t **at);
void csni_shm_consume(struct csni_conn *c, size_t n);
bool csni_shm_arm(struct csni_conn *c, bool want_space);

#endif
