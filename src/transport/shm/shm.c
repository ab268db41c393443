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
 * Memory ordering of a ring. The producer copies bytes, then publishes them with a release
 * store of tail; the consumer's acquire load of tail makes them visible, and its release
 * store of head hands the space back (the producer's acquire load of head). head and tail
 * live on their own cache lines; each side keeps a private cached copy of the other's index
 * and reloads it only when the cached value says "full" or "empty".
 * Sleep. A side that will sleep in epoll arms the ring (rx_armed / tx_armed = 1) and then
 * re-checks it; the other side, after publishing, reads the flag and, if it is armed,
 * clears it and writes one byte to the socket. Both sides put a seq_cst fence between
 * their store and their load, so one of them always sees the other. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "core/core.h"
#include "transport/shm/shm.h"

struct shm_ring {
    _Alignas(64) _Atomic uint64_t head;     /* bytes consumed (written by the consumer) */
    _Alignas(64) _Atomic uint64_t tail;     /* bytes produced (written by the producer) */
    _Alignas(64) _Atomic uint32_t rx_armed; /* consumer sleeps: producer rings after publishing */
    _Atomic uint32_t tx_armed;              /* producer waits for space: consumer rings */
    _Alignas(64) uint8_t data[];
};

struct shm_seg_hdr {
    uint64_t magic;
    uint64_t ring_bytes;
    _Atomic int32_t pid[2]; /* [0] the creator, [1] the process that mapped it */
};

#define SHM_MAGIC 0xC5A15E6D00000001ull
#define SHM_HDR 4096u

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

void csni_shm_path(const struct csni_proc *p, int from, int to, uint32_t lane, char *out,
                   size_t cap)
{
    snprintf(out, cap, "%s/csn.%s.%d.%d.%u", p->shm_dir, p->boot.jobid, from, to, lane);
}

static csn_status shm_map(void *base, uint64_t ring_bytes, int side, struct csni_shm **out)
{
    struct csni_shm *s = calloc(1, sizeof *s);
    if (!s)
        return CSN_NO_HEAP;
    s->base = base;
    s->size = shm_seg_size(ring_bytes);
    s->ring_bytes = ring_bytes;
    s->out = shm_ring_at(base, ring_bytes, side);
    s->in = shm_ring_at(base, ring_bytes, 1 - side);
    s->side = side;
    *out = s;
    return CSN_OK;
}

csn_status csni_shm_create(struct csni_proc *p, int peer, uint32_t lane, struct csni_shm **out)
{
    char path[512];
    uint64_t rb = p->shm_ring;
    size_t size = shm_seg_size(rb);
    void *base;
    int fd, e;
    csni_shm_path(p, p->me, peer, lane, path, sizeof path);
    if ((fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600)) < 0) {
        e = errno;
        fprintf(stderr, "csn[%d]: cannot create shared-memory segment %s: %s\n", p->me, path,
                strerror(e));
        return csni_errno_status(e);
    }
    if ((e = posix_fallocate(fd, 0, (off_t)size)) != 0) {
        fprintf(stderr, "csn[%d]: cannot allocate %zu bytes of shared memory in %s: %s\n", p->me,
                size, p->shm_dir, strerror(e));
        close(fd);
        unlink(path);
        return csni_errno_status(e);
    }
    base = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    e = errno;
    close(fd);
    if (base == MAP_FAILED) {
        unlink(path);
        return csni_errno_status(e);
    }
    struct shm_seg_hdr *h = base;
    h->magic = SHM_MAGIC;
    h->ring_bytes = rb;
    atomic_store(&h->pid[0], (int32_t)getpid());
    csn_status rv = shm_map(base, rb, 0, out);
    if (rv != CSN_OK) {
        munmap(base, size);
        unlink(path);
    }
    return rv;
}

csn_status csni_shm_attach(struct csni_proc *p, int peer, uint32_t lane, struct csni_shm **out)
{
    char path[512];
    struct stat st;
    void *base;
    int fd, e;
    csni_shm_path(p, peer, p->me, lane, path, sizeof path);
    if ((fd = open(path, O_RDWR | O_CLOEXEC)) < 0)
        return csni_errno_status(errno);
    unlink(path); /* both sides have it now (the creator keeps its mapping) */
    if (fstat(fd, &st) < 0 || (size_t)st.st_size < SHM_HDR) {
        close(fd);
        return CSN_SYSTEM_ERROR;
    }
    base = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    e = errno;
    close(fd);
    if (base == MAP_FAILED)
        return csni_errno_status(e);
    struct shm_seg_hdr *h = base;
    if (h->magic != SHM_MAGIC || h->ring_bytes == 0 || (h->ring_bytes & (h->ring_bytes - 1)) != 0 ||
        shm_seg_size(h->ring_bytes) != (size_t)st.st_size) {
        munmap(base, (size_t)st.st_size);
        return CSN_SYSTEM_ERROR;
    }
    atomic_store(&h->pid[1], (int32_t)getpid());
    csn_status rv = shm_map(base, h->ring_bytes, 1, out);
    if (rv != CSN_OK)
        munmap(base, (size_t)st.st_size);
    return rv;
}

pid_t csni_shm_peer_pid(const struct csni_conn *c)
{
    const struct shm_seg_hdr *h = c->shm->base;
    return (pid_t)atomic_load(&h->pid[1 - c->shm->side]);
}

static void shm_ring_doorbell(struct csni_conn *c, _Atomic uint32_t *armed)
{
    atomic_thread_fence(memory_order_seq_cst);
    if (atomic_load_explicit(armed, memory_order_relaxed) && atomic_exchange(armed, 0) != 0) {
        char b = 1;
        while (send(c->fd, &b, 1, MSG_NOSIGNAL | MSG_DONTWAIT) < 0 && errno == EINTR)
            ;
    }
}

/* Copies up to the free space of the outbound ring from iov; returns bytes written, or -1
 * with errno EAGAIN when the ring is full. */
static ssize_t shm_ring_writev(struct csni_conn *c, const struct iovec *iov, int n)
{
    struct csni_shm *s = c->shm;
    struct shm_ring *r = s->out;
    uint64_t size = s->ring_bytes, tail = atomic_load_explicit(&r->tail, memory_order_relaxed);
    uint64_t space = size - (tail - s->head_cache);
    if (space == 0) {
        s->head_cache = atomic_load_explicit(&r->head, memory_order_acquire);
        space = size - (tail - s->head_cache);
        if (space == 0) {
            errno = EAGAIN;
            return -1;
        }
    }
    uint64_t pos = tail, left = space;
    for (int i = 0; i < n && left; i++) {
        const uint8_t *src = iov[i].iov_base;
        size_t len = iov[i].iov_len < left ? iov[i].iov_len : (size_t)left;
        size_t at = (size_t)(pos & (size - 1)), first = size - at < len ? (size_t)(size - at) : len;
        memcpy(r->data + at, src, first);
        memcpy(r->data, src + first, len - first);
        pos += len;
        left -= len;
    }
    atomic_store_explicit(&r->tail, pos, memory_order_release);
    shm_ring_doorbell(c, &r->rx_armed);
    return (ssize_t)(pos - tail);
}

static ssize_t shm_ring_read(struct csni_conn *c, void *buf, size_t want)
{
    struct csni_shm *s = c->shm;
    struct shm_ring *r = s->in;
    uint64_t size = s->ring_bytes, head = atomic_load_explicit(&r->head, memory_order_relaxed);
    uint64_t avail = s->tail_cache - head;
    if (avail == 0) {
        s->tail_cache = atomic_load_explicit(&r->tail, memory_order_acquire);
        avail = s->tail_cache - head;
        if (avail == 0) {
            errno = EAGAIN;
            return -1;
        }
    }
    size_t len = want < avail ? want : (size_t)avail;
    size_t at = (size_t)(head & (size - 1)), first = size - at < len ? (size_t)(size - at) : len;
    memcpy(buf, r->data + at, first);
    memcpy((uint8_t *)buf + first, r->data, len - first);
    atomic_store_explicit(&r->head, head + len, memory_order_release);
    shm_ring_doorbell(c, &r->tx_armed);
    return (ssize_t)len;
}

bool csni_shm_has_data(const struct csni_shm *s)
{
    return atomic_load_explicit(&s->in->tail, memory_order_acquire) !=
           atomic_load_explicit(&s->in->head, memory_order_relaxed);
}


/* Before the progress thread sleeps: arm the doorbells, then look once more. Returns true
 * when there is work after all (the caller must not sleep). */
bool csni_shm_arm(struct csni_conn *c, bool want_space)
{
    struct csni_shm *s = c->shm;
    atomic_store(&s->in->rx_armed, 1);
    if (want_space)
        atomic_store(&s->out->tx_armed, 1);
    atomic_thread_fence(memory_order_seq_cst);
    if (csni_shm_has_data(s))
        return true;
    if (want_space) {
        uint64_t tail = atomic_load_explicit(&s->out->tail, memory_order_relaxed);
        if (tail - atomic_load_explicit(&s->out->head, memory_order_acquire) < s->ring_bytes)
            return true;
    }
    return false;
}

void csni_shm_disarm(struct csni_conn *c)
{
    atomic_store_explicit(&c->shm->in->rx_armed, 0, memory_order_relaxed);
    atomic_store_explicit(&c->shm->out->tx_armed, 0, memory_order_relaxed);
}

const struct csni_link_ops csni_shm_link = {
    .read = shm_ring_read,
    .writev = shm_ring_writev,
};
