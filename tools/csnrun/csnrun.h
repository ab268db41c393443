/* csnrun.h: the parts of csnrun (launcher, node agent, name service) and what they share. */
#ifndef CSNRUN_H
#define CSNRUN_H

#include "names/nsserv.h"

#include <poll.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define CSNRUN_VERSION "0.1.0"
#define CSNRUN_EXIT_USAGE 2
#define CSNRUN_EXIT_TIMEOUT 124   /* --timeout expired (as timeout(1)) */
#define CSNRUN_STOP_GRACE_MS 2000 /* SIGTERM, then SIGKILL after this */

/* ---- the job, as parsed from the command line (main.c) ---- */
struct host {
    char *name; /* as the user wrote it (the first alias used for this machine) */
    int slots;  /* 0: unlimited */
    int local;  /* 1: this machine (one agent is started directly, not through --rsh) */
    int nranks; /* ranks placed here */
};

/* The ranks of one command (-np N, or a spec file's line) share its prog and argv, and ranks
 * that run the same program on local hosts one path, each with the rank before it: a pointer
 * equal to that rank's is not this rank's to free (job_free). -np 2222222 with a copy each took
 * 2 GB before anything started (tests/fuzz/csnrun_args). A remote host's path is its prog. */
struct rankspec {
    int host;    /* index into job.hosts */
    char *prog;  /* as the user wrote it (messages) */
    char *path;  /* what the agent executes: absolute for local hosts, as written otherwise */
    char **argv; /* argv[0] = prog, NULL-terminated */
};

struct job {
    struct host *hosts;
    int nhosts;
    struct rankspec *ranks;
    int nranks;
    char **envs; /* "NAME=VALUE" forwarded to every process: CSN_* and -x */
    int nenvs;
    const char *rsh; /* --rsh, default "ssh" */
    int tag_output;
    int ns_tcp;           /* name service over TCP even for a local job */
    const char *ns_host;  /* --ns-host: the address the name service binds and advertises */
    long timeout_s;       /* 0: none */
    long agent_timeout_s; /* an agent silent this long after its start fails the job */
    int bind_core;        /* --bind-to core: each rank on one CPU (agent_cpus in agent.c) */
    int report_bindings;  /* --report-bindings */
};

/* ---- launcher (launch.c) ---- */
int launch_run(struct job *job); /* returns csnrun's exit status */

/* ---- node agent (agent.c): `csnrun --agent [--agent-fd N]` ---- */
int agent_main(int rfd, int wfd);

/* ---- name service: src/names/nsserv.h (shared with the library) ---- */

/* ---- shared helpers (proto.c) ----
 * The launcher and each agent talk over a stream (a socketpair for this machine, the
 * --rsh command's stdin/stdout for another host) in text lines ending in '\n'. Fields are
 * separated by one space; a field that may hold arbitrary bytes is percent-encoded (every
 * byte outside 0x21..0x7e, and '%', becomes %XX), an empty field is "%".
 *
 * launcher -> agent (the job, then commands):
 *   JOB <jobid> <jobkey> <ns> <size> <jobdir> <host> <io>
 *        jobdir: the directory to use, or "-" (the agent creates and removes its own);
 *        host: the CSN_HOST value; io: "inherit" (ranks write to the agent's stdout and
 *        stderr) or "forward" (the agent sends their output in OUT lines)
 *   ENV <NAME=VALUE>            one variable for every rank (after the agent's own environment)
 *   BIND <report>               bind each rank to one CPU (--bind-to core); report: 1 to
 *                               print a line per rank (--report-bindings), else 0
 *   NET addr <IPv4> | NET iface <NAME> | NET route <IP>
 *                               a job over several hosts: CSN_ADDR of this host's ranks is the
 *                               given address, that of interface NAME here, or the source
 *                               address of the route towards IP (the name service's host)
 *   RANK <rank> <path> <argc> <arg>...   one rank on this host, in rank order
 *   START                       fork the ranks
 *   STOP                        stop them: SIGTERM, SIGKILL after 2 s; then report and end
 * agent -> launcher:
 *   PID <rank> <pid>            the rank runs
 *   OUT <rank> <1|2> <bytes>    output of the rank (forward mode)
 *   EXIT <rank> <pid> exit <code> | EXIT <rank> <pid> signal <signo>
 *   DONE                        every rank ended and the agent cleaned up; it exits now
 * An agent whose stream ends (the launcher died) stops its ranks and exits. Its ranks and
 * their descendants share a process group held by a guardian child that kills the group if
 * the agent itself dies. */
struct linebuf {
    char *buf;
    size_t len, cap;
    size_t start; /* consumed prefix */
};
/* Reads once from fd. 1: data, 0: EOF, -1: error (errno). EAGAIN/EINTR count as data (none). */
int linebuf_fill(struct linebuf *lb, int fd);
/* The next complete line (terminated, '\n' removed), valid until the next call; or NULL. */
char *linebuf_next(struct linebuf *lb);
void linebuf_free(struct linebuf *lb);

char *proto_encode(const char *src, size_t n); /* malloc'd; NULL when out of memory */
long proto_decode(char *s);                    /* in place; the length, or -1 when malformed */
/* Splits a line into space-separated fields (in place); returns their number (<= max). */
int proto_split(char *line, char **f, int max);
int write_all(int fd, const void *buf, size_t n); /* 0, or -1 with errno */
int proto_sendf(int fd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

uint64_t now_ms(void);
int rm_tree(const char *dir); /* removes a directory and everything below it */
/* Process pid's start time (field 22 of /proc/pid/stat, clock ticks since boot; with the pid,
 * its identity) and, when state is not NULL, its state letter (Z: a zombie); 0 when there is no
 * such process. */
unsigned long long proc_start_time(long pid, char *state);
/* Unlinks csn.<jobid>.* in /dev/shm and in $CSN_SHM_DIR: all of them (ranks NULL), or those of
 * a pair with one of the n ranks (an agent's: other hosts may share /dev/shm, as namespaces on
 * one machine do). */
void shm_cleanup(const char *jobid, const int *ranks, int n);
/* Job directories (TMP/csn-<jobid>-XXXXXX). jobdir_claim writes the creator's identity (pid
 * and start time) into dir/owner; jobdir_sweep removes this user's job directories in tmp
 * whose creator is gone, and the /dev/shm files of their jobs: what csnrun, its agent and
 * the guardian leave when all three are killed at once is removed by the next run. */
int jobdir_claim(const char *dir); /* 0, or -1 with errno */
void jobdir_sweep(const char *tmp);
void set_cloexec(int fd);
void set_nonblock(int fd);

/* ---- addresses (netaddr.c): each fills out (dotted IPv4) and returns 0, or -1 with errno ---- */
int net_usable_ipv4(const char *s);                            /* 1: unicast, not 0.0.0.0 */
int net_iface_ipv4(const char *ifname, char *out, size_t cap); /* the interface's address */
int net_first_ipv4(char *out, size_t cap); /* the first up, non-loopback interface's */
int net_route_source(const char *dest, char *out, size_t cap); /* source towards dest */
int net_resolve_ipv4(const char *host, char *out, size_t cap);

#endif
