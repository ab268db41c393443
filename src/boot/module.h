/* module.h: finding a component that libcsn loads at run time (libcsn-pmix.so, libcsn-ofi.so). */
#ifndef CSNI_MODULE_H
#define CSNI_MODULE_H

#include <stddef.h>

/* The path of component file: the environment variable env (a path) when set; else in csn/
 * beside the object libcsn's code is in (libcsn.so, or a program linked with libcsn.a, whose
 * library is then in ../libdir_rel), in libdir (the install directory), in builddir (the build
 * tree). 1 with path filled, 0 when it is nowhere (or the path would not fit). */
int csni_module_find(const char *env, const char *file, const char *libdir,
                     const char *libdir_rel, const char *builddir, char *path, size_t cap);

#endif
