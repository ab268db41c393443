/* output.c: nettest's --csv and --json files: every measured value, with provenance. */
#include <math.h>
#include <stdio.h>

#include "nettest.h"
#include "json.h"
#include "jsonl.h"

const char *const nt_print_names[3] = {"average", "total", "local"};

static void output_json_number(FILE *f, double v)
{
    if (isfinite(v))
        fprintf(f, "%.9g", v);
    else
        fputs("null", f);
}

/* A CSV field: quoted when it holds a comma, a quote or a line break. */
static void output_csv_string(FILE *f, const char *s)
{
    int quote = 0;
    for (const char *q = s; *q; q++)
        if (*q == ',' || *q == '"' || *q == '\n' || *q == '\r')
            quote = 1;
    if (!quote) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

void nt_csv_begin(FILE *f, const struct nt_prov *v)
{
    const struct nt_params *p = v->p;
    fprintf(f, "# nettest/%s of %s\n", v->flavour, v->build_date);
    fprintf(f, "# date: %s\n# command: %s\n# library: %s\n# transport: %s\n", v->date, v->command,
            v->library, v->transport);
    fprintf(f, "# processes: %d\n# hosts:", v->nprocs);
    for (int r = 0; r < v->nprocs; r++)
        fprintf(f, " %s", v->hosts + (size_t)r * v->host_each);
    fprintf(f,
            "\n# options: u%c m%llu M%llu s%llu K%llu R%llu T%llu C%s P%s check=%s\n"
            "# times in seconds (mean, min, median, max of the T iterations of each rank);"
            " rates in MB/s, 1 MB = 10^6 bytes\n",
            p->unit, (unsigned long long)p->min, (unsigned long long)p->max,
            (unsigned long long)p->step, (unsigned long long)p->multiplier,
            (unsigned long long)p->repeats, (unsigned long long)p->iterations,
            p->chaos ? "on" : "off", nt_print_names[p->print], p->check ? "on" : "off");
    fprintf(f, "repeat,size_bytes,test,links,rank,host,links_local,mean_s,min_s,median_s,max_s,"
               "window_s,rate_avg_MBps,rate_total_MBps,rate_local_MBps\n");
}

void nt_csv_result(FILE *f, const struct nt_prov *v, const struct nt_result *r)
{
    uint64_t links = nt_links(r->test, r->nprocs);
    for (int k = 0; k < r->nprocs; k++) {
        const struct nt_stats *s = &r->rank[k];
        int ni = nt_nlocal(r->test, r->nprocs, k);
        fprintf(f, "%llu,%llu,%s,%llu,%d,", (unsigned long long)r->repeat,
                (unsigned long long)r->len, nt_test_names[r->test], (unsigned long long)links, k);
        output_csv_string(f, v->hosts + (size_t)k * v->host_each);
        fprintf(f, ",%d,%.9g,%.9g,%.9g,%.9g,%.9g,%.6g,%.6g,%.6g\n", ni, s->mean, s->min, s->median,
                s->max, r->tglobal, nt_rate_avg(r->len, links, r->tglobal),
                nt_rate_total(r->len, links, r->tglobal), nt_rate_local(r->len, ni, s->mean));
    }
}

void nt_json_begin(FILE *f, const struct nt_prov *v)
{
    const struct nt_params *p = v->p;
    fputs("{\n  \"benchmark\": \"nettest\",\n  \"flavour\": ", f);
    bench_json_str(f, v->flavour);
    fputs(",\n  \"build_date\": ", f);
    bench_json_str(f, v->build_date);
    fputs(",\n  \"library\": ", f);
    bench_json_str(f, v->library);
    fputs(",\n  \"transport\": ", f);
    bench_json_str(f, v->transport);
    fputs(",\n  \"date\": ", f);
    bench_json_str(f, v->date);
    fputs(",\n  \"command\": ", f);
    bench_json_str(f, v->command);
    fprintf(f, ",\n  \"processes\": %d,\n  \"hosts\": [", v->nprocs);
    for (int r = 0; r < v->nprocs; r++) {
        if (r > 0)
            fputs(", ", f);
        bench_json_str(f, v->hosts + (size_t)r * v->host_each);
    }
    fprintf(f,
            "],\n  \"options\": {\"unit\": \"%c\", \"unit_bytes\": %zu, \"min\": %llu, "
            "\"max\": %llu, \"step\": %llu, \"multiplier\": %llu, \"repeats\": %llu, "
            "\"iterations\": %llu, \"chaos\": %s, \"print\": \"%s\", \"check\": %s},\n"
            "  \"mb_bytes\": 1000000,\n  \"time_unit\": \"s\",\n  \"results\": [",
            p->unit, p->unit_bytes, (unsigned long long)p->min, (unsigned long long)p->max,
            (unsigned long long)p->step, (unsigned long long)p->multiplier,
            (unsigned long long)p->repeats, (unsigned long long)p->iterations,
            p->chaos ? "true" : "false", nt_print_names[p->print], p->check ? "true" : "false");
}

void nt_json_result(FILE *f, const struct nt_result *r, int first)
{
    uint64_t links = nt_links(r->test, r->nprocs);
    fprintf(f,
            "%s\n    {\"repeat\": %llu, \"size_bytes\": %llu, \"test\": \"%s\", \"links\": %llu, ",
            first ? "" : ",", (unsigned long long)r->repeat, (unsigned long long)r->len,
            nt_test_names[r->test], (unsigned long long)links);
    fputs("\"window_s\": ", f);
    output_json_number(f, r->tglobal);
    fputs(", \"rate_avg_MBps\": ", f);
    output_json_number(f, nt_rate_avg(r->len, links, r->tglobal));
    fputs(", \"rate_total_MBps\": ", f);
    output_json_number(f, nt_rate_total(r->len, links, r->tglobal));
    fputs(",\n     \"ranks\": [", f);
    for (int k = 0; k < r->nprocs; k++) {
        const struct nt_stats *s = &r->rank[k];
        int ni = nt_nlocal(r->test, r->nprocs, k);
        fprintf(f, "%s\n       {\"rank\": %d, \"links_local\": %d, \"mean_s\": ", k ? "," : "", k,
                ni);
        output_json_number(f, s->mean);
        fputs(", \"min_s\": ", f);
        output_json_number(f, s->min);
        fputs(", \"median_s\": ", f);
        output_json_number(f, s->median);
        fputs(", \"max_s\": ", f);
        output_json_number(f, s->max);
        fputs(", \"rate_local_MBps\": ", f);
        output_json_number(f, nt_rate_local(r->len, ni, s->mean));
        fputc('}', f);
    }
    fputs("]}", f);
}

void nt_json_end(FILE *f, const double *best, const int *have, double total_s)
{
    fputs("\n  ],\n  \"best\": {", f);
    for (int t = 0; t < NT_NTESTS; t++) {
        fprintf(f, "%s\"%s\": ", t ? ", " : "", nt_test_names[t]);
        if (have[t])
            output_json_number(f, best[t]);
        else
            fputs("null", f);
    }
    fputs("},\n  \"total_time_s\": ", f);
    output_json_number(f, total_s);
    fputs("\n}\n", f);
}

void nt_jsonl_begin(FILE *f, const struct nt_prov *v, int argc, char **argv)
{
    const struct nt_params *p = v->p;
    char opts[512];
    snprintf(opts, sizeof opts,
             "{\"unit\":\"%c\",\"min_bytes\":%llu,\"max_bytes\":%llu,\"step\":%llu,"
             "\"multiplier\":%llu,\"repeats\":%llu,\"iterations\":%llu,\"chaos\":%s,"
             "\"print\":\"%s\",\"check\":%s}",
             p->unit, (unsigned long long)(p->min * p->unit_bytes),
             (unsigned long long)(p->max * p->unit_bytes), (unsigned long long)p->step,
             (unsigned long long)p->multiplier, (unsigned long long)p->repeats,
             (unsigned long long)p->iterations, p->chaos ? "true" : "false",
             nt_print_names[p->print], p->check ? "true" : "false");
    struct bench_jsonl_prov h = {.tool = "nettest",
                                 .flavour = v->flavour[0] == 'M' ? "mpi" : "csn",
                                 .library = v->library,
                                 .version = v->library,
                                 .transport = v->transport,
                                 .hosts = v->hosts,
                                 .host_each = v->host_each,
                                 .nhosts = v->nprocs,
                                 .argc = argc,
                                 .argv = argv,
                                 .options = opts};
    bench_jsonl_header(f, &h);
}

void nt_jsonl_result(FILE *f, const struct nt_result *r)
{
    uint64_t links = nt_links(r->test, r->nprocs);
    const char *name = nt_test_names[r->test];
    struct bench_jsonl_rec e = bench_jsonl_rec_init(name, "rate_total", "MB/s", "sample");
    e.size = (long long)r->len;
    e.repeat = (int)r->repeat;
    e.value = nt_rate_total(r->len, links, r->tglobal);
    bench_jsonl_write(f, "nettest", &e);
    e.metric = "rate_avg";
    e.value = nt_rate_avg(r->len, links, r->tglobal);
    bench_jsonl_write(f, "nettest", &e);
    e.metric = "window";
    e.unit = "s";
    e.value = r->tglobal;
    bench_jsonl_write(f, "nettest", &e);
    for (int k = 0; k < r->nprocs; k++) {
        const struct nt_stats *s = &r->rank[k];
        e.rank = k;
        e.metric = "rate_local";
        e.unit = "MB/s";
        e.value = nt_rate_local(r->len, nt_nlocal(r->test, r->nprocs, k), s->mean);
        bench_jsonl_write(f, "nettest", &e);
        e.metric = "time_median";
        e.unit = "s";
        e.value = s->median;
        bench_jsonl_write(f, "nettest", &e);
    }
}
