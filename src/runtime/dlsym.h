/* dlsym.h - symbols from a dlopen'ed library (NVRTC, libcuda, cuBLAS),
 * shared by nvrtc.c, driver.c and blas.c. */
#ifndef TC_DLSYM_H
#define TC_DLSYM_H

#include <dlfcn.h>
#include <stdbool.h>
#include <string.h>

#include "strbuf.h"

/* dlsym returns a data pointer; copying it into the function-pointer slot
 * fnptr with memcpy is how POSIX code stays clean of -Wpedantic. */
static inline bool dl_sym(void *h, const char *name, void *fnptr)
{
    void *p = dlsym(h, name);
    if (!p)
        return false;
    memcpy(fnptr, &p, sizeof p);
    return true;
}

/* dlopen path and resolve names[i] into slots[i] for i < n: the handle, or
 * NULL with why set to dlerror's text or the first missing symbol (the
 * library is closed again then). */
static inline void *dl_open_all(const char *path, const char *const *names, void *const *slots,
                                size_t n, tc_strbuf *why)
{
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *e = dlerror();
        why->len = 0;
        strbuf_printf(why, "%s", e ? e : "dlopen failed");
        return NULL;
    }
    for (size_t i = 0; i < n; i++)
        if (!dl_sym(h, names[i], slots[i])) {
            why->len = 0;
            strbuf_printf(why, "%s has no %s", path, names[i]);
            dlclose(h);
            return NULL;
        }
    return h;
}

#endif
