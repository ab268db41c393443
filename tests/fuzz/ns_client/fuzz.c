/* ns_client: the name-service client (src/names/names.c) against a server that answers any
 * request with the input's bytes. The first byte picks the call (lookup, register, unregister,
 * kv get, kv put, process id, kv dump); the rest is the reply. The client keeps a connection
 * that answered well, which this server then closes: each call also takes the way back from a
 * dead kept connection. The client must return a status (and a
 * sane value for OK), never crash or hang. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "boot/boot.h"
#include "names/names.h"

static int lfd = -1;
static char path[108];
static const uint8_t *reply;
static size_t replylen;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;

static void cleanup(void)
{
    unlink(path);
}

static void *server(void *arg)
{
    (void)arg;
    for (;;) {
        char req[8192];
        int fd = accept(lfd, NULL, NULL);
        if (fd < 0)
            continue;
        (void)!read(fd, req, sizeof req); /* key and request come in one write */
        pthread_mutex_lock(&mu);
        if (replylen > 0)
            (void)!send(fd, reply, replylen, MSG_NOSIGNAL);
        pthread_mutex_unlock(&mu);
        close(fd);
    }
    return NULL;
}

static void setup(void)
{
    struct csni_boot b;
    struct sockaddr_un un = {.sun_family = AF_UNIX};
    pthread_t th;

    snprintf(path, sizeof path, "/tmp/csn-fuzz-nc-%d", (int)getpid());
    unlink(path);
    snprintf(un.sun_path, sizeof un.sun_path, "%s", path);
    lfd = socket(AF_UNIX, SOCK_STREAM, 0);
    if (lfd < 0 || bind(lfd, (struct sockaddr *)&un, sizeof un) != 0 || listen(lfd, 16) != 0)
        abort();
    atexit(cleanup);
    memset(&b, 0, sizeof b);
    b.launched = 1;
    b.size = 2;
    snprintf(b.ns, sizeof b.ns, "unix:%s", path);
    snprintf(b.jobkey, sizeof b.jobkey, "0123456789abcdef0123456789abcdef");
    snprintf(b.jobid, sizeof b.jobid, "fuzz");
    if (csni_names_init(&b) != CSN_OK)
        abort();
    if (pthread_create(&th, NULL, server, NULL) != 0)
        abort();
}

/* A DUMP's entries must be keys of the prefix and values as the protocol allows. */
static void dump_each(void *arg, const char *key, const char *value)
{
    (void)arg;
    if (strncmp(key, "key", 3) != 0 || value[0] == '\0' || strchr(key, ' ') || strchr(value, ' ') ||
        strchr(value, '\n'))
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    csn_netid id = 0;
    char value[64];
    int proc = 0;
    csn_status st;

    if (lfd < 0)
        setup();
    if (size < 1)
        return 0;
    pthread_mutex_lock(&mu);
    reply = data + 1;
    replylen = size - 1;
    pthread_mutex_unlock(&mu);
    switch (data[0] % 7) {
    case 0:
        st = csni_names_lookup("name", 0, &id);
        if (st == CSN_OK && id == 0)
            abort();
        break;
    case 1:
        (void)csni_names_register("name", 0xC500000100000002ull);
        break;
    case 2:
        (void)csni_names_unregister("name", 0xC500000100000002ull);
        break;
    case 3:
        st = csni_kv_get("key", 0, value, sizeof value);
        if ((st == CSN_OK || st == CSN_OVERRUN) && strlen(value) >= sizeof value)
            abort();
        break;
    case 4:
        (void)csni_kv_put("key", "value");
        break;
    case 6:
        (void)csni_kv_dump("key", dump_each, NULL);
        break;
    default:
        st = csni_names_alloc_proc(&proc);
        if (st == CSN_OK && (proc <= 0 || proc > 0xFFFFFF))
            abort();
        break;
    }
    pthread_mutex_lock(&mu);
    replylen = 0;
    pthread_mutex_unlock(&mu);
    return 0;
}
