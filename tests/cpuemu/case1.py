"""case1.py - pointwise: foreach chain and fma4 over 8 groups (sizes 1 to 100003, offsets 0-3, NaN/inf) and the 2-D bias_gelu (8 shapes, misaligned x or b, a grid of 3), bitwise equal at every pointwise unroll and foreach chunk, blocks of 32 to 1024 threads (TENSORC_PW_BLOCK), the group table read either way (TENSORC_FE_PARAM) from the parameter or device memory (TC_EMU_FE_DEV).
Quick (TC_EMU_QUICK=1): foreach under 10 of the 14 settings (not unroll 2 or 4 alone, 8 with 16 steps, blocks of 128
with 2 steps), bias_gelu under 6 of 9 (not unroll 2, 4, blocks of 128 alone); every shape."""
import os
import sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from emu import *
P = Prog()
base = {}
U = lambda u, **kw: dict({"TENSORC_PW_UNROLL": str(u)}, **kw)
pwv = [base, U(1), U(2), U(4), U(8), U(4, TENSORC_FE_STEPS="4"), U(8, TENSORC_FE_STEPS="16"), U(1, TENSORC_FE_STEPS="3"),
       {"TENSORC_FE_PARAM": "0"}, {"TC_EMU_FE_DEV": "1"}, {"TENSORC_FE_PARAM": "0", "TC_EMU_FE_DEV": "1"},
       {"TENSORC_PW_BLOCK": "128", "TENSORC_FE_STEPS": "2"}, U(1, TENSORC_PW_BLOCK="64"), U(4, TENSORC_PW_BLOCK="1024")]
pwv = quick(pwv, [0, 1, 4, 5, 7, 8, 9, 10, 12, 13])
# foreach pointwise: groups of awkward sizes, some misaligned
groups = [(1, 0), (3, 1), (4097, 0), (12289, 1), (8192, 0), (8193, 3), (40000, 0), (100003, 2)]
P.foreach(PROG, "chain", pwv, groups, 1, specials=1)
P.foreach(PROG, "fma4", pwv, groups, 4)
# 2-D pointwise, bias per vector; misaligned x; small grids too (grid-stride)
pv = [base, U(1), U(2), U(4), U(8), {"TENSORC_PW_BLOCK": "128"}, U(1, TENSORC_PW_BLOCK="32"), U(4, TENSORC_PW_BLOCK="1024"),
      U(4, TENSORC_PW_ONCE="0")]
pv = quick(pv, [0, 1, 4, 6, 7, 8])
for (N, D) in [(1, 1), (3, 5), (7, 1031), (5, 4096), (33, 4100), (17, 8190), (1000, 12), (64, 1024)]:
    for off in [{}, {"x": 1}, {"b": 2}]:
        P.plain(PROG, "bias_gelu", pv, {"N": N, "D": D}, {"x": N * D, "b": D}, {"out": N * D}, off=off, specials=1)
    P.plain(PROG, "bias_gelu", pv, {"N": N, "D": D}, {"x": N * D, "b": D}, {"out": N * D}, grid=3)
P.write(sys.argv[1])
