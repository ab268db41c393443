/* report.c: the figures of a pipeline run, printed as a table and written as JSON. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "csn.h"
#include "csn_transports.h"
#include "report.h"
#include "json.h"
#include "jsonl.h"

#define PL_SYNC_DESC "futex counters in a MAP_SHARED|MAP_ANONYMOUS mapping"

void pl_figures_compute(const struct pl_opts *o, int nnode, const struct pl_result *r,
                        struct pl_figures *f)
{
    unsigned long long nn = (unsigned long long)nnode;
    unsigned long long per_pair = o->bufsize * o->nbuf; /* one sender to one receiver */
    unsigned long long nb = (unsigned long long)(o->nphase - 1);
    memset(f, 0, sizeof *f);
    f->boundary_bytes = nn * nn * per_pair;
    f->boundary_between = nn * (nn - 1) * per_pair;
    f->total_bytes = nb * f->boundary_bytes;
    f->total_between = nb * f->boundary_between;
    f->node_bytes = nb * nn * per_pair;
    f->tmin = r[0].seconds;
    for (int i = 0; i < nnode; i++) {
        if (r[i].seconds > f->tmax)
            f->tmax = r[i].seconds;
        if (r[i].seconds < f->tmin)
            f->tmin = r[i].seconds;
        f->tavg += r[i].seconds / nnode;
    }
    if (f->tmax > 0) {
        f->mbps_all = (double)f->total_bytes / f->tmax / PL_MB;
        f->mbps_between = (double)f->total_between / f->tmax / PL_MB;
    }
}

static const char *pl_or_mem(const char *s)
{
    return s ? s : "mem";
}

void pl_report_header(FILE *f, const struct pl_opts *o, int nnode)
{
    const char *job = getenv("CSN_JOBID");
    fprintf(f, "pipeline (seed 000 all-to-all pipeline), csn %s, transport %s\n", csn_version(),
            bench_csn_transports(nnode));
    fprintf(f, "  job %s: %d nodes x %d phases (%d stage boundaries), %s\n", job ? job : "-", nnode,
            o->nphase, o->nphase - 1, o->threads ? "threads" : "processes");
    fprintf(f, "  block (--bufsize) %llu B, buffer %llu B (%d blocks), %llu buffers per phase\n",
            (unsigned long long)o->bufsize, (unsigned long long)o->bufsize * (unsigned)nnode, nnode,
            (unsigned long long)o->nbuf);
    fprintf(f, "  source %s, sink %s, double buffers signalled by %s\n", pl_or_mem(o->source),
            pl_or_mem(o->sink), PL_SYNC_DESC);
    fprintf(f, "  lead %llu buffers%s, CSN_SPIN_US=%s, scheduling %s\n",
            (unsigned long long)o->lead, o->lead ? "" : " (no limit)",
            getenv("CSN_SPIN_US") ? getenv("CSN_SPIN_US") : "-",
            o->sched_normal ? "normal" : "batch");
}

void pl_report_table(FILE *f, const struct pl_opts *o, int nnode, const struct pl_result *r)
{
    struct pl_figures g;
    pl_figures_compute(o, nnode, r, &g);
    fprintf(f, "\n  bytes per stage boundary: %llu (%llu between different nodes)\n",
            g.boundary_bytes, g.boundary_between);
    fprintf(f, "\n%6s  %-24s %12s %14s %12s\n", "node", "host", "time,s", "sent,B", "MB/s");
    for (int i = 0; i < nnode; i++)
        fprintf(f, "%6d  %-24.24s %12.6f %14llu %12.2f\n", r[i].node, r[i].host, r[i].seconds,
                g.node_bytes, r[i].seconds > 0 ? (double)g.node_bytes / r[i].seconds / PL_MB : 0.0);
    fprintf(f, "\n  completion time: max %.6f s, min %.6f s, avg %.6f s\n", g.tmax, g.tmin, g.tavg);
    fprintf(f,
            "  aggregate throughput: %.2f MB/s all boundaries (%llu B), %.2f MB/s between "
            "nodes (%llu B)\n",
            g.mbps_all, g.total_bytes, g.mbps_between, g.total_between);
    fflush(f);
}

int pl_report_json(const char *path, const struct pl_opts *o, int nnode, const struct pl_result *r)
{
    struct pl_figures g;
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    pl_figures_compute(o, nnode, r, &g);
    fprintf(f, "{\n  \"benchmark\": \"pipeline\",\n  \"csn_version\": ");
    bench_json_str(f, csn_version());
    fprintf(f, ",\n  \"transport\": ");
    bench_json_str(f, bench_csn_transports(nnode));
    fprintf(f, ",\n  \"job\": ");
    bench_json_str(f, getenv("CSN_JOBID") ? getenv("CSN_JOBID") : "");
    fprintf(f, ",\n  \"unexpected_limit\": ");
    bench_json_str(f, getenv("CSN_UNEXPECTED_LIMIT") ? getenv("CSN_UNEXPECTED_LIMIT") : "");
    fprintf(f, ",\n  \"spin_us\": ");
    bench_json_str(f, getenv("CSN_SPIN_US") ? getenv("CSN_SPIN_US") : "");
    fprintf(f, ",\n  \"lead\": %llu", (unsigned long long)o->lead);
    fprintf(f, ",\n  \"sched\": \"%s\"", o->sched_normal ? "normal" : "batch");
    fprintf(f, ",\n  \"mode\": \"%s\",\n  \"sync\": ", o->threads ? "threads" : "processes");
    bench_json_str(f, PL_SYNC_DESC);
    fprintf(f,
            ",\n  \"nnode\": %d,\n  \"nphase\": %d,\n  \"bufsize\": %llu,\n"
            "  \"buffer_bytes\": %llu,\n  \"nbuf\": %llu,\n  \"source\": ",
            nnode, o->nphase, (unsigned long long)o->bufsize,
            (unsigned long long)o->bufsize * (unsigned)nnode, (unsigned long long)o->nbuf);
    bench_json_str(f, pl_or_mem(o->source));
    fprintf(f, ",\n  \"sink\": ");
    bench_json_str(f, pl_or_mem(o->sink));
    fprintf(f,
            ",\n  \"boundary_bytes\": %llu,\n  \"boundary_bytes_between_nodes\": %llu,\n"
            "  \"total_bytes\": %llu,\n  \"total_bytes_between_nodes\": %llu,\n"
            "  \"time_max_s\": %.9f,\n  \"time_min_s\": %.9f,\n  \"time_avg_s\": %.9f,\n"
            "  \"aggregate_MBps\": %.3f,\n  \"aggregate_between_nodes_MBps\": %.3f,\n"
            "  \"MB\": 1000000,\n  \"nodes\": [",
            g.boundary_bytes, g.boundary_between, g.total_bytes, g.total_between, g.tmax, g.tmin,
            g.tavg, g.mbps_all, g.mbps_between);
    for (int i = 0; i < nnode; i++) {
        fprintf(f, "%s\n    {\"node\": %d, \"host\": ", i ? "," : "", r[i].node);
        bench_json_str(f, r[i].host);
        fprintf(f, ", \"time_s\": %.9f, \"bytes_sent\": %llu, \"MBps\": %.3f}", r[i].seconds,
                g.node_bytes, r[i].seconds > 0 ? (double)g.node_bytes / r[i].seconds / PL_MB : 0.0);
    }
    fprintf(f, "\n  ]\n}\n");
    if (ferror(f)) {
        int e = errno;
        fclose(f);
        errno = e ? e : EIO;
        return -1;
    }
    return fclose(f) ? -1 : 0;
}

/* A source or sink as a word that needs no escaping: mem, none or file. */
static const char *pl_jsonl_kind(const char *s)
{
    return !s ? "mem" : !strcmp(s, "none") ? "none" : "file";
}

int pl_report_jsonl(FILE *f, const char *path, const struct pl_opts *o, int nnode,
                    const struct pl_result *r, int argc, char **argv)
{
    struct pl_figures g;
    pl_figures_compute(o, nnode, r, &g);
    char opts[256], *hosts = calloc((size_t)nnode, sizeof r[0].host);
    if (!hosts) {
        fclose(f);
        return -1;
    }
    for (int i = 0; i < nnode; i++)
        memcpy(hosts + (size_t)i * sizeof r[0].host, r[i].host, sizeof r[0].host);
    snprintf(opts, sizeof opts,
             "{\"nphase\":%d,\"bufsize\":%llu,\"nbuf\":%llu,\"mode\":\"%s\",\"lead\":%llu,"
             "\"source\":\"%s\",\"sink\":\"%s\"}",
             o->nphase, (unsigned long long)o->bufsize, (unsigned long long)o->nbuf,
             o->threads ? "threads" : "processes", (unsigned long long)o->lead,
             pl_jsonl_kind(o->source), pl_jsonl_kind(o->sink));
    struct bench_jsonl_prov h = {.tool = "pipeline",
                                 .flavour = "csn",
                                 .library = "csn",
                                 .version = csn_version(),
                                 .transport = bench_csn_transports(nnode),
                                 .hosts = hosts,
                                 .host_each = sizeof r[0].host,
                                 .nhosts = nnode,
                                 .argc = argc,
                                 .argv = argv,
                                 .options = opts};
    bench_jsonl_header(f, &h);
    free(hosts);
    struct bench_jsonl_rec e = bench_jsonl_rec_init("alltoall", "rate_all", "MB/s", "sample");
    e.size = (long long)o->bufsize;
    e.value = g.mbps_all;
    bench_jsonl_write(f, "pipeline", &e);
    e.metric = "rate_between";
    e.value = g.mbps_between;
    bench_jsonl_write(f, "pipeline", &e);
    e.metric = "time_max";
    e.unit = "s";
    e.value = g.tmax;
    bench_jsonl_write(f, "pipeline", &e);
    for (int i = 0; i < nnode; i++) {
        e.rank = r[i].node;
        e.metric = "time";
        e.unit = "s";
        e.value = r[i].seconds;
        bench_jsonl_write(f, "pipeline", &e);
        e.metric = "rate_node";
        e.unit = "MB/s";
        e.value = r[i].seconds > 0 ? (double)g.node_bytes / r[i].seconds / PL_MB : NAN;
        bench_jsonl_write(f, "pipeline", &e);
    }
    return bench_jsonl_close(f, "pipeline", path, "ok", g.tmax);
}
