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
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define NS_LINE_MAX 4096 /* longest request line: "PUT " + 1023 + " " + 1023 fits */
#define NS_IDLE_MS 30000 /* a connection must send its request (and take its reply) in this */
#define NS_WAIT_CAP_MS ((uint64_t)1 << 40)
#define NS_BUCKETS 4096

enum ns_state { NS_READ_KEY, NS_READ_REQ, NS_PARKED, NS_WRITE };
enum ns_wait { NS_WAIT_NAME, NS_WAIT_KEY };

struct ns_conn {
    int fd;
    int idx; /* its place in ns->conns */
    enum ns_state state;
    uint64_t deadline;
    char in[NS_LINE_MAX];
    size_t inlen;
    char out[NS_LINE_MAX];
    size_t outlen, outoff;
    enum ns_wait wait_kind; /* NS_PARKED: what it waits for, and its name or key */
    char *wait_for;
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
    char sockpath[256]; /* Unix socket to unlink, or "" */
    char key[33];
    int size;
    int next_proc; /* PROC: the next fresh process id */
    struct ns_conn **conns;
    int nconns, capconns, maxconns;
    int polled_listener; /* csni_ns_pollfds put the listener first */
    char who[32];        /* prefix of messages: "csnrun" or "csn[0]" */
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
        ns->maxconns = rl.rlim_cur > 65536 ? 65536 - 64 : (int)rl.rlim_cur - 64;
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

static void ns_close_conn(struct csni_ns *ns, int i)
{
    struct ns_conn *c = ns->conns[i];

    close(c->fd);
    free(c->wait_for);
    free(c);
    if (i != --ns->nconns) {
        ns->conns[i] = ns->conns[ns->nconns];
        ns->conns[i]->idx = i;
    }
}

/* Queues the reply and switches the connection to writing (it is closed once written). */
static void ns_reply(struct ns_conn *c, const char *fmt, const char *arg)
{
    int n = snprintf(c->out, sizeof c->out, fmt, arg);

    c->outlen = (n < 0 || (size_t)n >= sizeof c->out) ? 0 : (size_t)n;
    c->outoff = 0;
    c->state = NS_WRITE;
    c->deadline = ns_now_ms() + NS_IDLE_MS;
    free(c->wait_for);
    c->wait_for = NULL;
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
                fprintf(stderr,
                        "%s: name service: closed a connection that did not "
                        "present the job key\n",
                        ns->who);
                return -1;
            }
            c->state = NS_READ_REQ;
        } else {
            ns_request(ns, c, c->in);
        }
        c->inlen -= (size_t)(nl + 1 - c->in);
        memmove(c->in, nl + 1, c->inlen);
    }
}

/* Writes the pending reply. Returns 0 to keep, -1 to close (done or failed). */
static int ns_write(struct ns_conn *c)
{
    while (c->outoff < c->outlen) {
        ssize_t w = send(c->fd, c->out + c->outoff, c->outlen - c->outoff, MSG_NOSIGNAL);
        if (w < 0)
            return (errno == EAGAIN || errno == EINTR) ? 0 : -1;
        c->outoff += (size_t)w;
    }
    return -1;
}

int csni_ns_pollfds(struct csni_ns *ns, struct pollfd *fds, int max)
{
    int n = 0, i;

    ns->polled_listener = ns->nconns < ns->maxconns && max > 0;
    if (ns->polled_listener) {
        fds[n].fd = ns->lfd;
        fds[n].events = POLLIN;
        fds[n].revents = 0;
        n++;
    }
    for (i = 0; i < ns->nconns && n < max; i++) {
        fds[n].fd = ns->conns[i]->fd;
        fds[n].events = ns->conns[i]->state == NS_WRITE ? POLLOUT : POLLIN;
        fds[n].revents = 0;
        n++;
    }
    return n;
}

static void ns_accept(struct csni_ns *ns)
{
    while (ns->nconns < ns->maxconns) {
        struct ns_conn *c;
        int fd = accept4(ns->lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);

        if (fd < 0)
            return;
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
        c->state = NS_READ_KEY;
        c->deadline = ns_now_ms() + NS_IDLE_MS;
        c->idx = ns->nconns;
        ns->conns[ns->nconns++] = c;
    }
}

void csni_ns_handle(struct csni_ns *ns, const struct pollfd *fds, int n)
{
    int i, off = ns->polled_listener, npolled = n - off;
    struct ns_conn **snap;
    uint64_t now;

    /* fds[off + i] is the connection that was conns[i] when polled. Handling one (a REG)
     * may answer others and closing reorders the array, so work from a snapshot. */
    snap = npolled > 0 ? malloc((size_t)npolled * sizeof *snap) : NULL;
    if (npolled > 0 && snap == NULL)
        return;
    if (npolled > 0)
        memcpy(snap, ns->conns, (size_t)npolled * sizeof *snap);
    for (i = 0; i < npolled; i++) {
        struct ns_conn *c = snap[i];
        short ev = fds[off + i].revents;
        int close_it = 0;

        if (ev == 0)
            continue;
        if (ev & (POLLIN | POLLHUP | POLLERR))
            close_it = ns_read(ns, c) != 0;
        if (!close_it && c->state == NS_WRITE)
            close_it = ns_write(c) != 0;
        if (close_it)
            ns_close_conn(ns, c->idx);
    }
    free(snap);
    if (off && fds[0].revents != 0)
        ns_accept(ns);

    /* Deadlines: a parked request is answered NOTFOUND; an idle connection is dropped.
     * Replies made above are tried at once (they usually fit the socket buffer). */
    now = ns_now_ms();
    for (i = 0; i < ns->nconns;) {
        struct ns_conn *c = ns->conns[i];

        if (c->deadline <= now) {
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
}

uint64_t csni_ns_next_deadline(const struct csni_ns *ns)
{
    uint64_t d = UINT64_MAX;
    int i;

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
    while (ns->nconns > 0)
        ns_close_conn(ns, ns->nconns - 1);
    free(ns->conns);
    if (ns->lfd >= 0)
        close(ns->lfd);
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
