/* pmix_module.c: libcsn-pmix.so, the PMIx bootstrap component (see pmix_module.h). Every call
 * into libpmix is here; boot/pmix.c holds the logic and loads this file's module with dlopen. */
#include "boot/pmix_module.h"

#include <pmix.h>
#include <stdio.h>
#include <string.h>

static pmix_proc_t mod_me;

static void mod_copy(char *dst, size_t cap, const char *src)
{
    if (cap == 0)
        return;
    snprintf(dst, cap, "%s", src);
}

/* An integer attribute of any of the integer types PMIx servers use; -1 when absent. */
static long mod_get_long(const pmix_proc_t *who, const char *key)
{
    pmix_value_t *v = NULL;
    long r = -1;

    if (PMIx_Get(who, key, NULL, 0, &v) != PMIX_SUCCESS || v == NULL)
        return -1;
    switch (v->type) {
    case PMIX_UINT32:
        r = (long)v->data.uint32;
        break;
    case PMIX_UINT16:
        r = (long)v->data.uint16;
        break;
    case PMIX_INT:
        r = (long)v->data.integer;
        break;
    case PMIX_UINT:
        r = (long)v->data.uint;
        break;
    case PMIX_INT32:
        r = (long)v->data.int32;
        break;
    case PMIX_UINT64:
        r = v->data.uint64 > (uint64_t)1 << 40 ? -1 : (long)v->data.uint64;
        break;
    case PMIX_PROC_RANK:
        r = (long)v->data.rank;
        break;
    default:
        break;
    }
    PMIX_VALUE_RELEASE(v);
    return r;
}

static int mod_init(struct csni_pmix_job *job, char *err, size_t errcap)
{
    pmix_proc_t all;
    pmix_value_t *v = NULL;
    pmix_status_t rc = PMIx_Init(&mod_me, NULL, 0);

    if (rc != PMIX_SUCCESS) {
        mod_copy(err, errcap, PMIx_Error_string(rc));
        return -1;
    }
    mod_copy(job->nspace, sizeof job->nspace, mod_me.nspace);
    job->rank = (long)mod_me.rank;
    PMIX_PROC_CONSTRUCT(&all);
    PMIX_LOAD_PROCID(&all, mod_me.nspace, PMIX_RANK_WILDCARD);
    job->size = mod_get_long(&all, PMIX_JOB_SIZE);
    job->local_size = mod_get_long(&all, PMIX_LOCAL_SIZE);
    job->local_rank = mod_get_long(&mod_me, PMIX_LOCAL_RANK);
    job->host[0] = '\0';
    if (PMIx_Get(&mod_me, PMIX_HOSTNAME, NULL, 0, &v) == PMIX_SUCCESS && v != NULL &&
        v->type == PMIX_STRING && v->data.string != NULL)
        mod_copy(job->host, sizeof job->host, v->data.string);
    if (v != NULL)
        PMIX_VALUE_RELEASE(v);
    return 0;
}

static int mod_put(const char *key, const char *value, char *err, size_t errcap)
{
    pmix_value_t v;
    pmix_status_t rc;

    PMIX_VALUE_CONSTRUCT(&v);
    v.type = PMIX_STRING;
    v.data.string = (char *)value; /* PMIx_Put copies it */
    rc = PMIx_Put(PMIX_GLOBAL, key, &v);
    if (rc == PMIX_SUCCESS)
        rc = PMIx_Commit();
    if (rc != PMIX_SUCCESS) {
        mod_copy(err, errcap, PMIx_Error_string(rc));
        return -1;
    }
    return 0;
}

static int mod_get(long rank, const char *key, int timeout_s, char *value, size_t cap)
{
    pmix_proc_t who;
    pmix_info_t info;
    pmix_value_t *v = NULL;
    pmix_status_t rc;
    int r = 1;

    PMIX_PROC_CONSTRUCT(&who);
    PMIX_LOAD_PROCID(&who, mod_me.nspace, (pmix_rank_t)rank);
    PMIX_INFO_CONSTRUCT(&info);
    PMIX_INFO_LOAD(&info, PMIX_TIMEOUT, &timeout_s, PMIX_INT);
    rc = PMIx_Get(&who, key, &info, 1, &v);
    PMIX_INFO_DESTRUCT(&info);
    if (rc == PMIX_SUCCESS && v != NULL && v->type == PMIX_STRING && v->data.string != NULL) {
        size_t n = strlen(v->data.string);
        r = n < cap ? 0 : 2;
        mod_copy(value, cap, v->data.string);
    }
    if (v != NULL)
        PMIX_VALUE_RELEASE(v);
    return r;
}

static void mod_finalize(void)
{
    PMIx_Finalize(NULL, 0);
}

static const struct csni_pmix_module mod = {
    .abi = CSNI_PMIX_MODULE_ABI,
    .init = mod_init,
    .put = mod_put,
    .get = mod_get,
    .finalize = mod_finalize,
};

__attribute__((visibility("default"))) const struct csni_pmix_module *csn_pmix_module(void);

const struct csni_pmix_module *csn_pmix_module(void)
{
    return &mod;
}
