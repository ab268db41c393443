/* pmix.c: starting under a PMIx launcher: rank and size from PMIx, the job key and name service
 * from rank 0, endpoints by PMIx Put/Get. libpmix itself is reached only through the bootstrap
 * component libcsn-pmix.so (pmix_module.c), loaded with dlopen when a launcher's variables are
 * there: libcsn has no link-time dependency on PMIx. */
#ifdef CSN_HAVE_PMIX
#include "boot/module.h"
#include "boot/pmix.h"
#include "boot/pmix_module.h"
#include "core/hostbar.h"
#include "core/thread.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <limits.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "names/nsserv.h"

/* Why not PMIx_Publish/Lookup for names: under Slurm they return PMIX_ERR_NOT_SUPPORTED, and
 * Open MPI 4.1's mpirun accepts a second publish of a name by another process (no
 * CSN_NAME_TAKEN possible) and ends a waiting lookup after about 2 s with a printed error.
 * Rank 0's name service gives every launcher csnrun's semantics. */

#define PMIX_NS_MAXCONNS 1024
#define PMIX_BOOT_KEY "boot" /* rank 0's "KEY|SFX|NS" (csn.boot in PMIx) */
#define PMIX_MAX_KEY 511     /* PMIX_MAX_KEYLEN */

static const struct csni_pmix_module *pmix_mod; /* the loaded component */
static struct csni_pmix_job pmix_job;
static pid_t pmix_pid;  /* the process that booted; a forked child is not it */
static int pmix_booted; /* csni_pmix_boot succeeded in pmix_pid */
static int pmix_size;
static struct csni_boot pmix_saved; /* a later csn start (after a failed one) reuses it */
static char pmix_shm_dir[PATH_MAX];

int csni_pmix_present(void)
{
    return getenv("PMIX_NAMESPACE") != NULL && getenv("PMIX_RANK") != NULL;
}

static int pmix_timeout_s(uint64_t ms)
{
    uint64_t s = (ms + 999) / 1000;

    return s == 0 ? 1 : s > INT_MAX ? INT_MAX : (int)s;
}

static csn_status pmix_copy(char *dst, size_t cap, const char *src)
{
    size_t n = strlen(src);

    if (n < cap) {
        memcpy(dst, src, n + 1);
        return CSN_OK;
    }
    memcpy(dst, src, cap - 1);
    dst[cap - 1] = '\0';
    return CSN_OVERRUN;
}

csn_status csni_pmix_put(const char *key, const char *value)
{
    char k[PMIX_MAX_KEY + 1], err[256] = "";

    if (pmix_mod == NULL)
        return CSN_SYSTEM_ERROR;
    if (snprintf(k, sizeof k, "csn.%s", key) >= (int)sizeof k)
        return CSN_INVALID_ARGUMENT;
    if (pmix_mod->put(k, value, err, sizeof err) != 0) {
        fprintf(stderr, "csn: PMIx_Put of %s failed: %s\n", k, err);
        return CSN_SYSTEM_ERROR;
    }
    return CSN_OK;
}

static uint64_t pmix_now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

csn_status csni_pmix_get(int rank, const char *key, uint64_t timeout_ms, char *value, size_t cap)
{
    char k[PMIX_MAX_KEY + 1];
    uint64_t deadline, now, pause = 1;
    int r;

    if (pmix_mod == NULL || rank < 0 || rank >= pmix_size)
        return CSN_NOT_FOUND;
    if (snprintf(k, sizeof k, "csn.%s", key) >= (int)sizeof k)
        return CSN_INVALID_ARGUMENT;
    if (timeout_ms > ((uint64_t)1 << 40))
        timeout_ms = (uint64_t)1 << 40;
    deadline = pmix_now_ms() + timeout_ms;
    /* The server usually holds the request until rank commits the key, but Open MPI's
     * sometimes answers NOT-FOUND at once while rank is still starting: ask again. */
    for (;;) {
        now = pmix_now_ms();
        r = pmix_mod->get(rank, k, pmix_timeout_s(deadline > now ? deadline - now : 0), value, cap);
        if (r == 0)
            return CSN_OK;
        if (r == 2)
            return CSN_OVERRUN;
        now = pmix_now_ms();
        if (now >= deadline)
            return CSN_NOT_FOUND;
        if (pause < 100)
            pause *= 2;
        if (pause > deadline - now)
            pause = deadline - now;
        nanosleep(&(struct timespec){.tv_sec = 0, .tv_nsec = (long)pause * 1000000L}, NULL);
    }
}

/* ---- this host's address, for a job over several hosts ---- */

/* The address other hosts reach us on: CSN_ADDR, the IPv4 address of interface CSN_IFACE,
 * or the first that is up and not loopback. 0, or -1 after a message. */
static int pmix_host_addr(char *out, size_t cap)
{
    const char *want = getenv("CSN_IFACE"), *a = getenv("CSN_ADDR");
    struct ifaddrs *all, *i;
    int rc = -1;

    if (a != NULL && *a != '\0')
        return pmix_copy(out, cap, a) == CSN_OK ? 0 : -1;
    if (want != NULL && *want == '\0')
        want = NULL;
    if (getifaddrs(&all) != 0)
        return -1;
    for (i = all; i != NULL && rc != 0; i = i->ifa_next) {
        if (i->ifa_addr == NULL || i->ifa_addr->sa_family != AF_INET ||
            (want != NULL ? strcmp(i->ifa_name, want) != 0
                          : (i->ifa_flags & IFF_UP) == 0 || (i->ifa_flags & IFF_LOOPBACK) != 0))
            continue;
        if (inet_ntop(AF_INET, &((struct sockaddr_in *)i->ifa_addr)->sin_addr, out,
                      (socklen_t)cap) != NULL)
            rc = 0;
    }
    freeifaddrs(all);
    if (rc != 0)
        fprintf(stderr, "csn: no IPv4 address %s%s for the other hosts of the job; set CSN_ADDR\n",
                want != NULL ? "on interface " : "on any interface", want != NULL ? want : "");
    return rc;
}

/* ---- rank 0's name service ---- */

static void *pmix_ns_main(void *arg)
{
    struct csni_ns *ns = arg;
    struct pollfd fds[CSNI_NS_POLLFDS];
    sigset_t all;

    /* The application's signals are for its own threads. */
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, NULL);
    for (;;) {
        int n = csni_ns_pollfds(ns, fds, CSNI_NS_POLLFDS), timeout = -1;
        uint64_t dl = csni_ns_next_deadline(ns);
        struct timespec ts;

        if (dl != UINT64_MAX) {
            uint64_t now;
            clock_gettime(CLOCK_MONOTONIC, &ts);
            now = (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
            timeout = dl <= now ? 0 : dl - now > 60000 ? 60000 : (int)(dl - now);
        }
        if (poll(fds, (nfds_t)n, timeout) < 0 && errno != EINTR)
            return NULL;
        csni_ns_handle(ns, fds, n);
    }
}

/* Rank 0: the name service in a thread of its own for the life of the process. */
static int pmix_start_ns(const char *key, int size, const char *addr, char *ns_addr, size_t cap)
{
    struct csni_ns *ns =
        csni_ns_create("csn[0]", NULL, key, size, 1, addr, PMIX_NS_MAXCONNS, ns_addr, cap);
    pthread_t th;
    int rc;

    if (ns == NULL)
        return -1;
    rc = csni_thread_start(&th, true, 0, pmix_ns_main, ns);
    if (rc != 0) {
        csni_ns_destroy(ns);
        fprintf(stderr, "csn: cannot start the name service thread: %s\n", strerror(rc));
        return -1;
    }
    return 0;
}

/* ---- identity ---- */

static int pmix_random_hex(char *out, size_t nbytes)
{
    unsigned char b[32];
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    ssize_t got = fd >= 0 ? read(fd, b, nbytes) : -1;
    size_t i;

    if (fd >= 0)
        close(fd);
    if (got != (ssize_t)nbytes)
        return -1;
    for (i = 0; i < nbytes; i++)
        sprintf(out + 2 * i, "%02x", b[i]);
    return 0;
}

/* At exit: this rank's socket, its job directory and the shared-memory files made for it (it
 * will never map them now) go; those it made stay for their peers, which unlink them when
 * they map them (a message may still be in one) or when they exit. Then PMIx_Finalize (a
 * launcher takes a rank that leaves without it for a failed one). Not in a forked child,
 * which inherits the handler. */
static void pmix_atexit(void)
{
    char path[PATH_MAX + 32], prefix[128];
    DIR *d;
    struct dirent *e;
    size_t pl;

    if (!pmix_booted || getpid() != pmix_pid)
        return;
    snprintf(path, sizeof path, "%s/p%d.sock", pmix_saved.jobdir, pmix_saved.rank);
    unlink(path);
    rmdir(pmix_saved.jobdir);
    pl = (size_t)snprintf(prefix, sizeof prefix, "csn.%s.", pmix_saved.jobid);
    if (pl < sizeof prefix && (d = opendir(pmix_shm_dir)) != NULL) {
        while ((e = readdir(d)) != NULL) {
            int from, to;
            unsigned lane;
            /* The rings addressed to us, and rank 0's host-barrier segment (core/hostbar.c)
             * when the job ended before its second barrier. */
            if (strncmp(e->d_name, prefix, pl) == 0 &&
                ((sscanf(e->d_name + pl, "%d.%d.%u", &from, &to, &lane) == 3 &&
                  to == pmix_saved.rank && from != to) ||
                 (pmix_saved.rank == 0 && strcmp(e->d_name + pl, CSNI_HOSTBAR_NAME) == 0)))
                unlinkat(dirfd(d), e->d_name, 0);
        }
        closedir(d);
    }
    pmix_mod->finalize();
}

/* 1 when dir (a rank's job directory) holds a socket "p<rank>.sock" that nobody listens on
 * any more (connect: ECONNREFUSED): its rank died without its exit handler (kill -9). The
 * socket's path goes to *sock. A live rank's socket accepts: it is left alone. */
static int pmix_stale(int dfd, const char *dir, char *sock, size_t cap)
{
    DIR *d;
    struct dirent *e;
    int fd, found = 0;

    if ((fd = openat(dfd, dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0 ||
        (d = fdopendir(fd)) == NULL) {
        if (fd >= 0)
            close(fd);
        return 0;
    }
    while (!found && (e = readdir(d)) != NULL) {
        struct sockaddr_un un;
        size_t n = strlen(e->d_name);
        int s;
        if (e->d_name[0] != 'p' || n < 6 || strcmp(e->d_name + n - 5, ".sock") != 0)
            continue;
        memset(&un, 0, sizeof un);
        un.sun_family = AF_UNIX;
        if (snprintf(un.sun_path, sizeof un.sun_path, "%s/%s", dir, e->d_name) >=
                (int)sizeof un.sun_path ||
            snprintf(sock, cap, "%s", e->d_name) >= (int)cap)
            continue;
        if ((s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0)) < 0)
            continue;
        found = connect(s, (struct sockaddr *)&un, sizeof un) != 0 && errno == ECONNREFUSED;
        close(s);
    }
    closedir(d);
    return found;
}

/* Removes the job directories that ranks killed with -9 left in tmp (their exit handler never
 * ran): "csn-JOB-rN-XXXXXX" of our own user, not of our job, whose socket nobody listens on.
 * Each new job's first local rank sweeps: such leftovers last until the next job at most. */
static void pmix_sweep(const char *tmp, const struct csni_boot *b)
{
    char own[96], sock[64], path[PATH_MAX];
    DIR *d;
    struct dirent *e;
    struct stat st;

    if (b->local_rank != 0 || (d = opendir(tmp)) == NULL)
        return;
    snprintf(own, sizeof own, "csn-%s-", b->jobid);
    while ((e = readdir(d)) != NULL) {
        if (strncmp(e->d_name, "csn-", 4) != 0 || strncmp(e->d_name, own, strlen(own)) == 0 ||
            strstr(e->d_name, "-r") == NULL ||
            fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISDIR(st.st_mode) ||
            st.st_uid != geteuid())
            continue;
        snprintf(path, sizeof path, "%s/%s", tmp, e->d_name);
        if (!pmix_stale(dirfd(d), path, sock, sizeof sock))
            continue;
        snprintf(path, sizeof path, "%s/%s/%s", tmp, e->d_name, sock);
        unlink(path);
        snprintf(path, sizeof path, "%s/%s", tmp, e->d_name);
        rmdir(path); /* only when nothing else is in it */
    }
    closedir(d);
}

/* A private job directory for this rank's Unix socket (ranks of a host need not share one:
 * the socket's path is published). Short enough for a socket address. */
static int pmix_jobdir(struct csni_boot *b)
{
    const char *t = getenv("TMPDIR");
    char tmpl[PATH_MAX];

    if (t == NULL || *t != '/' || strlen(t) > 48)
        t = "/tmp";
    pmix_sweep(t, b);
    snprintf(tmpl, sizeof tmpl, "%s/csn-%s-r%d-XXXXXX", t, b->jobid, b->rank);
    if (mkdtemp(tmpl) == NULL) {
        fprintf(stderr, "csn: cannot create a job directory %s: %s\n", tmpl, strerror(errno));
        return -1;
    }
    return pmix_copy(b->jobdir, sizeof b->jobdir, tmpl) == CSN_OK ? 0 : -1;
}

/* The job id: the PMIx namespace, reduced to file-name characters, and rank 0's random
 * suffix (two launchers may both call their job "slurm.pmix.1.0"). */
static void pmix_jobid(struct csni_boot *b, const char *sfx)
{
    size_t i, n = 0;
    const char *s = pmix_job.nspace;

    for (i = 0; s[i] != '\0' && n < 24; i++) {
        char c = s[i];
        b->jobid[n++] = ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                         (c >= '0' && c <= '9') || c == '-' || c == '_')
                            ? c
                            : '_';
    }
    snprintf(b->jobid + n, sizeof b->jobid - n, "-%s", sfx);
}

/* "KEY|SFX|NS" from rank 0, split in place. */
static int pmix_parse_boot(char *v, char **key, char **sfx, char **ns)
{
    char *a = strchr(v, '|'), *c = a != NULL ? strchr(a + 1, '|') : NULL;

    if (a == NULL || c == NULL || a - v != 32 || c - a - 1 != 8 || strncmp(c + 1, "tcp:", 4) != 0)
        return -1;
    *a = *c = '\0';
    *key = v;
    *sfx = a + 1;
    *ns = c + 1;
    return 0;
}

static csn_status pmix_boot_fail(const char *what)
{
    if (what != NULL)
        fprintf(stderr, "csn: PMIx: %s\n", what);
    pmix_mod->finalize();
    return CSN_SYSTEM_ERROR;
}

/* ---- the bootstrap component ---- */

/* Finds and loads libcsn-pmix.so: CSN_PMIX_MODULE (a path) if set; else in csn/ beside the
 * object this code is in (libcsn.so, or a program linked with libcsn.a, whose library is then
 * in ../lib), the install directory, the build tree. 0, or -1 after one line on stderr. */
static int pmix_load(void)
{
    char path[PATH_MAX + 64];
    void *h;
    csni_pmix_module_fn fn;
    const struct csni_pmix_module *m;

    if (pmix_mod != NULL)
        return 0;
    if (!csni_module_find("CSN_PMIX_MODULE", CSNI_PMIX_MODULE_FILE, CSN_INSTALL_LIBDIR,
                          CSN_INSTALL_LIBDIR_REL, CSN_BUILD_LIBDIR, path, sizeof path)) {
        fprintf(stderr,
                "csn: started by a PMIx launcher, but the PMIx component %s is not "
                "installed (set CSN_PMIX_MODULE to its path): running as a lone process\n",
                CSNI_PMIX_MODULE_FILE);
        return -1;
    }
    h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (h == NULL) {
        fprintf(stderr, "csn: cannot load the PMIx component (%s): running as a lone process\n",
                dlerror());
        return -1;
    }
    *(void **)&fn = dlsym(h, CSNI_PMIX_MODULE_SYMBOL);
    m = fn != NULL ? fn() : NULL;
    if (m == NULL || m->abi != CSNI_PMIX_MODULE_ABI) {
        fprintf(stderr,
                "csn: %s is not a PMIx component of this libcsn: running as a lone "
                "process\n",
                path);
        dlclose(h);
        return -1;
    }
    pmix_mod = m; /* kept loaded for the life of the process */
    return 0;
}

csn_status csni_pmix_boot(struct csni_boot *b)
{
    static int hooked;
    char addr[64] = "127.0.0.1", value[PATH_MAX + 64], *key, *sfx, *ns, err[256] = "";
    const char *lt = getenv("CSN_LOOKUP_TIMEOUT"), *sd = getenv("CSN_SHM_DIR");

    if (pmix_booted) {
        if (getpid() != pmix_pid) {
            fprintf(stderr, "csn: a process forked from a rank started by a PMIx launcher cannot "
                            "use csn\n");
            return CSN_SYSTEM_ERROR;
        }
        *b = pmix_saved;
        return CSN_OK;
    }
    if (pmix_load() != 0)
        return CSN_NOT_FOUND;
    if (pmix_mod->init(&pmix_job, err, sizeof err) != 0) {
        fprintf(stderr, "csn: PMIx_Init failed (%s): running as a lone process\n", err);
        return CSN_NOT_FOUND;
    }
    if (pmix_job.size < 1 || pmix_job.size > (1 << 23) || pmix_job.rank < 0 ||
        pmix_job.rank >= pmix_job.size)
        return pmix_boot_fail("no usable job size (PMIX_JOB_SIZE)");
    b->size = pmix_size = (int)pmix_job.size;
    b->rank = (int)pmix_job.rank;
    b->local_size =
        pmix_job.local_size >= 1 && pmix_job.local_size <= b->size ? (int)pmix_job.local_size : 1;
    b->local_rank = pmix_job.local_rank >= 0 && pmix_job.local_rank < b->local_size
                        ? (int)pmix_job.local_rank
                        : 0;
    if (pmix_job.host[0] != '\0')
        pmix_copy(b->host, sizeof b->host, pmix_job.host);
    else if (gethostname(b->host, sizeof b->host) != 0)
        strcpy(b->host, "localhost");
    b->host[sizeof b->host - 1] = '\0';

    /* Over several hosts ranks also listen on TCP, on CSN_ADDR (proc.c reads it). */
    if (b->local_size < b->size) {
        if (pmix_host_addr(addr, sizeof addr) != 0)
            return pmix_boot_fail(NULL);
        setenv("CSN_ADDR", addr, 0);
    }
    if (b->rank == 0) {
        char k[33], s[9], nsa[PATH_MAX];
        if (pmix_random_hex(k, 16) != 0 || pmix_random_hex(s, 4) != 0)
            return pmix_boot_fail("cannot read /dev/urandom");
        if (pmix_start_ns(k, b->size, addr, nsa, sizeof nsa) != 0)
            return pmix_boot_fail(NULL);
        snprintf(value, sizeof value, "%s|%s|%s", k, s, nsa);
        if (csni_pmix_put(PMIX_BOOT_KEY, value) != CSN_OK)
            return pmix_boot_fail(NULL);
    } else if (csni_pmix_get(0, PMIX_BOOT_KEY,
                             (lt != NULL && atoi(lt) > 0 ? (uint64_t)atoi(lt) : 60) * 1000u, value,
                             sizeof value) != CSN_OK) {
        return pmix_boot_fail("rank 0 did not publish the job key (does it use csn?)");
    }
    if (pmix_parse_boot(value, &key, &sfx, &ns) != 0)
        return pmix_boot_fail("malformed job key from rank 0");
    memcpy(b->jobkey, key, 33);
    pmix_jobid(b, sfx);
    snprintf(b->ns, sizeof b->ns, "pmix+%s", ns);
    if (pmix_jobdir(b) != 0)
        return pmix_boot_fail(NULL);
    snprintf(pmix_shm_dir, sizeof pmix_shm_dir, "%s", sd != NULL && *sd ? sd : "/dev/shm");
    b->launched = 1;
    pmix_saved = *b;
    pmix_pid = getpid();
    pmix_booted = 1;
    if (!hooked) {
        hooked = 1;
        atexit(pmix_atexit);
    }
    return CSN_OK;
}
#endif
