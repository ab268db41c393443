/* module.c: finding a component that libcsn loads at run time (see module.h). */
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "boot/module.h"

/* dir rel/csn/file, when it exists. */
static int module_at(char *out, size_t cap, const char *dir, const char *rel, const char *file)
{
    if ((size_t)snprintf(out, cap, "%s%s/csn/%s", dir, rel, file) >= cap)
        return 0;
    return access(out, R_OK) == 0;
}

int csni_module_find(const char *env, const char *file, const char *libdir,
                     const char *libdir_rel, const char *builddir, char *path, size_t cap)
{
    const char *v = getenv(env);
    char dir[PATH_MAX], rel[PATH_MAX], *slash;
    Dl_info info;

    if (v != NULL && *v != '\0')
        return (size_t)snprintf(path, cap, "%s", v) < cap;
    if (dladdr((void *)csni_module_find, &info) != 0 && info.dli_fname != NULL &&
        strlen(info.dli_fname) < sizeof dir) {
        strcpy(dir, info.dli_fname);
        if ((slash = strrchr(dir, '/')) != NULL) {
            *slash = '\0';
            snprintf(rel, sizeof rel, "/../%s", libdir_rel);
            if (module_at(path, cap, dir, "", file) || module_at(path, cap, dir, rel, file))
                return 1;
        }
    }
    return module_at(path, cap, libdir, "", file) || module_at(path, cap, builddir, "", file);
}
