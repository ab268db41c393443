/* agent.c: the node agent (`csnrun --agent`), parent of a job's ranks on one host (seed 000's Node
 * Status Process). */
#include "csnrun.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

struct arank {
    int rank;
    char *path;
    char **argv;
    pid_t pid;  /* 0: not started */
    int ended;  /* reaped and reported */
    int out[3]; /* forward mode: read ends of its stdout (1) and stderr (2) pipes, or -1 */
    int cpu;    /* BIND: the CPU it runs on, else -1 */
};

struct agent {
    int rfd, wfd; /* the stream to the launcher */
    int lost;     /* the launcher's stream ended: report nothing more */
    struct linebuf lb;
    char *jobid, *jobkey, *ns, *jobdir, *host;
    char addr[64]; /* CSN_ADDR for the ranks (a job over several hosts), or "" */
    int size, forward, own_jobdir;
    char **envs;
    int nenvs;
    struct arank *ranks;
    int nranks, live;
    pid_t guard;          /* holds the ranks' process group; kills it if we die */
    int guard_reaped;     /* agent_reap took the guardian's end already */
    int guard_fd;         /* write end of the guardian's pipe */
    pid_t self, launcher; /* our pid, and our parent's at start (csnrun, for a local agent) */
    unsigned long long launcher_start; /* the launcher's start time (proc_start_time) */
    int watch[2]; /* the ranks' watch pipe (src/boot/watch.h): they hold [0], only we [1] */
    int stopping;
    int bind, report;   /* BIND: one CPU per rank (agent_cpus); report: say which */
    int ncpu, *cpus;    /* BIND: the CPUs the agent may use, in ascending order */
    uint64_t kill_at;   /* stopping: when SIGKILL follows the SIGTERM */
    struct pollfd *fds; /* the event loop's arrays, 2 + 2 * nranks entries */
    struct arank **who; /* the rank whose output fds[i] is */
    int *which;         /* and which stream (1 or 2) */
};

static int agent_sigpipe[2] = {-1, -1};

static void agent_on_signal(int sig)
{
    unsigned char b = (unsigned char)sig;
    int saved = errno;

    if (write(agent_sigpipe[1], &b, 1) < 0) {
        /* The pipe is full: a wake-up is pending anyway. */
    }
    errno = saved;
}

static void agent_send(struct agent *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void agent_send(struct agent *a, const char *fmt, ...)
{
    va_list ap;
    char buf[256];
    int n;

    if (a->lost)
        return;
    va_start(ap, fmt);
    n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n > 0 && (size_t)n < sizeof buf && write_all(a->wfd, buf, (size_t)n) != 0)
        a->lost = 1;
}

/* ---- reading the job description ---- */

static char *agent_decoded(char *field)
{
    if (proto_decode(field) < 0)
        return NULL;
    return strdup(field);
}

/* NET: the address of this host that the job's other hosts reach, for the ranks' CSN_ADDR.
 * 0; -2 after a message naming the host (the job cannot run without it); -1: malformed. */
static int agent_net(struct agent *a, const char *how, char *value)
{
    const char *host = a->host != NULL ? a->host : "?";
    char route[64];

    if (proto_decode(value) < 0)
        return -1;
    if (strcmp(how, "addr") == 0) {
        if (net_usable_ipv4(value)) {
            snprintf(a->addr, sizeof a->addr, "%s", value);
            return 0;
        }
    } else if (strcmp(how, "iface") == 0) {
        if (net_iface_ipv4(value, a->addr, sizeof a->addr) == 0)
            return 0;
        fprintf(stderr, "csnrun: host %s: CSN_IFACE=%s: no such interface with an IPv4 address\n",
                host, value);
        return -2;
    } else if (strcmp(how, "route") == 0) {
        /* An IPv6 name service gives no IPv4 route: any real interface will have to do. */
        if (net_route_source(value, a->addr, sizeof a->addr) == 0 ||
            (strchr(value, ':') != NULL && net_first_ipv4(a->addr, sizeof a->addr) == 0))
            return 0;
        snprintf(route, sizeof route, "%s", strerror(errno));
        fprintf(stderr, "csnrun: host %s: no IPv4 address here reaches %s (%s); set CSN_IFACE\n",
                host, value, route);
        return -2;
    }
    return -1;
}

/* Handles one line before START. Returns 1 on START, 0 to continue, -1 on a bad line, -2
 * when the job cannot run here (reported). */
static int agent_setup_line(struct agent *a, char *line)
{
    char *f[8];
    int n;

    if (strncmp(line, "RANK ", 5) == 0) {
        char *p = line + 5, *sp;
        struct arank *r, *nr;
        long argc, i;

        nr = realloc(a->ranks, (size_t)(a->nranks + 1) * sizeof *nr);
        if (nr == NULL)
            return -1;
        a->ranks = nr;
        r = &a->ranks[a->nranks++]; /* counted at once: agent_free frees what a bad line left */
        memset(r, 0, sizeof *r);
        r->out[1] = r->out[2] = -1;
        r->rank = (int)strtol(p, &sp, 10);
        if (*sp != ' ')
            return -1;
        p = sp + 1;
        sp = strchr(p, ' ');
        if (sp == NULL)
            return -1;
        *sp = '\0';
        r->path = agent_decoded(p);
        p = sp + 1;
        argc = strtol(p, &sp, 10);
        if (argc < 1 || argc > 1000000 || r->path == NULL)
            return -1;
        r->argv = calloc((size_t)argc + 1, sizeof *r->argv);
        if (r->argv == NULL)
            return -1;
        p = sp;
        for (i = 0; i < argc; i++) {
            if (*p != ' ')
                return -1;
            p++;
            sp = strchr(p, ' ');
            if (sp != NULL)
                *sp = '\0';
            r->argv[i] = agent_decoded(p);
            if (r->argv[i] == NULL)
                return -1;
            if (sp == NULL) {
                p = p + strlen(p);
            } else {
                *sp = ' ';
                p = sp;
            }
        }
        if (*p != '\0')
            return -1;
        return 0;
    }
    if (strncmp(line, "ENV ", 4) == 0) {
        char **ne = realloc(a->envs, (size_t)(a->nenvs + 1) * sizeof *ne);
        if (ne == NULL)
            return -1;
        a->envs = ne;
        a->envs[a->nenvs] = agent_decoded(line + 4);
        if (a->envs[a->nenvs++] == NULL || strchr(a->envs[a->nenvs - 1], '=') == NULL)
            return -1; /* counted: agent_free frees it */
        /* Where the ranks' segments go is where shm_cleanup looks (a remote agent's own
         * environment does not have it). */
        if (strncmp(a->envs[a->nenvs - 1], "CSN_SHM_DIR=", 12) == 0 &&
            setenv("CSN_SHM_DIR", a->envs[a->nenvs - 1] + 12, 1) != 0)
            return -1;
        return 0;
    }
    n = proto_split(line, f, 8);
    if (n == 2 && strcmp(f[0], "BIND") == 0) {
        a->bind = 1;
        a->report = strcmp(f[1], "1") == 0;
        return 0;
    }
    if (n == 3 && strcmp(f[0], "NET") == 0)
        return agent_net(a, f[1], f[2]);
    if (n == 8 && strcmp(f[0], "JOB") == 0) {
        if (a->jobid != NULL)
            return -1; /* one job per agent */
        a->jobid = agent_decoded(f[1]);
        a->jobkey = agent_decoded(f[2]);
        a->ns = agent_decoded(f[3]);
        a->size = atoi(f[4]);
        a->own_jobdir = strcmp(f[5], "-") == 0;
        a->jobdir = a->own_jobdir ? NULL : agent_decoded(f[5]);
        a->host = agent_decoded(f[6]);
        a->forward = strcmp(f[7], "forward") == 0;
        if (a->jobid == NULL || a->jobkey == NULL || a->ns == NULL || a->host == NULL ||
            a->size < 1 || (!a->own_jobdir && a->jobdir == NULL))
            return -1;
        return 0;
    }
    if (n == 1 && strcmp(f[0], "START") == 0)
        return a->jobid != NULL && a->nranks > 0 ? 1 : -1;
    return -1;
}

/* ---- starting the ranks ---- */

/* BIND: the CPUs this agent may run on (its affinity, e.g. from taskset or a batch
 * system's cgroup), which local rank r takes the (r mod n)-th of. 0, or -1 after a line. */
static int agent_cpus(struct agent *a)
{
    cpu_set_t set;
    int c;

    if (sched_getaffinity(0, sizeof set, &set) != 0 ||
        (a->cpus = malloc((size_t)CPU_COUNT(&set) * sizeof *a->cpus)) == NULL) {
        fprintf(stderr, "csnrun: --bind-to core on %s: %s\n", a->host, strerror(errno));
        return -1;
    }
    for (c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &set))
            a->cpus[a->ncpu++] = c;
    return 0;
}

/* 1 while the launcher that started this agent runs: the same pid and start time (pids are
 * reused: pid_max may be 32768), not a zombie. */
static int agent_launcher_alive(const struct agent *a)
{
    char state = 0;
    unsigned long long st;

    if (a->launcher <= 1)
        return 0;
    st = proc_start_time(a->launcher, &state);
    return st != 0 && st == a->launcher_start && state != 'Z' && state != 'X';
}

/* In the guardian, after its agent died: a child outside the group (it survives the group's
 * SIGKILL) removes the job's files once the guardian and the ranks are gone: this host's
 * /dev/shm files of the job and the agent's own job directory, and the launcher's directory
 * too once the launcher is gone. A launcher killed with its agent may take seconds to go
 * under load (a TSan launcher's directory was left in CI after a 2 s wait); a live one
 * removes its own directory when it ends, so waiting for it (up to a minute) costs nothing. */
static void agent_guard_cleaner(struct agent *a)
{
    pid_t guard = getpid(), pid;
    int p[2], i, *mine;
    char b;

    if (pipe(p) != 0)
        return;
    pid = fork();
    if (pid == 0) {
        setsid();
        close(p[0]);
        if (write(p[1], "x", 1) != 1)
            _exit(1);
        close(p[1]);
        for (i = 0; i < 1000 && getppid() == guard; i++)
            nanosleep(&(struct timespec){.tv_nsec = 10000000}, NULL);
        if ((mine = malloc((size_t)a->nranks * sizeof *mine)) != NULL) {
            for (i = 0; i < a->nranks; i++)
                mine[i] = a->ranks[i].rank;
            shm_cleanup(a->jobid, mine, a->nranks);
            free(mine);
        }
        for (i = 0; i < 6000 && !a->own_jobdir && agent_launcher_alive(a); i++)
            nanosleep(&(struct timespec){.tv_nsec = 10000000}, NULL);
        if (a->jobdir != NULL && (a->own_jobdir || !agent_launcher_alive(a)))
            rm_tree(a->jobdir);
        _exit(0);
    }
    close(p[1]);
    if (pid > 0) {
        while (read(p[0], &b, 1) < 0 && errno == EINTR)
            ;
    }
    close(p[0]);
}

/* The guardian: leader of the ranks' process group, so the group id stays valid (it is
 * never reaped before the end). It ignores SIGTERM; when the agent's end of its pipe
 * closes (the agent exited or died) it stops the whole group: SIGTERM, then SIGKILL. */
static pid_t agent_start_guard(struct agent *a)
{
    int p[2];
    pid_t pid;

    if (pipe2(p, O_CLOEXEC) != 0)
        return -1;
    pid = fork();
    if (pid == 0) {
        char b;
        int fd;

        signal(SIGTERM, SIG_IGN);
        signal(SIGINT, SIG_IGN);
        signal(SIGHUP, SIG_IGN);
        setpgid(0, 0);
        /* Hold nothing of the agent's: its stream to the launcher must end when it dies. */
        if (p[0] != 3 && dup2(p[0], 3) != 3)
            _exit(1);
        close_range(4, ~0u, 0);
        fd = open("/dev/null", O_RDWR);
        if (fd >= 0) {
            dup2(fd, 0);
            dup2(fd, 1);
            close(fd);
        }
        while (read(3, &b, 1) < 0 && errno == EINTR)
            ;
        kill(0, SIGTERM);
        sleep(CSNRUN_STOP_GRACE_MS / 1000);
        agent_guard_cleaner(a);
        kill(0, SIGKILL);
        _exit(0);
    }
    close(p[0]);
    if (pid < 0) {
        close(p[1]);
        return -1;
    }
    setpgid(pid, pid);
    a->guard_fd = p[1];
    return pid;
}

/* The environment of one rank: ours, then the forwarded variables, then the rank's own. */
static char **agent_env(struct agent *a, const struct arank *r, int local_rank)
{
    size_t n = 0, i, k = 0;
    char **env;
    char tmp[PATH_MAX + 32];

    while (environ[n] != NULL)
        n++;
    env = calloc(n + (size_t)a->nenvs + 16, sizeof *env); /* 11 set here */
    if (env == NULL)
        return NULL;
#define AGENT_SET(...)                                                                             \
    do {                                                                                           \
        snprintf(tmp, sizeof tmp, __VA_ARGS__);                                                    \
        if ((env[k++] = strdup(tmp)) == NULL)                                                      \
            goto fail;                                                                             \
    } while (0)
    AGENT_SET("CSN_RANK=%d", r->rank);
    AGENT_SET("CSN_SIZE=%d", a->size);
    AGENT_SET("CSN_LOCAL_RANK=%d", local_rank);
    AGENT_SET("CSN_LOCAL_SIZE=%d", a->nranks);
    AGENT_SET("CSN_NS=%s", a->ns);
    AGENT_SET("CSN_JOBKEY=%s", a->jobkey);
    AGENT_SET("CSN_JOBID=%s", a->jobid);
    AGENT_SET("CSN_JOBDIR=%s", a->jobdir);
    AGENT_SET("CSN_HOST=%s", a->host);
    if (a->watch[0] >= 0)
        AGENT_SET("CSN_WATCH_FD=%d", a->watch[0]);
    if (a->addr[0] != '\0')
        AGENT_SET("CSN_ADDR=%s", a->addr);
    /* Bound: how many of this host's ranks share the rank's CPU (the library's spinning
     * policy needs that, not the host's rank count). */
    if (r->cpu >= 0)
        AGENT_SET("CSN_CPU_SHARE=%d",
                  a->nranks / a->ncpu + (local_rank % a->ncpu < a->nranks % a->ncpu));
#undef AGENT_SET
    /* Earlier entries win: skip a later one whose name is already there. */
    for (i = 0; i < (size_t)a->nenvs + n; i++) {
        const char *e = i < (size_t)a->nenvs ? a->envs[i] : environ[i - (size_t)a->nenvs];
        size_t nl = strcspn(e, "="), j;
        int dup = 0;

        for (j = 0; j < k && !dup; j++)
            dup = strncmp(env[j], e, nl + 1) == 0;
        if (!dup && (env[k++] = strdup(e)) == NULL)
            goto fail;
    }
    return env;
fail:
    for (i = 0; i < k; i++)
        free(env[i]);
    free(env);
    return NULL;
}

static void agent_free_env(char **env)
{
    size_t i;

    for (i = 0; env != NULL && env[i] != NULL; i++)
        free(env[i]);
    free(env);
}

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define AGENT_VFORK 0 /* the sanitizers' run-time cannot follow a child in our memory */
#else
#define AGENT_VFORK 1
#endif

/* What the agent gives the child it starts, and what a failing child leaves for the agent to
 * report (the child shares the agent's memory until its exec, see agent_start_rank). */
struct agent_spawn {
    struct agent *a;
    struct arank *r;
    int (*outp)[2];
    char **env;
    sigset_t mask; /* the agent's signal mask, before agent_start_rank blocked every signal */
    int bind_err;  /* sched_setaffinity's errno, or 0 */
    int exec_err;  /* execvpe's errno: the exec failed */
};

/* In the child, before its exec: the rank's process group, descriptors and signals. It runs
 * on its own stack in the agent's memory (like posix_spawn's child): system calls only, no
 * stdio, no writes to the agent's data but the struct agent_spawn. */
static int agent_child(void *arg)
{
    struct agent_spawn *sp = arg;
    struct agent *a = sp->a;
    struct arank *r = sp->r;
    struct sigaction dfl;
    sigset_t none;
    int fd;
    static const int sigs[] = {SIGPIPE, SIGCHLD, SIGTERM, SIGINT, SIGHUP};

    setpgid(0, a->guard);
    /* The rank ends with us if we die (with the guardian, the group's other keeper). */
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != a->self)
        _exit(127);
    if (a->watch[0] >= 0)
        fcntl(a->watch[0], F_SETFD, 0); /* CSN_WATCH_FD: inherited across exec */
    /* The agent's handlers must not run here: every signal is blocked until they are reset. */
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
        sigaction(sigs[i], &dfl, NULL);
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    if (r->cpu >= 0) {
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(r->cpu, &one);
        if (sched_setaffinity(0, sizeof one, &one) != 0)
            sp->bind_err = errno;
    }
    /* stdin: rank 0 of a local (inherit-mode) job reads csnrun's stdin, the others nothing.
     * Not a terminal: the ranks are not in the terminal's foreground process group, so a
     * read would stop them (SIGTTIN). */
    if (a->forward || r->rank != 0 || a->rfd == 0 || isatty(0)) {
        fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
        if (fd >= 0 && fd != 0)
            dup2(fd, 0); /* the copy is not close-on-exec, the original is */
    }
    if (a->forward) {
        dup2(sp->outp[1][1], 1);
        dup2(sp->outp[2][1], 2);
    }
    execvpe(r->path, r->argv, sp->env);
    sp->exec_err = errno;
#if !AGENT_VFORK
    /* A forked child's sp is its own copy: it says so itself (on the rank's stderr). */
    static const char m[] = "csnrun: a rank cannot execute its program\n";
    if (write(2, m, sizeof m - 1) < 0) {
        /* Exit status 127 tells the launcher anyway. */
    }
#endif
    _exit(127);
}

/* Starts the child that execs the rank: with CLONE_VM | CLONE_VFORK (the agent waits only
 * until the child's exec, and copies no page tables: a fork costs about twice as much here,
 * which dominated the start-up of large jobs), else by fork. */
static pid_t agent_clone(struct agent_spawn *sp)
{
#if AGENT_VFORK
    enum { STACK = 256 << 10 };
    static char *stack;
    if (stack == NULL && (stack = malloc(STACK)) == NULL)
        return -1;
    /* The stack grows down: its top, aligned. */
    return clone(agent_child, (void *)(((uintptr_t)(stack + STACK)) & ~(uintptr_t)63),
                 CLONE_VM | CLONE_VFORK | SIGCHLD, sp);
#else
    pid_t pid = fork();
    if (pid == 0)
        agent_child(sp);
    return pid;
#endif
}

static int agent_start_rank(struct agent *a, struct arank *r, int local_rank)
{
    int outp[3][2] = {{-1, -1}, {-1, -1}, {-1, -1}}, e = 0, s;
    struct agent_spawn sp;
    sigset_t all;
    char **env;
    pid_t pid;

    r->cpu = a->bind ? a->cpus[local_rank % a->ncpu] : -1;
    env = agent_env(a, r, local_rank);

    if (env == NULL)
        goto fail;
    if (a->forward) {
        for (s = 1; s <= 2; s++) {
            if (pipe2(outp[s], O_CLOEXEC) != 0)
                goto fail;
        }
    }
    /* Not posix_spawn, although it is as fast: the child must set PR_SET_PDEATHSIG and keep
     * the watch pipe, which posix_spawn cannot. */
    memset(&sp, 0, sizeof sp);
    sp.a = a;
    sp.r = r;
    sp.outp = outp;
    sp.env = env;
    sigfillset(&all);
    sigprocmask(SIG_BLOCK, &all, &sp.mask);
    pid = agent_clone(&sp);
    e = errno;
    sigprocmask(SIG_SETMASK, &sp.mask, NULL);
    errno = e;
    if (pid < 0)
        goto fail;
    setpgid(pid, a->guard);
    r->pid = pid;
    a->live++;
    if (sp.bind_err != 0)
        fprintf(stderr, "csnrun: rank %d on %s: cannot bind to CPU %d: %s\n", r->rank, a->host,
                r->cpu, strerror(sp.bind_err));
    if (sp.exec_err != 0)
        fprintf(stderr, "csnrun: rank %d on %s: cannot execute '%s': %s\n", r->rank, a->host,
                r->argv[0], strerror(sp.exec_err));
    for (s = 1; s <= 2; s++) {
        if (outp[s][0] >= 0) {
            close(outp[s][1]);
            set_nonblock(outp[s][0]);
            r->out[s] = outp[s][0];
        }
    }
    agent_free_env(env);
    if (a->report && r->cpu >= 0)
        fprintf(stderr, "csnrun: rank %d on %s: bound to CPU %d\n", r->rank, a->host, r->cpu);
    agent_send(a, "PID %d %ld\n", r->rank, (long)pid);
    return 0;
fail:
    e = errno;
    for (s = 1; s <= 2; s++) {
        if (outp[s][0] >= 0) {
            close(outp[s][0]);
            close(outp[s][1]);
        }
    }
    agent_free_env(env);
    fprintf(stderr, "csnrun: rank %d on %s: cannot start: %s\n", r->rank, a->host, strerror(e));
    return -1;
}

/* ---- running ---- */

/* Forwards what the rank wrote (forward mode); at EOF closes the pipe. */
static void agent_forward(struct agent *a, struct arank *r, int s)
{
    char buf[16384];

    for (;;) {
        ssize_t n = read(r->out[s], buf, sizeof buf);
        if (n > 0) {
            char *enc = proto_encode(buf, (size_t)n);
            if (enc != NULL && !a->lost && proto_sendf(a->wfd, "OUT %d %d %s\n", r->rank, s, enc))
                a->lost = 1;
            free(enc);
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n == 0 || errno != EAGAIN) {
            close(r->out[s]);
            r->out[s] = -1;
        }
        return;
    }
}

/* Reaps every child that ended: one waitpid per ended child, not one per rank (a job of N
 * ranks would make N^2 calls). The guardian is a child too: it is remembered as reaped. */
static void agent_reap(struct agent *a)
{
    int i, st;
    pid_t p;

    while ((p = waitpid(-1, &st, WNOHANG)) > 0) {
        struct arank *r = NULL;

        if (p == a->guard) {
            a->guard_reaped = 1;
            continue;
        }
        for (i = 0; i < a->nranks && r == NULL; i++) {
            if (a->ranks[i].pid == p && !a->ranks[i].ended)
                r = &a->ranks[i];
        }
        if (r == NULL)
            continue;
        r->ended = 1;
        a->live--;
        /* Its output so far goes out before its end (descendants may keep the pipe open). */
        if (r->out[1] >= 0)
            agent_forward(a, r, 1);
        if (r->out[2] >= 0)
            agent_forward(a, r, 2);
        if (WIFSIGNALED(st))
            agent_send(a, "EXIT %d %ld signal %d\n", r->rank, (long)p, WTERMSIG(st));
        else
            agent_send(a, "EXIT %d %ld exit %d\n", r->rank, (long)p, WEXITSTATUS(st));
    }
}

static void agent_stop(struct agent *a)
{
    if (a->stopping)
        return;
    a->stopping = 1;
    a->kill_at = now_ms() + CSNRUN_STOP_GRACE_MS;
    if (a->guard > 0)
        kill(-a->guard, SIGTERM);
}

static void agent_handle_line(struct agent *a, char *line)
{
    if (strcmp(line, "STOP") == 0)
        agent_stop(a);
}

/* The event loop: until every rank has ended. */
static void agent_loop(struct agent *a)
{
    struct pollfd *fds = a->fds;
    struct arank **who = a->who;
    int *which = a->which;

    while (a->live > 0) {
        int n = 0, i, timeout = -1;

        fds[n].fd = agent_sigpipe[0];
        fds[n++].events = POLLIN;
        if (!a->lost) {
            fds[n].fd = a->rfd;
            fds[n++].events = POLLIN;
        }
        for (i = 0; i < a->nranks; i++) {
            int s;
            for (s = 1; s <= 2; s++) {
                if (a->ranks[i].out[s] >= 0) {
                    who[n] = &a->ranks[i];
                    which[n] = s;
                    fds[n].fd = a->ranks[i].out[s];
                    fds[n++].events = POLLIN;
                }
            }
        }
        if (a->stopping && a->kill_at != UINT64_MAX) {
            uint64_t now = now_ms();
            timeout = a->kill_at > now ? (int)(a->kill_at - now) : 0;
        }
        if (poll(fds, (nfds_t)n, timeout) < 0 && errno != EINTR)
            break;
        if (a->stopping && now_ms() >= a->kill_at && a->guard > 0) {
            kill(-a->guard, SIGKILL); /* the guardian too; it stays unreaped until the end */
            a->kill_at = UINT64_MAX;
        }
        if (fds[0].revents) {
            unsigned char sigs[64];
            ssize_t got = read(agent_sigpipe[0], sigs, sizeof sigs);
            for (i = 0; i < got; i++) {
                if (sigs[i] != SIGCHLD)
                    agent_stop(a);
            }
            agent_reap(a);
        }
        for (i = 1; i < n; i++) {
            if (fds[i].revents == 0)
                continue;
            if (fds[i].fd == a->rfd && !a->lost) {
                char *line;
                int r = linebuf_fill(&a->lb, a->rfd);
                while ((line = linebuf_next(&a->lb)) != NULL)
                    agent_handle_line(a, line);
                if (r <= 0) {
                    a->lost = 1; /* the launcher is gone: nobody to report to */
                    agent_stop(a);
                }
            } else if (who[i]->out[which[i]] == fds[i].fd) {
                agent_forward(a, who[i], which[i]);
            }
        }
    }
}

/* Every rank ended: leftovers of the group go, then the guardian; files are removed. */
static void agent_finish(struct agent *a)
{
    int i, s, *mine;

    if (a->guard > 0) {
        kill(-a->guard, SIGKILL);
        close(a->guard_fd);
        if (!a->guard_reaped)
            waitpid(a->guard, NULL, 0);
    }
    for (i = 0; i < a->nranks; i++) {
        for (s = 1; s <= 2; s++) {
            if (a->ranks[i].out[s] >= 0)
                close(a->ranks[i].out[s]);
        }
    }
    if ((mine = malloc((size_t)a->nranks * sizeof *mine)) != NULL) {
        for (i = 0; i < a->nranks; i++)
            mine[i] = a->ranks[i].rank;
        shm_cleanup(a->jobid, mine, a->nranks);
        free(mine);
    }
    /* The launcher's directory is the launcher's to remove, unless it is gone (killed). */
    if ((a->own_jobdir || a->lost) && a->jobdir != NULL)
        rm_tree(a->jobdir);
    agent_send(a, "DONE\n");
}

static void agent_free(struct agent *a)
{
    int i, j;

    for (i = 0; i < a->nranks; i++) {
        free(a->ranks[i].path);
        for (j = 0; a->ranks[i].argv != NULL && a->ranks[i].argv[j] != NULL; j++)
            free(a->ranks[i].argv[j]);
        free(a->ranks[i].argv);
    }
    for (i = 0; i < a->nenvs; i++)
        free(a->envs[i]);
    free(a->envs);
    free(a->cpus);
    free(a->ranks);
    free(a->fds);
    free(a->who);
    free(a->which);
    free(a->jobid);
    free(a->jobkey);
    free(a->ns);
    free(a->jobdir);
    free(a->host);
    linebuf_free(&a->lb);
}

int agent_main(int rfd, int wfd)
{
    struct agent a;
    struct sigaction sa;
    char *line;
    int rc = 1, i, started = 0, r;

    memset(&a, 0, sizeof a);
    a.rfd = rfd;
    a.wfd = wfd;
    a.guard_fd = -1;
    a.watch[0] = a.watch[1] = -1;
    a.self = getpid();
    a.launcher = getppid();
    a.launcher_start = proc_start_time(a.launcher, NULL);
    set_cloexec(rfd);
    set_cloexec(wfd);
    if (pipe2(agent_sigpipe, O_CLOEXEC | O_NONBLOCK) != 0)
        return 1;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = agent_on_signal;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGCHLD, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);

    /* The job description, up to START. */
    while (!started) {
        r = linebuf_fill(&a.lb, rfd);
        while (!started && (line = linebuf_next(&a.lb)) != NULL) {
            int s = agent_setup_line(&a, line);
            if (s < 0) {
                if (s == -1)
                    fprintf(stderr, "csnrun --agent: bad job description line\n");
                goto out;
            }
            started = s == 1;
        }
        if (r <= 0 && !started)
            goto out; /* the launcher went away before START */
    }
    a.fds = calloc((size_t)(2 + 2 * a.nranks), sizeof *a.fds);
    a.who = calloc((size_t)(2 + 2 * a.nranks), sizeof *a.who);
    a.which = calloc((size_t)(2 + 2 * a.nranks), sizeof *a.which);
    if (a.fds == NULL || a.who == NULL || a.which == NULL)
        goto out;
    if (a.own_jobdir) {
        char tmpl[PATH_MAX];
        const char *t = getenv("TMPDIR");
        jobdir_sweep(t && *t ? t : "/tmp");
        snprintf(tmpl, sizeof tmpl, "%s/csn-%s-XXXXXX", t && *t ? t : "/tmp", a.jobid);
        if (mkdtemp(tmpl) == NULL || (a.jobdir = strdup(tmpl)) == NULL ||
            jobdir_claim(a.jobdir) != 0) {
            fprintf(stderr, "csnrun: cannot create a job directory on %s: %s\n", a.host,
                    strerror(errno));
            goto out;
        }
    }
    if (a.bind && agent_cpus(&a) != 0)
        goto out;
    a.guard = agent_start_guard(&a);
    if (a.guard < 0) {
        fprintf(stderr, "csnrun: cannot fork on %s: %s\n", a.host, strerror(errno));
        goto out;
    }
    /* After the guardian: it must not hold the write end. */
    if (pipe2(a.watch, O_CLOEXEC) != 0)
        a.watch[0] = a.watch[1] = -1;
    for (i = 0; i < a.nranks && !a.stopping; i++) {
        if (agent_start_rank(&a, &a.ranks[i], i) != 0) {
            agent_send(&a, "EXIT %d 0 exit 127\n", a.ranks[i].rank);
            a.ranks[i].ended = 1;
            agent_stop(&a);
        }
    }
    /* Ranks never started (a failure above) are reported so the launcher can finish. */
    for (; i < a.nranks; i++) {
        a.ranks[i].ended = 1;
        agent_send(&a, "EXIT %d 0 signal %d\n", a.ranks[i].rank, SIGTERM);
    }
    if (a.watch[0] >= 0)
        close(a.watch[0]);
    a.watch[0] = -1;
    agent_reap(&a);
    agent_loop(&a);
    agent_finish(&a);
    rc = 0;
out:
    if (rc != 0 && a.own_jobdir && a.jobdir != NULL)
        rm_tree(a.jobdir);
    agent_free(&a);
    return rc;
}
