"""case3.py - whole-tensor full_sum and full_stats at every unroll and grid caps of 3, 7 and 1024 (and a grid of 2), exact on small integers against an f64 sum, NaN sums; col_sum over slices 2 to 64, blocks 16 to 128 wide and 1 to 16 rows (TENSORC_COL_Y), group- and slice-major (TENSORC_COL_ORDER), exact.
Quick (TC_EMU_QUICK=1): every setting; full_sum not at 1048579 elements, full_stats not at 1000 x 1031, the columns at 4
of their 6 shapes (not 517 x 130, 2049 x 4)."""
import os
import sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from emu import *
P = Prog()
F = lambda **kw: {("TENSORC_" + k): str(v) for k, v in kw.items()}
fv = [F(), F(FULL_UNROLL=1), F(FULL_UNROLL=2), F(FULL_UNROLL=4), F(FULL_UNROLL=8), F(FULL_UNROLL=4, FULL_GRID=7), F(FULL_UNROLL=8, FULL_GRID=3)]
caps = [1024, 1024, 1024, 1024, 1024, 7, 3]
for n in quick([1, 3, 4097, 65537, 100003, 1048579], [0, 1, 2, 3, 4]):
    ref = "double want[1] = {0}; for (long i = 0; i < %d; i++) want[0] += in_x[i]; exact(VNAME, got, want, 1);" % n
    for off in [{}, {"x": 1}]:
        P.plain(PROG, "full_sum", fv, {"*": n}, {"x": n}, {"out": 1}, off=off, specials=2, cap=caps, refs={"out": ref})
    P.plain(PROG, "full_sum", fv, {"*": n}, {"x": n}, {"out": 1}, specials=2, cap=caps, grid=2, refs={"out": ref})
for (N, D) in quick([(1, 1), (33, 4100), (1000, 1031)], [0, 1]):
    n = N * D
    rs = "double want[1] = {0}; for (long i = 0; i < %d; i++) want[0] += (double)in_x[i] * in_x[i]; exact(VNAME, got, want, 1);" % n
    rm = "double want[1] = {-INFINITY}; for (long i = 0; i < %d; i++) want[0] = std::isnan(want[0]) || std::isnan(in_x[i]) ? NAN : std::max(want[0], (double)in_x[i]); exact(VNAME, got, want, 1);" % n
    P.plain(PROG, "full_stats", fv, {"N": N, "D": D}, {"x": n}, {"s": 1, "m": 1}, specials=2, cap=caps, refs={"s": rs, "m": rm})
# full with NaN/inf: the sum is NaN (inf and -inf), the max NaN
for n in [4103, 100003]:
    ref = "double want[1] = {NAN}; exact(VNAME, got, want, 1);"
    P.plain(PROG, "full_sum", fv, {"*": n}, {"x": n}, {"out": 1}, specials=1, cap=caps, refs={"out": ref})
# columns over different splits and blocks: exact on integers
C = lambda **kw: {("TENSORC_" + k): str(v) for k, v in kw.items()}
cv = [C(), C(COL_UNROLL=1), C(COL_UNROLL=4), C(COL_UNROLL=8, COL_SPLIT=64, COL_X=64), C(COL_UNROLL=3, COL_SPLIT=16, COL_X=16), C(COL_SPLIT=2, COL_X=128, COL_UNROLL=4),
      C(COL_X=16, COL_Y=8, COL_UNROLL=4), C(COL_Y=1), C(COL_X=64, COL_Y=2, COL_SPLIT=16),
      C(COL_ORDER=1), C(COL_ORDER=1, COL_UNROLL=3, COL_SPLIT=16, COL_X=16), C(COL_ORDER=1, COL_Y=1, COL_SPLIT=2)]
for (N, D) in quick([(1, 1), (3, 5), (1031, 37), (517, 130), (2049, 4), (77, 1028)], [0, 1, 2, 5]):
    ref = "double want[%d] = {0}; for (long i = 0; i < %d; i++) for (long j = 0; j < %d; j++) want[j] += in_x[i * %d + j]; exact(VNAME, got, want, %d);" % (D, N, D, D, D)
    for off in [{}, {"x": 1}]:
        P.plain(PROG, "col_sum", cv, {"N": N, "D": D}, {"x": N * D}, {"out": D}, off=off, specials=2, refs={"out": ref})
P.write(sys.argv[1])
