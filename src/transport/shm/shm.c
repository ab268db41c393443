/* shm.c: the shared-memory transport: a single-producer byte ring per direction of a pair of
 * processes, the socket kept only as doorbell and death detector.
 *
 * The connecting process creates one segment holding both rings of the pair, sized and
 * allocated up front (posix_fallocate: a full /dev/shm is an error now, never a SIGBUS
 * later), and names it in its HELLO; the accepting process maps it and unlinks it at once,
 * so nothing is left in /dev/shm whichever side dies later.
 * Frames travel through the rings exactly as they would through a socket (same framing,
 * same protocol); large messages are pulled by the receiver with process_vm_readv (one
 * copy) when the kernel permits it.
 *
 * Records. A ring carries variable-size records, each starting on a cache line: an 8-byte
 * header word (the record's byte count and, in the top byte, a pad; or SHM_WRAP: "continue
 * at the start of the ring"), then pad unused bytes, then the bytes. The pad puts the first
 * byte of a payload of SHM_PAD_MIN bytes or more on a cache line: a 64 KiB memcpy to a
 * destination 8 bytes past a line takes 19x as long here as to an aligned one, 16-56 bytes
 * past 1.4-1.8x (bench/copyalign). The header is written last, with a release store, and it
 * is what the consumer polls: a small frame arrives in the one cache line the consumer was
 * already watching (no separate index to fetch first). The slot after the last record must
 * read 0 ("not yet") however stale the bytes around it are. The consumer zeroes the header
 * slot of every record and wrap marker it takes, before it hands the space back; the
 * producer zeroes the slot after a record it publishes only when that line held the inside
 * of an older record (its own map of the lines whose slots it wrote last, s->slot_zeroed).
 * In a stream of small records every line is a header, and the producer writes one line
 * per message, not two: its zeroing of the next line, which the polling consumer had just
 * read, cost a second transfer of a line between the CPUs per message (8-byte stream +13 %,
 * BENCHMARKS.md, issue 19). Zeroing every line of a taken record instead cost the consumer
 * 5-20 % at 1-64 KiB. The consumer hands space back with a release store of head (its own
 * cache line), which the producer reads only when its cached copy says the ring is full; the
 * zeroed slots are visible to it from then on.
 * Short records. A small EAGER message (no pad) written by the fast path
 * (csni_shm_write_eager) leaves the 40-byte frame header out where that saves a cache line
 * (payloads of 17-48 bytes, 81-112, ... up to SHM_PAD_MIN): the header word's top byte reads
 * SHM_SHORT_TOP, and the record holds one word of the destination and source transport ids,
 * then the payload (wire/frame.h: csni_frame_put_short); its byte count says the rest. A
 * 32-byte message then takes one line where it took two: lines are what cross between the
 * CPUs per message (32 bytes one way: Open MPI's record took one line, csn's two, 0.78-0.90x
 * of its rate; with the short record 1.15x csn's before, 1.41x where the CPUs share no cache;
 * 100 bytes 1.34x and 2.0x). Where no line is saved the whole frame stays (nothing to win
 * there; BENCHMARKS.md, issue 19). Such a record is taken whole, in place
 * (csni_shm_peek returns 2); the byte-stream reader stops before it (a frame's bytes never
 * continue into one: the fast path writes only with nothing queued on the connection).
 * Sleep. A side that will sleep in epoll arms the ring (rx_armed / tx_armed = 1) and then
 * re-checks it; the other side, after publishing, reads the flag and, if it is armed,
 * clears it and writes one byte to the socket. Each side needs a full barrier between its
 * store and its load, so that one of them always sees the other. Only the ringing side
 * clears a flag: several threads of the consuming process may sleep in epoll at once.
 * Asymmetric barrier. The ringing side runs once per message, the arming side once per
 * sleep; a fence per message (mfence, which waits for the record's cache line to leave the
 * consumer's cache) cost the sender a third of its time in a stream of 8-byte messages.
 * So where the kernel offers it, the ringing side orders its store and load for the
 * compiler only, and the arming side, after it armed all its rings, runs membarrier
 * (MEMBARRIER_CMD_GLOBAL_EXPEDITED): every thread of every registered process then passes a
 * full barrier, which stands in for the ringer's fence (the pattern of userspace RCU's
 * readers). A ringer may leave its fence out only if both processes registered: itself,
 * so that the sleeper's membarrier reaches it, and the sleeper, so that it runs one. Each
 * side registers (shm_register) before it writes its flag in the segment's header, so a
 * ringer that reads the peer's flag as set knows the peer's every sleep runs membarrier;
 * one that reads it clear fences as before.
 * Compact. A record written to lines the two CPUs handed back and forth a moment ago costs less
 * than one written further on: a ping-pong of 1 KiB through one reused slot took 0.14 us a way,
 * through each message's next lines of a 256 KiB ring 0.22 us (bench/pingpong/copy-floor; from
 * a ring of 16 KiB each way on, when the two rings no longer fit the 32 KiB first-level cache,
 * BENCHMARKS.md, issue 19). So while the consumer keeps up, the producer keeps to the first
 * `compact` bytes of its ring: a record that would end past them goes to the start of the ring
 * behind a wrap marker, as at the ring's end, if the consumer has taken every record (the
 * producer reads head for that, once per such lap). If it has not (a stream), the lap runs on
 * to the end of the stream part (4 x compact), and goes back there if the consumer is less than
 * half of it behind: a stream of 1 KiB messages through 32 KiB took 1.07x the rate through the
 * whole 256 KiB where the CPUs share a cache (BENCHMARKS.md, issue 19). Further behind (a
 * burst), or while the peer streams to us as well (both ways, each side writing its own window
 * would find room for what the other had taken alone), the lap runs on to the ring's end. The
 * consumer needs no change: it follows wrap markers wherever they are. A burst that starts
 * with the very record that goes back finds room for what the consumer has taken only, until
 * it passes the marker.
 * Stall. A one-way stream of records of more than 256 bytes and at most a quarter of half the
 * stream part (payloads, not control frames) has one more mark, at that half (2 x compact): there,
 * if the consumer has taken something since the compact mark (it works, but lags) and the peer
 * wrote at most 256 bytes to us (an ack, a few control frames), the record goes back to the
 * start as soon as the consumer has left room for it, and until then the ring counts as full
 * (the write is refused, the record waits in the connection's queue; csni_shm_arm wakes the
 * writer for that room, not for any). A producer that ran on wrote lines neither cache held;
 * one that waits writes lines the consumer has just read: one way at 256 B-2 KiB 1.13-1.29x,
 * with the CPUs far apart as well. Where the peer had to write nothing at all, a stream
 * answered once a window (pingpong's ack) ran on in every lap its ack fell in: counting an ack
 * as nothing made the ring alone (bench/pingpong/ring-stream) 1.35-1.9x faster at 256 B-1 KiB,
 * the library 1.06-1.20x (BENCHMARKS.md, issue 19). Not for a burst (the consumer took
 * nothing: the lap runs on as before) nor both ways (each side waiting for room would cost the
 * other its window: 4 KiB both ways lost 0.85x when the mark was there for every record).
 * Header last. The fast path (csni_shm_write_eager) writes a payload of up to SHM_HEAD_LAST
 * bytes first and then its frame header, just before the header word in the same line: the line
 * the consumer polls is then written in one go at the end. Most likely why it pays: a frame
 * header written first takes that line from the polling consumer once more (and the payload's
 * stores, after it, wait for that: stores leave in order), and the consumer's look in between
 * fetches it back for nothing. Where the CPUs are far apart, half round trip 1.12-1.23x faster
 * at 64 B-1 KiB, 1.06x at 2 KiB, and one way 1.07-1.16x at 256 B-1 KiB. From 4 KiB on the
 * header stays first: with it last, one way at 4 KiB lost 0.91x (BENCHMARKS.md, issue 19). */
#include <errno.h>
#include <fcntl.h>
#include <linux/membarrier.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "csn.h"

#include "core/assert.h"
#include "core/copy.h"
#include "transport/shm/shm.h"
#include "wire/frame.h"

/* A frame header leads every record the fast path writes. */
#define SHM_FRAME_SIZE CSNI_FRAME_SIZE
#define SHM_LINE 64u
#define SHM_WRAP UINT64_MAX
#define SHM_PAD_SHIFT 56 /* header word: pad << SHM_PAD_SHIFT | byte count */
#define SHM_LEN_MASK ((UINT64_C(1) << SHM_PAD_SHIFT) - 1)
#define SHM_PAD_MIN 512u    /* a run of at least this many bytes is copied line-aligned */
#define SHM_SHORT_TOP 0x40u /* header word's top byte of a short record ("Short records") */
#define SHM_HEAD_LAST 2048u /* the frame header after payloads up to this ("Header last") */

struct shm_ring {
    _Alignas(64) _Atomic uint64_t head;     /* bytes consumed (written by the consumer) */
    _Alignas(64) _Atomic uint64_t tail;     /* bytes produced (the producer's own position) */
    _Alignas(64) _Atomic uint32_t rx_armed; /* consumer sleeps: producer rings after publishing */
    _Atomic uint32_t tx_armed;              /* producer waits for space: consumer rings */
    _Alignas(64) uint8_t data[];
};

struct shm_seg_hdr {
    uint64_t magic;
    uint64_t ring_bytes;
    _Atomic int32_t pid[2];   /* [0] the creator, [1] the process that mapped it */
    _Atomic uint32_t asym[2]; /* side i registered for membarrier: its sleeps run one */
};

#define SHM_MAGIC 0xC5A15E6D00000001ull
#define SHM_HDR 4096u

/* Every page mapped at once (populate) or at its first touch. A first touch is a fault of
 * about 1 us on each side, and a ring's pages are first touched as its first records go by:
 * in nettest's first timed exchanges (1 KiB cells 0.85-0.90x Open MPI's where they were
 * 1.27-1.32x populated; BENCHMARKS.md, issue 19). Mapping them up front costs as much per
 * page, also for pages a short job never reaches (a 1024-rank start-up 1.2x). */
static int shm_map_flags(bool populate)
{
    return MAP_SHARED | (populate ? MAP_POPULATE : 0);
}

static size_t shm_ring_stride(uint64_t ring_bytes)
{
    return sizeof(struct shm_ring) + ring_bytes;
}

static size_t shm_seg_size(uint64_t ring_bytes)
{
    return SHM_HDR + 2 * ((shm_ring_stride(ring_bytes) + 4095u) & ~(size_t)4095u);
}

static struct shm_ring *shm_ring_at(void *base, uint64_t ring_bytes, int i)
{
    return (struct shm_ring *)((uint8_t *)base + SHM_HDR +
                               (size_t)i *
                                   ((shm_ring_stride(ring_bytes) + 4095u) & ~(size_t)4095u));
}

/* The process registered as a target of MEMBARRIER_CMD_GLOBAL_EXPEDITED (0: none), and so
 * its sleeps run one (csni_shm_heavy_fence). A pid: a forked child, which inherits the value
 * but perhaps not the kernel's registration, registers again for the segments it maps
 * itself. Never cleared; seq_cst: a sleeper that armed a ring of a segment whose header says
 * we registered sees it set. */
static _Atomic pid_t shm_registered;

/* Registers this process (idempotent) unless asked not to; whether it is. */
static bool shm_register(bool want)
{
    if (!want)
        return false;
    pid_t me = getpid();
    if (atomic_load(&shm_registered) == me)
        return true;
    long q = syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
    if (q < 0 || !(q & MEMBARRIER_CMD_GLOBAL_EXPEDITED) ||
        syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED, 0, 0) != 0)
        return false; /* an old kernel, seccomp, valgrind: fences on both sides */
    atomic_store(&shm_registered, me);
    return true;
}

bool csni_shm_heavy_fence(void)
{
    if (atomic_load(&shm_registered) == 0)
        return false;
    long rc;
    while ((rc = syscall(SYS_membarrier, MEMBARRIER_CMD_GLOBAL_EXPEDITED, 0, 0)) != 0 &&
           errno == EINTR)
        ;
    /* Registered means the command is there; without it the peers that left their fences out
     * could lose a wake-up, so this is not an error to carry on from. */
    CSNI_ASSERT(rc == 0);
    return true;
}

static csn_status shm_map(void *base, uint64_t ring_bytes, int side, bool asym,
                          struct csni_shm **out)
{
    struct csni_shm *s = calloc(1, sizeof *s);
    uint64_t words = (ring_bytes / SHM_LINE + 63) / 64;
    if (!s || !(s->slot_zeroed = malloc(words * sizeof *s->slot_zeroed))) {
        free(s);
        return CSN_NO_HEAP;
    }
    memset(s->slot_zeroed, 0xff, words * sizeof *s->slot_zeroed); /* a new ring is all zero */
    s->compact = s->wrap_at = ring_bytes;
    s->base = base;
    s->size = shm_seg_size(ring_bytes);
    s->ring_bytes = ring_bytes;
    s->out = shm_ring_at(base, ring_bytes, side);
    s->in = shm_ring_at(base, ring_bytes, 1 - side);
    s->side = side;
    s->bell_fd = -1;
    s->asym = asym;
    if (asym)
        atomic_store(&((struct shm_seg_hdr *)base)->asym[side], 1);
    *out = s;
    return CSN_OK;
}

/* errno as a status (ENOMEM: CSN_NO_HEAP), errno kept for the caller. */
static csn_status shm_errno(int e)
{
    errno = e;
    return e == ENOMEM ? CSN_NO_HEAP : CSN_SYSTEM_ERROR;
}

csn_status csni_shm_create(const char *path, uint64_t rb, bool membarrier, bool populate,
                           struct csni_shm **out)
{
    size_t size = shm_seg_size(rb);
    void *base;
    int fd, e;
    if ((fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600)) < 0) {
        e = errno;
        fprintf(stderr, "csn: cannot create shared-memory segment %s: %s\n", path, strerror(e));
        return shm_errno(e);
    }
    if ((e = posix_fallocate(fd, 0, (off_t)size)) != 0) {
        fprintf(stderr, "csn: cannot allocate %zu bytes of shared memory for %s: %s\n", size, path,
                strerror(e));
        close(fd);
        unlink(path);
        return shm_errno(e);
    }
    base = mmap(NULL, size, PROT_READ | PROT_WRITE, shm_map_flags(populate), fd, 0);
    e = errno;
    close(fd);
    if (base == MAP_FAILED) {
        unlink(path);
        return shm_errno(e);
    }
    struct shm_seg_hdr *h = base;
    h->magic = SHM_MAGIC;
    h->ring_bytes = rb;
    atomic_store(&h->pid[0], (int32_t)getpid());
    csn_status rv = shm_map(base, rb, 0, shm_register(membarrier), out);
    if (rv != CSN_OK) {
        munmap(base, size);
        unlink(path);
    }
    return rv;
}

csn_status csni_shm_attach(const char *path, bool membarrier, bool populate, struct csni_shm **out)
{
    struct stat st;
    void *base;
    int fd, e;
    if ((fd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW)) < 0)
        return shm_errno(errno);
    unlink(path); /* both sides have it now (the creator keeps its mapping) */
    if (fstat(fd, &st) < 0 || (size_t)st.st_size < SHM_HDR) {
        close(fd);
        return CSN_SYSTEM_ERROR;
    }
    base = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, shm_map_flags(populate), fd, 0);
    e = errno;
    close(fd);
    if (base == MAP_FAILED)
        return shm_errno(e);
    struct shm_seg_hdr *h = base;
    if (h->magic != SHM_MAGIC || h->ring_bytes < 4096 || h->ring_bytes > ((uint64_t)1 << 40) ||
        (h->ring_bytes & (h->ring_bytes - 1)) != 0 ||
        shm_seg_size(h->ring_bytes) != (size_t)st.st_size) {
        munmap(base, (size_t)st.st_size);
        return CSN_SYSTEM_ERROR;
    }
    atomic_store(&h->pid[1], (int32_t)getpid());
    csn_status rv = shm_map(base, h->ring_bytes, 1, shm_register(membarrier), out);
    if (rv != CSN_OK)
        munmap(base, (size_t)st.st_size);
    return rv;
}

void csni_shm_release(struct csni_shm *s)
{
    /* MAP_FIXED replaces the segment's pages in one step: the range stays mapped, so a stale
     * reader finds zeros, never a fault. Failing, the segment simply stays. */
    (void)mmap(s->base, s->size, PROT_READ | PROT_WRITE,
               MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1, 0);
}

uint64_t csni_shm_compact_bytes(uint64_t ring_bytes, uint64_t bytes)
{
    bytes &= ~(uint64_t)(SHM_LINE - 1);
    return bytes == 0 || bytes >= ring_bytes ? ring_bytes : bytes < 4096 ? 4096 : bytes;
}

uint64_t csni_shm_stream_bytes(uint64_t ring_bytes, uint64_t compact)
{
    return compact < ring_bytes / 4 ? 4 * compact : ring_bytes;
}

void csni_shm_set_compact(struct csni_shm *s, uint64_t bytes)
{
    s->compact = s->wrap_at = csni_shm_compact_bytes(s->ring_bytes, bytes);
}

void csni_shm_set_short(struct csni_shm *s, bool on)
{
    s->whole_frames = !on;
}

void csni_shm_unmap(struct csni_shm *s)
{
    munmap(s->base, s->size);
    free(s->slot_zeroed);
    free(s);
}

pid_t csni_shm_peer_pid(const struct csni_shm *s)
{
    const struct shm_seg_hdr *h = s->base;
    return (pid_t)atomic_load(&h->pid[1 - s->side]);
}

/* A byte on the bell socket wakes the side that sleeps on this connection. Out of line: the
 * rare part of the doorbell. */
static __attribute__((noinline)) void shm_ring_bell(const struct csni_shm *s)
{
    char b = 1;
    while (send(s->bell_fd, &b, 1, MSG_NOSIGNAL | MSG_DONTWAIT) < 0 && errno == EINTR)
        ;
}

/* Rings the other side if it armed the doorbell (armed) to sleep. Inlined by force: out of
 * line, the call cost every record written and every record consumed 10 instructions
 * (callgrind, BENCHMARKS.md, issue 19). Not under ThreadSanitizer, where GCC refuses the fence
 * once it is inlined (-Wtsan). */
#if defined(__SANITIZE_THREAD__)
#define SHM_DOORBELL_INLINE __attribute__((noinline))
#else
#define SHM_DOORBELL_INLINE inline __attribute__((always_inline))
#endif
static SHM_DOORBELL_INLINE void shm_ring_doorbell(struct csni_shm *s, _Atomic uint32_t *armed)
{
    const struct shm_seg_hdr *h = s->base;
    if (s->asym && atomic_load_explicit(&h->asym[1 - s->side], memory_order_relaxed))
        atomic_signal_fence(memory_order_seq_cst); /* the sleeper's membarrier orders us */
    else
        atomic_thread_fence(memory_order_seq_cst);
    if (atomic_load_explicit(armed, memory_order_relaxed) && atomic_exchange(armed, 0) != 0 &&
        s->bell_fd >= 0)
        shm_ring_bell(s);
}

/* The header slot at ring offset at (< ring size). Records start on cache lines; the consumer
 * index lives in the shared segment, so a hostile peer may leave it anywhere: the slot is
 * taken 8-aligned so that even then it lies inside the ring (and the reader then refuses it). */
static _Atomic uint64_t *shm_slot(struct shm_ring *r, uint64_t at)
{
    return (_Atomic uint64_t *)(void *)(r->data + (at & ~(uint64_t)7));
}

/* The pad of a record whose header word is h (0 for a short one). */
static uint64_t shm_rec_pad(uint64_t h)
{
    return h >> SHM_PAD_SHIFT & (SHM_LINE - 1);
}

/* Ring bytes of a record whose header word is h (not SHM_WRAP). */
static uint64_t shm_rec_bytes(uint64_t h)
{
    return (8u + shm_rec_pad(h) + (h & SHM_LEN_MASK) + SHM_LINE - 1) & ~(uint64_t)(SHM_LINE - 1);
}

/* The bytes of the record at ring offset at whose header word is h. */
static uint8_t *shm_rec_data(struct shm_ring *r, uint64_t at, uint64_t h)
{
    return r->data + at + 8 + shm_rec_pad(h);
}

static bool shm_rec_short(uint64_t h)
{
    return h >> SHM_PAD_SHIFT == SHM_SHORT_TOP;
}

/* The pad that starts the first run of at least SHM_PAD_MIN bytes of iov on a cache line
 * (a frame header of 40 bytes before it: 16); 0 when there is no such run. */
static uint64_t shm_pad(const struct iovec *iov, int n)
{
    uint64_t before = 8;
    for (int i = 0; i < n; i++) {
        if (iov[i].iov_len >= SHM_PAD_MIN)
            return (SHM_LINE - before % SHM_LINE) % SHM_LINE;
        before += iov[i].iov_len;
    }
    return 0;
}

/* Payload capacity of a record with pad in region bytes that must also leave the next header
 * slot (one line) free. */
static uint64_t shm_cap(uint64_t region, uint64_t free_after, uint64_t pad)
{
    uint64_t r = region < free_after ? region : free_after;
    return r > 8u + pad ? r - 8u - pad : 0;
}

/* Copies iov into one record with pad at ring offset at (cap bytes at most); returns bytes
 * copied. */
static size_t shm_fill(struct shm_ring *r, uint64_t at, uint64_t pad, const struct iovec *iov,
                       int n, uint64_t cap)
{
    uint8_t *dst = r->data + at + 8 + pad;
    size_t done = 0;
    for (int i = 0; i < n && done < cap; i++) {
        size_t len = iov[i].iov_len < cap - done ? iov[i].iov_len : (size_t)(cap - done);
        if (len) /* an empty payload may have no buffer */
            memcpy(dst + done, iov[i].iov_base, len);
        done += len;
    }
    return done;
}

/* The producer's map of the ring's lines (s->slot_zeroed, a bit per line): set where the
 * line's first word is the last header or wrap marker we wrote there, or was never written,
 * so that it reads 0 once the consumer has passed it; clear where it holds the inside of a
 * record. */
static bool shm_zeroed(const struct csni_shm *s, uint64_t line)
{
    return s->slot_zeroed[line / 64] >> (line % 64) & 1;
}

static void shm_set_zeroed(struct csni_shm *s, uint64_t line)
{
    s->slot_zeroed[line / 64] |= UINT64_C(1) << (line % 64);
}

/* Lines [line, end) hold the inside of a record: their bits cleared a word at a time (a 1 KiB
 * record spans 17 lines; a bit at a time, the producer spent about 200 instructions per such
 * message here, more than on its copy: callgrind, issue 19). Not inlined: records of one line,
 * the stream of small messages, never come here, and shm_publish stays short. */
static __attribute__((noinline)) void shm_mark_inside(struct csni_shm *s, uint64_t line,
                                                      uint64_t end)
{
    while (line < end) {
        uint64_t lo = line % 64, hi = end - line < 64 - lo ? lo + (end - line) : 64;
        uint64_t below_hi = hi == 64 ? ~UINT64_C(0) : (UINT64_C(1) << hi) - 1;
        s->slot_zeroed[line / 64] &= ~(below_hi & ~((UINT64_C(1) << lo) - 1));
        line += hi - lo;
    }
}

/* Publishes a record of len bytes after pad (top: the header word's top byte, the pad or
 * SHM_SHORT_TOP) already copied skip bytes after tail (skip: the
 * end of the ring left unused, then a wrap marker leads to the record at offset 0): zeroes
 * the header slot after the record unless it reads 0 already, writes its header (release),
 * then the marker, starts a lap under the compact mark if the record is at the ring's start,
 * and rings the consumer if it sleeps. Inlined by force: out of line (as the
 * compiler chose once the map was added), it cost the small-message path 30 instructions. */
static inline __attribute__((always_inline)) void shm_publish(struct csni_shm *s,
                                                              struct shm_ring *r, uint64_t tail,
                                                              uint64_t skip, uint64_t top,
                                                              uint64_t len)
{
    uint64_t mask = s->ring_bytes - 1, at = (tail + skip) & mask;
    uint64_t h = top << SHM_PAD_SHIFT | len, rec = shm_rec_bytes(h), next = (at + rec) & mask;
    shm_set_zeroed(s, at / SHM_LINE);
    if (rec > SHM_LINE)
        shm_mark_inside(s, at / SHM_LINE + 1, (at + rec) / SHM_LINE);
    if (!shm_zeroed(s, next / SHM_LINE)) {
        atomic_store_explicit(shm_slot(r, next), 0, memory_order_relaxed);
        shm_set_zeroed(s, next / SHM_LINE);
    }
    atomic_store_explicit(shm_slot(r, at), h, memory_order_release);
    if (skip) {
        shm_set_zeroed(s, (tail & mask) / SHM_LINE);
        atomic_store_explicit(shm_slot(r, tail & mask), SHM_WRAP, memory_order_release);
    }
    atomic_store_explicit(&r->tail, tail + skip + rec, memory_order_relaxed);
    if (at == 0)
        s->wrap_at = s->compact; /* a new lap, behind a wrap marker or not ("Compact") */
    shm_ring_doorbell(s, &r->rx_armed);
}

/* Writes as much of iov as fits as one record (all of it or nothing when whole); returns
 * bytes written, or -1 with errno EAGAIN when the ring is full. */
static ssize_t shm_ring_put(struct csni_shm *s, const struct iovec *iov, int n, bool whole)
{
    struct shm_ring *r = s->out;
    uint64_t size = s->ring_bytes, mask = size - 1;
    uint64_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed);
    uint64_t at = tail & mask, contig = size - at, total = 0, pad = shm_pad(iov, n);
    for (int i = 0; i < n; i++)
        total += iov[i].iov_len;
    /* avail >= SHM_LINE always: the slot at tail is ours (zeroed, the consumer waits on it). */
    uint64_t avail = size - (tail - s->head_cache), here, wrapped;
    uint64_t rec = shm_rec_bytes(pad << SHM_PAD_SHIFT | total);
    if (at + rec > s->wrap_at) {
        /* Past the compact part: back to the start if the consumer took all there is; at the
         * stall mark of a one-way stream, when there is room (else wait); past the stream part,
         * if it is less than half of that behind. Not while more is to be taken: the marker's
         * skip counts against the space until the consumer passed it, and a burst would find
         * room for what the consumer has taken alone. */
        s->head_cache = atomic_load_explicit(&r->head, memory_order_acquire);
        avail = size - (tail - s->head_cache);
        uint64_t stream = csni_shm_stream_bytes(size, s->compact), mid = stream / 2;
        bool back = at > 0 && avail == size, stall = false;
        bool data = total > 4 * SHM_LINE && rec <= mid / 4 && mid > s->compact;
        if (!back && at > 0 && s->wrap_at < size) {
            /* A stream, at one of its marks. The peer's tail is read here only: a line the peer
             * writes. Not where the ring is empty at the mark (a ping-pong), at the ring's end,
             * or without a compact part. */
            uint64_t in = atomic_load_explicit(&s->in->tail, memory_order_relaxed);
            if (s->wrap_at == s->compact) {
                s->in_seen = in;
                s->head_seen = s->head_cache;
            } else if (s->wrap_at == mid) {
                stall = back =
                    data && in - s->in_seen <= 4 * SHM_LINE && s->head_cache != s->head_seen;
            } else {
                back = in - s->in_seen <= stream / 4 && size - avail < stream / 2;
            }
        }
        wrapped =
            back && avail > contig + SHM_LINE ? shm_cap(at, avail - contig - SHM_LINE, pad) : 0;
        bool go = wrapped >= total || (stall && !whole && wrapped > 0);
        atomic_store_explicit(&s->stall_need, stall && !go ? rec + SHM_LINE : 0,
                              memory_order_relaxed);
        if (go) {
            size_t len = shm_fill(r, 0, pad, iov, n, wrapped);
            shm_publish(s, r, tail, contig, pad, len);
            return (ssize_t)len;
        }
        if (stall) {
            errno = EAGAIN;
            return -1;
        }
        /* It lags: this lap runs on to the next mark, or to the ring's end. */
        s->wrap_at = s->wrap_at == s->compact && data ? mid : s->wrap_at < stream ? stream : size;
    }
    for (int look = 0;; look++) {
        here = shm_cap(contig, avail - SHM_LINE, pad);
        wrapped = avail > contig + SHM_LINE ? shm_cap(at, avail - contig - SHM_LINE, pad) : 0;
        if (look == 1 || here >= total || wrapped >= total)
            break;
        s->head_cache = atomic_load_explicit(&r->head, memory_order_acquire);
        avail = size - (tail - s->head_cache);
    }
    if (whole && here < total && wrapped < total)
        here = wrapped = 0;
    if (here < total && wrapped > here) {
        /* Record at the start of the ring, then the wrap marker that leads there. */
        size_t len = shm_fill(r, 0, pad, iov, n, wrapped);
        shm_publish(s, r, tail, contig, pad, len);
        return (ssize_t)len;
    }
    if (here == 0) {
        errno = EAGAIN;
        return -1;
    }
    size_t len = shm_fill(r, at, pad, iov, n, here);
    shm_publish(s, r, tail, 0, pad, len);
    return (ssize_t)len;
}

ssize_t csni_shm_writev(struct csni_shm *s, const struct iovec *iov, int n)
{
    return shm_ring_put(s, iov, n, false);
}

/* Whether a record of rec bytes goes in at tail directly: not past the end of the ring or of
 * its compact part, and room for it as far as the producer knows. Else the general writer
 * (shm_ring_put) decides: a wrap, a look at the consumer's index, or no room. */
static bool shm_fits_here(const struct csni_shm *s, uint64_t tail, uint64_t rec)
{
    uint64_t at = tail & (s->ring_bytes - 1);
    return at + rec <= s->wrap_at && (tail - s->head_cache) + rec + SHM_LINE <= s->ring_bytes;
}

bool csni_shm_write_frame(struct csni_shm *s, const uint8_t *frame)
{
    struct shm_ring *r = s->out;
    uint64_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed);
    if (!shm_fits_here(s, tail, shm_rec_bytes(SHM_FRAME_SIZE))) {
        struct iovec iov = {.iov_base = (void *)frame, .iov_len = SHM_FRAME_SIZE};
        return shm_ring_put(s, &iov, 1, true) >= 0;
    }
    csni_copy(r->data + (tail & (s->ring_bytes - 1)) + 8, frame, SHM_FRAME_SIZE);
    shm_publish(s, r, tail, 0, 0, SHM_FRAME_SIZE);
    return true;
}

bool csni_shm_write_eager(struct csni_shm *s, uint64_t dst, uint64_t src, const void *payload,
                          size_t len)
{
    struct shm_ring *r = s->out;
    uint64_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed);
    uint64_t at = tail & (s->ring_bytes - 1);
    uint64_t pad = len >= SHM_PAD_MIN ? (SHM_LINE - (8 + SHM_FRAME_SIZE) % SHM_LINE) % SHM_LINE : 0;
    uint64_t rec = shm_rec_bytes(pad << SHM_PAD_SHIFT | (SHM_FRAME_SIZE + len));
    if (!shm_fits_here(s, tail, rec)) {
        uint8_t hdr[CSNI_FRAME_SIZE];
        csni_frame_put_eager(hdr, (uint32_t)dst, (uint32_t)src, len);
        struct iovec iov[2] = {{.iov_base = hdr, .iov_len = SHM_FRAME_SIZE},
                               {.iov_base = (void *)payload, .iov_len = len}};
        return shm_ring_put(s, iov, len ? 2 : 1, true) >= 0;
    }
    uint8_t *d = r->data + at + 8 + pad;
    uint64_t top = pad, hdr = SHM_FRAME_SIZE;
    /* The frame header goes in as words built in registers (csni_frame_put says why): up to
     * SHM_HEAD_LAST bytes after the payload, just before the header word in its line, beyond
     * before it ("Header last"). */
    if (len > SHM_HEAD_LAST) {
        csni_frame_put_eager(d, (uint32_t)dst, (uint32_t)src, len);
        csni_copy(d + hdr, payload, len);
    } else if (8u + CSNI_SHORT_SIZE + len + SHM_LINE <= rec && pad == 0 && !s->whole_frames) {
        /* A short record, where it takes a line less ("Short records"); the room asked for
         * above, for the whole frame, is more than it needs. */
        top = SHM_SHORT_TOP;
        hdr = CSNI_SHORT_SIZE;
        csni_copy(d + hdr, payload, len);
        csni_frame_put_short(d, (uint32_t)dst, (uint32_t)src);
    } else {
        csni_copy(d + hdr, payload, len);
        csni_frame_put_eager(d, (uint32_t)dst, (uint32_t)src, len);
    }
    shm_publish(s, r, tail, 0, top, hdr + len);
    return true;
}

/* Whether the header word h of the record at ring offset at describes a record the ring can
 * hold: the peer process writes it, so a corrupt or hostile one must not make us read outside
 * the ring. */
static bool shm_rec_ok(uint64_t size, uint64_t at, uint64_t h)
{
    uint64_t len = h & SHM_LEN_MASK, top = h >> SHM_PAD_SHIFT;
    return (top < SHM_LINE || (top == SHM_SHORT_TOP && len >= CSNI_SHORT_SIZE)) && len <= size &&
           shm_rec_bytes(h) <= size - at;
}

int csni_shm_peek(struct csni_shm *s, const uint8_t **at, size_t *n)
{
    struct shm_ring *r = s->in;
    uint64_t size = s->ring_bytes, mask = size - 1;
    uint64_t head = atomic_load_explicit(&r->head, memory_order_relaxed);
    uint64_t h = atomic_load_explicit(shm_slot(r, head & mask), memory_order_acquire);
    if (h == SHM_WRAP) {
        if ((head & mask) == 0)
            return -1; /* a wrap marker at the start would loop for ever */
        /* Only the consumer moves head: skipping the marker needs no hand-back yet. */
        atomic_store_explicit(shm_slot(r, head & mask), 0, memory_order_relaxed);
        head += size - (head & mask);
        atomic_store_explicit(&r->head, head, memory_order_release);
        h = atomic_load_explicit(shm_slot(r, head & mask), memory_order_acquire);
        if (h == SHM_WRAP)
            return -1;
    }
    if (h == 0)
        return 0;
    if ((head & (SHM_LINE - 1)) || !shm_rec_ok(size, head & mask, h) ||
        s->rec_off > (h & SHM_LEN_MASK) || (shm_rec_short(h) && s->rec_off != 0))
        return -1;
    *at = shm_rec_data(r, head & mask, h) + s->rec_off;
    *n = (size_t)((h & SHM_LEN_MASK) - s->rec_off);
    return shm_rec_short(h) ? 2 : 1;
}

void csni_shm_consume(struct csni_shm *s, size_t n)
{
    struct shm_ring *r = s->in;
    uint64_t head = atomic_load_explicit(&r->head, memory_order_relaxed);
    uint64_t h =
        atomic_load_explicit(shm_slot(r, head & (s->ring_bytes - 1)), memory_order_relaxed);
    s->rec_off += n;
    if (s->rec_off < (h & SHM_LEN_MASK))
        return;
    s->rec_off = 0;
    atomic_store_explicit(shm_slot(r, head & (s->ring_bytes - 1)), 0, memory_order_relaxed);
    atomic_store_explicit(&r->head, head + shm_rec_bytes(h), memory_order_release);
    shm_ring_doorbell(s, &r->tx_armed);
}

/* Copies up to want bytes out of the records that are there; a record may be taken in
 * several reads (s->rec_off). */
ssize_t csni_shm_read(struct csni_shm *s, void *buf, size_t want)
{
    struct shm_ring *r = s->in;
    uint64_t size = s->ring_bytes, mask = size - 1;
    uint64_t head0 = atomic_load_explicit(&r->head, memory_order_relaxed), head = head0;
    size_t got = 0;
    while (got < want) {
        uint64_t at = head & mask;
        if (head - head0 >= size || (at & (SHM_LINE - 1)))
            goto bad; /* a lap of records and no end: a hostile peer's, we would loop for ever */
        uint64_t h = atomic_load_explicit(shm_slot(r, at), memory_order_acquire);
        if (h == 0)
            break;
        if (h == SHM_WRAP) {
            if (at == 0)
                goto bad; /* a wrap marker at the start would loop for ever */
            atomic_store_explicit(shm_slot(r, at), 0, memory_order_relaxed);
            head += size - at;
            continue;
        }
        if (!shm_rec_ok(size, at, h) || s->rec_off > (h & SHM_LEN_MASK))
            goto bad;
        if (shm_rec_short(h)) {
            /* Its frame is taken in place (csni_shm_peek), never as bytes: a reader that wants
             * bytes there while none came before it is in the middle of a frame. */
            if (got == 0)
                goto bad;
            break;
        }
        uint64_t len = h & SHM_LEN_MASK;
        size_t take = len - s->rec_off < want - got ? (size_t)(len - s->rec_off) : want - got;
        memcpy((uint8_t *)buf + got, shm_rec_data(r, at, h) + s->rec_off, take);
        got += take;
        s->rec_off += take;
        if (s->rec_off == len) {
            atomic_store_explicit(shm_slot(r, at), 0, memory_order_relaxed);
            head += shm_rec_bytes(h);
            s->rec_off = 0;
        }
    }
    if (head != head0) {
        atomic_store_explicit(&r->head, head, memory_order_release);
        shm_ring_doorbell(s, &r->tx_armed);
    }
    if (got == 0) {
        errno = EAGAIN;
        return -1;
    }
    return (ssize_t)got;
bad:
    errno = EPROTO; /* a corrupt record: the connection is dropped */
    return -1;
}

/* prefetch: for a waiting receive, a 1 KiB message took 0.207 against 0.215 us a half round
 * trip where the CPUs share a cache (20 alternated rounds), 256 B 0.50 against 0.60 where they
 * do not (BENCHMARKS.md, issue 19). Prefetching every record's lines as it was read slowed a
 * stream of 1 KiB messages instead (0.93x): its reader is not waiting, the lines were on their
 * way already. The header is the writer's, read without the lock: a wrong one only prefetches
 * other lines of the ring. */
bool csni_shm_has_data(const struct csni_shm *s, size_t prefetch)
{
    struct shm_ring *r = s->in;
    uint64_t at = atomic_load_explicit(&r->head, memory_order_relaxed) & (s->ring_bytes - 1);
    uint64_t h = atomic_load_explicit(shm_slot(r, at), memory_order_acquire);
    if (h == 0)
        return false;
    if (prefetch && h != SHM_WRAP) {
        uint64_t end = shm_rec_bytes(h);
        if (end > prefetch)
            end = prefetch;
        if (end > s->ring_bytes - at)
            end = s->ring_bytes - at;
        for (uint64_t off = SHM_LINE; off < end; off += SHM_LINE)
            __builtin_prefetch(r->data + at + off);
    }
    return true;
}

/* Before the progress thread sleeps: arm the doorbells, then look once more. Returns true
 * when there is work after all (the caller must not sleep). */
bool csni_shm_arm(struct csni_shm *s, bool want_space)
{
    atomic_store(&s->in->rx_armed, 1);
    if (want_space)
        atomic_store(&s->out->tx_armed, 1);
    atomic_thread_fence(memory_order_seq_cst);
    if (csni_shm_has_data(s, 0))
        return true;
    if (want_space) {
        uint64_t tail = atomic_load_explicit(&s->out->tail, memory_order_relaxed);
        uint64_t used = tail - atomic_load_explicit(&s->out->head, memory_order_acquire);
        uint64_t need = atomic_load_explicit(&s->stall_need, memory_order_relaxed);
        uint64_t at = tail & (s->ring_bytes - 1); /* a stalled lap's free start: at - used */
        if (need ? used == 0 || (used <= at && at - used >= need)
                 : used + 4 * SHM_LINE <= s->ring_bytes)
            return true;
    }
    return false;
}
