/* ofi.c: the libfabric (OFI) link of a connection (see ofi.h): loading the component, the
 * address exchange after the HELLO, and the byte stream over the pair's endpoint. */
#include "transport/ofi/ofi.h"
#include "boot/module.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef CSN_OFI_LIBDIR /* built outside CMake (the fuzz targets): no installed component */
#define CSN_OFI_LIBDIR ""
#define CSN_OFI_LIBDIR_REL "lib"
#define CSN_OFI_BUILD_LIBDIR ""
#endif
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/conn.h"
#include "core/state.h"
#include "transport/ofi/ofi_module.h"
#include "wire/frame.h"

/* One message carries at most OFI_MSG stream bytes: below the eager limit of the providers
 * that switch to their own rendezvous above it (rxm: FI_OFI_RXM_BUFFER_SIZE less its header,
 * which the component raises from 16 KiB to CSNI_OFI_RXM_BUFFER unless the user set it), since
 * that rendezvous needs the sender's progress again later, and csn's own protocol already does
 * rendezvous. 32 KiB messages instead of 16000 bytes: the provider's cost per message (a pass,
 * system calls each way) is paid half as often; bandwidth 1.33-1.66x from 64 KiB to 4 MiB,
 * latency 1.18x and 1.46x at 64 KiB and 1 MiB (BENCHMARKS.md, issue 20). 64 KiB measured
 * faster still but cost 77 MiB more memory per connection (rxm's buffer pools follow the
 * size), 32 KiB about 16. At most 256 KiB in flight per connection (8 sends; 512 KiB, 16,
 * made the testbed's both-ways known answer miss by 13 % in one run of ten) and 1 MiB of
 * posted receives (32): a control frame waits behind no more than it did. */
#define OFI_MSG CSNI_OFI_MSG_MAX
#define OFI_BUF 32768u /* a buffer */
#define OFI_NRX 32     /* receives posted per connection */
#define OFI_NTX 8      /* sends in flight per connection */
#define OFI_HS_MS 5000 /* the rest of a peer's address after its HELLO */
/* Once the peer's address is in, the socket carries nothing but its end: one read of the link
 * in this many looks at it (a system call on every read lengthened every polling turn; a
 * sleeper's epoll, level-triggered, comes back at once while the end is unread, so the end
 * is still seen within microseconds). */
#define OFI_SOCK_EVERY 64u
/* After the socket's end, what the peer sent over the fabric before dying may still come. */
#define OFI_EOF_GRACE_NS 200000000ull
#define OFI_DRAIN_NS 1000000000ull /* at exit: sends still in flight get this long */
#define OFI_HELLO_NONCE 0x6f66692d6c696e6bull /* "ofi-link" */
/* The tag of a message the provider moves itself (csni_ofi_fab_send): this bit and the
 * receiver's token. The stream's messages are tag 0. */
#define OFI_FAB_TAG (1ull << 62)
/* With this bit too: a message pushed before its receiver asked (CSNI_RTS_PUSHED), tagged
 * with the sender's token (the two sides' tokens are counted apart). */
#define OFI_PUSH_TAG (1ull << 61)
/* At most this many of the provider's own sends under way on a link when one more is pushed:
 * what the receiver's provider holds for messages it has not matched stays bounded (rxm: a
 * buffer each, and the payload below its rendezvous limit, 128 KiB). */
#define OFI_PUSH_MAX 8

/* One message the provider moves straight between the two processes' buffers. */
struct ofi_fab {
    uint8_t ctx[CSNI_OFI_CTX]; /* the provider's (first: the completion's context is &fab) */
    struct csni_ofi_fab d;     /* what the connection engine gets back */
    const void *buf;           /* a send the provider had no room for yet (!posted) */
    void *sink;                /* a receive's own memory (a message dropped, or longer than the
                                * receive), freed with it */
    void *head;                /* a receive into sink for a shorter buffer: where its head goes */
    size_t headlen;
    uint64_t tag;
    bool posted;
    struct ofi_fab *next;
};

struct ofi_buf {
    uint8_t ctx[CSNI_OFI_CTX]; /* the provider's (first: the completion's context is &buf) */
    uint8_t *data;
    size_t len, pos;
    bool done;
};

struct csni_ofi_link {
    struct csni_ofi_ep *ep;
    int rxfd, epfd;
    uint8_t *mem;
    /* reader's */
    struct ofi_buf rx[OFI_NRX];
    unsigned rx_head, rx_unposted;
    uint8_t hs[4 + CSNI_OFI_NAME_MAX]; /* the peer's answer: length (LE32) and address */
    size_t hs_got;
    bool eof;
    uint64_t eof_ns;
    bool unnamed;   /* ofi_unname done by the reader (the peer has mapped our endpoint) */
    unsigned reads; /* ofi_read's calls, for OFI_SOCK_EVERY */
    _Atomic bool have_peer;
    /* writer's */
    struct ofi_buf tx[OFI_NTX];
    int txfree[OFI_NTX], ntxfree;
    _Atomic int inflight; /* sends not yet complete (read by sleepers) */
    /* The provider's own messages (fab_lock): under way or waiting for room, and done. */
    pthread_mutex_t fab_lock;
    struct ofi_fab *fab_live, *fab_done;
    _Atomic int nfab, nfab_tx, nfab_done; /* live ones, the sends among them, done ones */
    _Atomic bool failed;                  /* csni_ofi_fail: nothing more comes */
    struct csni_ofi_link *next; /* every link, for the drain at exit */
    struct csni_conn *conn;     /* its connection (a dead one is not drained) */
};

static const struct csni_ofi_module *ofi_mod;
static bool ofi_active;
static char ofi_name[96];
static bool ofi_spin; /* CSN_OFI_SPIN=1: never sleep on the fabric, poll (as MPIs do) */
static size_t ofi_rndv_min; /* CSN_OFI_RNDV: messages the provider moves itself; 0: none */
static pthread_mutex_t ofi_list_lock = PTHREAD_MUTEX_INITIALIZER;
static struct csni_ofi_link *ofi_links;

/* ---- the component ---- */
/* Finds and loads libcsn-ofi.so: CSN_OFI_MODULE (a path) if set; else in csn/ beside the
 * object this code is in, the install directory, the build tree. 0, or -1 after one line. */
static int ofi_load(void)
{
    char path[PATH_MAX + 64];
    void *h;
    csni_ofi_module_fn fn;
    const struct csni_ofi_module *m;

    if (!csni_module_find("CSN_OFI_MODULE", CSNI_OFI_MODULE_FILE, CSN_OFI_LIBDIR,
                          CSN_OFI_LIBDIR_REL, CSN_OFI_BUILD_LIBDIR, path, sizeof path)) {
        fprintf(stderr, "csn: CSN_TRANSPORT=ofi: the libfabric component %s is not installed "
                        "(built only where libfabric-dev is; CSN_OFI_MODULE gives its path)\n",
                CSNI_OFI_MODULE_FILE);
        return -1;
    }
    if (!(h = dlopen(path, RTLD_NOW | RTLD_LOCAL))) {
        fprintf(stderr, "csn: CSN_TRANSPORT=ofi: cannot load the libfabric component (%s)\n",
                dlerror());
        return -1;
    }
    *(void **)&fn = dlsym(h, CSNI_OFI_MODULE_SYMBOL);
    m = fn ? fn() : NULL;
    if (!m || m->abi != CSNI_OFI_MODULE_ABI) {
        fprintf(stderr, "csn: CSN_TRANSPORT=ofi: %s is not a libfabric component of this libcsn\n",
                path);
        dlclose(h);
        return -1;
    }
    ofi_mod = m; /* kept loaded for the life of the process */
    return 0;
}

/* The peer has mapped what it needs of l's endpoint, or never will now: the provider's name
 * for it outside the process goes (the shm provider's /dev/shm file: see ofi_module.h). A
 * failure is said once per process; the endpoint works on. */
static void ofi_unname(struct csni_ofi_link *l)
{
    static atomic_bool said;
    int err = ofi_mod->unname(l->ep);
    if (err && !atomic_exchange(&said, true))
        fprintf(stderr, "csn: ofi: cannot remove the provider's shared-memory file (%s)\n",
                strerror(err));
}

/* At exit: what is still in flight gets a moment to leave (a process's last message must
 * reach its peer as over a socket). Then every endpoint's name outside the process goes.
 * The endpoints are not closed: other threads (the progress thread, the user's) may still be
 * in them while this runs, and the process's end frees them. */
static void ofi_drain(void)
{
    uint64_t until = csni_now_ns() + OFI_DRAIN_NS;
    pthread_mutex_lock(&ofi_list_lock);
    for (struct csni_ofi_link *l = ofi_links; l; l = l->next) {
        struct csni_ofi_done d[OFI_NTX];
        int inflight = atomic_load(&l->conn->dead) ? 0 : atomic_load(&l->inflight);
        while (inflight > 0 && csni_now_ns() < until) {
            int n = ofi_mod->poll_tx(l->ep, d, OFI_NTX);
            if (n < 0)
                break;
            inflight -= n; /* reading the queue drives the provider's progress */
        }
    }
    for (struct csni_ofi_link *l = ofi_links; l; l = l->next)
        ofi_unname(l);
    pthread_mutex_unlock(&ofi_list_lock);
}

csn_status csni_ofi_init(size_t rndv_min)
{
    char prov[64], err[256] = "";
    if (ofi_active)
        return CSN_OK;
    if (!ofi_mod && ofi_load() != 0)
        return CSN_INVALID_ARGUMENT;
    if (ofi_mod->init(prov, sizeof prov, err, sizeof err) != 0) {
        fprintf(stderr, "csn: CSN_TRANSPORT=ofi: no usable libfabric provider (%s)\n", err);
        return CSN_INVALID_ARGUMENT;
    }
    snprintf(ofi_name, sizeof ofi_name, "ofi:%s", prov);
    const char *spin = getenv("CSN_OFI_SPIN");
    ofi_spin = spin && strcmp(spin, "1") == 0;
    ofi_rndv_min = ofi_mod->direct() ? rndv_min : 0;
    if (atexit(ofi_drain) != 0)
        return CSN_SYSTEM_ERROR;
    ofi_active = true;
    return CSN_OK;
}

bool csni_ofi_on(void)
{
    return ofi_active;
}

const char *csni_ofi_name(void)
{
    return ofi_name;
}

uint64_t csni_ofi_hello_nonce(void)
{
    return ofi_active ? OFI_HELLO_NONCE : 0;
}

bool csni_ofi_hello_is_ofi(const struct csni_frame *f)
{
    return !csni_frame_hello_ring(f) && csni_frame_hello_nonce(f) == OFI_HELLO_NONCE;
}

/* ---- the link ---- */
static int ofi_tx_reclaim(struct csni_ofi_link *l);
static int ofi_repost(struct csni_ofi_link *l)
{
    while (l->rx_unposted > 0) {
        struct ofi_buf *b = &l->rx[(l->rx_head + OFI_NRX - l->rx_unposted) % OFI_NRX];
        int rc = ofi_mod->post_recv(l->ep, b->data, OFI_BUF, 0, b->ctx);
        if (rc == -EAGAIN)
            return 0;
        if (rc != 0)
            return -1;
        l->rx_unposted--;
    }
    return 0;
}

/* The socket: the peer's address (connecting side), then only its end. 0, or -1 (errno). */
static int ofi_sock(struct csni_conn *c, struct csni_ofi_link *l)
{
    uint8_t junk[16];
    while (!l->eof) {
        bool hs = !atomic_load_explicit(&l->have_peer, memory_order_relaxed);
        size_t need = 4;
        if (hs && l->hs_got >= 4) {
            uint32_t len = (uint32_t)l->hs[0] | (uint32_t)l->hs[1] << 8 |
                           (uint32_t)l->hs[2] << 16 | (uint32_t)l->hs[3] << 24;
            if (len == 0 || len > CSNI_OFI_NAME_MAX) {
                errno = EPROTO;
                return -1;
            }
            need = 4 + len;
            if (l->hs_got == need) {
                if (ofi_mod->insert(l->ep, l->hs + 4, len) != 0) {
                    errno = EPROTO;
                    return -1;
                }
                atomic_store_explicit(&l->have_peer, true, memory_order_release);
                /* The accepting side inserted (mapped) our address before it answered. */
                ofi_unname(l);
                continue;
            }
        }
        ssize_t r = hs ? recv(c->fd, l->hs + l->hs_got, need - l->hs_got, MSG_DONTWAIT)
                       : recv(c->fd, junk, sizeof junk, MSG_DONTWAIT);
        if (r > 0 && !hs) {
            errno = EPROTO; /* nothing else may come on the socket */
            return -1;
        }
        if (r > 0) {
            l->hs_got += (size_t)r;
            continue;
        }
        if (r == 0) {
            l->eof = true;
            l->eof_ns = csni_now_ns();
            break;
        }
        if (errno == EINTR)
            continue;
        return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -1;
    }
    return 0;
}

/* *pf (fab_lock held) is done: off the live list onto the done one. */
static void ofi_fab_finish(struct csni_ofi_link *l, struct ofi_fab **pf, size_t len, int err)
{
    struct ofi_fab *f = *pf;
    *pf = f->next;
    f->d.len = len;
    f->d.err = err;
    f->next = l->fab_done;
    l->fab_done = f;
    atomic_fetch_sub(&l->nfab, 1);
    if (!f->d.rx)
        atomic_fetch_sub(&l->nfab_tx, 1);
    atomic_fetch_add(&l->nfab_done, 1);
}

static bool ofi_fab_post_rx(struct csni_ofi_link *l, void *buf, size_t len, uint64_t tag,
                            uint64_t token, void *t, void *sink, void *head, size_t headlen);

/* The provider completed a message of its own (context ctx). */
static void ofi_fab_done(struct csni_ofi_link *l, void *ctx, const struct csni_ofi_done *d)
{
    uint64_t tag = 0;
    size_t len = 0;
    pthread_mutex_lock(&l->fab_lock);
    for (struct ofi_fab **pf = &l->fab_live; *pf; pf = &(*pf)->next)
        if ((void *)*pf == ctx) {
            struct ofi_fab *f = *pf;
            if (f->d.rx && f->d.t && d->err == ECANCELED && !atomic_load(&l->failed)) {
                tag = f->tag;
                len = f->d.len;
            }
            size_t got = d->len;
            if (f->head && d->err == 0) { /* the head of a longer message */
                got = got < f->headlen ? got : f->headlen;
                memcpy(f->head, f->sink, got);
            }
            ofi_fab_finish(l, pf, got, d->err);
            break;
        }
    pthread_mutex_unlock(&l->fab_lock);
    /* A withdrawn receive (its transport closed): the sender's message, whose CTS went out,
     * still comes, and would wait unmatched at our provider for ever (and its sender with
     * it). A receive into memory of our own takes it and lets the sender's transmit complete,
     * as DATA for a closed transport is read and dropped. */
    if (tag) {
        void *sink = malloc(len ? len : 1);
        if (!sink || !ofi_fab_post_rx(l, sink, len, tag, 0, NULL, sink, NULL, 0)) {
            free(sink);
            fprintf(stderr, "csn: ofi: cannot post a receive to drop a message for a closed "
                            "transport: its sender waits\n");
        }
    }
}

/* Sends the provider had no room for: tried again (completions made room). */
static void ofi_fab_retry(struct csni_ofi_link *l)
{
    if (atomic_load_explicit(&l->nfab_tx, memory_order_relaxed) == 0)
        return;
    pthread_mutex_lock(&l->fab_lock);
    struct ofi_fab **pf = &l->fab_live;
    while (*pf) {
        struct ofi_fab *f = *pf;
        if (f->posted || f->d.rx) {
            pf = &f->next;
            continue;
        }
        int rc = ofi_mod->send(l->ep, f->buf, f->d.len, f->tag, f->ctx);
        if (rc == -EAGAIN)
            break;
        if (rc != 0) {
            ofi_fab_finish(l, pf, 0, EIO);
            continue;
        }
        f->posted = true;
        pf = &f->next;
    }
    pthread_mutex_unlock(&l->fab_lock);
}

static int ofi_rx_progress(struct csni_ofi_link *l)
{
    struct csni_ofi_done d[OFI_NRX];
    int n = ofi_mod->poll_rx(l->ep, d, OFI_NRX);
    if (n < 0)
        return -1;
    for (int i = 0; i < n; i++) {
        struct ofi_buf *b = d[i].ctx;
        if (b && (b < l->rx || b >= l->rx + OFI_NRX)) {
            ofi_fab_done(l, d[i].ctx, &d[i]);
            continue;
        }
        if (d[i].err || !b)
            return -1;
        b->len = d[i].len > OFI_BUF ? OFI_BUF : d[i].len;
        b->pos = 0;
        b->done = true;
    }
    if (n > 0 && !l->unnamed) { /* the peer sent to us: it has mapped our endpoint */
        l->unnamed = true;
        ofi_unname(l);
    }
    return 0;
}

static ssize_t ofi_read(struct csni_conn *c, void *buf, size_t n)
{
    struct csni_ofi_link *l = c->ofi;
    size_t got = 0;
    if ((!atomic_load_explicit(&l->have_peer, memory_order_relaxed) ||
         ++l->reads % OFI_SOCK_EVERY == 0) &&
        ofi_sock(c, l) != 0)
        return -1;
    if (ofi_rx_progress(l) != 0) {
        errno = EIO;
        return -1;
    }
    /* The completions of the provider's own sends are the writer's queue's: taken here when
     * the writer is not at work, so that a waiting sender learns of them. */
    if (atomic_load_explicit(&l->nfab_tx, memory_order_relaxed) > 0 && csni_trylock(&c->tx_lock)) {
        int rc = ofi_tx_reclaim(l);
        csni_unlock(&c->tx_lock);
        if (rc != 0)
            return -1;
    }
    while (got < n) {
        struct ofi_buf *b = &l->rx[l->rx_head];
        if (!b->done)
            break;
        size_t m = b->len - b->pos < n - got ? b->len - b->pos : n - got;
        memcpy((uint8_t *)buf + got, b->data + b->pos, m);
        got += m;
        b->pos += m;
        if (b->pos == b->len) {
            b->done = false;
            l->rx_head = (l->rx_head + 1) % OFI_NRX;
            l->rx_unposted++;
        }
    }
    if (ofi_repost(l) != 0) {
        errno = EIO;
        return -1;
    }
    if (got)
        return (ssize_t)got;
    if (l->eof && csni_now_ns() - l->eof_ns > OFI_EOF_GRACE_NS)
        return 0;
    errno = EAGAIN;
    return -1;
}

/* Sends that completed: their buffers back to the free list. 0, or -1 (errno). */
static int ofi_tx_reclaim(struct csni_ofi_link *l)
{
    struct csni_ofi_done d[OFI_NTX];
    int n = ofi_mod->poll_tx(l->ep, d, OFI_NTX);
    if (n < 0) {
        errno = EIO;
        return -1;
    }
    for (int k = 0; k < n; k++) {
        struct ofi_buf *b = d[k].ctx;
        if (b && (b < l->tx || b >= l->tx + OFI_NTX)) {
            ofi_fab_done(l, d[k].ctx, &d[k]);
            continue;
        }
        if (d[k].err || !b || l->ntxfree >= OFI_NTX) {
            errno = EIO;
            return -1;
        }
        l->txfree[l->ntxfree++] = (int)(b - l->tx);
    }
    atomic_store_explicit(&l->inflight, OFI_NTX - l->ntxfree, memory_order_relaxed);
    ofi_fab_retry(l);
    return 0;
}

static ssize_t ofi_writev(struct csni_conn *c, const struct iovec *iov, int niov)
{
    struct csni_ofi_link *l = c->ofi;
    size_t total = 0, off = 0;
    int i = 0;
    if (!atomic_load_explicit(&l->have_peer, memory_order_acquire)) {
        errno = EAGAIN; /* the peer's answer has not come yet */
        return -1;
    }
    /* Completed sends are taken back only when no buffer is free (or by a thread about to
     * sleep, csni_ofi_arm): each look at the send queue is a pass of the provider's
     * progress, and there were two on every send (BENCHMARKS.md, issue 20). */
    if (l->ntxfree == 0 && ofi_tx_reclaim(l) != 0)
        return -1;
    while (i < niov && l->ntxfree > 0) {
        struct ofi_buf *b = &l->tx[l->txfree[l->ntxfree - 1]];
        size_t len = 0, o = off;
        int j = i;
        while (j < niov && len < OFI_MSG) {
            size_t m = iov[j].iov_len - o < OFI_MSG - len ? iov[j].iov_len - o : OFI_MSG - len;
            memcpy(b->data + len, (const uint8_t *)iov[j].iov_base + o, m);
            len += m;
            o += m;
            if (o == iov[j].iov_len) {
                j++;
                o = 0;
            }
        }
        if (len == 0)
            break;
        int rc = ofi_mod->send(l->ep, b->data, len, 0, b->ctx);
        if (rc == -EAGAIN)
            break;
        if (rc != 0) {
            errno = EIO;
            return -1;
        }
        l->ntxfree--;
        atomic_store_explicit(&l->inflight, OFI_NTX - l->ntxfree, memory_order_relaxed);
        total += len;
        i = j;
        off = o;
    }
    if (total == 0) {
        errno = EAGAIN;
        return -1;
    }
    /* The provider sends what it can at once (rxm over tcp: in fi_tsend); the rest moves at
     * the next pass of its progress, which every poll makes (the receive queue's read), and
     * no thread sleeps while sends are in flight (csni_ofi_arm). */
    return (ssize_t)total;
}

static const struct csni_link_ops ofi_link_ops = {.read = ofi_read, .writev = ofi_writev};

static void ofi_free(struct csni_ofi_link *l)
{
    if (l->rxfd >= 0)
        (void)epoll_ctl(l->epfd, EPOLL_CTL_DEL, l->rxfd, NULL); /* fails if never added */
    ofi_mod->close(l->ep);
    free(l->mem);
    free(l);
}

/* A new link: endpoint open, receives posted, its descriptor in the epoll set (for c).
 * name/namelen: its address. NULL after one line on stderr. */
static struct csni_ofi_link *ofi_open(struct csni_conn *c, uint8_t *name, size_t *namelen)
{
    char err[256] = "";
    struct csni_ofi_link *l = calloc(1, sizeof *l);
    if (!l)
        return NULL;
    l->rxfd = -1;
    l->epfd = c->p->epfd;
    pthread_mutex_init(&l->fab_lock, NULL);
    if (!(l->mem = malloc((size_t)(OFI_NRX + OFI_NTX) * OFI_BUF)))
        goto fail;
    for (int i = 0; i < OFI_NRX; i++)
        l->rx[i].data = l->mem + (size_t)i * OFI_BUF;
    for (int i = 0; i < OFI_NTX; i++) {
        l->tx[i].data = l->mem + (size_t)(OFI_NRX + i) * OFI_BUF;
        l->txfree[l->ntxfree++] = i;
    }
    if (ofi_mod->open(&l->ep, l->mem, (size_t)(OFI_NRX + OFI_NTX) * OFI_BUF, name, namelen,
                      ofi_spin, &l->rxfd, err, sizeof err) != 0) {
        fprintf(stderr, "csn[%d]: ofi: cannot open an endpoint (%s)\n", c->p->me, err);
        goto fail;
    }
    l->rx_unposted = OFI_NRX;
    if (ofi_repost(l) != 0 || l->rx_unposted != 0) {
        fprintf(stderr, "csn[%d]: ofi: cannot post receives\n", c->p->me);
        goto fail;
    }
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = c};
    if (l->rxfd >= 0 && epoll_ctl(l->epfd, EPOLL_CTL_ADD, l->rxfd, &ev) != 0) {
        l->rxfd = -1;
        goto fail;
    }
    return l;
fail:
    if (l->ep)
        ofi_free(l);
    else {
        free(l->mem);
        free(l);
    }
    return NULL;
}

/* Publishes l as c's link (writer lock: the writer reads c->link). */
static void ofi_attach(struct csni_conn *c, struct csni_ofi_link *l)
{
    l->conn = c;
    pthread_mutex_lock(&ofi_list_lock);
    l->next = ofi_links;
    ofi_links = l;
    pthread_mutex_unlock(&ofi_list_lock);
    csni_lock(&c->tx_lock);
    c->ofi = l;
    c->link = &ofi_link_ops;
    csni_unlock(&c->tx_lock);
}

/* Writes all of buf on the (non-blocking) socket within OFI_HS_MS. */
static int ofi_send_all(int fd, const uint8_t *buf, size_t n)
{
    size_t off = 0;
    while (off < n) {
        ssize_t w = send(fd, buf + off, n - off, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (w > 0) {
            off += (size_t)w;
            continue;
        }
        if (w < 0 && errno == EINTR)
            continue;
        struct pollfd pf = {.fd = fd, .events = POLLOUT};
        if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) && poll(&pf, 1, OFI_HS_MS) > 0)
            continue;
        return -1;
    }
    return 0;
}

static void ofi_put_len(uint8_t *out, size_t len)
{
    for (int i = 0; i < 4; i++)
        out[i] = (uint8_t)(len >> (8 * i));
}

int csni_ofi_connect(struct csni_conn *c)
{
    uint8_t msg[4 + CSNI_OFI_NAME_MAX];
    size_t len = CSNI_OFI_NAME_MAX;
    struct csni_ofi_link *l = ofi_open(c, msg + 4, &len);
    if (!l)
        return -1;
    ofi_put_len(msg, len);
    if (ofi_send_all(c->fd, msg, 4 + len) != 0) {
        ofi_free(l);
        return -1;
    }
    ofi_attach(c, l);
    return 0;
}

int csni_ofi_accept(struct csni_conn *c, const char **why)
{
    uint8_t in[4 + CSNI_OFI_NAME_MAX], out[4 + CSNI_OFI_NAME_MAX];
    size_t got = 0, need = 4, len = CSNI_OFI_NAME_MAX;
    uint64_t until = csni_now_ns() + (uint64_t)OFI_HS_MS * 1000000u;
    *why = "no fabric address after the hello";
    while (got < need) {
        if (c->rpos < c->rend) { /* what came with the HELLO first */
            size_t m = c->rend - c->rpos < need - got ? c->rend - c->rpos : need - got;
            memcpy(in + got, c->rbuf + c->rpos, m);
            c->rpos += m;
            got += m;
        } else {
            ssize_t r = recv(c->fd, in + got, need - got, MSG_DONTWAIT);
            if (r > 0) {
                got += (size_t)r;
            } else if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
                struct pollfd pf = {.fd = c->fd, .events = POLLIN};
                uint64_t now = csni_now_ns();
                if (now >= until || poll(&pf, 1, (int)((until - now) / 1000000u) + 1) < 0)
                    return -1;
            } else {
                return -1;
            }
        }
        if (got == 4 && need == 4) {
            size_t alen = (size_t)in[0] | (size_t)in[1] << 8 | (size_t)in[2] << 16 |
                          (size_t)in[3] << 24;
            if (alen == 0 || alen > CSNI_OFI_NAME_MAX) {
                *why = "bad fabric address after the hello";
                return -1;
            }
            need = 4 + alen;
        }
    }
    if (c->rpos != c->rend) {
        *why = "bytes after the fabric address on the socket";
        return -1;
    }
    c->rpos = c->rend = 0;
    *why = "cannot open a fabric endpoint for the connection";
    struct csni_ofi_link *l = ofi_open(c, out + 4, &len);
    if (!l)
        return -1;
    if (ofi_mod->insert(l->ep, in + 4, need - 4) != 0) {
        *why = "the peer's fabric address is not usable";
        ofi_free(l);
        return -1;
    }
    atomic_store(&l->have_peer, true);
    ofi_put_len(out, len);
    if (ofi_send_all(c->fd, out, 4 + len) != 0) {
        *why = "cannot send the fabric address";
        ofi_free(l);
        return -1;
    }
    ofi_attach(c, l);
    return 0;
}

void csni_ofi_fail(struct csni_conn *c)
{
    struct csni_ofi_link *l = c->ofi;
    if (!l)
        return;
    if (l->rxfd >= 0)
        (void)epoll_ctl(l->epfd, EPOLL_CTL_DEL, l->rxfd, NULL); /* the endpoint stays till exit */
    /* No peer will map the endpoint now. */
    ofi_unname(l);
    /* Nothing more comes from the peer: receives into the user's memory are withdrawn (and
     * nothing is posted to take what will not come). */
    atomic_store(&l->failed, true);
    csni_ofi_fab_cancel(c, NULL);
}

void csni_ofi_drop(struct csni_conn *c)
{
    struct csni_ofi_link *l = c->ofi;
    if (!l)
        return;
    pthread_mutex_lock(&ofi_list_lock);
    for (struct csni_ofi_link **pl = &ofi_links; *pl; pl = &(*pl)->next)
        if (*pl == l) {
            *pl = l->next;
            break;
        }
    pthread_mutex_unlock(&ofi_list_lock);
    c->ofi = NULL;
    ofi_free(l);
}

int csni_ofi_arm(struct csni_conn *c)
{
    struct csni_ofi_link *l = c->ofi;
    if (!l || l->eof || !atomic_load_explicit(&l->have_peer, memory_order_acquire))
        return 0; /* the socket wakes */
    /* Sends in flight may need our progress to leave (manual progress): poll, do not sleep.
     * Their completions are the writer's: taken back here when it is not at work. */
    if (atomic_load_explicit(&l->inflight, memory_order_relaxed) > 0 && csni_trylock(&c->tx_lock)) {
        int rc = ofi_tx_reclaim(l);
        csni_unlock(&c->tx_lock);
        if (rc != 0)
            return 1; /* the writer meets the error on its next write */
    }
    /* The provider's own messages need our progress on both sides (its rendezvous): poll. */
    if (ofi_spin || l->rx[l->rx_head].done || l->rx_unposted > 0 || l->rxfd < 0 ||
        atomic_load_explicit(&l->inflight, memory_order_relaxed) > 0 ||
        atomic_load_explicit(&l->nfab, memory_order_relaxed) > 0 ||
        atomic_load_explicit(&l->nfab_done, memory_order_relaxed) > 0)
        return 1;
    return ofi_mod->trywait(l->ep);
}

/* ---- messages the provider moves itself ---- */
size_t csni_ofi_rndv_min(void)
{
    return ofi_rndv_min;
}

/* A new record, live (fab_lock taken here); NULL when out of memory. */
static struct ofi_fab *ofi_fab_new(struct csni_ofi_link *l, bool rx, uint64_t token, void *t,
                                   const void *buf, size_t len, uint64_t tag)
{
    struct ofi_fab *f = calloc(1, sizeof *f);
    if (!f)
        return NULL;
    f->d = (struct csni_ofi_fab){.rx = rx, .token = token, .t = t, .len = len};
    f->buf = buf;
    f->tag = tag;
    pthread_mutex_lock(&l->fab_lock);
    f->next = l->fab_live;
    l->fab_live = f;
    atomic_fetch_add(&l->nfab, 1);
    if (!rx)
        atomic_fetch_add(&l->nfab_tx, 1);
    return f;
}

bool csni_ofi_fab_recv(struct csni_conn *c, void *buf, size_t len, uint64_t token, void *t)
{
    return ofi_fab_post_rx(c->ofi, buf, len, OFI_FAB_TAG | token, token, t, NULL, NULL, 0);
}

static bool ofi_fab_post_rx(struct csni_ofi_link *l, void *buf, size_t len, uint64_t tag,
                            uint64_t token, void *t, void *sink, void *head, size_t headlen)
{
    struct ofi_fab *f = ofi_fab_new(l, true, token, t, NULL, len, tag);
    if (!f)
        return false;
    /* Posted under fab_lock: its completion cannot be looked for before it is listed. */
    int rc = ofi_mod->post_recv(l->ep, buf, len, f->tag, f->ctx);
    f->posted = rc == 0;
    f->sink = rc == 0 ? sink : NULL;
    f->head = head;
    f->headlen = headlen;
    if (rc != 0) {
        l->fab_live = f->next;
        atomic_fetch_sub(&l->nfab, 1);
    }
    pthread_mutex_unlock(&l->fab_lock);
    if (rc != 0)
        free(f);
    return rc == 0;
}

/* A receive of the message pushed with stoken, msglen bytes: into buf when it has room for
 * all of them, else into memory of the link's own whose first room bytes go to buf at its
 * completion (a provider need not handle a receive shorter than its message: the shm
 * provider of libfabric 1.17 spun for ever in fi_trecv on one), or dropped when buf is NULL.
 * Some providers cut a longer message off cleanly; none is relied on to. */
bool csni_ofi_fab_recv_pushed(struct csni_conn *c, void *buf, size_t room, size_t msglen,
                              uint64_t stoken, uint64_t token, void *t)
{
    uint64_t tag = OFI_FAB_TAG | OFI_PUSH_TAG | stoken;
    if (buf && room >= msglen)
        return ofi_fab_post_rx(c->ofi, buf, msglen, tag, token, t, NULL, NULL, 0);
    void *sink = malloc(msglen ? msglen : 1);
    if (!sink)
        return false;
    if (!ofi_fab_post_rx(c->ofi, sink, msglen, tag, token, t, sink, buf, room)) {
        free(sink);
        return false;
    }
    return true;
}

bool csni_ofi_fab_drop(struct csni_conn *c, size_t msglen, uint64_t stoken)
{
    return csni_ofi_fab_recv_pushed(c, NULL, 0, msglen, stoken, 0, NULL);
}

bool csni_ofi_fab_push(struct csni_conn *c, const void *buf, size_t len, uint64_t token, void *t)
{
    struct csni_ofi_link *l = c->ofi;
    if (!l || !atomic_load_explicit(&l->have_peer, memory_order_acquire) || atomic_load(&l->failed) ||
        atomic_load_explicit(&l->nfab_tx, memory_order_relaxed) >= OFI_PUSH_MAX)
        return false;
    return csni_ofi_fab_send(c, buf, len, OFI_PUSH_TAG | token, token, t);
}

bool csni_ofi_fab_send(struct csni_conn *c, const void *buf, size_t len, uint64_t rtoken,
                       uint64_t token, void *t)
{
    struct csni_ofi_link *l = c->ofi;
    struct ofi_fab *f = ofi_fab_new(l, false, token, t, buf, len, OFI_FAB_TAG | rtoken);
    if (!f)
        return false;
    int rc = ofi_mod->send(l->ep, buf, len, f->tag, f->ctx);
    f->posted = rc == 0; /* -EAGAIN: sent by ofi_fab_retry once the provider has room */
    if (rc != 0 && rc != -EAGAIN)
        ofi_fab_finish(l, &l->fab_live, 0, EIO); /* f is the list's head */
    pthread_mutex_unlock(&l->fab_lock);
    return true;
}

int csni_ofi_fab_take(struct csni_conn *c, struct csni_ofi_fab *out, int n)
{
    struct csni_ofi_link *l = c->ofi;
    int got = 0;
    if (!l || atomic_load_explicit(&l->nfab_done, memory_order_relaxed) == 0)
        return 0;
    pthread_mutex_lock(&l->fab_lock);
    while (got < n && l->fab_done) {
        struct ofi_fab *f = l->fab_done;
        l->fab_done = f->next;
        out[got++] = f->d;
        free(f->sink);
        free(f);
    }
    atomic_fetch_sub(&l->nfab_done, got);
    pthread_mutex_unlock(&l->fab_lock);
    return got;
}

void csni_ofi_fab_cancel(struct csni_conn *c, const void *t)
{
    struct csni_ofi_link *l = c->ofi;
    if (!l || atomic_load_explicit(&l->nfab, memory_order_relaxed) == 0)
        return;
    pthread_mutex_lock(&l->fab_lock);
    for (struct ofi_fab *f = l->fab_live; f; f = f->next)
        if (f->d.rx && (!t || f->d.t == t))
            ofi_mod->cancel(l->ep, f->ctx);
    pthread_mutex_unlock(&l->fab_lock);
}

bool csni_ofi_fab_busy(struct csni_conn *c, const void *t)
{
    struct csni_ofi_link *l = c->ofi;
    bool busy = false;
    /* A failed connection's provider moves nothing more for it: no wait for its messages. */
    if (!l || atomic_load(&l->failed) || atomic_load_explicit(&l->nfab, memory_order_relaxed) == 0)
        return false;
    /* Reading the queues drives the provider (an error fails the connection on its next read). */
    (void)ofi_rx_progress(l);
    csni_lock(&c->tx_lock);
    (void)ofi_tx_reclaim(l);
    csni_unlock(&c->tx_lock);
    pthread_mutex_lock(&l->fab_lock);
    for (struct ofi_fab *f = l->fab_live; f && !busy; f = f->next)
        busy = f->d.t == t;
    pthread_mutex_unlock(&l->fab_lock);
    return busy;
}
