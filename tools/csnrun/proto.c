/* proto.c: csnrun's line protocol helpers (encoding, line reading) and small system utilities. */
#include "csnrun.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* A line longer than this ends the stream: it is not from a csnrun peer. */
#define LINE_MAX_BYTES (64u << 20)

int linebuf_fill(struct linebuf *lb, int fd)
{
    ssize_t r;

    if (lb->start > 0 && lb->start == lb->len) {
        lb->start = lb->len = 0;
    } else if (lb->start > lb->cap / 2) {
        memmove(lb->buf, lb->buf + lb->start, lb->len - lb->start);
        lb->len -= lb->start;
        lb->start = 0;
    }
    if (lb->cap - lb->len < 4096) {
        size_t nc = lb->cap ? 2 * lb->cap : 16384;
        char *nb;

        if (nc > LINE_MAX_BYTES) {
            errno = EMSGSIZE;
            return -1;
        }
        nb = realloc(lb->buf, nc);
        if (nb == NULL)
            return -1;
        lb->buf = nb;
        lb->cap = nc;
    }
    r = read(fd, lb->buf + lb->len, lb->cap - lb->len - 1);
    if (r > 0) {
        lb->len += (size_t)r;
        return 1;
    }
    if (r == 0)
        return 0;
    return (errno == EAGAIN || errno == EINTR) ? 1 : -1;
}

char *linebuf_next(struct linebuf *lb)
{
    char *s, *nl;

    if (lb->buf == NULL || lb->start >= lb->len)
        return NULL;
    s = lb->buf + lb->start;
    nl = memchr(s, '\n', lb->len - lb->start);
    if (nl == NULL)
        return NULL;
    *nl = '\0';
    lb->start = (size_t)(nl - lb->buf) + 1;
    return s;
}

void linebuf_free(struct linebuf *lb)
{
    free(lb->buf);
    memset(lb, 0, sizeof *lb);
}

char *proto_encode(const char *src, size_t n)
{
    static const char hex[] = "0123456789ABCDEF";
    char *out = malloc(3 * n + 2), *p = out;
    size_t i;

    if (out == NULL)
        return NULL;
    if (n == 0) {
        strcpy(out, "%");
        return out;
    }
    for (i = 0; i < n; i++) {
        unsigned char c = (unsigned char)src[i];
        if (c <= 0x20 || c >= 0x7f || c == '%') {
            *p++ = '%';
            *p++ = hex[c >> 4];
            *p++ = hex[c & 15];
        } else {
            *p++ = (char)c;
        }
    }
    *p = '\0';
    return out;
}

static int proto_hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    return -1;
}

long proto_decode(char *s)
{
    char *r = s, *w = s;

    if (strcmp(s, "%") == 0) {
        *s = '\0';
        return 0;
    }
    while (*r) {
        if (*r == '%') {
            int hi = proto_hexval(r[1]), lo = hi < 0 ? -1 : proto_hexval(r[2]);
            if (lo < 0)
                return -1;
            *w++ = (char)(hi << 4 | lo);
            r += 3;
        } else {
            *w++ = *r++;
        }
    }
    *w = '\0';
    return (long)(w - s);
}

int proto_split(char *line, char **f, int max)
{
    int n = 0;
    char *p = line;

    while (*p && n < max) {
        f[n++] = p;
        p = strchr(p, ' ');
        if (p == NULL)
            break;
        *p++ = '\0';
    }
    return n;
}

int write_all(int fd, const void *buf, size_t n)
{
    const char *p = buf;

    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN) {
                struct pollfd pf = {.fd = fd, .events = POLLOUT};
                poll(&pf, 1, 1000);
                continue;
            }
            return -1;
        }
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

int proto_sendf(int fd, const char *fmt, ...)
{
    va_list ap;
    char small[512], *buf = small;
    int n, rc;

    va_start(ap, fmt);
    n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0)
        return -1;
    if ((size_t)n >= sizeof small) {
        buf = malloc((size_t)n + 1);
        if (buf == NULL)
            return -1;
        va_start(ap, fmt);
        vsnprintf(buf, (size_t)n + 1, fmt, ap);
        va_end(ap);
    }
    rc = write_all(fd, buf, (size_t)n);
    if (buf != small)
        free(buf);
    return rc;
}

uint64_t now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static int proto_rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)ftw;
    if (flag == FTW_DP)
        rmdir(path);
    else
        unlink(path);
    return 0;
}

int rm_tree(const char *dir)
{
    return nftw(dir, proto_rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* Is rank one of ranks[0..n)? A NULL ranks means every rank. */
static int shm_mine(const int *ranks, int n, int rank)
{
    int i;

    if (ranks == NULL)
        return 1;
    for (i = 0; i < n; i++) {
        if (ranks[i] == rank)
            return 1;
    }
    return 0;
}

static void shm_cleanup_dir(const char *dir, const char *prefix, size_t pl, const int *ranks, int n)
{
    DIR *d;
    struct dirent *e;
    int dfd;

    d = opendir(dir);
    if (d == NULL)
        return;
    dfd = dirfd(d);
    while ((e = readdir(d)) != NULL) {
        int from = -1, to = -1;
        struct stat st;

        if (strncmp(e->d_name, prefix, pl) != 0)
            continue;
        /* csn.<jobid>.<from>.<to>.<lane>: the pair's processes share a host. */
        if (ranks != NULL && sscanf(e->d_name + pl, "%d.%d", &from, &to) != 2)
            continue;
        if (!shm_mine(ranks, n, from) && !shm_mine(ranks, n, to))
            continue;
        /* Only our own: a file of another user that squats the job's prefix stays. */
        if (fstatat(dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && st.st_uid == geteuid())
            unlinkat(dfd, e->d_name, 0);
    }
    closedir(d);
}

void shm_cleanup(const char *jobid, const int *ranks, int n)
{
    const char *dir = getenv("CSN_SHM_DIR");
    char prefix[128];
    size_t pl;

    if (jobid == NULL || *jobid == '\0')
        return;
    pl = (size_t)snprintf(prefix, sizeof prefix, "csn.%s.", jobid);
    if (pl >= sizeof prefix)
        return;
    shm_cleanup_dir("/dev/shm", prefix, pl, ranks, n);
    /* The ranks' segments go where CSN_SHM_DIR says (the agent takes it from the forwarded
     * variables): a job that failed there once left its files behind. */
    if (dir != NULL && *dir != '\0' && strcmp(dir, "/dev/shm") != 0)
        shm_cleanup_dir(dir, prefix, pl, ranks, n);
}

unsigned long long proc_start_time(long pid, char *state)
{
    char path[64], buf[1024];
    unsigned long long st = 0;
    char c = 0;
    snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    FILE *f = fopen(path, "re");
    if (f == NULL)
        return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    /* after the command name, which may hold spaces and parentheses: from the last ')' */
    char *p = strrchr(buf, ')');
    if (p == NULL || p[1] == '\0' ||
        sscanf(p + 2,
               "%c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d "
               "%*d %*d %*d %*d %llu",
               &c, &st) != 2)
        st = 0;
    if (state != NULL)
        *state = c;
    return st;
}

int jobdir_claim(const char *dir)
{
    char path[PATH_MAX], line[64];
    long pid = (long)getpid();
    int fd, n;

    if ((size_t)snprintf(path, sizeof path, "%s/owner", dir) >= sizeof path) {
        errno = ENAMETOOLONG;
        return -1;
    }
    n = snprintf(line, sizeof line, "%ld %llu\n", pid, proc_start_time(pid, NULL));
    fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0)
        return -1;
    if (write_all(fd, line, (size_t)n) != 0) {
        close(fd);
        return -1;
    }
    return close(fd);
}

/* Whether the job directory tmp/name (ours) has an owner file naming a process that is gone.
 * A directory without one (being created, or of an older csnrun) is left alone. */
static int jobdir_stale(int dfd, const char *name)
{
    char path[PATH_MAX], line[64];
    long pid = 0;
    unsigned long long st = 0;
    ssize_t n;
    int fd;

    if ((size_t)snprintf(path, sizeof path, "%s/owner", name) >= sizeof path)
        return 0;
    fd = openat(dfd, path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return 0;
    n = read(fd, line, sizeof line - 1);
    close(fd);
    if (n <= 0)
        return 0;
    line[n] = '\0';
    if (sscanf(line, "%ld %llu", &pid, &st) != 2 || pid <= 0)
        return 0;
    return proc_start_time(pid, NULL) != st; /* gone, or its pid taken by another process */
}

void jobdir_sweep(const char *tmp)
{
    DIR *d = opendir(tmp);
    struct dirent *e;
    char path[PATH_MAX], jobid[16];
    struct stat st;

    if (d == NULL)
        return;
    while ((e = readdir(d)) != NULL) {
        const char *nm = e->d_name;
        /* csn-<12 hex>-<6 of mkdtemp> */
        if (strncmp(nm, "csn-", 4) != 0 || strlen(nm) != 4 + 12 + 1 + 6 || nm[16] != '-' ||
            strspn(nm + 4, "0123456789abcdef") != 12)
            continue;
        if (fstatat(dirfd(d), nm, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISDIR(st.st_mode) ||
            st.st_uid != geteuid() || !jobdir_stale(dirfd(d), nm))
            continue;
        snprintf(jobid, sizeof jobid, "%.12s", nm + 4);
        snprintf(path, sizeof path, "%s/%s", tmp, nm);
        rm_tree(path);
        shm_cleanup(jobid, NULL, 0);
    }
    closedir(d);
}

void set_cloexec(int fd)
{
    fcntl(fd, F_SETFD, fcntl(fd, F_GETFD) | FD_CLOEXEC);
}

void set_nonblock(int fd)
{
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
}
