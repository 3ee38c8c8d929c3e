#!/usr/bin/env python3
"""mk.py IN.cu OUT.cu - a generated unit made ready for emu.h: the cluster
helpers (sm_90 PTX) replaced by emu.h's, the cluster code compiled in, and
each block's __shared__ arrays pointed at that block's emu_sh entry."""
import sys

s = open(sys.argv[1]).read()
a = s.index("#if __CUDA_ARCH__ >= 900\n__device__ __forceinline__ unsigned tc_cluster_size()")
b = s.index("#endif", a) + len("#endif")
s = s[:a] + """
static inline unsigned tc_cluster_size() { return emu_cluster_size(); }
static inline unsigned tc_cluster_rank() { return emu_cluster_rank(); }
static inline void tc_cluster_sync() { emu_cluster_sync(); }
template <class T> static inline const T *tc_cluster_map(const T *p, unsigned rank) { return emu_cluster_map(p, rank); }
""" + s[b:]
s = s.replace("#if __CUDA_ARCH__ >= 900", "#if 1")
s = s.replace("__shared__ double tc_smem[2 * 32 * 8];", "double *tc_smem = emu_sh[emu_k].smem;")
s = s.replace("__shared__ __align__(16) unsigned char tc_cl[64];", "unsigned char *tc_cl = emu_sh[emu_k].cl;")
s = s.replace("__shared__ bool last_block;", "bool &last_block = emu_sh[emu_k].flag;")
if "__shared__" in s:
    i = s.index("__shared__")
    sys.exit("mk.py: a __shared__ declaration emu.h does not know: " + s[i:i + 80])
open(sys.argv[2], "w").write(s)
