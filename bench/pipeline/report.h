/* report.h: pipeline's readable table and JSON report (rank 0). */
#ifndef PL_REPORT_H
#define PL_REPORT_H

#include <stdio.h>

#include "pipeline.h"

struct pl_result {
    int node;
    double seconds; /* first phase started .. last phase consumed its last buffer */
    char host[64];
};

/* Derived figures of one run, as defined in --help. */
struct pl_figures {
    unsigned long long boundary_bytes;   /* bytes crossing one stage boundary, all nodes */
    unsigned long long boundary_between; /* of which between different nodes */
    unsigned long long total_bytes;      /* over all boundaries */
    unsigned long long total_between;
    unsigned long long node_bytes; /* bytes one node sends over all boundaries */
    double tmax, tmin, tavg;
    double mbps_all, mbps_between; /* aggregate, over tmax */
};

void pl_figures_compute(const struct pl_opts *o, int nnode, const struct pl_result *r,
                        struct pl_figures *f);
void pl_report_header(FILE *f, const struct pl_opts *o, int nnode);
void pl_report_table(FILE *f, const struct pl_opts *o, int nnode, const struct pl_result *r);
/* 0, or -1 with errno set. */
int pl_report_json(const char *path, const struct pl_opts *o, int nnode, const struct pl_result *r);
/* The --jsonl records (docs/results-jsonl.md) to f (opened before the run), then closes it:
 * header, aggregate rates, per node time and rate. 0, or -1 after one line on stderr. */
int pl_report_jsonl(FILE *f, const char *path, const struct pl_opts *o, int nnode,
                    const struct pl_result *r, int argc, char **argv);

#endif
