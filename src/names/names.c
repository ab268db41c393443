/* names.c: the name-service client (one connection, kept between requests), the lone process's
 * in-process table, and the key-value store over PMIx for PMIx-launched jobs. */
#include "names/names.h"
#include "boot/pmix.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

/* A reply may come this long after the server's own timeout (scheduling, a busy launcher);
 * beyond it the server is taken as lost and the call fails instead of hanging. */
#define NAMES_MARGIN_MS 10000u
/* How long a request that does not wait is sent again when the server closed it unread (a
 * flood of strangers, or a thousand ranks of one host starting at once, evicted it before
 * its key was read): the server is alive and busy, so the member waits rather than fails.
 * The margin, and NAMES_RETRY_PER_RANK_MS more per rank of the job: the server's load at
 * start-up grows with the ranks that start at once (1024 ranks on 2 CPUs: 51 s). */
#define NAMES_RETRY_PER_RANK_MS 40u
/* Longer waits are capped here so that deadline arithmetic never overflows (~35 years). */
#define NAMES_WAIT_CAP_MS ((uint64_t)1 << 40)
#define NAMES_KV_MAX 1023
#define NAMES_LINE_MAX 4096
#define NAMES_DUMP_MAX ((64u << 20) + 64) /* largest DUMP reply (nsserv.c: NS_DUMP_MAX) */

enum names_mode { NAMES_LONE, NAMES_REMOTE };

/* Written by csni_names_init before any other call can run (the core calls it once, at the
 * first csn_open); read afterwards. names_mode is read under names_lock, which orders the
 * reads of the rest after the writes. */
static pthread_mutex_t names_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t names_once = PTHREAD_ONCE_INIT;
static pthread_cond_t names_cond; /* lone mode: a name or key was added */
static enum names_mode names_mode = NAMES_LONE;
static struct sockaddr_storage names_addr;
static socklen_t names_addrlen;
static char names_key[33];
static uint64_t names_retry_ms = NAMES_MARGIN_MS; /* set at init from the job's size */
#ifdef CSN_HAVE_PMIX
/* Booted by PMIx (ns "pmix+tcp:..."): names go to rank 0's service, keys through PMIx. */
static int names_pmix;
#endif

/* The lone process's tables (under names_lock). Small: linear search is enough. */
struct names_entry {
    char *name;
    csn_netid id;
};
struct names_kv {
    char *key;
    char *value;
};
static void names_drop_kept(void);

static struct names_entry *names_tab;
static size_t names_count, names_cap;
static struct names_kv *names_kvtab;
static size_t names_kvcount, names_kvcap;

int csni_name_valid(const char *name)
{
    size_t n;

    if (name == NULL)
        return 0;
    for (n = 0; name[n] != '\0'; n++) {
        if (n >= 255 || (unsigned char)name[n] < 0x20 || (unsigned char)name[n] > 0x7e)
            return 0;
    }
    return n > 0;
}

/* Keys and values: 1..1023 bytes, no spaces or control characters. */
static int names_word_valid(const char *s)
{
    size_t n;

    if (s == NULL)
        return 0;
    for (n = 0; s[n] != '\0'; n++) {
        if (n >= NAMES_KV_MAX || (unsigned char)s[n] <= 0x20 || (unsigned char)s[n] > 0x7e)
            return 0;
    }
    return n > 0;
}

static uint64_t names_now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static void names_once_init(void)
{
    pthread_condattr_t a;

    pthread_condattr_init(&a);
    pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
    pthread_cond_init(&names_cond, &a);
    pthread_condattr_destroy(&a);
}

/* Takes names_lock and returns the mode; the caller unlocks. Calls before csni_names_init
 * see a lone process. */
static enum names_mode names_enter(void)
{
    pthread_once(&names_once, names_once_init);
    pthread_mutex_lock(&names_lock);
    return names_mode;
}

/* Fills names_addr from "unix:/path" or "tcp:HOST:PORT" (HOST may be "[v6]"). */
static csn_status names_parse_address(const char *ns)
{
    if (strncmp(ns, "unix:", 5) == 0) {
        struct sockaddr_un *un = (struct sockaddr_un *)&names_addr;
        size_t n = strlen(ns + 5);

        if (n == 0 || n >= sizeof un->sun_path)
            return CSN_INVALID_ARGUMENT;
        memset(un, 0, sizeof *un);
        un->sun_family = AF_UNIX;
        memcpy(un->sun_path, ns + 5, n);
        names_addrlen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n + 1);
        return CSN_OK;
    }
    if (strncmp(ns, "tcp:", 4) == 0) {
        char host[256];
        const char *h = ns + 4, *colon = strrchr(h, ':');
        struct addrinfo hints, *res = NULL;
        size_t hl;

        if (colon == NULL || colon == h || colon[1] == '\0')
            return CSN_INVALID_ARGUMENT;
        hl = (size_t)(colon - h);
        if (h[0] == '[' && hl >= 2 && h[hl - 1] == ']') {
            h++;
            hl -= 2;
        }
        if (hl == 0 || hl >= sizeof host)
            return CSN_INVALID_ARGUMENT;
        memcpy(host, h, hl);
        host[hl] = '\0';
        memset(&hints, 0, sizeof hints);
        hints.ai_family = AF_UNSPEC;
        hints.ai_socktype = SOCK_STREAM;
        hints.ai_flags = AI_NUMERICSERV;
        if (getaddrinfo(host, colon + 1, &hints, &res) != 0 || res == NULL) {
            fprintf(stderr, "csn: cannot resolve the name service address %s\n", ns);
            return CSN_SYSTEM_ERROR;
        }
        memcpy(&names_addr, res->ai_addr, res->ai_addrlen);
        names_addrlen = res->ai_addrlen;
        freeaddrinfo(res);
        return CSN_OK;
    }
    return CSN_INVALID_ARGUMENT;
}

csn_status csni_names_init(const struct csni_boot *b)
{
    csn_status st = CSN_OK;

    if (b == NULL)
        return CSN_INVALID_ARGUMENT;
    pthread_once(&names_once, names_once_init);
    pthread_mutex_lock(&names_lock);
    names_mode = NAMES_LONE;
    names_drop_kept();
#ifdef CSN_HAVE_PMIX
    names_pmix = b->launched && strncmp(b->ns, "pmix+", 5) == 0;
#endif
    if (b->launched && b->ns[0] != '\0') {
        st = names_parse_address(strncmp(b->ns, "pmix+", 5) == 0 ? b->ns + 5 : b->ns);
        if (st == CSN_OK) {
            memcpy(names_key, b->jobkey, sizeof names_key);
            names_key[32] = '\0';
            names_retry_ms = NAMES_MARGIN_MS + (uint64_t)(b->size > 0 ? b->size : 1) *
                                                   NAMES_RETRY_PER_RANK_MS;
            names_mode = NAMES_REMOTE;
        }
    }
    pthread_mutex_unlock(&names_lock);
    return st;
}

void csni_names_fini(void)
{
    size_t i;

    pthread_mutex_lock(&names_lock);
    for (i = 0; i < names_count; i++)
        free(names_tab[i].name);
    for (i = 0; i < names_kvcount; i++) {
        free(names_kvtab[i].key);
        free(names_kvtab[i].value);
    }
    free(names_tab);
    free(names_kvtab);
    names_tab = NULL;
    names_kvtab = NULL;
    names_count = names_cap = names_kvcount = names_kvcap = 0;
    names_mode = NAMES_LONE;
    names_drop_kept();
    pthread_mutex_unlock(&names_lock);
}

/* ---- remote: requests over one kept connection ---- */

/* The process's connection to the service, kept between requests (under names_lock): taken by
 * one request at a time; a request that finds it taken (another thread's lookup is parked on
 * it) opens its own, and whichever finishes first when none is kept is kept. A forked child
 * shares the parent's socket and must not use it: it is only reused by the process that made
 * it. */
static int names_kept_fd = -1;
static pid_t names_kept_pid;

/* The kept connection, or -1. */
static int names_take(void)
{
    int fd;

    pthread_mutex_lock(&names_lock);
    fd = names_kept_fd;
    names_kept_fd = -1;
    if (fd >= 0 && names_kept_pid != getpid()) {
        close(fd);
        fd = -1;
    }
    pthread_mutex_unlock(&names_lock);
    return fd;
}

struct names_rbuf;
static bool names_rb_exact(const struct names_rbuf *rb);

/* Keeps fd for the next request, or closes it: kept only when its last reply was read whole
 * and nothing beyond it came (more would be taken for the next reply). */
static void names_keep(int fd, const struct names_rbuf *rb)
{
    pthread_mutex_lock(&names_lock);
    if (names_kept_fd < 0 && names_mode == NAMES_REMOTE && names_rb_exact(rb)) {
        names_kept_fd = fd;
        names_kept_pid = getpid();
        fd = -1;
    }
    pthread_mutex_unlock(&names_lock);
    if (fd >= 0)
        close(fd);
}

/* Closes the kept connection (names_lock held). */
static void names_drop_kept(void)
{
    if (names_kept_fd >= 0)
        close(names_kept_fd);
    names_kept_fd = -1;
}

/* Waits for ev on fd until the deadline; 0 when ready, -1 with errno (ETIMEDOUT) otherwise. */
static int names_wait(int fd, short ev, uint64_t deadline)
{
    for (;;) {
        struct pollfd p = {.fd = fd, .events = ev};
        uint64_t now = names_now_ms();
        int r;

        if (now >= deadline) {
            errno = ETIMEDOUT;
            return -1;
        }
        r = poll(&p, 1, (int)(deadline - now > 1000000 ? 1000000 : deadline - now));
        if (r > 0)
            return 0;
        if (r < 0 && errno != EINTR)
            return -1;
    }
}

static int names_connect(uint64_t deadline)
{
    int fd, err;
    socklen_t el = sizeof err;

    for (;;) {
        fd = socket(names_addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0)
            return -1;
        if (connect(fd, (struct sockaddr *)&names_addr, names_addrlen) == 0)
            break;
        if (errno == EINPROGRESS) {
            if (names_wait(fd, POLLOUT, deadline) != 0)
                goto fail;
            if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el) != 0)
                goto fail;
            if (err == 0)
                break;
            errno = err;
            goto fail;
        }
        /* A full Unix-socket backlog says EAGAIN: the server is busy, not gone. */
        if (errno != EAGAIN && errno != EINTR)
            goto fail;
        close(fd);
        if (names_now_ms() >= deadline) {
            errno = ETIMEDOUT;
            return -1;
        }
        nanosleep(&(struct timespec){.tv_nsec = 2000000}, NULL);
    }
    if (names_addr.ss_family != AF_UNIX) {
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    }
    return fd;
fail:
    err = errno;
    close(fd);
    errno = err;
    return -1;
}

/* Where a reply is read: the caller's buffer for a one-line reply (cap fixed), or a growing
 * allocation up to max for a DUMP ("OK <n>" and n lines). The first line's '\n' becomes '\0'. */
struct names_rbuf {
    char *p;
    size_t len, cap, max;
    bool dump;
    size_t body;              /* just after the first line (0 until it is in); a DUMP's lines */
    size_t scan;              /* DUMP: bytes of the body counted so far */
    unsigned long want, have; /* DUMP: lines announced, and counted */
};

/* Whether the reply read is exactly the reply: no byte after it. */
static bool names_rb_exact(const struct names_rbuf *rb)
{
    return rb->len == (rb->want > 0 ? rb->scan : rb->body);
}

/* 1 when the whole reply is in rb, 0 when more is to come, -1 (errno) when it cannot be. */
static int names_complete(struct names_rbuf *rb)
{
    if (rb->body == 0) {
        char *nl = memchr(rb->p, '\n', rb->len), *end;

        if (nl == NULL)
            return 0;
        *nl = '\0';
        rb->body = (size_t)(nl + 1 - rb->p);
        rb->scan = rb->body;
        if (!rb->dump || strncmp(rb->p, "OK ", 3) != 0)
            return 1;
        errno = 0;
        rb->want = strtoul(rb->p + 3, &end, 10);
        if (errno != 0 || *end != '\0' || end == rb->p + 3) {
            errno = EPROTO;
            return -1;
        }
    }
    while (rb->have < rb->want) {
        char *nl = memchr(rb->p + rb->scan, '\n', rb->len - rb->scan);
        if (nl == NULL) {
            rb->scan = rb->len;
            return 0;
        }
        rb->scan = (size_t)(nl + 1 - rb->p);
        rb->have++;
    }
    return 1;
}

/* One exchange on fd: sends out[0..len), reads the whole reply into rb. -1 with errno; *again
 * when the server closed before answering (it evicted a connection whose key it had not read,
 * or closed a kept one that was idle): the request was not carried out, worth sending again. */
static int names_exchange(int fd, const char *out, size_t len, uint64_t deadline,
                          struct names_rbuf *rb, int *again)
{
    size_t off = 0;
    int done = 0;

    *again = 0;
    rb->len = rb->body = rb->scan = 0;
    rb->want = rb->have = 0;
    while (off < len) {
        ssize_t w = send(fd, out + off, len - off, MSG_NOSIGNAL);
        if (w > 0) {
            off += (size_t)w;
        } else if (w < 0 && errno == EINTR) {
            continue;
        } else if (w < 0 && errno == EAGAIN) {
            if (names_wait(fd, POLLOUT, deadline) != 0)
                return -1;
        } else {
            *again = errno == EPIPE || errno == ECONNRESET;
            return -1;
        }
    }
    while (!done) {
        ssize_t r;

        if (rb->len + 1 >= rb->cap) {
            size_t nc = rb->cap * 2;
            char *np;
            if (!rb->dump || rb->cap >= rb->max || (np = realloc(rb->p, nc)) == NULL) {
                errno = EPROTO;
                return -1;
            }
            rb->p = np;
            rb->cap = nc;
        }
        r = recv(fd, rb->p + rb->len, rb->cap - 1 - rb->len, 0);
        if (r > 0) {
            rb->len += (size_t)r;
            rb->p[rb->len] = '\0';
            if ((done = names_complete(rb)) < 0)
                return -1;
            if (done && strcmp(rb->p, "DENIED") == 0) {
                errno = EACCES; /* a wrong job key: no retry */
                return -1;
            }
        } else if (r == 0 || errno == ECONNRESET) {
            /* Closed without an answer: evicted before our key was read or while idle
             * (retry), a wrong job key whose DENIED did not fit, or the launcher went away
             * (then the next connect fails). */
            *again = rb->len == 0;
            errno = ECONNRESET;
            return -1;
        } else if (errno == EAGAIN) {
            if (names_wait(fd, POLLIN, deadline) != 0)
                return -1;
        } else if (errno != EINTR) {
            return -1;
        }
    }
    return 0;
}

/* One attempt: on the kept connection (out without its first keylen bytes, the key line,
 * which that connection sent when it was made), else, or when the server had closed that one,
 * on a new connection. -1 with errno and *again as names_exchange. */
static int names_request_once(const char *out, size_t len, size_t keylen, uint64_t deadline,
                              struct names_rbuf *rb, int *again)
{
    int fd = names_take(), err;

    *again = 0;
    if (fd >= 0) {
        if (names_exchange(fd, out + keylen, len - keylen, deadline, rb, again) == 0) {
            names_keep(fd, rb);
            return 0;
        }
        err = errno;
        close(fd);
        if (!*again) {
            errno = err;
            return -1;
        }
    }
    if ((fd = names_connect(deadline)) < 0)
        return -1;
    if (names_exchange(fd, out, len, deadline, rb, again) == 0) {
        names_keep(fd, rb);
        return 0;
    }
    err = errno;
    close(fd);
    errno = err;
    return -1;
}

/* Sends req (which ends in '\n'; first the job key on a new connection) and reads the reply
 * into rb. The server may take wait_ms to answer (a parked lookup). */
static csn_status names_request_rb(const char *req, uint64_t wait_ms, struct names_rbuf *rb)
{
    char out[NAMES_LINE_MAX + 64];
    uint64_t deadline, give_up, pause_ms = 5;
    int n, again;
    size_t keylen = 4 + 32 + 1;

    if (wait_ms > NAMES_WAIT_CAP_MS)
        wait_ms = NAMES_WAIT_CAP_MS;
    deadline = names_now_ms() + wait_ms + NAMES_MARGIN_MS;
    /* A request that waits (a lookup) keeps its caller's limit; one that does not (a
     * registration, a put) may be retried for names_retry_ms. */
    give_up = wait_ms == 0 ? deadline - NAMES_MARGIN_MS + names_retry_ms : deadline;
    n = snprintf(out, sizeof out, "KEY %s\n%s", names_key, req);
    if (n < 0 || (size_t)n >= sizeof out || strlen(names_key) != 32)
        return CSN_INVALID_ARGUMENT;
    /* A request the server never read is sent again, after a growing pause, until the
     * deadline: a flood of strangers may push a member's connection out before its key is
     * read, which must delay the member, not fail it. */
    while (names_request_once(out, (size_t)n, keylen, deadline, rb, &again) != 0) {
        int err = errno;
        uint64_t now = names_now_ms();
        if (!again || now + pause_ms >= give_up) {
            errno = err;
            return CSN_SYSTEM_ERROR;
        }
        usleep((useconds_t)(pause_ms * 1000));
        if (pause_ms < 200)
            pause_ms *= 2;
        /* Each attempt has the whole margin again, within the retries' budget. */
        now = names_now_ms();
        deadline = now + wait_ms + NAMES_MARGIN_MS;
        if (deadline > give_up)
            deadline = give_up;
    }
    return CSN_OK;
}

/* A request with a one-line reply, read into reply[0..cap) without its '\n'. */
static csn_status names_request(const char *req, uint64_t wait_ms, char *reply, size_t cap)
{
    struct names_rbuf rb = {.p = reply, .cap = cap, .max = cap};

    return names_request_rb(req, wait_ms, &rb);
}

/* Maps a reply that is neither of the expected ones. */
static csn_status names_bad_reply(void)
{
    errno = EPROTO;
    return CSN_SYSTEM_ERROR;
}

/* ---- lone process: the in-process table (names_lock held) ---- */

static struct names_entry *names_find(const char *name)
{
    size_t i;

    for (i = 0; i < names_count; i++) {
        if (strcmp(names_tab[i].name, name) == 0)
            return &names_tab[i];
    }
    return NULL;
}

static struct names_kv *names_kvfind(const char *key)
{
    size_t i;

    for (i = 0; i < names_kvcount; i++) {
        if (strcmp(names_kvtab[i].key, key) == 0)
            return &names_kvtab[i];
    }
    return NULL;
}

/* Absolute CLOCK_MONOTONIC time timeout_ms from now. */
static struct timespec names_abstime(uint64_t timeout_ms)
{
    struct timespec ts;

    if (timeout_ms > NAMES_WAIT_CAP_MS)
        timeout_ms = NAMES_WAIT_CAP_MS;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    ts.tv_sec += (time_t)(timeout_ms / 1000u);
    ts.tv_nsec += (long)(timeout_ms % 1000u) * 1000000L;
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    return ts;
}

static csn_status names_lone_register(const char *name, csn_netid id)
{
    struct names_entry *e = names_find(name);
    char *copy;

    if (e != NULL)
        return e->id == id ? CSN_OK : CSN_NAME_TAKEN;
    if (names_count == names_cap) {
        size_t nc = names_cap ? 2 * names_cap : 16;
        struct names_entry *nt = realloc(names_tab, nc * sizeof *nt);
        if (nt == NULL)
            return CSN_NO_HEAP;
        names_tab = nt;
        names_cap = nc;
    }
    copy = strdup(name);
    if (copy == NULL)
        return CSN_NO_HEAP;
    names_tab[names_count].name = copy;
    names_tab[names_count].id = id;
    names_count++;
    pthread_cond_broadcast(&names_cond);
    return CSN_OK;
}

static csn_status names_lone_put(const char *key, const char *value)
{
    struct names_kv *e = names_kvfind(key);
    char *v = strdup(value), *k = NULL;

    if (v == NULL)
        return CSN_NO_HEAP;
    if (e != NULL) {
        free(e->value);
        e->value = v;
        pthread_cond_broadcast(&names_cond);
        return CSN_OK;
    }
    if (names_kvcount == names_kvcap) {
        size_t nc = names_kvcap ? 2 * names_kvcap : 16;
        struct names_kv *nt = realloc(names_kvtab, nc * sizeof *nt);
        if (nt == NULL)
            goto fail;
        names_kvtab = nt;
        names_kvcap = nc;
    }
    k = strdup(key);
    if (k == NULL)
        goto fail;
    names_kvtab[names_kvcount].key = k;
    names_kvtab[names_kvcount].value = v;
    names_kvcount++;
    pthread_cond_broadcast(&names_cond);
    return CSN_OK;
fail:
    free(v);
    return CSN_NO_HEAP;
}

/* ---- the interface ---- */

csn_status csni_names_register(const char *name, csn_netid id)
{
    char req[NAMES_LINE_MAX], reply[64];
    csn_status st;

    if (!csni_name_valid(name) || id == CSN_NULL_NETID)
        return CSN_INVALID_ARGUMENT;
    if (names_enter() == NAMES_LONE) {
        st = names_lone_register(name, id);
        pthread_mutex_unlock(&names_lock);
        return st;
    }
    pthread_mutex_unlock(&names_lock);
    snprintf(req, sizeof req, "REG %" PRIx64 " %s\n", (uint64_t)id, name);
    st = names_request(req, 0, reply, sizeof reply);
    if (st != CSN_OK)
        return st;
    if (strcmp(reply, "OK") == 0)
        return CSN_OK;
    if (strcmp(reply, "TAKEN") == 0)
        return CSN_NAME_TAKEN;
    return names_bad_reply();
}

csn_status csni_names_unregister(const char *name, csn_netid id)
{
    char req[NAMES_LINE_MAX], reply[64];
    csn_status st;

    if (!csni_name_valid(name) || id == CSN_NULL_NETID)
        return CSN_INVALID_ARGUMENT;
    if (names_enter() == NAMES_LONE) {
        struct names_entry *e = names_find(name);
        if (e != NULL && e->id == id) {
            free(e->name);
            *e = names_tab[--names_count];
        }
        pthread_mutex_unlock(&names_lock);
        return CSN_OK;
    }
    pthread_mutex_unlock(&names_lock);
    snprintf(req, sizeof req, "UNREG %" PRIx64 " %s\n", (uint64_t)id, name);
    st = names_request(req, 0, reply, sizeof reply);
    if (st != CSN_OK)
        return st;
    return strcmp(reply, "OK") == 0 ? CSN_OK : names_bad_reply();
}

csn_status csni_names_lookup(const char *name, uint64_t timeout_ms, csn_netid *id)
{
    char req[NAMES_LINE_MAX], reply[64], *end;
    csn_status st;
    uint64_t v;

    if (!csni_name_valid(name) || id == NULL)
        return CSN_INVALID_ARGUMENT;
    if (timeout_ms > NAMES_WAIT_CAP_MS)
        timeout_ms = NAMES_WAIT_CAP_MS;
    if (names_enter() == NAMES_LONE) {
        struct timespec until = names_abstime(timeout_ms);
        struct names_entry *e;
        int r = 0;

        while ((e = names_find(name)) == NULL && r != ETIMEDOUT)
            r = pthread_cond_timedwait(&names_cond, &names_lock, &until);
        if (e != NULL)
            *id = e->id;
        pthread_mutex_unlock(&names_lock);
        return e != NULL ? CSN_OK : CSN_NOT_FOUND;
    }
    pthread_mutex_unlock(&names_lock);
    snprintf(req, sizeof req, "LOOKUP %" PRIu64 " %s\n", timeout_ms, name);
    st = names_request(req, timeout_ms, reply, sizeof reply);
    if (st != CSN_OK)
        return st;
    if (strcmp(reply, "NOTFOUND") == 0)
        return CSN_NOT_FOUND;
    if (strncmp(reply, "OK ", 3) != 0)
        return names_bad_reply();
    errno = 0;
    v = strtoull(reply + 3, &end, 16);
    if (errno != 0 || *end != '\0' || end == reply + 3 || v == 0)
        return names_bad_reply();
    *id = (csn_netid)v;
    return CSN_OK;
}

csn_status csni_kv_put(const char *key, const char *value)
{
    char req[NAMES_LINE_MAX], reply[64];
    csn_status st;

    if (!names_word_valid(key) || !names_word_valid(value))
        return CSN_INVALID_ARGUMENT;
    if (names_enter() == NAMES_LONE) {
        st = names_lone_put(key, value);
        pthread_mutex_unlock(&names_lock);
        return st;
    }
    pthread_mutex_unlock(&names_lock);
#ifdef CSN_HAVE_PMIX
    if (names_pmix)
        return csni_pmix_put(key, value);
#endif
    snprintf(req, sizeof req, "PUT %s %s\n", key, value);
    st = names_request(req, 0, reply, sizeof reply);
    if (st != CSN_OK)
        return st;
    return strcmp(reply, "OK") == 0 ? CSN_OK : names_bad_reply();
}

csn_status csni_kv_copy(char *value, size_t cap, const char *src)
{
    size_t n = strlen(src);

    if (n < cap) {
        memcpy(value, src, n + 1);
        return CSN_OK;
    }
    memcpy(value, src, cap - 1);
    value[cap - 1] = '\0';
    return CSN_OVERRUN;
}

csn_status csni_kv_get(const char *key, uint64_t timeout_ms, char *value, size_t cap)
{
    char req[NAMES_LINE_MAX], reply[NAMES_KV_MAX + 16];
    csn_status st;

    if (!names_word_valid(key) || value == NULL || cap == 0)
        return CSN_INVALID_ARGUMENT;
    if (timeout_ms > NAMES_WAIT_CAP_MS)
        timeout_ms = NAMES_WAIT_CAP_MS;
    if (names_enter() == NAMES_LONE) {
        struct timespec until = names_abstime(timeout_ms);
        struct names_kv *e;
        int r = 0;

        while ((e = names_kvfind(key)) == NULL && r != ETIMEDOUT)
            r = pthread_cond_timedwait(&names_cond, &names_lock, &until);
        st = e != NULL ? csni_kv_copy(value, cap, e->value) : CSN_NOT_FOUND;
        pthread_mutex_unlock(&names_lock);
        return st;
    }
    pthread_mutex_unlock(&names_lock);
#ifdef CSN_HAVE_PMIX
    if (names_pmix) {
        /* PMIx keeps keys per process: a key ends in the rank that put it ("ep.3"). */
        const char *dot = strrchr(key, '.');
        char *end;
        long owner;

        if (dot == NULL || dot[1] < '0' || dot[1] > '9')
            return CSN_INVALID_ARGUMENT;
        errno = 0;
        owner = strtol(dot + 1, &end, 10);
        if (errno != 0 || *end != '\0' || owner > INT_MAX)
            return CSN_NOT_FOUND;
        return csni_pmix_get((int)owner, key, timeout_ms, value, cap);
    }
#endif
    snprintf(req, sizeof req, "GET %" PRIu64 " %s\n", timeout_ms, key);
    st = names_request(req, timeout_ms, reply, sizeof reply);
    if (st != CSN_OK)
        return st;
    if (strcmp(reply, "NOTFOUND") == 0)
        return CSN_NOT_FOUND;
    if (strncmp(reply, "OK ", 3) != 0 || !names_word_valid(reply + 3))
        return names_bad_reply();
    return csni_kv_copy(value, cap, reply + 3);
}

csn_status csni_kv_dump(const char *prefix,
                        void (*each)(void *arg, const char *key, const char *value), void *arg)
{
    char req[NAMES_LINE_MAX];
    struct names_rbuf rb = {.cap = 4096, .max = NAMES_DUMP_MAX, .dump = true};
    size_t plen = prefix ? strlen(prefix) : 0;
    unsigned long i;
    char *line;
    csn_status st;

    if (!names_word_valid(prefix) || each == NULL)
        return CSN_INVALID_ARGUMENT;
    if (names_enter() == NAMES_LONE) {
        for (i = 0; i < names_kvcount; i++)
            if (strncmp(names_kvtab[i].key, prefix, plen) == 0)
                each(arg, names_kvtab[i].key, names_kvtab[i].value);
        pthread_mutex_unlock(&names_lock);
        return CSN_OK;
    }
    pthread_mutex_unlock(&names_lock);
#ifdef CSN_HAVE_PMIX
    if (names_pmix)
        return CSN_NOT_FOUND; /* no store to dump: keys are per process */
#endif
    if ((rb.p = malloc(rb.cap)) == NULL)
        return CSN_NO_HEAP;
    snprintf(req, sizeof req, "DUMP %s\n", prefix);
    if ((st = names_request_rb(req, 0, &rb)) != CSN_OK)
        goto done;
    if (strncmp(rb.p, "OK ", 3) != 0) {
        st = names_bad_reply();
        goto done;
    }
    /* The lines were counted by names_complete: each is "<key> <value>\n". */
    for (line = rb.p + rb.body, i = 0; i < rb.want; i++) {
        char *nl = memchr(line, '\n', (size_t)(rb.p + rb.len - line)), *sp;
        if (nl == NULL) {
            st = names_bad_reply();
            goto done;
        }
        *nl = '\0';
        sp = strchr(line, ' ');
        if (sp == NULL || !names_word_valid(sp + 1) || strncmp(line, prefix, plen) != 0) {
            st = names_bad_reply();
            goto done;
        }
        *sp = '\0';
        if (!names_word_valid(line)) {
            st = names_bad_reply();
            goto done;
        }
        each(arg, line, sp + 1);
        line = nl + 1;
    }
done:
    free(rb.p);
    return st;
}

csn_status csni_names_alloc_proc(int *id)
{
    char reply[64], *end;
    csn_status st;
    long v;

    if (id == NULL)
        return CSN_INVALID_ARGUMENT;
    if (names_enter() == NAMES_LONE) {
        pthread_mutex_unlock(&names_lock);
        return CSN_NOT_FOUND;
    }
    pthread_mutex_unlock(&names_lock);
    st = names_request("PROC\n", 0, reply, sizeof reply);
    if (st != CSN_OK)
        return st;
    if (strncmp(reply, "OK ", 3) != 0)
        return names_bad_reply();
    errno = 0;
    v = strtol(reply + 3, &end, 10);
    if (errno != 0 || *end != '\0' || end == reply + 3 || v <= 0 || v > 0xFFFFFF)
        return names_bad_reply();
    *id = (int)v;
    return CSN_OK;
}
