/* dlsym.h - one symbol from a dlopen'ed library (NVRTC, libcuda), shared by
 * nvrtc.c and driver.c. */
#ifndef TC_DLSYM_H
#define TC_DLSYM_H

#include <dlfcn.h>
#include <stdbool.h>
#include <string.h>

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

#endif
