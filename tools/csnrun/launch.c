/* launch.c: csnrun's launcher: job identity, name service, one agent per host, the event loop and
 * cleanup. */
#include "csnrun.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

/* After STOP, an agent that has not finished in this time is killed (its guardian then
 * stops what is left of its ranks). */
#define LAUNCH_AGENT_GRACE_MS (CSNRUN_STOP_GRACE_MS + 3000)

struct lagent {
    int host;
    pid_t pid; /* the local agent, or the --rsh command */
    int rfd, wfd;
    struct linebuf lb;
    int eof, reaped, done;
    int up; /* it has said something */
};

struct lrank {
    pid_t pid;
    int ended;
    char *out[3]; /* --tag-output: the unfinished line of stdout (1) / stderr (2) */
    size_t outlen[3];
};

struct launch {
    struct job *job;
    char jobkey[33], jobid[16], jobdir[PATH_MAX], ns_addr[PATH_MAX + 16];
    char self[PATH_MAX];
    struct csni_ns *ns;
    int multihost;      /* ranks on more than one host: every rank gets CSN_ADDR */
    char host_addr[64]; /* multihost: this machine's address that the other hosts reach */
    char ns_ip[64];     /* multihost: the name service's address (agents route towards it) */
    struct lagent *agents;
    int nagents;
    struct lrank *ranks;
    int exit_code; /* -1 until decided */
    int stopping;
    /* A failure waits LAUNCH_DECIDE_MS for others: a rank killed by a signal is named in
     * preference to ranks that exited because they lost it as a peer (which, on another
     * host's agent, may be reported first). */
    int pend_rank, pend_sig, pend_value;
    long pend_pid;
    uint64_t pend_deadline; /* 0: nothing pending */
    uint64_t stop_deadline, job_deadline;
    uint64_t agent_deadline; /* agents that have not answered by then fail the job; 0: none */
};

static int launch_sigpipe[2] = {-1, -1};

static void launch_on_signal(int sig)
{
    unsigned char b = (unsigned char)sig;
    int saved = errno;

    if (write(launch_sigpipe[1], &b, 1) < 0) {
        /* The pipe is full: a wake-up is pending anyway. */
    }
    errno = saved;
}

static int launch_random_hex(char *out, size_t nbytes)
{
    unsigned char b[32];
    size_t i;
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    ssize_t got = fd >= 0 ? read(fd, b, nbytes) : -1;

    if (fd >= 0)
        close(fd);
    if (got != (ssize_t)nbytes)
        return -1;
    for (i = 0; i < nbytes; i++)
        sprintf(out + 2 * i, "%02x", b[i]);
    return 0;
}

static int launch_identity(struct launch *L)
{
    const char *t = getenv("TMPDIR");

    if (launch_random_hex(L->jobkey, 16) != 0 || launch_random_hex(L->jobid, 6) != 0) {
        fprintf(stderr, "csnrun: cannot read /dev/urandom\n");
        return -1;
    }
    /* The name-service socket lives in the job directory: keep the path short enough for a
     * Unix socket address (108 bytes), falling back to /tmp. */
    if (t == NULL || *t == '\0' || strlen(t) > 60)
        t = "/tmp";
    jobdir_sweep(t);
    snprintf(L->jobdir, sizeof L->jobdir, "%s/csn-%s-XXXXXX", t, L->jobid);
    if (mkdtemp(L->jobdir) == NULL) {
        fprintf(stderr, "csnrun: cannot create the job directory %s: %s\n", L->jobdir,
                strerror(errno));
        L->jobdir[0] = '\0';
        return -1;
    }
    if (jobdir_claim(L->jobdir) != 0) {
        fprintf(stderr, "csnrun: cannot write into the job directory %s: %s\n", L->jobdir,
                strerror(errno));
        rm_tree(L->jobdir);
        L->jobdir[0] = '\0';
        return -1;
    }
    return 0;
}

/* This machine's IPv4 address that the other hosts of the job reach: CSN_ADDR, else that of
 * interface CSN_IFACE, else the source of the route towards the first other host whose name
 * resolves, else the first non-loopback interface's, else loopback (hosts that are all
 * this machine under other names). Never 0.0.0.0. -1 after a message. */
static int launch_host_address(const struct job *job, char *out, size_t cap)
{
    const char *v = getenv("CSN_ADDR");
    char ip[64];
    int h;

    if (v != NULL && *v != '\0') {
        if (!net_usable_ipv4(v)) {
            fprintf(stderr, "csnrun: CSN_ADDR=%s is not a unicast IPv4 address of this machine\n",
                    v);
            return -1;
        }
        snprintf(out, cap, "%s", v);
        return 0;
    }
    v = getenv("CSN_IFACE");
    if (v != NULL && *v != '\0') {
        if (net_iface_ipv4(v, out, cap) != 0) {
            fprintf(stderr, "csnrun: CSN_IFACE=%s: no such interface with an IPv4 address here\n",
                    v);
            return -1;
        }
        return 0;
    }
    for (h = 0; h < job->nhosts; h++) {
        if (job->hosts[h].nranks > 0 && !job->hosts[h].local &&
            net_resolve_ipv4(job->hosts[h].name, ip, sizeof ip) == 0 &&
            net_route_source(ip, out, cap) == 0)
            return 0;
    }
    if (net_first_ipv4(out, cap) != 0)
        snprintf(out, cap, "127.0.0.1");
    return 0;
}

/* ---- agents ---- */

/* Splits the --rsh command into words (blanks separate, quotes group). */
static char **launch_rsh_words(const char *cmd, int *n)
{
    char **w = calloc(strlen(cmd) + 5, sizeof *w), *copy = strdup(cmd), *r = copy, *o;

    *n = 0;
    if (w == NULL || copy == NULL) {
        free(w);
        free(copy);
        return NULL;
    }
    for (;;) {
        while (*r == ' ' || *r == '\t')
            r++;
        if (*r == '\0')
            break;
        w[(*n)++] = o = r;
        while (*r && *r != ' ' && *r != '\t') {
            if (*r == '"' || *r == '\'') {
                char q = *r++;
                while (*r && *r != q)
                    *o++ = *r++;
                if (*r)
                    r++;
            } else {
                *o++ = *r++;
            }
        }
        if (*r)
            r++;
        *o = '\0';
    }
    return w; /* the words point into copy, which stays allocated with them; room for 4 more */
}

/* The remote command: SELF --agent. ssh hands its words to the remote shell, other --rsh
 * commands (ip netns exec, env) execute them directly: a path of plain characters works
 * for both as it is; any other path is quoted for the shell (ssh's case). */
static void launch_remote_cmd(const char *self, char *out, size_t cap)
{
    size_t k = 0;
    const char *s;

    if (strspn(self, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._+-,=") ==
        strlen(self)) {
        snprintf(out, cap, "%s", self);
        return;
    }
    out[k++] = '\'';
    for (s = self; *s && k + 8 < cap; s++) {
        if (*s == '\'') {
            memcpy(out + k, "'\\''", 4);
            k += 4;
        } else {
            out[k++] = *s;
        }
    }
    snprintf(out + k, cap - k, "'");
}

static void launch_child_signals(void)
{
    sigset_t none;

    signal(SIGPIPE, SIG_DFL);
    signal(SIGCHLD, SIG_DFL);
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
}

static int launch_spawn_agent(struct launch *L, struct lagent *a)
{
    const struct host *h = &L->job->hosts[a->host];
    pid_t pid;

    if (h->local) {
        int sv[2];

        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
            return -1;
        pid = fork();
        if (pid == 0) {
            launch_child_signals();
            if (sv[1] == 3)
                fcntl(3, F_SETFD, 0);
            else if (dup2(sv[1], 3) != 3)
                _exit(127);
            /* This very binary, even if a rebuild replaced the file since csnrun started. */
            execl("/proc/self/exe", "csnrun", "--agent", "--agent-fd", "3", (char *)NULL);
            fprintf(stderr, "csnrun: cannot execute %s --agent: %s\n", L->self, strerror(errno));
            _exit(127);
        }
        close(sv[1]);
        if (pid < 0) {
            close(sv[0]);
            return -1;
        }
        a->rfd = a->wfd = sv[0];
    } else {
        int in[2], out[2], nw;
        char **w = launch_rsh_words(L->job->rsh, &nw);
        char remote[PATH_MAX * 4 + 32];

        if (w == NULL || nw == 0)
            return -1;
        launch_remote_cmd(L->self, remote, sizeof remote);
        w[nw++] = h->name;
        w[nw++] = remote;
        w[nw++] = "--agent";
        w[nw] = NULL;
        if (pipe2(in, O_CLOEXEC) != 0)
            return -1;
        if (pipe2(out, O_CLOEXEC) != 0) {
            close(in[0]);
            close(in[1]);
            return -1;
        }
        pid = fork();
        if (pid == 0) {
            launch_child_signals();
            dup2(in[0], 0);
            dup2(out[1], 1);
            execvp(w[0], w);
            fprintf(stderr, "csnrun: cannot execute --rsh command '%s': %s\n", w[0],
                    strerror(errno));
            _exit(127);
        }
        free(w[0]); /* the words' storage */
        free(w);
        close(in[0]);
        close(out[1]);
        if (pid < 0) {
            close(in[1]);
            close(out[0]);
            return -1;
        }
        a->rfd = out[0];
        a->wfd = in[1];
    }
    a->pid = pid;
    return 0;
}

/* Sends the job description of one host and START. */
static int launch_send_job(struct launch *L, struct lagent *a)
{
    const struct job *j = L->job;
    const struct host *h = &j->hosts[a->host];
    char *ns = proto_encode(L->ns_addr, strlen(L->ns_addr));
    char *dir = proto_encode(L->jobdir, strlen(L->jobdir));
    char *hn = proto_encode(h->name, strlen(h->name));
    int i, k, rc = -1;

    if (ns == NULL || dir == NULL || hn == NULL)
        goto out;
    if (proto_sendf(a->wfd, "JOB %s %s %s %d %s %s %s\n", L->jobid, L->jobkey, ns, j->nranks,
                    h->local ? dir : "-", hn,
                    h->local && !j->tag_output ? "inherit" : "forward") != 0)
        goto out;
    if (j->bind_core && proto_sendf(a->wfd, "BIND %d\n", j->report_bindings) != 0)
        goto out;
    if (L->multihost) {
        const char *iface = getenv("CSN_IFACE");
        int r;

        if (h->local)
            r = proto_sendf(a->wfd, "NET addr %s\n", L->host_addr);
        else if (iface != NULL && *iface != '\0') {
            char *e = proto_encode(iface, strlen(iface));
            r = e != NULL ? proto_sendf(a->wfd, "NET iface %s\n", e) : -1;
            free(e);
        } else {
            r = proto_sendf(a->wfd, "NET route %s\n", L->ns_ip);
        }
        if (r != 0)
            goto out;
    }
    for (i = 0; i < j->nenvs; i++) {
        char *e = proto_encode(j->envs[i], strlen(j->envs[i]));
        int r = e != NULL ? proto_sendf(a->wfd, "ENV %s\n", e) : -1;
        free(e);
        if (r != 0)
            goto out;
    }
    for (i = 0; i < j->nranks; i++) {
        const struct rankspec *r = &j->ranks[i];
        char *p;
        int argc = 0;

        if (r->host != a->host)
            continue;
        while (r->argv[argc] != NULL)
            argc++;
        p = proto_encode(r->path, strlen(r->path));
        if (p == NULL || proto_sendf(a->wfd, "RANK %d %s %d", i, p, argc) != 0) {
            free(p);
            goto out;
        }
        free(p);
        for (k = 0; k < argc; k++) {
            p = proto_encode(r->argv[k], strlen(r->argv[k]));
            if (p == NULL || proto_sendf(a->wfd, " %s", p) != 0) {
                free(p);
                goto out;
            }
            free(p);
        }
        if (write_all(a->wfd, "\n", 1) != 0)
            goto out;
    }
    rc = proto_sendf(a->wfd, "START\n");
out:
    free(ns);
    free(dir);
    free(hn);
    return rc;
}

/* ---- stopping and reporting ---- */

static void launch_stop(struct launch *L)
{
    int i;

    if (L->stopping)
        return;
    L->stopping = 1;
    L->stop_deadline = now_ms() + LAUNCH_AGENT_GRACE_MS;
    for (i = 0; i < L->nagents; i++) {
        if (!L->agents[i].eof && write_all(L->agents[i].wfd, "STOP\n", 5) != 0 &&
            L->agents[i].pid > 0)
            kill(L->agents[i].pid, SIGTERM);
    }
}

#define LAUNCH_DECIDE_MS 300

static void launch_decide(struct launch *L);

/* A failure: the first one (or a signal death reported within LAUNCH_DECIDE_MS of it)
 * decides the exit status; then the rest are stopped. A rank that could not start (pid 0)
 * decides at once: its agent stops the ranks it started, and their SIGTERM deaths must not
 * be taken for the cause. */
static void launch_failed(struct launch *L, int rank, long pid, int is_signal, int value)
{
    int unstarted = pid == 0 && !is_signal;

    if (L->stopping || L->exit_code >= 0)
        return;
    if (!unstarted && L->pend_deadline == 0)
        L->pend_deadline = now_ms() + LAUNCH_DECIDE_MS;
    else if (!unstarted && (L->pend_sig || !is_signal))
        return;
    L->pend_rank = rank;
    L->pend_pid = pid;
    L->pend_sig = is_signal;
    L->pend_value = value;
    if (unstarted)
        launch_decide(L);
}

/* Says which rank failed and how, sets the exit status and stops the job. */
static void launch_decide(struct launch *L)
{
    int rank = L->pend_rank, is_signal = L->pend_sig, value = L->pend_value;
    long pid = L->pend_pid;
    const struct rankspec *r = &L->job->ranks[rank];
    const struct host *h = &L->job->hosts[r->host];
    char where[300] = "";

    L->pend_deadline = 0;
    if (L->stopping || L->exit_code >= 0)
        return;
    if (!h->local)
        snprintf(where, sizeof where, " on %s", h->name);
    if (pid == 0 && !is_signal) {
        L->exit_code = value; /* it never started: its agent said why */
    } else if (is_signal) {
        fprintf(stderr, "csnrun: rank %d (pid %ld%s, %s) was killed by signal %d (%s)\n", rank, pid,
                where, r->prog, value, strsignal(value));
        L->exit_code = 128 + value;
    } else {
        fprintf(stderr, "csnrun: rank %d (pid %ld%s, %s) exited with status %d\n", rank, pid, where,
                r->prog, value);
        L->exit_code = value;
    }
    launch_stop(L);
}

/* Writes output of a rank: as it comes, or line by line behind "[rank] ". */
static void launch_output(struct launch *L, int rank, int s, const char *data, size_t n, int flush)
{
    struct lrank *r = &L->ranks[rank];
    char tag[32];
    int tl;

    if (!L->job->tag_output) {
        write_all(s, data, n);
        return;
    }
    tl = snprintf(tag, sizeof tag, "[%d] ", rank);
    if (n > 0) {
        char *nb = realloc(r->out[s], r->outlen[s] + n);
        if (nb == NULL)
            return;
        r->out[s] = nb;
        memcpy(nb + r->outlen[s], data, n);
        r->outlen[s] += n;
    }
    for (;;) {
        char *nl = r->outlen[s] ? memchr(r->out[s], '\n', r->outlen[s]) : NULL;
        size_t take;
        char *line;

        if (nl != NULL)
            take = (size_t)(nl - r->out[s]) + 1;
        else if (r->outlen[s] > 0 && (flush || r->outlen[s] >= 65536))
            take = r->outlen[s];
        else
            return;
        line = malloc((size_t)tl + take + 1);
        if (line == NULL)
            return;
        memcpy(line, tag, (size_t)tl);
        memcpy(line + tl, r->out[s], take);
        line[(size_t)tl + take] = '\n'; /* a partial line is ended */
        write_all(s, line, (size_t)tl + take + (nl == NULL));
        free(line);
        r->outlen[s] -= take;
        memmove(r->out[s], r->out[s] + take, r->outlen[s]);
    }
}

static int launch_rank_of(struct launch *L, const char *s)
{
    char *end;
    long r = strtol(s, &end, 10);

    return (*end == '\0' && r >= 0 && r < L->job->nranks) ? (int)r : -1;
}

static void launch_agent_line(struct launch *L, struct lagent *a, char *line)
{
    char *f[6];
    int n = proto_split(line, f, 6), rank = n >= 2 ? launch_rank_of(L, f[1]) : -1;

    a->up = 1;
    if (n == 1 && strcmp(f[0], "DONE") == 0) {
        a->done = 1;
    } else if (n == 3 && strcmp(f[0], "PID") == 0 && rank >= 0) {
        L->ranks[rank].pid = (pid_t)atol(f[2]);
    } else if (n == 4 && strcmp(f[0], "OUT") == 0 && rank >= 0 &&
               (strcmp(f[2], "1") == 0 || strcmp(f[2], "2") == 0)) {
        long len = proto_decode(f[3]);
        if (len >= 0)
            launch_output(L, rank, f[2][0] - '0', f[3], (size_t)len, 0);
    } else if (n == 5 && strcmp(f[0], "EXIT") == 0 && rank >= 0 && !L->ranks[rank].ended) {
        int sig = strcmp(f[3], "signal") == 0, value = atoi(f[4]);

        long pid = atol(f[2]);

        L->ranks[rank].ended = 1;
        csni_ns_rank_gone(L->ns, rank);
        /* pid 0 and a signal: a rank its agent never started, the job stopping (after a rank
         * that could not start): it decides nothing (it once turned "cannot start" into
         * "rank N+1 (pid 0) was killed by signal 15" and exit status 143). */
        if ((sig || value != 0) && !(sig && pid == 0))
            launch_failed(L, rank, pid, sig, value);
    }
}

/* An agent's stream ended. Without DONE its unreported ranks are lost. */
static void launch_agent_eof(struct launch *L, struct lagent *a)
{
    int i;

    a->eof = 1;
    if (a->done)
        return;
    for (i = 0; i < L->job->nranks; i++) {
        if (L->job->ranks[i].host == a->host && !L->ranks[i].ended) {
            L->ranks[i].ended = 1;
            if (!L->stopping && L->exit_code < 0) {
                fprintf(stderr, "csnrun: lost the agent on host %s; rank %d (%s) is gone\n",
                        L->job->hosts[a->host].name, i, L->job->ranks[i].prog);
                L->exit_code = 1;
                launch_stop(L);
            }
        }
    }
}

static void launch_reap(struct launch *L)
{
    int i;

    for (i = 0; i < L->nagents; i++) {
        if (L->agents[i].pid > 0 && !L->agents[i].reaped &&
            waitpid(L->agents[i].pid, NULL, WNOHANG) == L->agents[i].pid)
            L->agents[i].reaped = 1;
    }
}

static int launch_active(const struct launch *L)
{
    int i, n = 0;

    for (i = 0; i < L->nagents; i++)
        n += !(L->agents[i].eof && L->agents[i].reaped);
    return n;
}

/* The agent deadline passed: a host whose agent has said nothing (ssh cannot reach it, waits
 * for a password, ...) fails the job with a line naming it. */
static void launch_agents_silent(struct launch *L)
{
    int i, silent = 0;

    L->agent_deadline = 0;
    for (i = 0; i < L->nagents; i++) {
        struct lagent *a = &L->agents[i];

        if (a->up || a->eof)
            continue;
        silent = 1;
        if (!L->stopping && L->exit_code < 0) {
            fprintf(stderr,
                    "csnrun: no answer from the agent on host %s within %ld s (can "
                    "'%s' reach it?); stopping the job\n",
                    L->job->hosts[a->host].name, L->job->agent_timeout_s,
                    L->job->rsh != NULL ? L->job->rsh : "ssh");
            L->exit_code = 1;
        }
        if (a->pid > 0)
            kill(a->pid, SIGTERM);
    }
    if (silent)
        launch_stop(L);
}

/* ---- the event loop ---- */

static int launch_loop(struct launch *L)
{
    int maxfds = 1 + L->nagents + CSNI_NS_POLLFDS;
    struct pollfd *fds = calloc((size_t)maxfds, sizeof *fds);

    if (fds == NULL)
        return -1;
    while (launch_active(L) > 0) {
        int n = 0, i, nsfirst, nsn, timeout = -1;
        uint64_t now = now_ms(), dl = csni_ns_next_deadline(L->ns);

        fds[n].fd = launch_sigpipe[0];
        fds[n++].events = POLLIN;
        for (i = 0; i < L->nagents; i++) {
            fds[n].fd = L->agents[i].eof ? -1 : L->agents[i].rfd;
            fds[n++].events = POLLIN;
        }
        nsfirst = n;
        nsn = csni_ns_pollfds(L->ns, fds + n, maxfds - n);
        n += nsn;
        if (L->job_deadline && !L->stopping && L->job_deadline < dl)
            dl = L->job_deadline;
        if (L->stopping && L->stop_deadline < dl)
            dl = L->stop_deadline;
        if (L->pend_deadline && L->pend_deadline < dl)
            dl = L->pend_deadline;
        if (L->agent_deadline && L->agent_deadline < dl)
            dl = L->agent_deadline;
        if (dl != UINT64_MAX)
            timeout = dl > now ? (int)(dl - now > 60000 ? 60000 : dl - now) : 0;
        for (i = 0; i < n; i++)
            fds[i].revents = 0;
        if (poll(fds, (nfds_t)n, timeout) < 0 && errno != EINTR)
            break;

        if (fds[0].revents) {
            unsigned char sigs[64];
            ssize_t got = read(launch_sigpipe[0], sigs, sizeof sigs);
            for (i = 0; i < got; i++) {
                if (sigs[i] == SIGCHLD)
                    continue;
                if (L->exit_code < 0)
                    L->exit_code = 128 + sigs[i];
                launch_stop(L);
            }
            launch_reap(L);
        }
        for (i = 0; i < L->nagents; i++) {
            struct lagent *a = &L->agents[i];
            char *line;
            int r;

            if (a->eof || fds[1 + i].revents == 0)
                continue;
            r = linebuf_fill(&a->lb, a->rfd);
            while ((line = linebuf_next(&a->lb)) != NULL)
                launch_agent_line(L, a, line);
            if (r <= 0)
                launch_agent_eof(L, a);
        }
        csni_ns_handle(L->ns, fds + nsfirst, nsn);

        now = now_ms();
        if (L->pend_deadline && (now >= L->pend_deadline || launch_active(L) == 0))
            launch_decide(L);
        if (L->job_deadline && !L->stopping && now >= L->job_deadline) {
            fprintf(stderr, "csnrun: the job ran longer than --timeout %ld s; stopping it\n",
                    L->job->timeout_s);
            if (L->exit_code < 0)
                L->exit_code = CSNRUN_EXIT_TIMEOUT;
            launch_stop(L);
        }
        if (L->agent_deadline && now >= L->agent_deadline)
            launch_agents_silent(L);
        if (L->stopping && now >= L->stop_deadline) {
            for (i = 0; i < L->nagents; i++) {
                if (!L->agents[i].reaped && L->agents[i].pid > 0)
                    kill(L->agents[i].pid, SIGKILL);
            }
            L->stop_deadline = UINT64_MAX;
        }
        launch_reap(L);
    }
    if (L->pend_deadline)
        launch_decide(L); /* every agent ended within the decision window */
    free(fds);
    return 0;
}

int launch_run(struct job *job)
{
    struct launch L;
    struct sigaction sa;
    ssize_t sl;
    int i, h, any_remote = 0;
    char advertise[256] = "127.0.0.1";

    memset(&L, 0, sizeof L);
    L.job = job;
    L.exit_code = -1;
    signal(SIGPIPE, SIG_IGN);
    sl = readlink("/proc/self/exe", L.self, sizeof L.self - 1);
    if (sl <= 0) {
        fprintf(stderr, "csnrun: cannot find its own executable: %s\n", strerror(errno));
        return 1;
    }
    L.self[sl] = '\0';
    /* Other hosts run the file of this name (the same installation everywhere). */
    if (sl > 10 && strcmp(L.self + sl - 10, " (deleted)") == 0)
        L.self[sl - 10] = '\0';
    L.ranks = calloc((size_t)job->nranks, sizeof *L.ranks);
    L.agents = calloc((size_t)job->nhosts, sizeof *L.agents);
    if (L.ranks == NULL || L.agents == NULL || pipe2(launch_sigpipe, O_CLOEXEC | O_NONBLOCK))
        return 1;
    if (launch_identity(&L) != 0)
        goto out;

    for (h = 0; h < job->nhosts; h++)
        any_remote |= job->hosts[h].nranks > 0 && !job->hosts[h].local;
    if (any_remote) {
        L.multihost = 1;
        if (launch_host_address(job, L.host_addr, sizeof L.host_addr) != 0)
            goto out;
        snprintf(advertise, sizeof advertise, "%s", L.host_addr);
    }
    if (job->ns_host != NULL)
        snprintf(advertise, sizeof advertise, "%s", job->ns_host);
    snprintf(L.ns_ip, sizeof L.ns_ip, "%s", advertise);
    L.ns = csni_ns_create("csnrun", L.jobdir, L.jobkey, job->nranks,
                          job->ns_tcp || any_remote || job->ns_host != NULL, advertise, 0,
                          L.ns_addr, sizeof L.ns_addr);
    if (L.ns == NULL)
        goto out;

    memset(&sa, 0, sizeof sa);
    sa.sa_handler = launch_on_signal;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGCHLD, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);

    if (job->timeout_s > 0)
        L.job_deadline = now_ms() + (uint64_t)job->timeout_s * 1000u;
    for (h = 0; h < job->nhosts; h++) {
        struct lagent *a = &L.agents[L.nagents];

        if (job->hosts[h].nranks == 0)
            continue;
        a->host = h;
        L.nagents++;
        if (launch_spawn_agent(&L, a) != 0) {
            fprintf(stderr, "csnrun: cannot start the agent for host %s: %s\n", job->hosts[h].name,
                    strerror(errno));
            a->eof = a->reaped = 1;
            launch_agent_eof(&L, a);
            break;
        }
        if (launch_send_job(&L, a) != 0) {
            /* The agent died at once; its stream's end tells the rest. */
            continue;
        }
    }
    if (job->agent_timeout_s <= 0)
        job->agent_timeout_s = 20;
    L.agent_deadline = now_ms() + (uint64_t)job->agent_timeout_s * 1000u;
    launch_loop(&L);
    for (i = 0; i < job->nranks; i++) {
        launch_output(&L, i, 1, NULL, 0, 1);
        launch_output(&L, i, 2, NULL, 0, 1);
    }
out:
    for (i = 0; i < L.nagents; i++) {
        if (L.agents[i].rfd > 0)
            close(L.agents[i].rfd);
        if (L.agents[i].wfd > 0 && L.agents[i].wfd != L.agents[i].rfd)
            close(L.agents[i].wfd);
        linebuf_free(&L.agents[i].lb);
    }
    csni_ns_destroy(L.ns);
    if (L.jobdir[0] != '\0')
        rm_tree(L.jobdir);
    shm_cleanup(L.jobid, NULL, 0);
    for (i = 0; i < job->nranks; i++) {
        free(L.ranks[i].out[1]);
        free(L.ranks[i].out[2]);
    }
    free(L.ranks);
    free(L.agents);
    if (L.exit_code < 0)
        L.exit_code = L.ns == NULL || L.jobdir[0] == '\0' ? 1 : 0;
    return L.exit_code;
}
