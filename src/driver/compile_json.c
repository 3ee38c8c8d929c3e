/* compile_json.c - the stages that have a JSON form (explain and plan), as
 * `tensorc explain --json` and `tensorc compile --emit=plan --json` give
 * them: one document per call (docs/json.md), its "functions" one object
 * per function, in the file's order. */
#include "compile.h"
#include "json.h"

void tc_drv_json(tc_buf *b, tc_program *p, tc_stage stage, const gfn *const *fns, int n,
                 unsigned variant)
{
    const cg_unit *u = tc_drv_unit(p, fns, n, variant);
    tc_json j;
    jw_init(&j, b);
    jw_obj(&j);
    jw_key(&j, "format");
    jw_str(&j, stage == STAGE_PLAN ? "tensorc-plan" : "tensorc-explain");
    jw_key(&j, "version"); /* explain 2: decisions' "superseded", kernels of kind "attention" */
    jw_int(&j, stage == STAGE_PLAN ? 1 : 2);
    jw_key(&j, "file");
    jw_str(&j, p->src ? p->src->name : NULL);
    jw_key(&j, "functions");
    jw_arr(&j);
    for (int i = 0; i < n; i++) {
        if (stage == STAGE_PLAN) {
            if (i < u->nplans)
                plan_json(&j, u->plans[i], fns[i]);
        } else {
            tc_fnc *fc = NULL;
            for (fc = p->fncs; fc && fc->g != fns[i]; fc = fc->next)
                ;
            if (fc && fc->fu)
                fuse_explain_json(&j, fc->fu);
        }
    }
    jw_end(&j);
    jw_end(&j);
}
