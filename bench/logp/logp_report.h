/* logp_report.h: logp's table on stdout and its JSON file. */
#ifndef LOGP_REPORT_H
#define LOGP_REPORT_H

#include "logp_stats.h"

#include <stdio.h>

typedef struct logp_meta {
    const char *library, *transport;
    char hosts[2 * 128]; /* rank 0's host name, then rank 1's, 128 bytes each */
    double clock_cost;   /* seconds */
    double cap, rel;     /* the stop rule */
    double elapsed;      /* seconds for all sizes */
    int argc;
    char **argv;
} logp_meta;

void logp_report_header(FILE *out, const logp_meta *m);
void logp_report_row(FILE *out, const logp_row *r);
/* Returns the number of failed checks (said on lines starting "# FAILED"): the known answer
 * 1/G against the ping-pong bandwidth (more than LOGP_KNOWN_ANSWER apart), and L < 0 at the
 * smallest size (the LogGP figures' own size). */
#define LOGP_KNOWN_ANSWER 0.15
int logp_report_summary(FILE *out, const logp_meta *m, const logp_row *rows, size_t n,
                        const logp_loggp *f);
/* Writes to o (opened before measuring, so that a bad path fails at once) and closes it.
 * Returns 0, or -1 after one line on stderr naming path. */
int logp_report_json(FILE *o, const char *path, const logp_meta *m, const logp_row *rows, size_t n,
                     const logp_loggp *f);

/* The --jsonl records (docs/results-jsonl.md), in microseconds: per size half_rtt, o_s, o_r,
 * g, L (each with its interval, flagged when negative, NaN or outside it) and the round trip;
 * then the LogGP summary (L, o_s, o_r at the smallest size, g0, G, the two bandwidths). */
const char *logp_jsonl_flag(double v, double lo, double hi);
void logp_jsonl_header(FILE *f, const logp_meta *m, double cap, double rel);
void logp_jsonl_row(FILE *f, const logp_row *r);
void logp_jsonl_summary(FILE *f, const logp_row *rows, const logp_loggp *fit);

#endif
