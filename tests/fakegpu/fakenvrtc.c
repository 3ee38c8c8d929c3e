/* fakenvrtc.c - an NVRTC that misbehaves on request, for src/runtime/nvrtc.c's
 * defences (tests/unit/test_nvrtc_fake.c loads it through TENSORC_NVRTC).
 *
 * $FAKE_NVRTC picks the misbehaviour:
 *   hugelog    the log size is SIZE_MAX (the get writes 4 KiB: a heap
 *              overflow if the size was believed)
 *   hugeptx    the PTX size is SIZE_MAX
 *   emptyptx   compiles to an empty PTX (size 1: just the NUL)
 *   emptycubin compiles to an empty CUBIN (size 0)
 * anything else: a small valid-looking PTX.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef int nvrtcResult;
typedef struct _nvrtcProgram *nvrtcProgram;
struct _nvrtcProgram { int dummy; };

static const char *mode(void)
{
    const char *m = getenv("FAKE_NVRTC");
    return m ? m : "";
}

static const char PTX[] = "//\n.version 8.0\n.target sm_90\n.address_size 64\n";

nvrtcResult nvrtcVersion(int *major, int *minor)
{
    *major = 12;
    *minor = 4;
    return 0;
}
nvrtcResult nvrtcGetNumSupportedArchs(int *n)
{
    *n = 2;
    return 0;
}
nvrtcResult nvrtcGetSupportedArchs(int *a)
{
    a[0] = 80;
    a[1] = 90;
    return 0;
}
nvrtcResult nvrtcCreateProgram(nvrtcProgram *p, const char *src, const char *name, int nh,
                               const char *const *h, const char *const *names)
{
    (void)src, (void)name, (void)nh, (void)h, (void)names;
    *p = calloc(1, sizeof **p);
    return *p ? 0 : 1;
}
nvrtcResult nvrtcCompileProgram(nvrtcProgram p, int n, const char *const *o)
{
    (void)p, (void)n, (void)o;
    return 0;
}
nvrtcResult nvrtcGetProgramLogSize(nvrtcProgram p, size_t *n)
{
    (void)p;
    *n = strcmp(mode(), "hugelog") == 0 ? SIZE_MAX : 1;
    return 0;
}
nvrtcResult nvrtcGetProgramLog(nvrtcProgram p, char *buf)
{
    (void)p;
    if (strcmp(mode(), "hugelog") == 0)
        memset(buf, 'x', 4096);
    else
        buf[0] = '\0';
    return 0;
}
nvrtcResult nvrtcGetPTXSize(nvrtcProgram p, size_t *n)
{
    (void)p;
    *n = strcmp(mode(), "hugeptx") == 0 ? SIZE_MAX : strcmp(mode(), "emptyptx") == 0 ? 1 : sizeof PTX;
    return 0;
}
nvrtcResult nvrtcGetPTX(nvrtcProgram p, char *buf)
{
    (void)p;
    if (strcmp(mode(), "hugeptx") == 0)
        memset(buf, 'x', 4096);
    else if (strcmp(mode(), "emptyptx") == 0)
        buf[0] = '\0';
    else
        memcpy(buf, PTX, sizeof PTX);
    return 0;
}
nvrtcResult nvrtcGetCUBINSize(nvrtcProgram p, size_t *n)
{
    (void)p;
    *n = strcmp(mode(), "emptycubin") == 0 ? 0 : 16;
    return 0;
}
nvrtcResult nvrtcGetCUBIN(nvrtcProgram p, char *buf)
{
    (void)p;
    if (strcmp(mode(), "emptycubin") != 0)
        memcpy(buf, "\x7f" "ELF fake cubin.", 16);
    return 0;
}
nvrtcResult nvrtcDestroyProgram(nvrtcProgram *p)
{
    free(*p);
    *p = NULL;
    return 0;
}
const char *nvrtcGetErrorString(nvrtcResult r)
{
    return r ? "NVRTC_ERROR (fake)" : "NVRTC_SUCCESS";
}
