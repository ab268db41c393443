/* pmix_module.h: the interface between libcsn and its PMIx bootstrap component, libcsn-pmix.so
 * (pmix_module.c), which libcsn loads with dlopen only when a PMIx launcher started the process.
 * Plain C types only: libcsn itself never includes pmix.h nor links libpmix, so it depends on
 * libc alone and links statically. */
#ifndef CSNI_PMIX_MODULE_H
#define CSNI_PMIX_MODULE_H

#include <stddef.h>
#include <stdint.h>

/* Bumped whenever the structures below change; libcsn refuses a module of another version. */
#define CSNI_PMIX_MODULE_ABI 1
/* The one symbol the module exports: const struct csni_pmix_module *csn_pmix_module(void). */
#define CSNI_PMIX_MODULE_SYMBOL "csn_pmix_module"
/* The module's file, in the directory "csn" beside libcsn.so (build tree and install alike). */
#define CSNI_PMIX_MODULE_FILE "libcsn-pmix.so"

/* The job as the PMIx server describes it; -1 (or "") for what it does not say. */
struct csni_pmix_job {
    char nspace[256];
    long rank, size, local_rank, local_size;
    char host[256];
};

struct csni_pmix_module {
    unsigned abi; /* CSNI_PMIX_MODULE_ABI */
    /* PMIx_Init and the job's description. 0, or -1 with a reason in err. */
    int (*init)(struct csni_pmix_job *job, char *err, size_t errcap);
    /* PMIx_Put (global scope) of a string and PMIx_Commit. 0, or -1 with a reason in err. */
    int (*put)(const char *key, const char *value, char *err, size_t errcap);
    /* PMIx_Get of rank's string key in the job's namespace, waiting up to timeout_s seconds.
     * 0 (value copied), 1 not found, 2 value longer than cap (truncated, terminated copy). */
    int (*get)(long rank, const char *key, int timeout_s, char *value, size_t cap);
    void (*finalize)(void);
};

typedef const struct csni_pmix_module *(*csni_pmix_module_fn)(void);

#endif
