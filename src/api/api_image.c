/* api_image.c - tc_program_image: a program's kernels as PTX or a CUBIN
 * for a given arch, through the context's JIT (NVRTC and the kernel cache,
 * src/runtime/jit.h), without opening a GPU; tc_program_image_ex also says
 * where the image came from (for `tensorc compile --emit=ptx`). */
#define TC_UNSTABLE_API /* tc_program_image_ex */
#include <stdio.h>
#include <string.h>

#include "api_interp.h"
#include "compile.h"

tc_status tc_program_image(tc_program *p, const char *fn, const tc_arg *dtypes, size_t ndtypes,
                           int arch, tc_image_kind kind, const void **image, size_t *len)
{
    return tc_program_image_ex(p, fn, dtypes, ndtypes, arch, kind, image, len, NULL);
}

tc_status tc_program_image_ex(tc_program *p, const char *fn, const tc_arg *dtypes, size_t ndtypes,
                              int arch, tc_image_kind kind, const void **image, size_t *len,
                              tc_image_info *info)
{
    if (!p)
        return TC_ERR_INVALID_ARG;
    tc_ctx *ctx = p->ctx;
    tc_diag *d = &ctx->diag;
    tc_loc none = {0};
    api_begin(ctx);
    if (!image || !len || (ndtypes && !dtypes) || (kind != TC_IMAGE_PTX && kind != TC_IMAGE_CUBIN))
        return api_fail(ctx, diag_set(d, TC_ERR_INVALID_ARG, none, "tc_program_image: %s",
                                      !image || !len ? "image and len must not be NULL"
                                      : ndtypes && !dtypes ? "dtypes is NULL but ndtypes is not 0"
                                                           : "kind is neither PTX nor CUBIN"));
    *image = NULL;
    *len = 0;
    for (size_t i = 0; i < ndtypes; i++)
        if (dtypes[i].kind != TC_ARG_DTYPE)
            return api_fail(ctx, diag_set(d, TC_ERR_INVALID_ARG, none, "tc_program_image: "
                                          "dtypes[%zu] is not a tc_arg_dtype binding", i));
    const gfn *f = NULL;
    tc_status st;
    if (fn || ndtypes) {
        api_call_args rest;
        if ((st = api_call_entry(p, "tc_program_image", fn, dtypes, ndtypes, true, &f, &rest)) != TC_OK)
            return st;
        api_call_args_free(&rest);
    }
    const char *src;
    if ((st = api_cuda_source(p, f, &src)) != TC_OK)
        return st;
    /* the JIT context tc_run would use: made here if no run has made it */
    if (!ctx->rt && !(ctx->rt = rt_new(TC_DEVICE_AUTO, NULL, &ctx->knobs)))
        return api_fail(ctx, diag_set(d, TC_ERR_NOMEM, none, "out of memory"));
    if (!ctx->rt->jit && !(ctx->rt->jit = jit_ctx_new(ctx->rt->cache_dir, 0)))
        return api_fail(ctx, diag_set(d, TC_ERR_NOMEM, none, "out of memory"));
    jit_set_salt(ctx->rt->jit, ctx->rt->knobs); /* the knobs in the key, as rt_open does */
    /* the name NVRTC records (line info) and the cache key covers */
    const char *name = f ? arena_printf(p->arena, "%s.%s.cu", p->src->name, f->name)
                         : arena_printf(p->arena, "%s.cu", p->src->name);
    jit_origin origin;
    double t0 = tc_now_ms();
    st = jit_image(ctx->rt->jit, src, strlen(src), name, arch, kind == TC_IMAGE_CUBIN,
                   ctx->rt->nvrtc_opts, ctx->rt->nnvrtc_opts, image, len, &origin, d);
    if (st != TC_OK)
        return api_fail(ctx, st);
    if (info) {
        info->jit_origin = origin == JIT_FROM_MEMORY ? 0 : origin == JIT_FROM_DISK ? 1 : 2;
        info->name = name;
        /* TENSORC_DEBUG's line for this stage (src/driver/stages.def) */
        tc_debug_runtime(kind == TC_IMAGE_CUBIN ? STAGE_CUBIN : STAGE_PTX, name, tc_now_ms() - t0,
                         origin == JIT_COMPILED ? "compiled" : "the kernel cache");
    }
    return TC_OK;
}
