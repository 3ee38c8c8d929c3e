/* fuse_verify.c - the fused function's invariants (fuse.h): kernels in
 * launch order, each read written by an earlier kernel and stored, each
 * store inside its kernel's domain, every output stored. */
#include "fuse/fuse.h"

void fuse_verify(const ffn *f, tc_diag *d)
{
    const lfn *l = f->l;
    for (int i = 0; i < f->nk; i++) {
        const fkernel *k = f->k[i];
        if (k->id != i)
            diag_error(d, TC_ERR_INTERNAL, l->g->loc, "fusion: kernel %d out of place", k->id);
        for (int j = 0; j < k->nreads; j++) {
            const lnode *r = k->reads[j];
            if (r->kind != LK_INPUT && (f->kernel_of[r->id] < 0 || f->kernel_of[r->id] >= i))
                diag_error(d, TC_ERR_INTERNAL, l->g->loc,
                           "fusion: kernel %d reads %%%d before it is written", i, r->id);
            if (!f->stored[r->id])
                diag_error(d, TC_ERR_INTERNAL, l->g->loc,
                           "fusion: kernel %d reads %%%d, which is not stored", i, r->id);
        }
        for (int j = 0; j < k->nstores; j++) {
            const tc_dim *idx[TC_MAX_RANK];
            int pq, pe;
            if (k->kind != KK_EXTERN && !fuse_node_index(f, k, k->stores[j], idx) &&
                !fuse_plane(k, k->stores[j], &pq, &pe))
                diag_error(d, TC_ERR_INTERNAL, l->g->loc,
                           "fusion: kernel %d stores %%%d outside its domain", i, k->stores[j]->id);
        }
    }
    for (int i = 0; i < l->noutputs; i++)
        if (!f->stored[l->outputs[i].node->id])
            diag_error(d, TC_ERR_INTERNAL, l->g->loc, "fusion: output %s is not stored",
                       l->outputs[i].name);
}
