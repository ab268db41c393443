/* main.c: csnrun's command line, host lists, spec files and the placement of ranks on hosts. */
#include "csnrun.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

extern char **environ;

#define MAX_RANKS (1 << 23) /* netid.h: 24-bit process ids, forked children above size */

static const char usage_text[] =
    "usage: csnrun [OPTIONS] -np N PROGRAM [ARGS...]\n"
    "       csnrun [OPTIONS] SPECFILE\n"
    "Starts a csn job: N copies of PROGRAM, or the programs of SPECFILE, each with CSN_RANK,\n"
    "CSN_SIZE and the address of the job's name service in its environment.\n"
    "\n"
    "options:\n"
    "  -np N, -n N          number of processes (default: the slots of --host or\n"
    "                       --hostfile, otherwise 1)\n"
    "  --host H1,H2[:SLOTS] hosts to use, SLOTS processes each (default 1), in order;\n"
    "                       beyond the slots, placement starts again at the first host\n"
    "  --hostfile FILE      hosts from FILE: one per line, # comments; \"HOST\",\n"
    "                       \"HOST slots=K [max_slots=M]\" (Open MPI), \"HOST:K\" (MPICH),\n"
    "                       \"node[01-04,7]\" (Slurm host list); a repeated host adds slots\n"
    "  --rsh \"CMD\"          how to reach another host: CMD HOST COMMAND (default: ssh);\n"
    "                       csnrun must be installed there under the same path\n"
    "  -x NAME[=VALUE]      forward NAME (or set it) for every process; every CSN_*\n"
    "                       variable of csnrun's environment is forwarded anyway\n"
    "  --tag-output         prefix each output line with [RANK]\n"
    "  --timeout SECONDS    stop the job after SECONDS; csnrun then exits with 124\n"
    "  --agent-timeout SEC  a host whose agent has not answered SEC seconds after csnrun\n"
    "                       reached for it (ssh) fails the job, named (default 20)\n"
    "  --bind-to core|none  core: each process runs on one CPU of its host only, local\n"
    "                       rank r on the (r mod n)-th of the n CPUs csnrun may use\n"
    "                       there (its forks and threads too); none (default): anywhere\n"
    "  --report-bindings    one line on stderr per bound process: rank, host, CPU\n"
    "  --ns-tcp             run the name service over TCP even for a job on this host only\n"
    "  --ns-host ADDR       the numeric IP address of this machine on which the TCP name\n"
    "                       service listens (default: see below)\n"
    "  --help, --version\n"
    "\n"
    "SPECFILE: a text file that is not executable; one line per component:\n"
    "  COUNT [@HOST[,HOST...]] PROGRAM [ARGS...]     (# starts a comment)\n"
    "Ranks are numbered in file order; \"quotes\" group words into one argument.\n"
    "\n"
    "A job on several hosts: its name service runs over TCP on this machine's address\n"
    "that reaches the other hosts (--ns-host, else CSN_ADDR, else the address of\n"
    "interface CSN_IFACE, else the source of the route towards the first other host that\n"
    "resolves, else the first non-loopback interface's). Each rank gets CSN_ADDR, its\n"
    "host's IPv4 address for connections from other hosts: on this machine as above\n"
    "(without --ns-host); elsewhere the address of interface CSN_IFACE there, else the\n"
    "source of the route towards the name service (CSN_ADDR of csnrun's environment\n"
    "names this machine only).\n"
    "\n"
    "Output of every process goes to csnrun's stdout and stderr. Rank 0 reads csnrun's\n"
    "stdin when it is not a terminal and rank 0 runs on this machine; the others read\n"
    "/dev/null.\n"
    "\n"
    "Exit status: 0 when every process exited 0; otherwise that of the first process to fail\n"
    "(its exit status, or 128+N when signal N killed it), after one line saying which rank\n"
    "failed and how; the others are then stopped (SIGTERM, SIGKILL 2 s later). SIGINT or\n"
    "SIGTERM to csnrun stops every process and csnrun exits 128+N. 124: --timeout expired.\n"
    "127: a process could not be started (the line says which rank and why).\n"
    "2: bad command line or spec file. 1: csnrun itself failed.\n"
    "(Internal: csnrun --agent [--agent-fd FD] is the per-host node agent.)\n";

/* Prints the one line about bad input; returns -1 for the caller to pass up (exit 2). */
static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int usage_error(const char *fmt, ...)
{
    va_list ap;

    fputs("csnrun: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return -1;
}

static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);

    if (p == NULL) {
        fputs("csnrun: out of memory\n", stderr);
        exit(1);
    }
    return p;
}

static void *xrealloc(void *p, size_t n)
{
    p = realloc(p, n ? n : 1);
    if (p == NULL) {
        fputs("csnrun: out of memory\n", stderr);
        exit(1);
    }
    return p;
}

static char *xstrdup(const char *s)
{
    size_t n = strlen(s) + 1;

    return memcpy(xmalloc(n), s, n);
}

/* A positive decimal number in [1, max], or -1. */
static long parse_count(const char *s, long max)
{
    char *end;
    long v;

    if (s == NULL || !isdigit((unsigned char)*s))
        return -1;
    errno = 0;
    v = strtol(s, &end, 10);
    if (errno != 0 || *end != '\0' || v < 1 || v > max)
        return -1;
    return v;
}

/* ---- hosts ---- */

static char this_host[256];

/* This machine: localhost, a loopback address, or our host name (short or full). */
static int host_is_local(const char *name)
{
    size_t a, b;

    if (strcmp(name, "localhost") == 0 || strcmp(name, "127.0.0.1") == 0 ||
        strcmp(name, "::1") == 0 || strcmp(name, this_host) == 0)
        return 1;
    a = strcspn(name, ".");
    b = strcspn(this_host, ".");
    /* "node1" names "node1.example.org" and the other way round, not "node1.other.org". */
    return a == b && strncmp(name, this_host, a) == 0 && (name[a] == '\0' || this_host[b] == '\0');
}

/* Adds a host (or more slots of a known one); every alias of this machine is one host. */
static int host_add(struct job *j, const char *name, int slots)
{
    int i, local = host_is_local(name);

    for (i = 0; i < j->nhosts; i++) {
        if ((local && j->hosts[i].local) || strcmp(j->hosts[i].name, name) == 0) {
            if (j->hosts[i].slots > 0 && slots > 0)
                j->hosts[i].slots += slots;
            return i;
        }
    }
    j->hosts = xrealloc(j->hosts, (size_t)(j->nhosts + 1) * sizeof *j->hosts);
    j->hosts[j->nhosts].name = xstrdup(name);
    j->hosts[j->nhosts].slots = slots;
    j->hosts[j->nhosts].local = local;
    j->hosts[j->nhosts].nranks = 0;
    return j->nhosts++;
}

static int host_name_ok(const char *s)
{
    if (*s == '\0' || *s == '-')
        return 0;
    for (; *s; s++) {
        if (!isalnum((unsigned char)*s) && !strchr(".-_:[]", *s))
            return 0;
    }
    return 1;
}

/* The host pool of -np placement, in order, with each entry's slot count. Slurm host lists
 * expand to at most POOL_MAX entries in all. */
#define POOL_MAX 4096
struct pool {
    int *host;
    int *slots;
    int n;
    int cur, used; /* placement cursor */
};

static void pool_add(struct job *j, struct pool *p, const char *name, int slots)
{
    p->host = xrealloc(p->host, (size_t)(p->n + 1) * sizeof *p->host);
    p->slots = xrealloc(p->slots, (size_t)(p->n + 1) * sizeof *p->slots);
    p->host[p->n] = host_add(j, name, slots);
    p->slots[p->n] = slots;
    p->n++;
}

/* --host h1,h2:3,... */
static int parse_host_list(struct job *j, struct pool *p, const char *list)
{
    char *copy, *save = NULL, *tok;
    int rc = 0;

    if (*list == '\0')
        return usage_error("--host needs a list of hosts");
    copy = xstrdup(list);
    for (tok = strtok_r(copy, ",", &save); tok != NULL; tok = strtok_r(NULL, ",", &save)) {
        char *colon = strrchr(tok, ':');
        long slots = 1;

        /* host:slots, but not a bare IPv6 address (more than one colon, no brackets). */
        if (colon != NULL && (strchr(tok, ':') == colon || tok[0] == '[')) {
            slots = parse_count(colon + 1, 1000000);
            if (slots < 0) {
                rc = usage_error("--host: bad slot count in '%s'", tok);
                break;
            }
            *colon = '\0';
        }
        if (!host_name_ok(tok)) {
            rc = usage_error("--host: bad host name '%s'", tok);
            break;
        }
        pool_add(j, p, tok, (int)slots);
    }
    free(copy);
    return rc;
}

/* Slurm's hostlist form "node[01-03,7]suffix": one bracket group of numbers and ranges
 * (zero-padded to the width written), each host added with slots. 0, or a usage error. */
static int hostfile_add_expanded(struct job *j, struct pool *p, const char *name, int slots,
                                 const char *where)
{
    const char *lb = strchr(name, '['), *rb = lb != NULL ? strchr(lb, ']') : NULL;
    char list[4096], host[512], *save = NULL, *item;
    int added = 0;

    if (lb == NULL || lb == name) { /* no group, or a bracketed IPv6 address */
        if (!host_name_ok(name))
            return usage_error("%s: bad host name '%s'", where, name);
        pool_add(j, p, name, slots);
        return 0;
    }
    if (rb == NULL || rb == lb + 1 || (size_t)(rb - lb) >= sizeof list || strchr(rb + 1, '[') ||
        strlen(name) >= sizeof host - 24)
        return usage_error("%s: bad host list '%s' (expected e.g. node[01-04,7])", where, name);
    memcpy(list, lb + 1, (size_t)(rb - lb - 1));
    list[rb - lb - 1] = '\0';
    for (item = strtok_r(list, ",", &save); item != NULL; item = strtok_r(NULL, ",", &save)) {
        char *dash = strchr(item, '-'), *end;
        long lo, hi;
        int width = dash != NULL ? (int)(dash - item) : (int)strlen(item);

        errno = 0;
        lo = strtol(item, &end, 10);
        if (end == item || *item == '-' || (dash != NULL ? end != dash : *end != '\0'))
            return usage_error("%s: bad range '%s' in '%s'", where, item, name);
        hi = lo;
        if (dash != NULL) {
            hi = strtol(dash + 1, &end, 10);
            if (end == dash + 1 || *end != '\0' || dash[1] == '-')
                return usage_error("%s: bad range '%s' in '%s'", where, item, name);
        }
        if (errno != 0 || lo < 0 || hi < lo)
            return usage_error("%s: bad range '%s' in '%s'", where, item, name);
        /* A bound on what a few bytes expand to: every host added is compared with those
         * before it (fuzz_hostfile: "][4-51212]" took more than 30 s under ASan). */
        if (hi - lo >= POOL_MAX || p->n + (hi - lo) >= POOL_MAX)
            return usage_error("%s: '%s' makes more than %d hosts in all", where, name, POOL_MAX);
        for (long k = lo; k <= hi; k++) {
            snprintf(host, sizeof host, "%.*s%0*ld%s", (int)(lb - name), name, width, k, rb + 1);
            if (!host_name_ok(host))
                return usage_error("%s: bad host name '%s'", where, host);
            pool_add(j, p, host, slots);
            added++;
        }
    }
    if (added == 0) /* node[,]: a list of nothing */
        return usage_error("%s: bad host list '%s' (expected e.g. node[01-04,7])", where, name);
    return 0;
}

/* Host files, one host per line (# comments), in the forms of the common launchers:
 *   HOST, HOST slots=K, HOST slots=K max_slots=M (Open MPI; max_slots/max-slots ignored),
 *   HOST:K (MPICH, and csnrun's --host), node[01-04] (Slurm's host lists; a host
 *   repeated on several lines, as in SLURM_HOSTFILE, gets one slot per line). */
static int parse_hostfile(struct job *j, struct pool *p, const char *file)
{
    FILE *f = fopen(file, "r");
    char line[4096], where[PATH_MAX + 32];
    int lineno = 0, any = 0, rc = 0;

    if (f == NULL)
        return usage_error("cannot read host file '%s': %s", file, strerror(errno));
    while (rc == 0 && fgets(line, sizeof line, f) != NULL) {
        char *hash = strchr(line, '#'), *save = NULL, *name, *tok, *colon;
        long slots = 1;

        lineno++;
        snprintf(where, sizeof where, "%s:%d", file, lineno);
        if (hash != NULL)
            *hash = '\0';
        name = strtok_r(line, " \t\r\n", &save);
        if (name == NULL)
            continue;
        colon = strrchr(name, ':');
        if (colon != NULL && (strchr(name, ':') == colon || name[0] == '[')) {
            if ((slots = parse_count(colon + 1, 1000000)) < 0) {
                rc = usage_error("%s: bad slot count in '%s'", where, name);
                break;
            }
            *colon = '\0';
        }
        while (rc == 0 && (tok = strtok_r(NULL, " \t\r\n", &save)) != NULL) {
            if (strncmp(tok, "max_slots=", 10) == 0 || strncmp(tok, "max-slots=", 10) == 0) {
                if (parse_count(tok + 10, 1000000) < 0)
                    rc = usage_error("%s: bad count '%s'", where, tok);
            } else if (strncmp(tok, "slots=", 6) != 0) {
                rc = usage_error("%s: unknown field '%s' (expected slots=K or max_slots=K)", where,
                                 tok);
            } else if ((slots = parse_count(tok + 6, 1000000)) < 0) {
                rc = usage_error("%s: bad slot count '%s'", where, tok);
            }
        }
        if (rc == 0)
            rc = hostfile_add_expanded(j, p, name, (int)slots, where);
        if (rc == 0)
            any = 1;
    }
    fclose(f);
    if (rc == 0 && !any)
        rc = usage_error("host file '%s' names no host", file);
    return rc;
}

/* The next host for a rank placed by the pool: fill each host's slots in order, then
 * start again at the first (oversubscription). */
static int pool_next(struct pool *p)
{
    int h;

    if (p->slots[p->cur] > 0 && p->used >= p->slots[p->cur]) {
        p->cur = (p->cur + 1) % p->n;
        p->used = 0;
    }
    h = p->host[p->cur];
    p->used++;
    return h;
}

/* ---- programs ---- */

/* Where PROGRAM is on this machine (as execvp would find it); NULL (after the message) when
 * it is not there. */
static char *resolve_program(const char *prog)
{
    struct stat st;
    const char *path;
    char *dirs, *save = NULL, *d, buf[PATH_MAX];

    if (*prog == '\0') {
        usage_error("empty program name");
        return NULL;
    }
    if (strchr(prog, '/') != NULL) {
        if (stat(prog, &st) != 0)
            usage_error("program '%s' not found", prog);
        else if (S_ISDIR(st.st_mode))
            usage_error("program '%s' is a directory", prog);
        else if (!S_ISREG(st.st_mode) || access(prog, X_OK) != 0)
            usage_error("program '%s' is not executable", prog);
        else
            return xstrdup(prog);
        return NULL;
    }
    path = getenv("PATH");
    dirs = xstrdup(path != NULL ? path : "/usr/local/bin:/usr/bin:/bin");
    for (d = strtok_r(dirs, ":", &save); d != NULL; d = strtok_r(NULL, ":", &save)) {
        int n = snprintf(buf, sizeof buf, "%s/%s", *d ? d : ".", prog);
        if (n > 0 && (size_t)n < sizeof buf && stat(buf, &st) == 0 && S_ISREG(st.st_mode) &&
            access(buf, X_OK) == 0) {
            free(dirs);
            return xstrdup(buf);
        }
    }
    free(dirs);
    usage_error("program '%s' not found in PATH", prog);
    return NULL;
}

/* A rank of prog with args on host; again: the command of the rank before it, whose prog and
 * argv it shares. */
static int add_rank(struct job *j, int host, const char *prog, char **args, int nargs, int again)
{
    struct rankspec *r;
    int i;

    if (j->nranks >= MAX_RANKS)
        return usage_error("too many processes (at most %d)", MAX_RANKS);
    /* The array doubles at each power of two (-np 1000000 is not a million reallocs). */
    if ((j->nranks & (j->nranks - 1)) == 0)
        j->ranks = xrealloc(j->ranks, (size_t)(j->nranks ? 2 * j->nranks : 1) * sizeof *j->ranks);
    r = &j->ranks[j->nranks++];
    r->host = host;
    r->path = NULL; /* resolved once every rank is placed */
    if (!again || j->nranks == 1) {
        r->prog = xstrdup(prog);
        r->argv = xmalloc((size_t)(nargs + 2) * sizeof *r->argv);
        r->argv[0] = xstrdup(prog);
        for (i = 0; i < nargs; i++)
            r->argv[i + 1] = xstrdup(args[i]);
        r->argv[nargs + 1] = NULL;
    } else {
        r->prog = r[-1].prog;
        r->argv = r[-1].argv;
    }
    j->hosts[host].nranks++;
    return 0;
}

/* ---- spec files ---- */

/* Splits a spec line into words: blanks separate, "..." and '...' group, backslash escapes
 * one character outside single quotes, # at the start of a word starts a comment.
 * Returns the number of words, or -1 with *err set. */
static int spec_words(char *line, char ***out, const char **err)
{
    char **w = NULL, *r = line, *o;
    int n = 0;

    for (;;) {
        while (*r == ' ' || *r == '\t' || *r == '\r' || *r == '\n')
            r++;
        if (*r == '\0' || *r == '#')
            break;
        w = xrealloc(w, (size_t)(n + 1) * sizeof *w);
        w[n++] = o = r;
        while (*r && *r != ' ' && *r != '\t' && *r != '\r' && *r != '\n') {
            if (*r == '"' || *r == '\'') {
                char q = *r++;
                while (*r && *r != q) {
                    if (q == '"' && *r == '\\' && r[1] != '\0')
                        r++;
                    *o++ = *r++;
                }
                if (*r != q) {
                    *err = "unterminated quote";
                    free(w);
                    return -1;
                }
                r++;
            } else if (*r == '\\' && r[1] != '\0') {
                r++;
                *o++ = *r++;
            } else {
                *o++ = *r++;
            }
        }
        if (*r != '\0')
            r++;
        *o = '\0';
    }
    *out = w;
    return n;
}

/* One spec line (already split into n >= 1 words). */
static int spec_line(struct job *j, struct pool *p, const char *file, int lineno, char **w, int n)
{
    int k = 1, i, nh = 0, *hosts = NULL, rc = 0;
    long count = parse_count(w[0], MAX_RANKS);

    if (count < 0)
        return usage_error("%s:%d: '%s' is not a process count (a number from 1)", file, lineno,
                           w[0]);
    if (k < n && w[k][0] == '@') {
        char *save = NULL, *h;

        for (h = strtok_r(w[k] + 1, ",", &save); h != NULL; h = strtok_r(NULL, ",", &save)) {
            if (!host_name_ok(h)) {
                rc = usage_error("%s:%d: bad host name '%s'", file, lineno, h);
                goto out;
            }
            hosts = xrealloc(hosts, (size_t)(nh + 1) * sizeof *hosts);
            hosts[nh++] = host_add(j, h, 0);
        }
        if (nh == 0) {
            rc = usage_error("%s:%d: empty host list after '@'", file, lineno);
            goto out;
        }
        k++;
    }
    if (k >= n) {
        rc = usage_error("%s:%d: missing program", file, lineno);
        goto out;
    }
    /* With @hosts the component's processes go round the listed hosts. */
    for (i = 0; i < count && rc == 0; i++)
        rc = add_rank(j, nh > 0 ? hosts[i % nh] : pool_next(p), w[k], w + k + 1, n - k - 1, i > 0);
out:
    free(hosts);
    return rc;
}

static int parse_spec(struct job *j, struct pool *p, const char *file)
{
    FILE *f = fopen(file, "r");
    char *line = NULL;
    size_t cap = 0;
    int lineno = 0, rc = 0;

    if (f == NULL)
        return usage_error("cannot read spec file '%s': %s", file, strerror(errno));
    while (rc == 0 && getline(&line, &cap, f) >= 0) {
        char **w = NULL;
        const char *err = NULL;
        int n;

        lineno++;
        n = spec_words(line, &w, &err);
        if (n < 0)
            rc = usage_error("%s:%d: %s", file, lineno, err);
        else if (n > 0)
            rc = spec_line(j, p, file, lineno, w, n);
        free(w);
    }
    free(line);
    fclose(f);
    if (rc == 0 && j->nranks == 0)
        rc = usage_error("spec file '%s' names no program", file);
    return rc;
}

/* SPECFILE or PROGRAM: a regular file without execute permission is a spec file, which
 * must then be readable text. 1: spec file, 0: program, -1: neither (message printed). */
static int is_spec_file(const char *arg)
{
    struct stat st;
    char buf[4096];
    ssize_t n;
    int fd;

    if (stat(arg, &st) != 0 || !S_ISREG(st.st_mode) || (st.st_mode & 0111) != 0)
        return 0;
    fd = open(arg, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return usage_error("cannot read spec file '%s': %s", arg, strerror(errno));
    n = read(fd, buf, sizeof buf);
    close(fd);
    if (n < 0)
        return usage_error("cannot read spec file '%s': %s", arg, strerror(errno));
    if (memchr(buf, '\0', (size_t)n) != NULL)
        return usage_error("'%s' is neither an executable program nor a text spec file", arg);
    return 1;
}

/* ---- environment ---- */

static void env_add(struct job *j, const char *entry)
{
    j->envs = xrealloc(j->envs, (size_t)(j->nenvs + 1) * sizeof *j->envs);
    j->envs[j->nenvs++] = xstrdup(entry);
}

static int env_forward_x(struct job *j, const char *arg)
{
    size_t nl = strcspn(arg, "=");
    size_t i;
    const char *v;
    char name[256];

    if (nl == 0 || nl >= sizeof name || isdigit((unsigned char)arg[0]))
        return usage_error("-x: bad variable name in '%s'", arg);
    for (i = 0; i < nl; i++) {
        if (!isalnum((unsigned char)arg[i]) && arg[i] != '_')
            return usage_error("-x: bad variable name in '%s'", arg);
    }
    if (arg[nl] == '=') {
        env_add(j, arg);
        return 0;
    }
    memcpy(name, arg, nl);
    name[nl] = '\0';
    v = getenv(name);
    if (v != NULL) {
        char *e = xmalloc(nl + strlen(v) + 2);
        sprintf(e, "%s=%s", name, v);
        env_add(j, e);
        free(e);
    }
    return 0;
}

static void job_free(struct job *j)
{
    int i, k;

    for (i = 0; i < j->nranks; i++) {
        struct rankspec *r = &j->ranks[i], *prev = i > 0 ? r - 1 : NULL;

        if (r->path != r->prog && (prev == NULL || r->path != prev->path))
            free(r->path);
        if (prev != NULL && r->argv == prev->argv)
            continue;
        for (k = 0; r->argv[k] != NULL; k++)
            free(r->argv[k]);
        free(r->argv);
        free(r->prog);
    }
    for (i = 0; i < j->nhosts; i++)
        free(j->hosts[i].name);
    for (i = 0; i < j->nenvs; i++)
        free(j->envs[i]);
    free(j->ranks);
    free(j->hosts);
    free(j->envs);
}

/* ---- the command line ---- */

/* Matches option name (with its aliases) at argv[*i]; for a valued option returns the value
 * ("--opt=V" or the next argument) and advances *i. 1: matched, 0: not, -1: bad use. */
static int opt_is(char **argv, int argc, int *i, const char *names, const char **value)
{
    const char *a = argv[*i];
    char list[64], *save = NULL, *n;

    snprintf(list, sizeof list, "%s", names);
    for (n = strtok_r(list, "|", &save); n != NULL; n = strtok_r(NULL, "|", &save)) {
        size_t len = strlen(n);
        if (strncmp(a, n, len) != 0 || (a[len] != '\0' && a[len] != '='))
            continue;
        if (value == NULL)
            return a[len] == '=' ? usage_error("option '%s' takes no value", n) : 1;
        if (a[len] == '=') {
            *value = a + len + 1;
        } else {
            if (*i + 1 >= argc)
                return usage_error("option '%s' needs a value", n);
            *value = argv[++*i];
        }
        return 1;
    }
    return 0;
}

/* --ns-host: a numeric IPv4 address usable as a listening address, or a numeric IPv6 one. */
static int ns_host_ok(const char *v)
{
    struct in6_addr a6;

    return net_usable_ipv4(v) || inet_pton(AF_INET6, v, &a6) == 1;
}

/* Fills job from the command line; -1 (after the message) on bad input. */
static int parse_command_line(struct job *job, struct pool *pool, int argc, char **argv)
{
    const char *v;
    long np = 0, r;
    int i, k, m, s, explicit_hosts;

    for (i = 1; i < argc && argv[i][0] == '-'; i++) {
        if (strcmp(argv[i], "--") == 0) {
            i++;
            break;
        }
        if ((m = opt_is(argv, argc, &i, "-np|-n|--np", &v)) > 0) {
            np = parse_count(v, MAX_RANKS);
            if (np < 0)
                return usage_error("-np needs a process count from 1 to %d, not '%s'", MAX_RANKS,
                                   v);
        } else if (m == 0 && (m = opt_is(argv, argc, &i, "--host|-H", &v)) > 0) {
            if (parse_host_list(job, pool, v) != 0)
                return -1;
        } else if (m == 0 && (m = opt_is(argv, argc, &i, "--hostfile", &v)) > 0) {
            if (parse_hostfile(job, pool, v) != 0)
                return -1;
        } else if (m == 0 && (m = opt_is(argv, argc, &i, "--rsh", &v)) > 0) {
            if (strspn(v, " \t") == strlen(v))
                return usage_error("--rsh needs a command");
            job->rsh = v;
        } else if (m == 0 && (m = opt_is(argv, argc, &i, "-x", &v)) > 0) {
            if (env_forward_x(job, v) != 0)
                return -1;
        } else if (m == 0 && (m = opt_is(argv, argc, &i, "--tag-output", NULL)) > 0) {
            job->tag_output = 1;
        } else if (m == 0 && (m = opt_is(argv, argc, &i, "--ns-tcp", NULL)) > 0) {
            job->ns_tcp = 1;
        } else if (m == 0 && (m = opt_is(argv, argc, &i, "--ns-host", &v)) > 0) {
            if (!ns_host_ok(v))
                return usage_error("--ns-host needs a numeric IP address, not '%s'", v);
            job->ns_host = v;
        } else if (m == 0 && (m = opt_is(argv, argc, &i, "--bind-to", &v)) > 0) {
            if (strcmp(v, "core") != 0 && strcmp(v, "none") != 0)
                return usage_error("--bind-to needs 'core' or 'none', not '%s'", v);
            job->bind_core = strcmp(v, "core") == 0;
        } else if (m == 0 && (m = opt_is(argv, argc, &i, "--report-bindings", NULL)) > 0) {
            job->report_bindings = 1;
        } else if (m == 0 && (m = opt_is(argv, argc, &i, "--agent-timeout", &v)) > 0) {
            job->agent_timeout_s = parse_count(v, 100000000);
            if (job->agent_timeout_s < 0)
                return usage_error("--agent-timeout needs a number of seconds from 1, not '%s'", v);
        } else if (m == 0 && (m = opt_is(argv, argc, &i, "--timeout", &v)) > 0) {
            job->timeout_s = parse_count(v, 100000000);
            if (job->timeout_s < 0)
                return usage_error("--timeout needs a number of seconds from 1, not '%s'", v);
        } else if (m == 0) {
            return usage_error("unknown option '%s' (see csnrun --help)", argv[i]);
        }
        if (m < 0)
            return -1;
    }
    if (i >= argc)
        return usage_error("missing program (see csnrun --help)");
    explicit_hosts = pool->n > 0;
    if (!explicit_hosts)
        pool_add(job, pool, this_host, 0);

    s = is_spec_file(argv[i]);
    if (s < 0)
        return -1;
    if (s > 0) {
        if (np > 0)
            return usage_error("-np cannot be used with a spec file ('%s')", argv[i]);
        if (i + 1 < argc)
            return usage_error("unexpected argument '%s' after the spec file", argv[i + 1]);
        if (parse_spec(job, pool, argv[i]) != 0)
            return -1;
    } else {
        /* Without -np: one process per slot of the given hosts, or one. */
        if (np == 0 && explicit_hosts) {
            for (k = 0; k < pool->n; k++)
                np += pool->slots[k];
        }
        for (r = 0; r < (np > 0 ? np : 1); r++) {
            if (add_rank(job, pool_next(pool), argv[i], argv + i + 1, argc - i - 1, r > 0) != 0)
                return -1;
        }
    }
    /* Every program must exist before anything starts (on other hosts the agent checks). */
    for (k = 0; k < job->nranks; k++) {
        struct rankspec *rs = &job->ranks[k];
        const struct rankspec *prev = k > 0 ? &job->ranks[k - 1] : NULL;

        if (!job->hosts[rs->host].local)
            rs->path = rs->prog;
        else if (prev != NULL && job->hosts[prev->host].local && strcmp(rs->prog, prev->prog) == 0)
            rs->path = prev->path;
        else if ((rs->path = resolve_program(rs->prog)) == NULL)
            return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    struct job job;
    struct pool pool;
    char **e;
    int rc;

    if (argc >= 2 && strcmp(argv[1], "--agent") == 0) {
        long fd;
        if (argc == 2)
            return agent_main(0, 1);
        if (argc == 4 && strcmp(argv[2], "--agent-fd") == 0 &&
            (fd = parse_count(argv[3], 1 << 20)) > 0)
            return agent_main((int)fd, (int)fd);
        usage_error("usage: csnrun --agent [--agent-fd FD]");
        return CSNRUN_EXIT_USAGE;
    }
    for (rc = 1; rc < argc && argv[rc][0] == '-' && strcmp(argv[rc], "--") != 0; rc++) {
        if (strcmp(argv[rc], "--help") == 0 || strcmp(argv[rc], "-h") == 0) {
            fputs(usage_text, stdout);
            return 0;
        }
        if (strcmp(argv[rc], "--version") == 0) {
            printf("csnrun (csn) %s\n", CSNRUN_VERSION);
            return 0;
        }
    }

    memset(&job, 0, sizeof job);
    memset(&pool, 0, sizeof pool);
    job.rsh = "ssh";
    if (gethostname(this_host, sizeof this_host) != 0)
        strcpy(this_host, "localhost");
    this_host[sizeof this_host - 1] = '\0';

    rc = parse_command_line(&job, &pool, argc, argv);
    free(pool.host);
    free(pool.slots);
    if (rc != 0) {
        job_free(&job);
        return CSNRUN_EXIT_USAGE;
    }
    for (e = environ; *e != NULL; e++) {
        if (strncmp(*e, "CSN_", 4) == 0)
            env_add(&job, *e);
    }
    rc = launch_run(&job);
    job_free(&job);
    return rc;
}
