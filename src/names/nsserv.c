/* nsserv.c: the job's name service (server side of names.h): in csnrun's event loop, or in a thread
 * of rank 0 under PMIx. */
#include "names/nsserv.h"

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define NS_LINE_MAX 4096 /* longest request line: "PUT " + 1023 + " " + 1023 fits */
#define NS_IDLE_MS 30000 /* a connection must send its request (and take its reply) in this */
/* A member's connection is kept after each reply for its next request (names.c keeps one per
 * process): idle this long, or the longest idle when the table is full, it is closed, and the
 * client opens a new one. */
#define NS_KEPT_MS 600000
#define NS_DUMP_MAX (64u << 20) /* largest DUMP reply */
/* Until a connection has proven the job key it is a stranger's: it gets NS_KEY_MS to do so (a
 * client sends its key and request in one write right after connecting), and at most
 * NS_PENDING_MAX of them wait at once (NS_PENDING_PER_SRC from one source address, one uid for
 * Unix sockets); a new one beyond a cap evicts the oldest waiting one (of that source first).
 * The listener is always polled, so strangers can delay a member's request by at most one turn
 * of the loop, never stall it. */
#define NS_KEY_MS 3000
#define NS_PENDING_MAX 64
#define NS_PENDING_PER_SRC 16
#define NS_LOG_EVERY_MS 10000  /* refused strangers: one line, then a count per this period */
#define NS_ACCEPT_PAUSE_MS 100 /* accept() out of descriptors/memory: listener rests this long */
#define NS_WAIT_CAP_MS ((uint64_t)1 << 40)
#define NS_BUCKETS 4096

enum ns_state { NS_READ_KEY, NS_READ_REQ, NS_PARKED, NS_WRITE };
enum ns_wait { NS_WAIT_NAME, NS_WAIT_KEY };

struct ns_conn {
    int fd;
    int epfd;    /* the service's epoll set, which watches fd */
    uint32_t ev; /* what it watches fd for: EPOLLIN, or EPOLLOUT while a reply is written */
    int idx;     /* its place in ns->conns */
    enum ns_state state;
    uint64_t deadline;
    char in[NS_LINE_MAX];
    size_t inlen;
    char obuf[NS_LINE_MAX];
    char *out; /* the reply: obuf, or a DUMP's own allocation */
    size_t outlen, outoff;
    enum ns_wait wait_kind; /* NS_PARKED: what it waits for, and its name or key */
    char *wait_for;
    uint64_t born; /* accepted at (ms): the oldest stranger is evicted first */
    uint64_t src;  /* source: a hash of the peer's IP address, or its uid for Unix sockets */
};

/* One table (names or the key-value store): chained hash of strings. */
struct ns_item {
    struct ns_item *next;
    char *key;
    char *value; /* kv store */
    uint64_t id; /* names: the holder's netid */
};

struct csni_ns {
    int lfd;            /* listening socket */
    int epfd;           /* epoll set of the listener and every connection (ns_conn.ev) */
    char sockpath[256]; /* Unix socket to unlink, or "" */
    char key[33];
    int size;
    int next_proc; /* PROC: the next fresh process id */
    struct ns_conn **conns;
    int nconns, capconns, maxconns;
    int listening;               /* the listener is in the epoll set */
    char who[32];                /* prefix of messages: "csnrun" or "csn[0]" */
    int npending;                /* connections in NS_READ_KEY */
    uint64_t accept_pause_until; /* accept failed for want of descriptors: rest until then */
    /* Refused strangers, counted for the rate-limited log line (ns_log_flush). */
    unsigned long nbadkey, nexpired, nevicted;
    uint64_t log_next;
    uint64_t seq; /* accept order (ns_conn.born) */
    struct ns_item *names[NS_BUCKETS];
    struct ns_item *kv[NS_BUCKETS];
};

static uint64_t ns_now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static unsigned ns_hash(const char *s)
{
    uint32_t h = 2166136261u;

    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 16777619u;
    return h % NS_BUCKETS;
}

static struct ns_item *ns_find(struct ns_item **tab, const char *key)
{
    struct ns_item *it;

    for (it = tab[ns_hash(key)]; it != NULL; it = it->next) {
        if (strcmp(it->key, key) == 0)
            return it;
    }
    return NULL;
}

static struct ns_item *ns_insert(struct ns_item **tab, const char *key)
{
    struct ns_item *it = calloc(1, sizeof *it);
    unsigned h = ns_hash(key);

    if (it == NULL || (it->key = strdup(key)) == NULL) {
        free(it);
        return NULL;
    }
    it->next = tab[h];
    tab[h] = it;
    return it;
}

static void ns_free_item(struct ns_item *it)
{
    free(it->key);
    free(it->value);
    free(it);
}

static int ns_name_valid(const char *s)
{
    size_t n;

    for (n = 0; s[n]; n++) {
        if (n >= 255 || (unsigned char)s[n] < 0x20 || (unsigned char)s[n] > 0x7e)
            return 0;
    }
    return n > 0;
}

static int ns_word_valid(const char *s)
{
    size_t n;

    for (n = 0; s[n]; n++) {
        if (n >= 1023 || (unsigned char)s[n] <= 0x20 || (unsigned char)s[n] > 0x7e)
            return 0;
    }
    return n > 0;
}

/* Parses an unsigned decimal (base 10) or hex (base 16) field that ends at a space or the end. */
static int ns_parse_u64(const char *s, int base, uint64_t *v, const char **rest)
{
    char *end;

    if (!((*s >= '0' && *s <= '9') ||
          (base == 16 && ((*s >= 'a' && *s <= 'f') || (*s >= 'A' && *s <= 'F')))))
        return -1;
    errno = 0;
    *v = strtoull(s, &end, base);
    if (errno != 0 || (*end != ' ' && *end != '\0'))
        return -1;
    *rest = end;
    return 0;
}

struct csni_ns *csni_ns_create(const char *who, const char *jobdir, const char *jobkey, int size,
                               int tcp, const char *advertise, int maxconns, char *addr, size_t cap)
{
    struct csni_ns *ns = calloc(1, sizeof *ns);
    struct rlimit rl;

    if (ns == NULL)
        return NULL;
    ns->lfd = -1;
    ns->epfd = epoll_create1(EPOLL_CLOEXEC);
    if (ns->epfd < 0) {
        free(ns);
        return NULL;
    }
    snprintf(ns->who, sizeof ns->who, "%s", who);
    snprintf(ns->key, sizeof ns->key, "%s", jobkey);
    ns->size = size;
    ns->next_proc = size;
    if (maxconns > 0) {
        ns->maxconns = maxconns;
    } else if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
        /* Every parked lookup holds a descriptor: allow as many as the hard limit permits. */
        if (rl.rlim_cur < rl.rlim_max && rl.rlim_max != RLIM_INFINITY) {
            rl.rlim_cur = rl.rlim_max;
            setrlimit(RLIMIT_NOFILE, &rl);
        }
        getrlimit(RLIMIT_NOFILE, &rl);
        /* 64 descriptors kept for the rest of the process (the launcher's pipes, files), half
         * of a limit below 128: with a limit of 64 or less this was 0 or fewer connections,
         * never an accept, and every rank's csn_open timed out (ulimit -n 32, 4 ranks: 30 s,
         * "Connection timed out"). */
        int cur = rl.rlim_cur > 65536 ? 65536 : (int)rl.rlim_cur;
        ns->maxconns = cur - (cur / 2 < 64 ? cur / 2 : 64);
    } else {
        ns->maxconns = 900;
    }

    if (!tcp) {
        struct sockaddr_un un = {.sun_family = AF_UNIX};
        int n = snprintf(un.sun_path, sizeof un.sun_path, "%s/ns", jobdir);

        if (n < 0 || (size_t)n >= sizeof un.sun_path) {
            fprintf(stderr, "%s: job directory path too long for a Unix socket: %s\n", who, jobdir);
            goto fail;
        }
        ns->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (ns->lfd < 0 || bind(ns->lfd, (struct sockaddr *)&un, sizeof un) != 0)
            goto fail_errno;
        snprintf(ns->sockpath, sizeof ns->sockpath, "%s", un.sun_path);
        snprintf(addr, cap, "unix:%s", un.sun_path);
    } else {
        struct sockaddr_storage sa, got;
        socklen_t sl, gl = sizeof got;
        int port, one = 1, v6;

        /* Only the advertised address: the service is for the job's hosts, which reach it
         * there, and nothing else needs to see it. */
        memset(&sa, 0, sizeof sa);
        if (inet_pton(AF_INET, advertise, &((struct sockaddr_in *)&sa)->sin_addr) == 1) {
            sa.ss_family = AF_INET;
            sl = sizeof(struct sockaddr_in);
        } else if (inet_pton(AF_INET6, advertise, &((struct sockaddr_in6 *)&sa)->sin6_addr) == 1) {
            sa.ss_family = AF_INET6;
            sl = sizeof(struct sockaddr_in6);
        } else {
            fprintf(stderr, "%s: name service address '%s' is not a numeric IP address\n", who,
                    advertise);
            goto fail;
        }
        v6 = sa.ss_family == AF_INET6;
        ns->lfd = socket(sa.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (ns->lfd < 0)
            goto fail_errno;
        setsockopt(ns->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        if (bind(ns->lfd, (struct sockaddr *)&sa, sl) != 0) {
            fprintf(stderr, "%s: cannot start the name service on %s: %s\n", who, advertise,
                    strerror(errno));
            goto fail;
        }
        if (getsockname(ns->lfd, (struct sockaddr *)&got, &gl) != 0)
            goto fail_errno;
        port = v6 ? ntohs(((struct sockaddr_in6 *)&got)->sin6_port)
                  : ntohs(((struct sockaddr_in *)&got)->sin_port);
        snprintf(addr, cap, v6 ? "tcp:[%s]:%d" : "tcp:%s:%d", advertise, port);
    }
    if (listen(ns->lfd, SOMAXCONN) != 0)
        goto fail_errno;
    return ns;
fail_errno:
    fprintf(stderr, "%s: cannot start the name service: %s\n", who, strerror(errno));
fail:
    csni_ns_destroy(ns);
    return NULL;
}

static void ns_free_out(struct ns_conn *c)
{
    if (c->out != c->obuf)
        free(c->out);
    c->out = c->obuf;
}

static void ns_close_conn(struct csni_ns *ns, int i)
{
    struct ns_conn *c = ns->conns[i];

    if (c->state == NS_READ_KEY)
        ns->npending--;
    /* Out of the set before the close: a process forked without exec may share the socket,
     * and the set would go on reporting it with c freed. */
    epoll_ctl(ns->epfd, EPOLL_CTL_DEL, c->fd, NULL);
    close(c->fd);
    free(c->wait_for);
    ns_free_out(c);
    free(c);
    if (i != --ns->nconns) {
        ns->conns[i] = ns->conns[ns->nconns];
        ns->conns[i]->idx = i;
    }
}

/* Switches the connection to writing out[0..len) (then back to reading the next request). */
/* Makes the epoll set watch c for ev (EPOLLIN or EPOLLOUT). A failure leaves the old interest:
 * the deadline then ends the connection. */
static void ns_watch(struct ns_conn *c, uint32_t ev)
{
    struct epoll_event e = {.events = ev, .data.ptr = c};

    if (c->ev != ev && epoll_ctl(c->epfd, EPOLL_CTL_MOD, c->fd, &e) == 0)
        c->ev = ev;
}

static void ns_send(struct ns_conn *c, size_t len)
{
    c->outlen = len;
    c->outoff = 0;
    ns_watch(c, EPOLLOUT);
    c->state = NS_WRITE;
    c->deadline = ns_now_ms() + NS_IDLE_MS;
    free(c->wait_for);
    c->wait_for = NULL;
}

/* Queues a one-line reply. */
static void ns_reply(struct ns_conn *c, const char *fmt, const char *arg)
{
    /* Only authenticated connections are answered (never in NS_READ_KEY). */
    int n;

    ns_free_out(c);
    n = snprintf(c->obuf, sizeof c->obuf, fmt, arg);
    ns_send(c, (n < 0 || (size_t)n >= sizeof c->obuf) ? 0 : (size_t)n);
}

/* Queues the DUMP reply: "OK <n>\n" and n lines "<key> <value>\n", every key that starts
 * with prefix, in no particular order. */
static void ns_dump(struct csni_ns *ns, struct ns_conn *c, const char *prefix)
{
    size_t plen = strlen(prefix), need = 32, n = 0, off;
    struct ns_item *it;
    char *buf;
    int b;

    for (b = 0; b < NS_BUCKETS; b++)
        for (it = ns->kv[b]; it != NULL; it = it->next)
            if (strncmp(it->key, prefix, plen) == 0) {
                need += strlen(it->key) + strlen(it->value) + 2;
                n++;
            }
    if (need > NS_DUMP_MAX) {
        ns_reply(c, "ERR %s\n", "reply too large");
        return;
    }
    if ((buf = malloc(need)) == NULL) {
        ns_reply(c, "ERR %s\n", "out of memory");
        return;
    }
    off = (size_t)snprintf(buf, need, "OK %zu\n", n);
    for (b = 0; b < NS_BUCKETS; b++)
        for (it = ns->kv[b]; it != NULL; it = it->next)
            if (strncmp(it->key, prefix, plen) == 0)
                off += (size_t)snprintf(buf + off, need - off, "%s %s\n", it->key, it->value);
    ns_free_out(c);
    c->out = buf;
    ns_send(c, off);
}

/* Answers every parked connection waiting for key in the given table kind. */
static void ns_wake(struct csni_ns *ns, enum ns_wait kind, const char *key, const char *answer)
{
    int i;

    for (i = 0; i < ns->nconns; i++) {
        struct ns_conn *c = ns->conns[i];
        if (c->state == NS_PARKED && c->wait_kind == kind && strcmp(c->wait_for, key) == 0)
            ns_reply(c, "OK %s\n", answer);
    }
}

static void ns_park(struct ns_conn *c, enum ns_wait kind, const char *what, uint64_t wait_ms)
{
    c->wait_for = strdup(what);
    if (c->wait_for == NULL) {
        ns_reply(c, "ERR %s\n", "out of memory");
        return;
    }
    c->wait_kind = kind;
    c->state = NS_PARKED;
    if (wait_ms > NS_WAIT_CAP_MS)
        wait_ms = NS_WAIT_CAP_MS;
    c->deadline = ns_now_ms() + wait_ms;
}

/* Executes one request line (the job key was checked already). */
static void ns_request(struct csni_ns *ns, struct ns_conn *c, char *line)
{
    const char *rest;
    uint64_t v;
    struct ns_item *it;
    char buf[32];

    if (strncmp(line, "REG ", 4) == 0 || strncmp(line, "UNREG ", 6) == 0) {
        int reg = line[0] == 'R';
        const char *name;

        if (ns_parse_u64(line + (reg ? 4 : 6), 16, &v, &rest) != 0 || *rest != ' ' ||
            !ns_name_valid(rest + 1) || v == 0)
            goto bad;
        name = rest + 1;
        it = ns_find(ns->names, name);
        if (!reg) {
            if (it != NULL && it->id == v) {
                struct ns_item **pp = &ns->names[ns_hash(name)];
                while (*pp != it)
                    pp = &(*pp)->next;
                *pp = it->next;
                ns_free_item(it);
            }
            ns_reply(c, "OK\n%s", "");
            return;
        }
        if (it != NULL) {
            ns_reply(c, it->id == v ? "OK\n%s" : "TAKEN\n%s", "");
            return;
        }
        it = ns_insert(ns->names, name);
        if (it == NULL) {
            ns_reply(c, "ERR %s\n", "out of memory");
            return;
        }
        it->id = v;
        ns_reply(c, "OK\n%s", "");
        snprintf(buf, sizeof buf, "%" PRIx64, v);
        ns_wake(ns, NS_WAIT_NAME, name, buf);
        return;
    }
    if (strncmp(line, "LOOKUP ", 7) == 0) {
        if (ns_parse_u64(line + 7, 10, &v, &rest) != 0 || *rest != ' ' || !ns_name_valid(rest + 1))
            goto bad;
        it = ns_find(ns->names, rest + 1);
        if (it != NULL) {
            snprintf(buf, sizeof buf, "%" PRIx64, it->id);
            ns_reply(c, "OK %s\n", buf);
        } else if (v == 0) {
            ns_reply(c, "NOTFOUND\n%s", "");
        } else {
            ns_park(c, NS_WAIT_NAME, rest + 1, v);
        }
        return;
    }
    if (strncmp(line, "PUT ", 4) == 0) {
        char *key = line + 4, *value = strchr(key, ' ');
        char *copy;

        if (value == NULL)
            goto bad;
        *value++ = '\0';
        if (!ns_word_valid(key) || !ns_word_valid(value))
            goto bad;
        copy = strdup(value);
        it = ns_find(ns->kv, key);
        if (it == NULL)
            it = ns_insert(ns->kv, key);
        if (copy == NULL || it == NULL) {
            free(copy);
            ns_reply(c, "ERR %s\n", "out of memory");
            return;
        }
        free(it->value);
        it->value = copy;
        ns_reply(c, "OK\n%s", "");
        ns_wake(ns, NS_WAIT_KEY, key, copy);
        return;
    }
    if (strncmp(line, "GET ", 4) == 0) {
        if (ns_parse_u64(line + 4, 10, &v, &rest) != 0 || *rest != ' ' || !ns_word_valid(rest + 1))
            goto bad;
        it = ns_find(ns->kv, rest + 1);
        if (it != NULL)
            ns_reply(c, "OK %s\n", it->value);
        else if (v == 0)
            ns_reply(c, "NOTFOUND\n%s", "");
        else
            ns_park(c, NS_WAIT_KEY, rest + 1, v);
        return;
    }
    if (strncmp(line, "DUMP ", 5) == 0) {
        if (!ns_word_valid(line + 5))
            goto bad;
        ns_dump(ns, c, line + 5);
        return;
    }
    if (strcmp(line, "PROC") == 0) {
        if (ns->next_proc > 0xFFFFFF) {
            ns_reply(c, "ERR %s\n", "process ids exhausted");
            return;
        }
        snprintf(buf, sizeof buf, "%d", ns->next_proc++);
        ns_reply(c, "OK %s\n", buf);
        return;
    }
bad:
    ns_reply(c, "ERR %s\n", "malformed request");
}

/* Constant-time comparison of the presented key with the job key. */
static int ns_key_ok(const struct csni_ns *ns, const char *line)
{
    unsigned diff = 0;
    int i;

    if (strncmp(line, "KEY ", 4) != 0 || strlen(line) != 4 + 32)
        return 0;
    for (i = 0; i < 32; i++)
        diff |= (unsigned)(line[4 + i] ^ ns->key[i]);
    return diff == 0;
}

/* Tells a client whose key is wrong so, before the close: a process of another job (or of
 * an old one) then fails at once, where a close without a word means "evicted before your key
 * was read, send it again". Best effort: a full socket buffer just leaves the plain close. */
static void ns_deny(struct ns_conn *c)
{
    char junk[256];
    ssize_t w = write(c->fd, "DENIED\n", 7);

    /* What the client sent after its key is read away: closing over unread bytes would
     * make TCP reset the connection and drop the DENIED line. */
    for (int i = 0; w == 7 && i < 16 && read(c->fd, junk, sizeof junk) > 0; i++)
        ;
}

/* 1 when what a stranger sent so far can no longer become "KEY <32 bytes>\n". */
static int ns_key_hopeless(const struct ns_conn *c)
{
    size_t n = c->inlen < 4 ? c->inlen : 4;

    if (memcmp(c->in, "KEY ", n) != 0)
        return 1;
    if (c->inlen > 4 + 32 && c->in[4 + 32] != '\n')
        return 1;
    return memchr(c->in, '\n', c->inlen < 4 + 32 ? c->inlen : 4 + 32) != NULL;
}

/* Reads what is there; processes complete lines. Returns 0 to keep, -1 to close. */
static int ns_read(struct csni_ns *ns, struct ns_conn *c)
{
    for (;;) {
        ssize_t r;
        char *nl;

        if (c->state == NS_PARKED || c->state == NS_WRITE) {
            /* Nothing more may come; data or EOF ends the connection (client gave up). */
            char junk[64];
            r = read(c->fd, junk, sizeof junk);
            return (r < 0 && (errno == EAGAIN || errno == EINTR)) ? 0 : -1;
        }
        nl = memchr(c->in, '\n', c->inlen);
        if (c->state == NS_READ_KEY && ns_key_hopeless(c)) {
            ns->nbadkey++;
            ns_deny(c);
            return -1;
        }
        if (nl == NULL) {
            if (c->inlen >= sizeof c->in - 1)
                return -1; /* over-long line: not a client of ours */
            r = read(c->fd, c->in + c->inlen, sizeof c->in - 1 - c->inlen);
            if (r == 0)
                return -1;
            if (r < 0)
                return (errno == EAGAIN || errno == EINTR) ? 0 : -1;
            c->inlen += (size_t)r;
            continue;
        }
        *nl = '\0';
        if (c->state == NS_READ_KEY) {
            if (!ns_key_ok(ns, c->in)) {
                ns->nbadkey++;
                ns_deny(c);
                return -1;
            }
            c->state = NS_READ_REQ;
            ns->npending--;
            c->deadline = ns_now_ms() + NS_IDLE_MS;
        } else {
            ns_request(ns, c, c->in);
        }
        c->inlen -= (size_t)(nl + 1 - c->in);
        memmove(c->in, nl + 1, c->inlen);
    }
}

/* Writes the pending reply; once it is all written the connection waits for the next request.
 * Returns 0 to keep, -1 to close (failed, or the client sent more before its reply: one request
 * at a time). */
static int ns_write(struct ns_conn *c)
{
    while (c->outoff < c->outlen) {
        ssize_t w = send(c->fd, c->out + c->outoff, c->outlen - c->outoff, MSG_NOSIGNAL);
        if (w < 0)
            return (errno == EAGAIN || errno == EINTR) ? 0 : -1;
        c->outoff += (size_t)w;
    }
    if (c->inlen > 0)
        return -1;
    ns_free_out(c);
    c->outlen = c->outoff = 0;
    ns_watch(c, EPOLLIN);
    c->state = NS_READ_REQ;
    c->deadline = ns_now_ms() + NS_KEPT_MS;
    return 0;
}

/* The member connection to close for a newcomer (ns_evict_member), or -1. */
static int ns_victim(const struct csni_ns *ns)
{
    int i, victim = -1, parked = -1;

    for (i = 0; i < ns->nconns; i++) {
        const struct ns_conn *c = ns->conns[i];
        if (c->state == NS_READ_REQ && c->inlen == 0 &&
            (victim < 0 || c->deadline < ns->conns[victim]->deadline))
            victim = i;
        if (c->state == NS_PARKED && (parked < 0 || c->deadline > ns->conns[parked]->deadline))
            parked = i;
    }
    return victim >= 0 ? victim : parked;
}

/* Closes a member's connection for a newcomer: the longest idle kept one (its client
 * reconnects when it next asks), else the parked request with the most time left, closed
 * unanswered (its client sends it again after a pause, names.c). A table full of parked
 * lookups otherwise kept out the registration they wait for, until they timed out (4 ranks of
 * hello under ulimit -n 11: the sink's REG waited 70 s behind two sources' LOOKUPs). 0 when
 * there was none. */
static int ns_evict_member(struct csni_ns *ns)
{
    int i = ns_victim(ns);

    if (i < 0)
        return 0;
    ns_close_conn(ns, i);
    return 1;
}

int csni_ns_pollfds(struct csni_ns *ns, struct pollfd *fds, int max)
{
    /* At the connection cap a waiting stranger or a member's idle or parked connection can
     * still be closed for a newcomer; only a table full of members whose requests are being
     * read or answered (or no descriptor to accept with) rests the listener. */
    int want = (ns->nconns < ns->maxconns || ns->npending > 0 || ns_victim(ns) >= 0) &&
               ns_now_ms() >= ns->accept_pause_until;

    if (want != ns->listening) {
        struct epoll_event e = {.events = EPOLLIN, .data.ptr = NULL};
        if (epoll_ctl(ns->epfd, want ? EPOLL_CTL_ADD : EPOLL_CTL_DEL, ns->lfd, &e) == 0)
            ns->listening = want;
    }
    if (max < 1)
        return 0;
    fds[0].fd = ns->epfd;
    fds[0].events = POLLIN;
    fds[0].revents = 0;
    return 1;
}

/* The oldest stranger (of source src when same_src) is closed; 0 when there was none. Each
 * candidate is read first: a member whose key arrived after it was accepted is served, not
 * evicted (a flood from its own address must not push it out). */
static int ns_evict(struct csni_ns *ns, int same_src, uint64_t src)
{
    for (;;) {
        struct ns_conn *c;
        int i, victim = -1;

        for (i = 0; i < ns->nconns; i++) {
            c = ns->conns[i];
            if (c->state != NS_READ_KEY || (same_src && c->src != src))
                continue;
            if (victim < 0 || c->born < ns->conns[victim]->born)
                victim = i;
        }
        if (victim < 0)
            return 0;
        c = ns->conns[victim];
        if (ns_read(ns, c) != 0) {
            ns_close_conn(ns, c->idx); /* a wrong key or nothing more coming: gone anyway */
            return 1;
        }
        if (c->state == NS_READ_KEY) {
            ns->nevicted++;
            ns_close_conn(ns, c->idx);
            return 1;
        }
        if (c->state == NS_WRITE && ns_write(c) != 0) /* a member after all: answered */
            ns_close_conn(ns, c->idx);
    }
}

/* Who connected: the uid of a Unix-socket peer, a hash of a TCP peer's address (not port). */
static uint64_t ns_source(int fd, const struct sockaddr_storage *sa, socklen_t sl)
{
    const unsigned char *p = NULL;
    size_t n = 0, k;
    uint64_t h = 1469598103934665603ull;

    if (sa->ss_family == AF_INET && sl >= sizeof(struct sockaddr_in)) {
        p = (const unsigned char *)&((const struct sockaddr_in *)sa)->sin_addr;
        n = sizeof(struct in_addr);
    } else if (sa->ss_family == AF_INET6 && sl >= sizeof(struct sockaddr_in6)) {
        p = (const unsigned char *)&((const struct sockaddr_in6 *)sa)->sin6_addr;
        n = sizeof(struct in6_addr);
    } else {
        struct ucred cr;
        socklen_t cl = sizeof cr;
        if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &cl) == 0)
            return ((uint64_t)1 << 63) | (uint64_t)cr.uid;
        return 0;
    }
    for (k = 0; k < n; k++)
        h = (h ^ p[k]) * 1099511628211ull;
    return h & ~((uint64_t)1 << 63);
}

static void ns_accept(struct csni_ns *ns)
{
    int budget = 64, i; /* per turn, so that the members' connections get their turn too */

    while (budget-- > 0) {
        struct sockaddr_storage sa;
        socklen_t sl = sizeof sa;
        struct ns_conn *c;
        uint64_t src;
        int fd, same;

        memset(&sa, 0, sizeof sa);
        fd = accept4(ns->lfd, (struct sockaddr *)&sa, &sl, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (fd < 0) {
            int e = errno;

            /* Out of descriptors: the connections held now are as many as this process can
             * have, the cap from here on, and a member's idle or parked connection makes room
             * for the newcomer (accepted at the next look; not a stranger's, which may be a
             * rank that has not shown its key yet). Said each time the cap comes down
             * (rarely more than once): where members' requests under way fill the table, a
             * newcomer waits until one ends. */
            if ((e == EMFILE || e == ENFILE) && ns->nconns > 0) {
                if (ns->nconns < ns->maxconns) {
                    fprintf(stderr,
                            "%s: name service: out of descriptors at %d connections (ulimit -n)\n",
                            ns->who, ns->nconns);
                    ns->maxconns = ns->nconns;
                }
                if (ns_evict_member(ns))
                    return;
            }
            /* Nothing to close, or out of memory: the connection stays in the backlog and
             * poll would report it again at once; rest instead of spinning. */
            if (e == EMFILE || e == ENFILE || e == ENOBUFS || e == ENOMEM)
                ns->accept_pause_until = ns_now_ms() + NS_ACCEPT_PAUSE_MS;
            return;
        }
        if (ns->nconns >= ns->maxconns && !ns_evict(ns, 0, 0) && !ns_evict_member(ns)) {
            close(fd); /* not reached: the listener is polled only with room or strangers */
            return;
        }
        src = ns_source(fd, &sa, sl);
        for (same = 0, i = 0; i < ns->nconns; i++)
            same += ns->conns[i]->state == NS_READ_KEY && ns->conns[i]->src == src;
        if (same >= NS_PENDING_PER_SRC)
            ns_evict(ns, 1, src);
        else if (ns->npending >= NS_PENDING_MAX)
            ns_evict(ns, 0, 0);
        if (ns->nconns == ns->capconns) {
            int nc = ns->capconns ? 2 * ns->capconns : 64;
            struct ns_conn **na = realloc(ns->conns, (size_t)nc * sizeof *na);
            if (na == NULL) {
                close(fd);
                return;
            }
            ns->conns = na;
            ns->capconns = nc;
        }
        c = calloc(1, sizeof *c);
        if (c == NULL) {
            close(fd);
            return;
        }
        c->fd = fd;
        c->epfd = ns->epfd;
        c->ev = EPOLLIN;
        c->out = c->obuf;
        c->state = NS_READ_KEY;
        c->deadline = ns_now_ms() + NS_KEY_MS;
        c->born = ++ns->seq;
        c->src = src;
        c->idx = ns->nconns;
        struct epoll_event e = {.events = EPOLLIN, .data.ptr = c};
        if (epoll_ctl(ns->epfd, EPOLL_CTL_ADD, fd, &e) != 0) {
            close(fd);
            free(c);
            return;
        }
        ns->conns[ns->nconns++] = c;
        ns->npending++;
        /* A client writes its key and request right after connecting: usually they are here
         * already, and answering now keeps a flood of newcomers from evicting it. */
        if (ns_read(ns, c) != 0 || (c->state == NS_WRITE && ns_write(c) != 0))
            ns_close_conn(ns, c->idx);
    }
}

/* The rate-limited line about refused strangers: the first at once, then one per period. */
static void ns_log_flush(struct csni_ns *ns, uint64_t now, int force)
{
    unsigned long n = ns->nbadkey + ns->nexpired + ns->nevicted;

    if (n == 0 || (!force && now < ns->log_next))
        return;
    if (n == 1)
        fprintf(stderr,
                "%s: name service: closed a connection that did not present the job key (%s)\n",
                ns->who,
                ns->nbadkey    ? "wrong or malformed"
                : ns->nexpired ? "silent too long"
                               : "evicted by newer ones at the cap");
    else
        fprintf(stderr,
                "%s: name service: closed %lu connections that did not present the job key "
                "(%lu wrong or malformed, %lu silent for %d s, %lu evicted by newer ones at the "
                "cap of %d waiting)\n",
                ns->who, n, ns->nbadkey, ns->nexpired, NS_KEY_MS / 1000, ns->nevicted,
                NS_PENDING_MAX);
    ns->nbadkey = ns->nexpired = ns->nevicted = 0;
    ns->log_next = now + NS_LOG_EVERY_MS;
}

void csni_ns_handle(struct csni_ns *ns, const struct pollfd *fds, int n)
{
    struct epoll_event ev[64];
    int i, k, accept_now = 0;
    uint64_t now;

    /* Connections only ever close themselves while their own events are handled (a REG may
     * answer others, not close them); the listener's turn, which may evict any, comes last. */
    k = n > 0 && fds[0].revents != 0 ? epoll_wait(ns->epfd, ev, 64, 0) : 0;
    for (i = 0; i < k; i++) {
        struct ns_conn *c = ev[i].data.ptr;
        int close_it = 0;

        if (c == NULL) {
            accept_now = 1;
            continue;
        }
        if (ev[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR))
            close_it = ns_read(ns, c) != 0;
        if (!close_it && c->state == NS_WRITE)
            close_it = ns_write(c) != 0;
        if (close_it)
            ns_close_conn(ns, c->idx);
    }
    if (accept_now)
        ns_accept(ns);

    /* Deadlines: a parked request is answered NOTFOUND; an idle connection is dropped.
     * Replies made above are tried at once (they usually fit the socket buffer). */
    now = ns_now_ms();
    for (i = 0; i < ns->nconns;) {
        struct ns_conn *c = ns->conns[i];

        if (c->deadline <= now) {
            if (c->state == NS_READ_KEY)
                ns->nexpired++;
            if (c->state == NS_PARKED) {
                ns_reply(c, "NOTFOUND\n%s", "");
            } else {
                ns_close_conn(ns, i);
                continue;
            }
        }
        if (c->state == NS_WRITE && c->outoff == 0 && ns_write(c) != 0) {
            ns_close_conn(ns, i);
            continue;
        }
        i++;
    }
    ns_log_flush(ns, now, 0);
}

uint64_t csni_ns_next_deadline(const struct csni_ns *ns)
{
    uint64_t d = UINT64_MAX;
    int i;

    if (ns->nbadkey + ns->nexpired + ns->nevicted > 0)
        d = ns->log_next;
    if (ns->accept_pause_until < d && ns->accept_pause_until > ns_now_ms())
        d = ns->accept_pause_until;
    for (i = 0; i < ns->nconns; i++) {
        if (ns->conns[i]->deadline < d)
            d = ns->conns[i]->deadline;
    }
    return d;
}

void csni_ns_rank_gone(struct csni_ns *ns, int rank)
{
    int b;

    for (b = 0; b < NS_BUCKETS; b++) {
        struct ns_item **pp = &ns->names[b];
        while (*pp != NULL) {
            struct ns_item *it = *pp;
            if ((int)((it->id >> 32) & 0xFFFFFFu) == rank) {
                *pp = it->next;
                ns_free_item(it);
            } else {
                pp = &it->next;
            }
        }
    }
}

void csni_ns_destroy(struct csni_ns *ns)
{
    int b;

    if (ns == NULL)
        return;
    ns_log_flush(ns, ns_now_ms(), 1);
    while (ns->nconns > 0)
        ns_close_conn(ns, ns->nconns - 1);
    free(ns->conns);
    if (ns->lfd >= 0)
        close(ns->lfd);
    close(ns->epfd);
    if (ns->sockpath[0] != '\0')
        unlink(ns->sockpath);
    for (b = 0; b < NS_BUCKETS; b++) {
        struct ns_item *it, *next;
        for (it = ns->names[b]; it != NULL; it = next) {
            next = it->next;
            ns_free_item(it);
        }
        for (it = ns->kv[b]; it != NULL; it = next) {
            next = it->next;
            ns_free_item(it);
        }
    }
    free(ns);
}
