#!/usr/bin/env python3
"""ties.py TENSORC - exact gradients where finite differences cannot decide
(ties of max/min, cummax/cummin, kinks of relu/abs/clamp), against
PyTorch's rules as docs/language.md ("Gradients") states them; also a
scalar parameter in wrt= and a 0-d output's cotangent.  Standard
library only."""
import math
import os
import struct
import subprocess
import sys
import tempfile

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "random"))
from gen import write_npy  # noqa: E402


def read_npy(path):
    with open(path, "rb") as f:
        data = f.read()
    assert data[:6] == b"\x93NUMPY", path
    hlen = struct.unpack("<H", data[8:10])[0]
    header = data[10:10 + hlen].decode()
    assert "'<f8'" in header, header  # 0-d or n-d: the values in order
    body = data[10 + hlen:]
    return list(struct.unpack("<%dd" % (len(body) // 8), body))


NINF = float("-inf")

# (function, {input: (shape, values)}, scalar cotangents, {output: expected})
CASES = [
    ("red_grad", {"x": ([4], [1, 3, 3, 2])}, {"dout": 1}, {"dx": [0, 0.5, 0.5, 0]}),
    ("rows_grad", {"x": ([2, 3], [1, 1, 2, 0, 5, 0]), "dout": ([2], [1, 4])}, {},
     {"dx": [0.5, 0.5, 0, 2, 0, 2]}),
    ("pair_grad", {"a": ([3], [1, 2, 5]), "b": ([3], [1, 3, 4]), "dout": ([3], [1, 1, 1])}, {},
     {"da": [0.5, 0, 1], "db": [0.5, 1, 0]}),
    ("run_max_grad", {"x": ([5], [1, 3, 3, 2, 4]), "dout": ([5], [1, 1, 1, 1, 1])}, {},
     {"dx": [1, 1, 2, 0, 1]}),
    ("run_min_grad", {"x": ([5], [2, 1, 1, 3, 0.5]), "dout": ([5], [1, 1, 1, 1, 1])}, {},
     {"dx": [0, 0, 0, 0, 5]}),
    # reverse: as flip(cummin(flip(x))) in PyTorch, the latest in scan order
    ("run_min_grad", {"x": ([4], [2, 1, 1, 3]), "dout": ([4], [1, 1, 1, 1])}, {},
     {"dx": [0, 2, 1, 1]}),
    # products with zeros: the product of the others, not y / x
    ("products_grad", {"x": ([4], [2, 0, 3, 5])}, {"dout": 1}, {"dx": [0, 30, 0, 0]}),
    ("products_grad", {"x": ([4], [2, 0, 3, 0])}, {"dout": 1}, {"dx": [0, 0, 0, 0]}),
    ("products_grad", {"x": ([3], [2, 4, 3])}, {"dout": 1}, {"dx": [12, 6, 8]}),
    # cumprod [2, 0, 3, 0, 5]: y = [2, 0, 0, 0, 0]; dx_j = sum_{i>=j} g_i prod_{k<=i, k!=j} x_k
    ("running_grad", {"x": ([5], [2, 0, 3, 0, 5]), "dout": ([5], [1, 1, 1, 1, 1])}, {},
     {"dx": [1, 8, 0, 0, 0]}),
    ("running_back_grad", {"x": ([5], [5, 0, 3, 0, 2]), "dout": ([5], [1, 1, 1, 1, 1])}, {},
     {"dx": [0, 0, 0, 8, 1]}),
    # a scalar parameter in wrt= (its gradient is 0-d), a 0-d output's cotangent a scalar
    ("scale_grad", {"x": ([3], [1, 2, 3]), "dy": ([3], [1, 1, 2])}, {"s": 2, "dt": 10},
     {"ds": [2 * 2 * (1 + 2 + 6) + 10 * 6], "dx": [4 + 20, 4 + 20, 8 + 20]}),
    # logcumsumexp where the running value is -inf: 0 there, not NaN; then
    # dx_j = sum_{i >= j} exp(x_j - y_i), y = [-inf, -inf, 0, log(1 + e)]
    ("lse_scan_grad", {"x": ([4], [NINF, NINF, 0, 1]), "dout": ([4], [1, 1, 1, 1])}, {},
     {"dx": [0, 0, 1 + 1 / (1 + math.e), math.e / (1 + math.e)]}),
    ("lse_scan_back_grad", {"x": ([4], [1, 0, NINF, NINF]), "dout": ([4], [1, 2, 1, 1])}, {},
     {"dx": [math.e / (1 + math.e), 2 + 1 / (1 + math.e), 0, 0]}),
    ("kinks_grad", {"x": ([5], [0, -1, 1, 0.5, 2]), "dout": ([5], [1, 1, 1, 1, 1])}, {},
     {"dx": [10, -1, 12, 12, 2]}),
]


def main():
    tc = os.path.abspath(sys.argv[1])
    passed = failed = 0
    with tempfile.TemporaryDirectory() as d:
        src = os.path.join(d, "ties.tc")
        with open(os.path.join(here, "ties.tc.in")) as f, open(src, "w") as g:
            g.write(f.read())
        for fn, inputs, scalars, want in CASES:
            cmd = [tc, "run", src, "--fn", fn, "--device=cpu"]
            for name, (shape, vals) in inputs.items():
                p = os.path.join(d, "%s.%s.npy" % (fn, name))
                write_npy(p, shape, "f64", vals)
                cmd += ["--input", "%s=%s" % (name, p)]
            for name, v in scalars.items():
                cmd += ["--input", "%s=%s" % (name, v)]
            for name in want:
                cmd += ["--output", "%s=%s" % (name, os.path.join(d, "%s.out.%s.npy" % (fn, name)))]
            r = subprocess.run(cmd, capture_output=True, text=True)
            ok = r.returncode == 0
            got = {}
            if ok:
                for name in want:
                    got[name] = read_npy(os.path.join(d, "%s.out.%s.npy" % (fn, name)))
                    w = [float(v) for v in want[name]]
                    ok = ok and len(got[name]) == len(w) and all(
                        abs(a - b) <= 1e-12 * (1 + abs(b)) for a, b in zip(got[name], w))
            if ok:
                passed += 1
            else:
                failed += 1
                print("FAIL %s %s: want %s, got %s %s" % (fn, inputs, want, got, r.stderr.strip()))
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
