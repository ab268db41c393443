/* csn_transports.h: the transport summary of a csn job of np ranks (csn_transports.c). */
#ifndef BENCH_CSN_TRANSPORTS_H
#define BENCH_CSN_TRANSPORTS_H

const char *bench_csn_transports(int np);

#endif
