/* cg.h - what the code generator's files share (internal to src/codegen).
 *
 * emit.c turns lowered nodes into C expressions and statements (the
 * expression emitter, with common-subexpression reuse and hoisting), load.c
 * the loads among them; kernel.c dispatches to one strategy a file
 * (pointwise.c, rows.c, columns.c, full.c), which lay out their loops
 * around it with loops.c's and accum.c's shared pieces; plan.c decides
 * buffers and writes the launch plan; unit.c assembles the NVRTC program.
 */
#ifndef TC_CG_H
#define TC_CG_H

#include <stdarg.h>

#include "codegen/codegen.h"

/* the most elements of a vector the online pair takes in one update */
#define CG_ONVEC_MAX 16

/* Where a statement goes: before every loop (uses nothing that varies),
 * in the current row's code before the current loop, or in the loop body. */
typedef enum { T_KERNEL, T_ROW, T_ELEM } cg_target;

/* A C expression and whether it stands as an operand without parentheses
 * (an atom: a name, a literal, a plain subscript). */
typedef struct cg_expr {
    const char *s;
    bool atom;
} cg_expr;

/* Statements made before the code around them (a loop's body is built
 * before the loop): lines with their indentation, placed at any depth by
 * cg_put, so text is never read back to re-indent it. */
typedef struct cg_ln {
    int ind;
    const char *text;
} cg_ln;

typedef struct cg_block {
    cg_ln *v;
    int n, cap;
    int ind;                /* of the next line (cg_line) */
} cg_block;

void cg_block_add(cg_block *b, tc_arena *a, int ind, const char *text);
void cg_block_cat(cg_block *b, tc_arena *a, const cg_block *c);   /* append c's lines */
void cg_put(tc_buf *o, int ind, const cg_block *b);    /* b's lines, ind deeper */

/* The indenting writer: a strategy's own lines into o, each at the
 * writer's depth (ind, in spaces), which the calls that open and close a
 * level move, so no string carries its indentation.  Lines are whole;
 * fmt has no newline. */
typedef struct cg_w {
    tc_buf *o;
    int ind;
} cg_w;
void cg_wl(cg_w *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A line that opens a level ("for (...) {"), then one level deeper. */
void cg_wopen(cg_w *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* One level out, then its line ("}", "} else {": then cg_win). */
void cg_wclose(cg_w *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A brace-less body: one line a level deeper ("if (c)" then this). */
void cg_wbody(cg_w *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void cg_win(cg_w *w);                          /* one level deeper */
void cg_wput(cg_w *w, const cg_block *b);      /* b's lines at the depth */

typedef struct cg_entry {
    const lnode *n;
    const tc_dim **idx;
    int scope;              /* branch depth it was made at (concat) */
    cg_target t;
    const char *name;
    bool atom;              /* name needs no parentheses as an operand */
} cg_entry;

/* Per-function buffer decisions (plan.c). */
typedef struct cg_bufs {
    int *buf_of;            /* lnode id -> the buffer it is read from, or -1 */
    int **writes;           /* lnode id -> buffers a store writes (-1 terminated), or NULL */
    int *part_of;           /* lnode id of a column sum carried as partials (fuse.h) -> its
                             * partials buffer [blocks of rows, columns] (f32, f64 for f64), or -1 */
    tc_plan *plan;
    const tc_dim **extra;   /* limits kernels add (cg_limit) */
    int nextra, capextra;
    int capkernels;         /* of plan->kernels */
    /* checkpointed scan pairs (sched_ckpt.c): lnode id -> its register
     * array's number + 1 in the pair's kernel (a value the forward walk
     * stored for the reversed one: no buffer), else 0; kernel index -> the
     * first of its checkpoint buffers (one per scan carry, in order), -1 */
    int *sv_of;
    int *ck_first;
} cg_bufs;

typedef struct cg {
    tc_arena *a;
    tc_diag *d;
    tc_dimctx *c;
    const lfn *l;
    const ffn *f;
    const sfn *s;
    const ksched *ks;        /* its schedule (a variant's copy: unit.c's wide_split) */
    const fkernel *k;
    int kj;                  /* the kernel's index in s->k and f->k */
    const char *kname;       /* the kernel's name in the unit */
    bool comments;           /* statements carry their .tc line (not in a sharing key) */
    /* positional names (compact kernels, which unit.c shares between steps
     * when their code is the same): buffers p0, p1, ... in the order the
     * kernel first uses them, and so in its signature and the step's
     * arguments; reductions by their place in the kernel (acc0, r0, ...) */
    bool positional;
    int *bufpos;             /* buffer id -> its position, -1 unused (positional) */
    int *bufseq;             /* position -> buffer id */
    int nbufseq;
    bool wide;               /* an index needs 64 bits even if sizes fit in 32 (cg_flat) */
    cg_bufs *bufs;
    bool idx64;
    cg_block kpre, rpre, body; /* T_KERNEL, T_ROW, T_ELEM statements */
    cg_entry *cache;
    int ncache, capcache;
    int scope;
    int ntemp;
    unsigned elemvars;       /* index variables that vary inside the loop body */
    unsigned rowvars;        /* index variables fixed per row */
    bool *redep;             /* lnode id -> depends on a reduction of this kernel */
    int *phase_of;           /* lnode id -> pass of this kernel's reduction */
    const char **acc;        /* lnode id -> accumulator of this kernel's reduction */
    const char **lse;        /* lnode id -> a logcumsumexp's (max, scaled sum) carry (scan.c), else NULL */
    int phase;               /* the pass being generated; nphases for epilogue */
    bool *used_buf;          /* buffer id -> the kernel uses it */
    bool *used_param;        /* gfn param index -> scalar used */
    const char **syms;       /* size symbols used */
    int nsyms;
    const char *acc_at;      /* accumulators are arrays (a thread's columns): the
                              * subscript, else NULL */
    /* persistent rows: the loads of an unrolled item run unconditionally (at
     * a clamped, in-bounds index) so all of a thread's loads are in flight at
     * once; its accumulations and stores are predicated on this flag
     * instead (a load under a branch cannot issue before the branch) */
    const char *eguard;
    const char *combine2;    /* cg_finish_pass: the combine of two reductions at once
                              * (tc_block_reduce2, tc_cluster_reduce2), or NULL */
    bool ticket;             /* TENSORC_ROWS_TICKET: this kernel's cluster loop takes rows by
                              * ticket (rows.c), its workspace the counter */
    int pipe_bytes;          /* TENSORC_ROWS_PIPE: shared memory a thread for the next
                              * row's slice (rows.c; plan.h's pipe), 0: none */
    const char *combine_args; /* cg_finish_pass: more arguments of the combine (a
                               * cluster's), or NULL */
    /* reciprocals of divisors fixed per row or kernel, by the divisor's name */
    struct cg_rcp { const char *of, *name; cg_target t; } rcp[16];
    int nrcp;
    ploop *loops;            /* index variables and their bounds (plan.h), for plan_verify */
    int nloops, caploops;
    /* the vector path (pointwise, rows, whole-tensor, split columns): loads
     * made as vectors, by (node, offset of element 0) */
    struct cg_vector {
        int n;               /* elements per vector in the current body, 1 outside */
        int k;               /* the element of the vector being generated */
        int last;            /* the index variable the vector runs along */
        bool row;            /* rows: alignment is tested once per row (vectors start
                              * at multiples of n), at the row's offset */
        bool cols;           /* columns: vectors run along kept elements; alignment is
                              * tested once, at the reduced variables' 0, with their
                              * strides multiples of n */
        const char **align;  /* alignment conditions of the vector body */
        int nalign, capalign;
        struct cg_vload { const lnode *n; const tc_dim *flat0; const char *name; } *load;
        int nload, capload;
        /* pointwise's vector body: its plain vector loads (buffer plus index
         * variables) go to `loads`, which the body starts with, so a kernel
         * that stores m and then reads v does not wait for each load in turn
         * (the accesses go through pointers the compiler cannot prove
         * distinct).  Reading earlier is always right: a store of this
         * element never feeds a load of it. */
        bool hoist;
        cg_block loads;
        /* with ksched.unroll > 1 every vector load of the body is hoisted,
         * and also recorded here: the unrolled loop (loops.c) loads each
         * into an array, one vector a step, before computing any */
        struct cg_hload { const char *type, *name, *addr; int n; } *hl;
        int nhl, caphl;
        bool hoist_all;      /* every vector load recorded so whatever ksched.unroll
                              * (tiled.c's 64 x 64 tiles load them before a barrier) */
        /* rows chunks (the online pair's whole vectors): the pair takes a
         * thread's vector in one update (accum.c), its values gathered here */
        bool onvec;
        const char *onx[CG_ONVEC_MAX];
        /* TENSORC_ROWS_PIPE (rows.c): the first pass's vector loads read
         * shared-memory slot q of item j (copied there by cp.async), and are
         * recorded here for those copies: the address, and its row start
         * (whose alignment cp.async needs) */
        bool pipe;
        /* (sv: a later pass's copy of the slot's vector, resident rows: ks->resident) */
        struct cg_pload { const char *type, *addr, *start, *vec, *sv; int n, bytes; } *pl;
        int npl, cappl;
    } v;
    /* tiled pointwise: reads contiguous along `axis` come from shared memory
     * tiles, tileN[a][b], filled in a first phase */
    struct cg_tiled {
        int axis;            /* -1: not tiled */
        struct cg_tload { const lnode *n; const tc_dim **idx; const char *name, *expr; } *load;
        int nload, capload;
    } tl;
    /* scans (scan.c): the walk's plain loads come from a shared-memory
     * column each thread fills for the next steps of its lane, stN[tt_][tid] */
    struct cg_staged {
        bool on;
        bool ring;           /* two chunk buffers, stN[b_][tt_][tid] (TENSORC_SCAN_ASYNC) */
        struct cg_sload { const lnode *n; const char *raw, *name; } *load;
        int nload, capload;
    } st;
    /* persistent rows: loads kept in registers across passes, pcN[j] */
    struct cg_persist {
        int items;           /* items per thread, 0 when looping */
        /* packed: a vector of 16-bit floats (or bool) kept whole
         * (tc_vec<unsigned short, n> pcN[j], two elements a register),
         * converted where used */
        struct cg_pcache { const lnode *n; const tc_dim **idx; const char *name; int phase; bool packed;
                           int slot; } *cache; /* slot: the pipe's load q, read from its slot in
                                                * every pass (ks->resident), else -1 */
        int ncache, capcache;
        /* values the last reduction pass computes and keeps for the
         * epilogue (keep.c), each at its key (the index of its vector's
         * first element); nkeep 0: none */
        struct cg_keep { const lnode *n; const tc_dim **key; } *keep;
        int nkeep, keep_phase;
        /* TENSORC_ROWS_PAIR (rows.c's rpair): the pair's exp kept at the
         * thread's own max, rescaled by kscale (cg_finish_pair) where read */
        bool rpair;
        const char *kscale;
    } pr;
    struct cg_foreach {
        int cap;             /* groups the table parameter holds */
        int param_bytes;     /* the parameter bytes the table may fill (codegen.h) */
    } fe;
    bool *libcalls;          /* [op * 2 + is_f64]: compact kernels called its wrapper (unit-wide) */
    /* a checkpointed pair's kernel (scan.c): the carries' names ("c", the
     * reversed walk's "r"), and recompute: the walk makes only the values
     * the reversed walk reads, into their register arrays */
    struct cg_ckpt {
        const char *cpre;
        bool recompute;
    } ck;
} cg;

/* emit.c */
/* Compact kernels (sched.h) call library math through __noinline__
 * wrappers: whether op is one, and the wrappers called (g->libcalls) and
 * tc_block_reduce_ni, appended to b. */
bool cg_is_libcall(int op);
void cg_libcall_wrappers(tc_buf *b, const bool *libcalls);
const char *cg_type(tc_dtype t);          /* register type: float for f16/bf16/f32 */
const char *cg_store_type(tc_dtype t);    /* memory type: unsigned short for f16/bf16 */
const char *cg_index(cg *g, const tc_dim *e);   /* a dim as C over i0.., sz_N.. */
bool cg_dim_atom(cg *g, const tc_dim *e);       /* cg_index(e) is one name or number */
bool cg_dim_plain_sum(cg *g, const tc_dim *e);  /* ... names and a number added */
const char *cg_flat(cg *g, const lnode *n, const tc_dim *const *idx); /* flat offset into n's buffer */
const char *cg_value(cg *g, const lnode *n, const tc_dim *const *idx);
/* where(c, f(x), g(y)) of two logs, a log of a normal argument (logform.c):
 * the expression, else NULL */
const char *cg_logform(cg *g, const lnode *n, const tc_dim *const *idx);
/* exp(v + y) or exp(y) of a logcumsumexp y carried as its pair (logform.c):
 * the expression, no log, else NULL */
const char *cg_expform(cg *g, const lnode *n, const tc_dim *const *idx);
/* whether a reader may take such a y's value, not only its exp (logform.c) */
bool cg_lse_value_read(const cg *g, const lnode *n);
/* n at idx is already in the element-level name (scan.c's hoisted values) */
void cg_known(cg *g, const lnode *n, const tc_dim *const *idx, const char *name);
const char *cg_convert(cg *g, const char *v, tc_dtype from, tc_dtype to);
void cg_line(cg *g, cg_target t, const lnode *n, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* cg_line into buffer b at indentation ind */
void cg_line_v(cg *g, cg_block *b, const lnode *n, const char *fmt, va_list ap)
    __attribute__((format(printf, 4, 0)));
const char *cg_temp(cg *g, const char *prefix);
void cg_forget(cg *g, cg_target t);      /* drop cached values of a scope level */
bool cg_uses_vars(const cg *g, const tc_dim *const *idx, int n, unsigned vars);
/* where n's value at idx is made: before the loops, per row, or per element */
cg_target cg_target_of(cg *g, const lnode *n, const tc_dim *const *idx);
const char *cg_buf_name(cg *g, int buf);
void cg_use_buf(cg *g, int buf);
/* Record that the vector body needs addr aligned to bytes, or condition c. */
void cg_align(cg *g, const char *addr, int bytes);
void cg_cond(cg *g, const char *c);
const tc_dim *cg_row_part(cg *g, const tc_dim *f0);

/* load.c: n's value at idx read from its buffer into a temporary (at
 * target t), or in a persistent row its register slot */
cg_expr cg_load(cg *g, const lnode *n, const tc_dim *const *idx, cg_target t);
/* values kept from the last reduction pass (keep.c's plan): n's slot at
 * idx where an earlier pass kept it (else NULL); in that pass, v into it */
const char *cg_kept(cg *g, const lnode *n, const tc_dim *const *idx);
void cg_keep_put(cg *g, const lnode *n, const tc_dim *const *idx, const char *v);
/* keep.c: which values a persistent row's last reduction pass keeps for
 * its epilogue (g->pr.keep), for a row of vectors of vec */
void cg_keep_plan(cg *g, int vec);
/* whether the plan keeps n at key (the index of its vector's first element) */
bool cg_keep_planned(const cg *g, const lnode *n, const tc_dim *const *key);
/* A gather's value at idx (a temporary at target t): its index read, checked
 * and clamped, then its source loaded there */
const char *cg_gather(cg *g, const lnode *n, const tc_dim *const *idx, cg_target t);

/* kernel.c: generate kernel j's code next (a checkpointed pair's reversed
 * walk, scan.c): its own values, nothing cached from the other */
void cg_switch_kernel(cg *g, int j);
/* v (n's register value) as n's memory type holds it */
const char *cg_store_conv(cg *g, const lnode *n, const char *v);
/* scan_stage.c: a staged load's shared-memory element (raw: the load's
 * text); the scanned axis; its index i<axis> from s_; a chunk's staged
 * loads from c_; whether they can be cp.async copies; the async chunk loop */
const char *cg_stage_load(cg *g, const lnode *n, const char *raw);
int cg_scan_axis(const fkernel *k);
void cg_scan_axis_index(cg *g, tc_buf *o, int ind);
void cg_scan_stage(cg *g, tc_buf *o, int steps);
bool cg_scan_async_ok(const cg *g);
void cg_scan_async_chunks(cg *g, tc_buf *o, int steps, const cg_block *body, int unroll);

/* plan.c */
cg_bufs *cg_plan_bufs(const sfn *s, tc_arena *a, tc_diag *d);
/* Add the launch step of the kernel g generated, running unit kernel
 * `name` (which may be another step's: the same code). */
void cg_plan_kernel(cg *g, const char *name);
bool cg_takes_ws(const cg *g); /* the kernel's last parameter is the workspace (plan.c) */
/* A cuBLAS step for matmul m; returns its index in the plan's steps. */
int cg_plan_matmul(cg_bufs *b, const lnode *m, tc_dimctx *c, tc_arena *a);
/* A new empty step (steps move as the plan grows: keep indices, not pointers). */
pstep *cg_plan_step(tc_plan *p, tc_arena *a);
void cg_plan_arg(pstep *st, tc_arena *a, parg arg);
/* Enter kernel `name` into the plan's kernel table with st's arguments as
 * its parameters (none written: the caller marks them), st->kidx its place. */
pkernel *cg_plan_table(cg_bufs *b, tc_arena *a, pstep *st, const char *name);
/* A generated matmul (matmul.c, for a SCH_EXTERN kernel that is not cuBLAS
 * only): its plan steps, and its kernel's text (the unit puts matmul.cuh
 * before the first); NULL text for a cuBLAS-only matmul. */
const char *cg_matmul(cg *g, cg_bufs *b, const ksched *ks, const char *name, tc_dimctx *c, tc_arena *a);
/* An attention kernel (attn.c, for a SCH_EXTERN kernel with k->attn): its
 * plan step and its kernel's text (the unit puts attn.cuh before the first). */
const char *cg_attn(cg *g, cg_bufs *b, const ksched *ks, const char *name, tc_dimctx *c, tc_arena *a);
/* The state a kernel's generation starts from (kernel.c; cg_kernel and a
 * matmul's fused epilogue). */
void cg_kernel_init(cg *g);
void cg_plan_finish(const sfn *s, cg_bufs *b, tc_arena *a);
/* Record an index variable of the kernel being generated (plan.h's ploop). */
void cg_loop(cg *g, const char *var, const tc_dim *bound, const tc_dim *step);
/* A value the kernel's indices reach that must stay below 2^31 in a 32-bit
 * plan, beyond the buffers' and domains' sizes. */
void cg_limit(cg *g, const tc_dim *v);

/* kernel.c: the dispatcher, the signature, stores */
/* The kernel's code, signature first, named g->kname; the plan step is
 * cg_plan_kernel's (unit.c adds it once it knows which kernel runs). */
void cg_kernel(cg *g, tc_buf *out);
/* The buffers the kernel uses, in its signature's order. */
int cg_kernel_bufs(const cg *g, int *out);
void cg_reset_bufs(cg *g);                 /* empty row and body buffers */
/* Store n's value at its natural index into every buffer it goes to
 * (under `if (guard)` when guard is not NULL). */
void cg_store(cg *g, cg_target t, const lnode *n, const char *guard);
void cg_store_at(cg *g, cg_target t, const lnode *n, const tc_dim *const *idx, const char *guard);
bool cg_is_written(cg *g, int buf);
/* Store element-level node s, vec elements along the last axis, as one
 * vector (alignment recorded for the vector path's test). */
void cg_vector_store(cg *g, const lnode *s, int vec);
/* Start a vector body: vec elements along index variable last. */
void cg_vector_begin(cg *g, int vec, int last);

/* loops.c */
unsigned cg_all_axes(const fkernel *k);
/* Statements defining the index variables of `axes` from the flat
 * position pos over just those axes (row-major). */
void cg_decompose(cg *g, tc_buf *o, int ind, const char *pos, unsigned axes);
/* The grid-stride loop over n elements (nd as a dim), vector and scalar
 * bodies (loops.c says more). */
/* The body of a vector loop: all of it (its hoisted loads, g->v.loads,
 * then the rest), and the rest alone; with ksched.unroll > 1 the loads are
 * also recorded (g->v.hl) and the unrolled loop computes rest from them. */
typedef struct cg_vbody { cg_block all, rest; } cg_vbody;
void cg_grid_stride(cg *g, tc_buf *o, const char *n, const tc_dim *nd, int vec, const cg_vbody *vb,
                    const cg_block *body, bool named, const char *const *range);
void cg_vbody_begin(cg *g, int vec, int last);
cg_vbody cg_vbody_end(cg *g);

/* accum.c: reductions' accumulators */
const char *cg_acc_type(cg *g, const lnode *r);
const char *cg_red_op(const lnode *r);     /* tc_op_sum, ... */
int cg_rno(const cg *g, const lnode *r);   /* the number in accN, rN */
const char *cg_acc_init(cg *g, const lnode *r);
const char *cg_acc_zero(cg *g, const lnode *r);
void cg_accumulate_at(cg *g, int phase, cg_block *decl, int ind, const char *pos, int shift,
                      bool pos_shift);
void cg_accumulate(cg *g, int phase, cg_block *decl, int ind, const char *pos);
void cg_finish_pass(cg *g, int phase, tc_buf *o, int ind, const char *combine);
void cg_pair_shift(cg *g, tc_buf *o, int ind);  /* TENSORC_ROWS_PAIR: after the max's pass */
void cg_finish_pair(cg *g, tc_buf *o, int ind, const char *combine); /* ... after the sum's */

/* the strategies, one file each */
void cg_pointwise(cg *g, tc_buf *o);       /* pointwise.c */
void cg_tiled(cg *g, tc_buf *o);           /* tiled.c */
int cg_fe_count(const cg *g);              /* foreach: tensors in the group table */
int cg_fe_cap(const cg *g, int nt);        /* foreach: groups the parameter holds */
void cg_rows(cg *g, tc_buf *o, bool columns);   /* rows.c */
void cg_columns_split(cg *g, tc_buf *o);   /* columns.c */
void cg_columns_split_vec(cg *g, tc_buf *o);
void cg_full(cg *g, tc_buf *o);            /* full.c */
void cg_scan(cg *g, tc_buf *o);            /* scan.c */

#endif
