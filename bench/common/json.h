/* json.h: the benchmarks' JSON string writer (host, library and option names in reports). */
#ifndef BENCH_JSON_H
#define BENCH_JSON_H

#include <stdio.h>

/* Writes s (NULL: empty) as a JSON string, escaping what JSON forbids. */
static inline void bench_json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; s && *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\')
            fprintf(f, "\\%c", ch);
        else if (ch < 0x20)
            fprintf(f, "\\u%04x", ch);
        else
            fputc(ch, f);
    }
    fputc('"', f);
}

#endif
