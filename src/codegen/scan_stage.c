/* scan_stage.c - a scan walk's staged loads (scan.c): each thread copies
 * its lane's loads of the next chunk of steps into its own shared-memory
 * column (stN[tt_][threadIdx.x]; no sync: only the thread reads it), and
 * the walk reads them there.  Synchronously, a chunk's loads in flight
 * together before its walk (the lane path, a checkpointed pair's walks),
 * or (TENSORC_SCAN_ASYNC=1, the lane path) by cp.async into one of two
 * chunk buffers, the next chunk's copies in flight during this chunk's
 * walk. */
#include "codegen/cg.h"

#include <string.h>

const char *cg_stage_load(cg *g, const lnode *n, const char *raw)
{
    struct cg_staged *s = &g->st;
    const char *at = s->ring ? "[b_][tt_][threadIdx.x]" : "[tt_][threadIdx.x]";
    for (int i = 0; i < s->nload; i++)
        if (strcmp(s->load[i].raw, raw) == 0) /* the text this file made: a key, never parsed */
            return arena_printf(g->a, "%s%s", s->load[i].name, at);
    ARENA_GROW(g->a, s->load, s->nload, s->capload, 8);
    const char *name = arena_printf(g->a, "st%d", s->nload);
    s->load[s->nload++] = (struct cg_sload){n, raw, name};
    return arena_printf(g->a, "%s%s", name, at);
}

int cg_scan_axis(const fkernel *k)
{
    int ax = 0;
    while (ax < k->rank - 1 && !(k->mask & (1u << ax)))
        ax++;
    return ax;
}

void cg_scan_axis_index(cg *g, tc_buf *o, int ind)
{
    if (g->k->reverse)
        buf_printf(o, "%*sconst idx_t i%d = len - 1 - s_;\n", ind, "", cg_scan_axis(g->k));
    else
        buf_printf(o, "%*sconst idx_t i%d = s_;\n", ind, "", cg_scan_axis(g->k));
}

/* The copies of the chunk of `steps` steps from `from`: a whole chunk
 * (split, or always when async) indexes each step as from + tt_, affine,
 * so that nvcc makes each address an add to the last (the minGRU forward:
 * its three loads' clamp, index and address were 16 SASS instructions a
 * step); the last chunk clamps to the axis' end (its copies past the end
 * load the last element again, in bounds, unread).  async: into buffer
 * `buf` by cp.async (scan.cuh's tc_scan_cp), else through registers. */
static void copies(cg *g, tc_buf *o, int steps, const char *from, bool split, bool async, const char *buf,
                   int ind0)
{
    for (int part = split ? 0 : 1; part < 2; part++) {
        int ind = split ? ind0 + 4 : ind0;
        if (split)
            buf_printf(o, part == 0 ? "%*sif (len - %s >= %d) { /* a whole chunk */\n" : "%*s} else {\n",
                       ind0, "", from, steps);
        buf_printf(o, "%*s#pragma unroll\n"
                      "%*sfor (int tt_ = 0; tt_ < %d; tt_++) { /* the chunk's loads, in flight together */\n",
                   ind, "", ind, "", steps);
        if (part == 0)
            buf_printf(o, "%*s    const idx_t s_ = %s + tt_;\n", ind, "", from);
        else
            buf_printf(o, "%*s    const idx_t s_ = len - %s > tt_ ? %s + tt_ : len - 1;\n", ind, "", from, from);
        cg_scan_axis_index(g, o, ind + 4);
        for (int i = 0; i < g->st.nload; i++) {
            const struct cg_sload *l = &g->st.load[i];
            if (async)
                buf_printf(o, "%*s    tc_scan_cp(&%s[%s][tt_][threadIdx.x], &%s);\n", ind, "", l->name, buf, l->raw);
            else
                buf_printf(o, "%*s    %s[tt_][threadIdx.x] = %s;\n", ind, "", l->name, l->raw);
        }
        buf_printf(o, "%*s}\n", ind, "");
    }
    if (split)
        buf_printf(o, "%*s}\n", ind0, "");
}

void cg_scan_stage(cg *g, tc_buf *o, int steps)
{
    copies(g, o, steps, "c_", g->f->knobs.scan_lse != 0, false, NULL, 16);
}

bool cg_scan_async_ok(const cg *g)
{
    for (int i = 0; i < g->st.nload; i++) {
        int b = dtype_size(g->st.load[i].n->dtype);
        if (b != 4 && b != 8) /* cp.async copies 4, 8 or 16 bytes */
            return false;
    }
    return g->st.nload > 0;
}

/* TENSORC_SCAN_ASYNC=1: the lane walk's chunk loop with two buffers a
 * load (stN[2][steps][threads]), chunk c_ in buffer b_: the first chunk's
 * copies before the loop; each chunk's walk starts by issuing the next
 * one's into the other buffer (read by the walk before this one, whose
 * reads the thread's own stores already waited for) and waiting for its
 * own (cp.async.wait_group 1: all but the newest group; a chunk with no
 * next commits an empty group, so the count holds).  body: the walk's
 * steps, indented 20; unroll: scan.c's walk_unroll.  The minGRU forward at B2048: 3 loads, 8 steps, the
 * same 24 KB a block as the synchronous 16 steps, with no staging
 * registers and the loads in flight across the walk, not between walks. */
void cg_scan_async_chunks(cg *g, tc_buf *o, int steps, const cg_block *body, int unroll)
{
    buf_puts(o, "            if (len > 0) { /* the first chunk's copies */\n"
                "                const idx_t c0_ = 0;\n");
    copies(g, o, steps, "c0_", true, true, "0", 16);
    buf_puts(o, "                tc_scan_cp_commit();\n"
                "            }\n"
                "            int b_ = 0;\n");
    buf_printf(o, "            for (idx_t c_ = 0; c_ < len; c_ += %d, b_ ^= 1) {\n"
                  "                if (len - c_ > %d) { /* the next chunk's copies, in flight during this walk */\n"
                  "                    const idx_t c0_ = c_ + %d;\n", steps, steps, steps);
    copies(g, o, steps, "c0_", true, true, "b_ ^ 1", 20);
    buf_puts(o, "                }\n"
                "                tc_scan_cp_commit();\n"
                "                tc_scan_cp_wait<1>(); /* this chunk's */\n");
    buf_printf(o, "                const int n_ = len - c_ < %d ? (int)(len - c_) : %d;\n", steps, steps);
    if (unroll > 1)
        buf_printf(o, "                #pragma unroll %d\n", unroll);
    buf_puts(o, "                for (int tt_ = 0; tt_ < n_; tt_++) {\n"
                "                    const idx_t s_ = c_ + tt_;\n");
    cg_scan_axis_index(g, o, 20);
    cg_put(o, 20, body);
    buf_puts(o, "                }\n"
                "            }\n");
}
