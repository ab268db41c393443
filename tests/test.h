/* test.h: the tiny assertion header of the test programs (file:line, aborts even in release
 * builds). */
#ifndef CSN_TEST_H
#define CSN_TEST_H

#include <stdio.h>
#include <stdlib.h>

#define TEST_SKIP 77

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);               \
            fflush(stderr);                                                                        \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

/* CHECK_OK(expr): expr is a csn_status that must be CSN_OK. */
#define CHECK_EQ_STATUS(expr, want)                                                                \
    do {                                                                                           \
        csn_status check_rv_ = (expr);                                                             \
        if (check_rv_ != (want)) {                                                                 \
            fprintf(stderr, "%s:%d: %s gave %s, wanted %s\n", __FILE__, __LINE__, #expr,           \
                    csn_status_string(check_rv_), csn_status_string(want));                        \
            fflush(stderr);                                                                        \
            abort();                                                                               \
        }                                                                                          \
    } while (0)
#define CHECK_OK(expr) CHECK_EQ_STATUS(expr, CSN_OK)

#endif
