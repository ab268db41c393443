/* shm.h: the shared-memory rings of one pair of processes: a segment with one single-producer
 * byte ring per direction, carrying records. Knows nothing of connections or frames beyond the
 * header size: the connection engine (core/conn.c) drives it. */
#ifndef CSNI_SHM_H
#define CSNI_SHM_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "csn.h"

struct shm_ring;

/* One pair's segment as seen by one side. head_cache is the producer's copy of the outbound
 * head (one producer: its connection's writer lock); rec_off the bytes already taken of the
 * inbound record at head (one consumer: its reader lock). bell_fd: where a doorbell byte is
 * written when the other side sleeps (-1: nobody to ring). */
struct csni_shm {
    void *base;
    size_t size;
    uint64_t ring_bytes; /* power of two */
    struct shm_ring *in, *out;
    int side;
    int bell_fd;
    bool asym; /* this process registered for membarrier when it mapped the segment */
    uint64_t head_cache, rec_off;
    uint64_t *slot_zeroed; /* producer's: a bit per ring line whose slot reads 0 once consumed */
    uint64_t compact;      /* producer's: the bytes at the start of the out ring kept to while
                            * the consumer keeps up (shm.c, "Compact"); ring_bytes: all */
    uint64_t wrap_at;      /* producer's: where this lap goes back to the start */
    bool whole_frames;     /* producer's: write_eager writes no short record (shm.c) */
    uint64_t in_seen;      /* producer's: the in ring's tail at the last compact mark (shm.c) */
    uint64_t head_seen;    /* producer's: the out ring's head there */
    /* Producer's, read by whoever arms the ring: 0, or while a one-way stream waits at its
     * stall mark for room at the start, how far into the ring the consumer must be for it. */
    _Atomic uint64_t stall_need;
};

/* The creating side makes the segment at path (O_EXCL: never someone else's file), sized and
 * allocated up front (a full file system is an error now, never a SIGBUS later); the other side
 * maps it and unlinks it. membarrier: register the process for the asymmetric barrier (see
 * shm.c; CSN_SHM_MEMBARRIER), if the kernel offers it. populate: map every page now
 * (MAP_POPULATE, CSN_SHM_POPULATE), not at its first touch. Do not block. CSN_OK, CSN_NO_HEAP
 * or CSN_SYSTEM_ERROR (errno says why; create prints a line on stderr). The caller owns *out
 * (csni_shm_unmap). */
csn_status csni_shm_create(const char *path, uint64_t ring_bytes, bool membarrier, bool populate,
                           struct csni_shm **out);
csn_status csni_shm_attach(const char *path, bool membarrier, bool populate, struct csni_shm **out);
void csni_shm_unmap(struct csni_shm *s);
/* The bytes of a ring of ring_bytes its producer keeps to while the consumer keeps up, when
 * asked for `bytes`: rounded down to a cache line, at least 4 KiB; 0 or the ring's size or
 * more: the whole ring. */
uint64_t csni_shm_compact_bytes(uint64_t ring_bytes, uint64_t bytes);
/* The bytes a stream keeps to while its consumer is less than half of them behind, for a
 * compact part of `compact` (csni_shm_compact_bytes): 4 times it, or the whole ring. */
uint64_t csni_shm_stream_bytes(uint64_t ring_bytes, uint64_t compact);
/* The producer keeps its records to csni_shm_compact_bytes(its ring, bytes) while the consumer
 * keeps up, and to 4 times that while the consumer is less than half of those behind (the
 * default: the whole ring); a one-way stream of payloads waits at twice it for room at the
 * start (shm.c, "Stall"). Before the first write. */
void csni_shm_set_compact(struct csni_shm *s, uint64_t bytes);
/* on false: the producer's write_eager writes whole frames only, no short records (shm.c,
 * "Short records"), as a byte-stream reader (csni_shm_read) can take. Before the first write. */
void csni_shm_set_short(struct csni_shm *s, bool on);
/* Gives a dead connection's segment back to the system while threads may still hold pointers
 * into it: its range becomes fresh zero pages (a ring that reads as empty). Does not block;
 * s stays valid (csni_shm_unmap still ends it). */
void csni_shm_release(struct csni_shm *s);
pid_t csni_shm_peer_pid(const struct csni_shm *s);

/* Producer side (one thread at a time). write_eager: an EAGER frame (to transport dst, from
 * src: 32-bit ids, csni_conn_send_now says why they travel as 64-bit) and its payload as one record
 * if all of it fits now; false (nothing written) when the ring has no room; the caller keeps its
 * buffer. writev: as much of iov as fits as one record: bytes written, or -1 with errno EAGAIN when
 * full (or while a stream waits at its stall mark: shm.c). Neither blocks. */
bool csni_shm_write_eager(struct csni_shm *s, uint64_t dst, uint64_t src, const void *payload,
                          size_t len);
ssize_t csni_shm_writev(struct csni_shm *s, const struct iovec *iov, int n);
/* A frame with no payload (its encoded header, CSNI_FRAME_SIZE bytes) as one record if it
 * fits now; false (nothing written) when the ring has no room. Never blocks. */
bool csni_shm_write_frame(struct csni_shm *s, const uint8_t *frame);

/* Consumer side (one thread at a time). has_data: lock-free look at the inbound ring (any
 * thread); with prefetch, a record found there has its lines asked into our cache, at most
 * that many bytes of it: a receiver that waited for it looks so, and the payload's lines cross
 * from the writer's cache while it takes the reader lock and decodes the header.
 * peek: the unread bytes of the record at the read position, in place: 1 (*at, *n set: frame
 * bytes), 2 (a short record, taken whole: *at its short EAGER header, csni_frame_decode_short,
 * then the payload), 0 (nothing yet) or -1 (a corrupt record header: drop the connection);
 * consume(s, n) then takes n of them (n <= *n). read: copies up to n bytes out of the records
 * there, up to a short record: bytes, or -1 with errno EAGAIN (nothing) or EPROTO (a corrupt
 * record, or a short one where bytes of a frame are due). None blocks. */
bool csni_shm_has_data(const struct csni_shm *s, size_t prefetch);
int csni_shm_peek(struct csni_shm *s, const uint8_t **at, size_t *n);
void csni_shm_consume(struct csni_shm *s, size_t n);
ssize_t csni_shm_read(struct csni_shm *s, void *buf, size_t n);

/* Before a side sleeps: ask to be rung when data (and, want_space, room) comes, then look
 * once more: true when there is work after all (do not sleep). If csni_shm_heavy_fence then
 * says the process is registered, every ring must be armed and looked at once more after it
 * before the side may sleep: only then does the look see a record whose producer left its
 * fence out. heavy_fence runs membarrier (a system call, 1-50 us) or returns false at once. */
bool csni_shm_arm(struct csni_shm *s, bool want_space);
bool csni_shm_heavy_fence(void);

#endif
