"""case2.py - tiled transpose_add and two_out, whole tiles (scalar or TENSORC_TILE_VEC's vectors, 32 x 32 or 64 x 64) or tested steps (14 shapes, a grid of 2; transpose_add also with misaligned bases, f16 and bf16), and split columns col_sum, col_stats, mid_mean at every column unroll (1 to 16) under three slice and block settings: bitwise equal.
Quick (TC_EMU_QUICK=1): the columns at unrolls 1, 3 and 16 beside the default (not 2, 4, 8) and 5 of their 7 shapes
(not 517 x 130, 2049 x 4); the tiles at 7 of their 14 shapes and 3 of the 5 misaligned ones, every knob set;
mid_mean whole."""
import os
import sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from emu import *
P = Prog()
base = {}
# tiled: whole tiles vs tested steps, bitwise
# (TENSORC_TILE_VEC: whole tiles' accesses 4 elements at once; offsets of
# one element misalign the vectors of x (phase 1) or y and out (phase 2),
# and odd row pitches (33, 65) some threads' vectors: those go one by one)
# TENSORC_TILE_VEC=2: 64 x 64 tiles, whole ones 4 vectors a thread a phase,
# partial ones four 32 x 32 subtiles (with TENSORC_TILE_WHOLE=1: each split
# whole/edge; the default since session 22: base); the sizes 1, 63, 64, 65,
# 127, 129 in each axis; TENSORC_TILE_VEC=0 the 32 x 32 scalar tiles
tv = [base, {"TENSORC_TILE_WHOLE": "0"}, {"TENSORC_TILE_VEC": "1"}, {"TENSORC_TILE_VEC": "0"},
      {"TENSORC_TILE_VEC": "2", "TENSORC_TILE_WHOLE": "1"}]
# (quick: 7 of the 14 shapes, every knob set; 3 of the 5 misaligned shapes)
for (N, M) in quick([(1, 1), (3, 5), (33, 65), (100, 31), (64, 96), (65, 33), (1, 64), (64, 1), (63, 65), (65, 63),
                     (64, 64), (127, 129), (129, 127), (128, 192)], [0, 2, 3, 6, 8, 11, 13]):
    P.plain(PROG, "transpose_add", tv, {"N": N, "M": M}, {"x": N * M, "y": M * N}, {"out": M * N}, specials=1)
    P.plain(PROG, "two_out", tv, {"N": N, "D": M}, {"x": N * M, "s": N}, {"p": N * M, "q": N * M}, specials=1)
    P.plain(PROG, "transpose_add", tv, {"N": N, "M": M}, {"x": N * M, "y": M * N}, {"out": M * N}, grid=2)
for (N, M) in quick([(64, 96), (33, 65), (96, 40), (128, 192), (130, 67)], [1, 3, 4]):
    for off in [{"x": 1}, {"y": 2}, {"out_out": 3}, {"x": 2, "y": 1, "out_out": 1}]:
        P.plain(PROG, "transpose_add", tv, {"N": N, "M": M}, {"x": N * M, "y": M * N}, {"out": M * N}, off=off,
                specials=1)
    for dt in ["f16", "bf16"]: # vectors of 4 16-bit elements (8 bytes); offsets of one float: 4 bytes
        for off in [{}, {"x": 1, "out_out": 1}, {"y": 1}]:
            P.plain(PROG, "transpose_add", tv, {"N": N, "M": M}, {"x": N * M, "y": M * N}, {"out": M * N}, off=off,
                    specials=1, dtype=dt)
# a batch of transposes (the grid counts B x tiles; a grid of 3 walks them)
# and three transposed operands (64 x 64 tiles of 32 x 32 subtiles: two
# [64][65] tiles are the vector path's most)
for (B, N, M) in quick([(2, 65, 130), (3, 64, 64), (1, 33, 7)], [0, 2]):
    P.plain(PROG, "transpose3", tv, {"B": B, "N": N, "M": M}, {"x": B * N * M, "y": B * M * N},
            {"out": B * M * N}, specials=1)
    P.plain(PROG, "transpose3", tv, {"B": B, "N": N, "M": M}, {"x": B * N * M, "y": B * M * N},
            {"out": B * M * N}, grid=3, off={"y": 1})
for (N, M) in quick([(64, 128), (65, 129), (3, 70)], [1, 2]):
    P.plain(PROG, "transpose_three", tv, {"N": N, "M": M}, {"x": N * M, "y": N * M, "z": N * M, "w": M * N},
            {"out": M * N}, specials=1)
# columns: the same split and block, any unroll: the same bits (floats, NaN/inf)
C = lambda **kw: {("TENSORC_" + k): str(v) for k, v in kw.items()}
for (N, D) in quick([(1, 1), (3, 5), (1031, 37), (517, 130), (2049, 4), (77, 1028), (40, 131)], [0, 1, 2, 5, 6]):
    for extra in [{}, dict(COL_SPLIT=16, COL_X=16), dict(COL_SPLIT=64, COL_X=64)]:
        cv = [C(**extra), C(COL_UNROLL=1, **extra), C(COL_UNROLL=2, **extra), C(COL_UNROLL=3, **extra), C(COL_UNROLL=4, **extra), C(COL_UNROLL=8, **extra), C(COL_UNROLL=16, **extra)]
        cv = quick(cv, [0, 1, 3, 6])
        for off in [{}, {"x": 1}]:
            P.plain(PROG, "col_sum", cv, {"N": N, "D": D}, {"x": N * D}, {"out": D}, off=off, specials=1)
        P.plain(PROG, "col_stats", cv, {"N": N, "D": D}, {"x": N * D}, {"s": D, "m": D}, specials=1)
for (B, N, D) in [(3, 1031, 37), (2, 513, 128), (5, 2, 4)]:
    cv = [base, C(COL_UNROLL=1), C(COL_UNROLL=4), C(COL_UNROLL=3), C(COL_ORDER=1)]
    P.plain(PROG, "mid_mean", cv, {"B": B, "N": N, "D": D}, {"x": B * N * D}, {"out": B * D}, specials=1)
P.write(sys.argv[1])
