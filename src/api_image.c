/* api_image.c - tc_program_image: a program's kernels as PTX or a CUBIN
 * for a given arch, through the context's JIT (NVRTC and the kernel cache,
 * runtime/jit.h), without opening a GPU. */
#include <stdio.h>
#include <string.h>

#include "api_interp.h"

tc_status tc_program_image(tc_program *p, const char *fn, const tc_arg *dtypes, size_t ndtypes,
                           int arch, tc_image_kind kind, const void **image, size_t *len)
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
    if (!ctx->rt && !(ctx->rt = rt_new(TC_DEVICE_AUTO, NULL)))
        return api_fail(ctx, diag_set(d, TC_ERR_NOMEM, none, "out of memory"));
    if (!ctx->rt->jit && !(ctx->rt->jit = jit_ctx_new(ctx->rt->cache_dir, 0)))
        return api_fail(ctx, diag_set(d, TC_ERR_NOMEM, none, "out of memory"));
    /* the name NVRTC records (line info) and the cache key covers */
    char name[512];
    snprintf(name, sizeof name, "%s%s%s.cu", p->src->name, f ? "." : "", f ? f->name : "");
    st = jit_image(ctx->rt->jit, src, strlen(src), name, arch, kind == TC_IMAGE_CUBIN,
                   ctx->rt->nvrtc_opts, ctx->rt->nnvrtc_opts, image, len, NULL, d);
    return st == TC_OK ? TC_OK : api_fail(ctx, st);
}
