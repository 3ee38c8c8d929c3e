"""case4.py - columns over long reduced ranges (N up to 16411: many unrolled steps a thread), bitwise across unrolls and exact across slices.
Quick (TC_EMU_QUICK=1): unrolls 1, 3 and 16 beside the default (not 2, 4, 8); every shape and slice setting."""
import os
import sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from emu import *
P = Prog()
C = lambda **kw: {("TENSORC_" + k): str(v) for k, v in kw.items()}
for (N, D) in [(16411, 5), (8191, 33), (4099, 132)]:
    for extra in [{}, dict(COL_SPLIT=4, COL_X=64)]:
        cv = [C(**extra), C(COL_UNROLL=1, **extra), C(COL_UNROLL=2, **extra), C(COL_UNROLL=3, **extra), C(COL_UNROLL=4, **extra), C(COL_UNROLL=8, **extra), C(COL_UNROLL=16, **extra)]
        cv = quick(cv, [0, 1, 3, 6])
        P.plain(PROG, "col_sum", cv, {"N": N, "D": D}, {"x": N * D}, {"out": D}, specials=1)
        P.plain(PROG, "col_stats", cv, {"N": N, "D": D}, {"x": N * D}, {"s": D, "m": D}, off={"x": 1}, specials=1)
    cv = [C(), C(COL_UNROLL=1), C(COL_UNROLL=4), C(COL_UNROLL=8, COL_SPLIT=64, COL_X=64), C(COL_UNROLL=3, COL_SPLIT=16, COL_X=16), C(COL_SPLIT=2, COL_X=128, COL_UNROLL=4)]
    ref = "std::vector<double> want(%d); for (long i = 0; i < %d; i++) for (long j = 0; j < %d; j++) want[j] += in_x[i * %d + j]; exact(VNAME, got, want.data(), %d);" % (D, N, D, D, D)
    P.plain(PROG, "col_sum", cv, {"N": N, "D": D}, {"x": N * D}, {"out": D}, specials=2, refs={"out": ref})
P.write(sys.argv[1])
