/* load.c - dlopen a shared object built on tensorc (ext.c) and call it,
 * as Python loads an extension.  Exit 0 when it generated CUDA. */
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    if (argc != 2)
        return 2;
    void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        fprintf(stderr, "load: %s\n", dlerror());
        return 1;
    }
    long (*fn)(const char *) = (long (*)(const char *))dlsym(h, "ext_compile");
    if (!fn) {
        fprintf(stderr, "load: %s\n", dlerror());
        return 1;
    }
    long n = fn("fn twice(x: f32[N]) -> f32[N] { return x * 2 }");
    printf("load: %s generated %ld bytes of CUDA\n", argv[1], n);
    return n > 0 ? 0 : 1;
}
