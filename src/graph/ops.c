/* ops.c - the op table, expanded from ops.def so that names, kinds, arities
 * and dtype rules are stated once for every pass. */
#include "graph.h"

const op_info op_table[OP_COUNT] = {
#define OP(id, spelling, kind, arity, rule, ref, cuda) [OP_##id] = {spelling, kind, arity, rule},
#include "ops.def"
#undef OP
};
