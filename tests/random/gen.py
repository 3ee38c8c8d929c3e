#!/usr/bin/env python3
"""gen.py - random valid tensorc programs with a NumPy reference for each.

  gen.py --seed S --count N --out DIR

run.sh TENSORC [COUNT] [SEED] (ctest `random`: 200 programs, seed 1, or
$TC_RANDOM_SEED) generates and checks them with check.py against
`tensorc run --device=cpu`.  gen.py writes DIR/pNNN.tc (one entry function
`f`) and DIR/pNNN.json describing it:
  dims    {"N": 7, ...}           the sizes this program is run at
  inputs  [{"name", "shape", "dtype"}]   tensor inputs (.npy, f32; shape concrete)
  scalars {"s": 1.25}             scalar arguments to pass (absent: the default)
  ref     ["v3 = ...", ...]        Python statements over np, the inputs and the
                                   helpers in check.py, computing in float64
  outputs {"out": "v7"}            output name -> reference variable
  lowp    true when f16/bf16 rounding is involved (looser tolerance)

Why the generator tracks shapes itself: every program must be valid, so a
program tensorc rejects is a bug in one of the two, never noise.  Shapes are
kept in a closed vocabulary so any two values broadcast: each value's shape is
the program's full shape [B?, N, D] right-aligned, with some dims replaced by
1 and maybe leading dims dropped.  Views that would leave the vocabulary
(slices, x[::2], flatten) are paired with their inverse (concat back, reshape
back) so the data moves but the shape stays expressible in a signature.

The reference rounds every value to its dtype (f32, f16, bf16) the way the
language defines it (compute wide, round on store), so comparisons of computed
values and f16 cancellation agree with tensorc; the GPU comparison can reuse
the same programs with a looser tolerance.
"""
import argparse
import json
import os
import random


class Val:
    def __init__(self, name, shape, dtype):
        self.name = name      # tensorc and reference variable name
        self.shape = shape    # tuple of symbols / '1', right-aligned to full
        self.dtype = dtype


class Gen:
    def __init__(self, rng, idx):
        self.r = rng
        self.idx = idx
        self.lines = []       # tensorc statements
        self.ref = []         # reference statements
        self.vals = []
        self.n = 0
        self.lowp = False

    def fresh(self):
        self.n += 1
        return "v%d" % self.n

    def emit(self, expr, ref, shape, dtype):
        name = self.fresh()
        self.lines.append("    %s = %s" % (name, expr))
        rnd = self.rnd(dtype)
        self.ref.append("%s = %s(%s)" % (name, rnd, ref))
        v = Val(name, shape, dtype)
        self.vals.append(v)
        return v

    @staticmethod
    def rnd(dtype):
        # the reference's rounding to dtype; every node of the program is
        # rounded, including the inner nodes of templates like abs(x) + 1
        return {"f32": "r32", "f16": "r16", "bf16": "rbf"}[dtype]

    # --- shapes -----------------------------------------------------------
    def size(self, sym):
        return 1 if sym == "1" else self.dims[sym]

    def bshape(self, a, b):
        n = max(len(a), len(b))
        a = ("1",) * (n - len(a)) + a
        b = ("1",) * (n - len(b)) + b
        return tuple(x if x != "1" else y for x, y in zip(a, b))

    def tystr(self, v):
        return "%s[%s]" % (v.dtype, ", ".join(v.shape))

    def promote(self, a, b):
        if a == b:
            return a
        return "f32"   # f16 with bf16 is f32; anything with f32 is f32

    def pick(self):
        # Prefer recent values so the DAG is deep, but reuse old ones too.
        if self.r.random() < 0.6:
            return self.vals[-1]
        return self.r.choice(self.vals)

    # --- ops ---------------------------------------------------------------
    def op_binary(self):
        a = self.pick()
        b = self.r.choice([v for v in self.vals if v is not a] or [a])
        shape = self.bshape(a.shape, b.shape)
        dt = self.promote(a.dtype, b.dtype)
        k = self.r.choice(["+", "-", "*", "/", "max", "min", "lit", "scalar"])
        if k in "+-*":
            return self.emit("%s %s %s" % (a.name, k, b.name),
                             "%s %s %s" % (a.name, k, b.name), shape, dt)
        if k == "/":
            return self.emit("%s / (abs(%s) + 1)" % (a.name, b.name),
                             "%s / %s(np.abs(%s) + 1)" % (a.name, self.rnd(b.dtype), b.name), shape, dt)
        if k in ("max", "min"):
            return self.emit("%s(%s, %s)" % (k, a.name, b.name),
                             "np.%simum(%s, %s)" % (k, a.name, b.name), shape, dt)
        if k == "lit":
            lit = self.r.choice(["2", "0.5", "1.5", "3", "0.25"])
            op = self.r.choice(["*", "+", "-"])
            if self.r.random() < 0.5:
                return self.emit("%s %s %s" % (a.name, op, lit),
                                 "%s %s %s" % (a.name, op, lit), a.shape, a.dtype)
            return self.emit("%s %s %s" % (lit, op, a.name),
                             "%s %s %s" % (lit, op, a.name), a.shape, a.dtype)
        # the scalar parameter: weak, keeps a's dtype
        self.use_scalar = True
        return self.emit("%s * s" % a.name, "%s * s" % a.name, a.shape, a.dtype)

    UNARY = [
        ("exp(clamp(%s, -4, 4))", "np.exp(np.clip(%s, -4, 4))"),
        ("tanh(%s)", "np.tanh(%s)"),
        ("sigmoid(%s)", "sigmoid(%s)"),
        ("relu(%s)", "np.maximum(%s, 0)"),
        ("gelu(%s)", "gelu(%s)"),
        ("silu(%s)", "silu(%s)"),
        ("abs(%s)", "np.abs(%s)"),
        ("neg(%s)", "-(%s)"),
        ("-%s", "-(%s)"),
        ("sqrt(abs(%s) + 1)", "np.sqrt(R(np.abs(%s) + 1))"),
        ("log(abs(%s) + 1)", "np.log(R(np.abs(%s) + 1))"),
        ("rsqrt(%s * %s + 1)", "1 / np.sqrt(R(R(%s * %s) + 1))"),
        ("sin(%s)", "np.sin(%s)"),
        ("cos(%s)", "np.cos(%s)"),
        ("softplus(clamp(%s, -10, 10))", "np.log1p(np.exp(np.clip(%s, -10, 10)))"),
        ("clamp(%s, -1, 2)", "np.clip(%s, -1, 2)"),
    ]

    def op_unary(self):
        a = self.pick()
        t, rf = self.r.choice(self.UNARY)
        n = t.count("%s")
        rf = rf.replace("R(", self.rnd(a.dtype) + "(")
        return self.emit(t % ((a.name,) * n), rf % ((a.name,) * n), a.shape, a.dtype)

    def op_where(self):
        c, a, b = self.pick(), self.pick(), self.pick()
        cmp = self.r.choice([">", "<", ">=", "<="])
        shape = self.bshape(self.bshape(c.shape, a.shape), b.shape)
        dt = self.promote(a.dtype, b.dtype)
        if self.r.random() < 0.5:
            cond, rcond = "%s %s 0.25" % (c.name, cmp), "%s %s 0.25" % (c.name, cmp)
        else:
            o = self.pick()
            cond = rcond = "%s %s %s" % (c.name, cmp, o.name)
            shape = self.bshape(shape, o.shape)
        return self.emit("where(%s, %s, %s)" % (cond, a.name, b.name),
                         "np.broadcast_to(np.where(%s, %s, %s), %s)"
                         % (rcond, a.name, b.name, self.concrete(shape)), shape, dt)

    def concrete(self, shape):
        return "(%s)" % "".join("%d," % self.size(s) for s in shape)

    def op_reduce(self):
        a = self.pick()
        if len(a.shape) == 0:
            return None
        kind = self.r.choice(["sum", "mean", "max", "min", "var", "logsumexp"])
        ax = self.r.choice([-1, 0])
        pos = ax % len(a.shape)
        keep = self.r.random() < 0.5 or len(a.shape) == 1
        extra, rextra = "", ""
        if kind == "var":
            corr = self.r.choice([0, 1])
            if self.size(a.shape[pos]) < 2:
                corr = 0
            extra, rextra = ", correction=%d" % corr, ", ddof=%d" % corr
        rfun = {"sum": "np.sum", "mean": "np.mean", "max": "np.max", "min": "np.min",
                "var": "np.var", "logsumexp": "logsumexp"}[kind]
        expr = "%s(%s, axis=%d, keepdim=%s%s)" % (kind, a.name, ax,
                                                  "true" if keep else "false", extra)
        rexpr = "%s(%s, axis=%d, keepdims=%s%s)" % (rfun, a.name, ax, keep, rextra)
        shape = list(a.shape)
        shape[pos] = "1"
        if keep:
            return self.emit(expr, rexpr, tuple(shape), a.dtype)
        if pos == 0:
            return self.emit(expr, rexpr, tuple(shape[1:]), a.dtype)
        # dropped the last axis: broadcast it back with unsqueeze
        v = self.emit(expr, rexpr, tuple(shape[:pos]), a.dtype)
        self.vals.pop()   # not in the vocabulary: used only by the next line
        return self.emit("unsqueeze(%s, %d)" % (v.name, pos),
                         "np.expand_dims(%s, %d)" % (v.name, pos), tuple(shape), a.dtype)

    def op_view(self):
        a = self.pick()
        r = len(a.shape)
        choices = ["unsq", "reshape"]
        if r >= 2 and self.square:
            choices.append("T")
        if r >= 1 and self.size(a.shape[-1]) >= 2:
            choices.append("roll")
        if r >= 1 and self.size(a.shape[0]) >= 2:
            choices += ["roll0", "strided"]
        if "1" in a.shape:
            choices.append("sq")
        k = self.r.choice(choices)
        if k == "T":
            sh = a.shape[:-2] + (a.shape[-1], a.shape[-2])
            return self.emit("%s.T" % a.name, "np.swapaxes(%s, -1, -2)" % a.name, sh, a.dtype)
        if k == "roll":
            pre = ":, " * (r - 1)
            return self.emit("concat(%s[%s1:], %s[%s:1], axis=%d)" % (a.name, pre, a.name, pre, r - 1),
                             "np.concatenate([%s[..., 1:], %s[..., :1]], axis=%d)"
                             % (a.name, a.name, r - 1), a.shape, a.dtype)
        if k == "roll0":
            return self.emit("concat(%s[1:], %s[:1], axis=0)" % (a.name, a.name),
                             "np.concatenate([%s[1:], %s[:1]], axis=0)" % (a.name, a.name),
                             a.shape, a.dtype)
        if k == "strided":
            # every other row, summed back into the vocabulary (concat of
            # x[::2] and x[1::2] would be [(N + 1)/2 + N/2], which tensorc
            # does not simplify to N)
            return self.emit("sum(%s[::2], axis=0, keepdim=true)" % a.name,
                             "np.sum(%s[::2], axis=0, keepdims=True)" % a.name,
                             ("1",) + a.shape[1:], a.dtype)
        if k == "unsq":
            v = self.emit("unsqueeze(%s, 0)" % a.name, "%s[None]" % a.name,
                          ("1",) + a.shape, a.dtype)
            return self.emit("squeeze(%s, 0)" % v.name, "%s[0]" % v.name, a.shape, a.dtype)
        if k == "sq":
            pos = self.r.choice([i for i, s in enumerate(a.shape) if s == "1"])
            v = self.emit("squeeze(%s, %d)" % (a.name, pos), "np.squeeze(%s, %d)" % (a.name, pos),
                          a.shape[:pos] + a.shape[pos + 1:], a.dtype)
            self.vals.pop()
            return self.emit("unsqueeze(%s, %d)" % (v.name, pos),
                             "np.expand_dims(%s, %d)" % (v.name, pos), a.shape, a.dtype)
        # reshape: flatten then restore (a copy when a is not contiguous)
        flat = " * ".join(a.shape) if a.shape else "1"
        v = self.emit("reshape(%s, %s)" % (a.name, flat), "%s.reshape(-1)" % a.name,
                      ("%s" % flat,), a.dtype)
        v.shape = None   # not in the vocabulary: used only by the next line
        self.vals.pop()
        return self.emit("reshape(%s, %s)" % (v.name, ", ".join(a.shape) or "1"),
                         "%s.reshape(%s)" % (v.name, self.concrete(a.shape)), a.shape, a.dtype)

    def op_concat(self):
        a, b = self.pick(), self.pick()
        shape = self.bshape(a.shape, b.shape)
        if not shape or self.size(shape[-1]) < 2 or a.dtype != b.dtype:
            return None
        r = len(shape)
        # left column of one, the rest of the other; both broadcast to shape first
        ba = "broadcast_to(%s, [%s])" % (a.name, ", ".join(shape))
        bb = "broadcast_to(%s, [%s])" % (b.name, ", ".join(shape))
        pre = ":, " * (r - 1)
        c = self.concrete(shape)
        return self.emit("concat(%s[%s:1], %s[%s1:], axis=%d)" % (ba, pre, bb, pre, r - 1),
                         "np.concatenate([np.broadcast_to(%s, %s)[..., :1], "
                         "np.broadcast_to(%s, %s)[..., 1:]], axis=%d)" % (a.name, c, b.name, c, r - 1),
                         shape, a.dtype)

    def op_cast(self):
        a = self.pick()
        if a.dtype != "f32":
            return self.emit("f32(%s)" % a.name, a.name, a.shape, "f32")
        dt = self.r.choice(["f16", "bf16"])
        self.lowp = True
        # clamp first so f16 cannot overflow
        return self.emit("%s(clamp(%s, -100, 100))" % (dt, a.name),
                         "np.clip(%s, -100, 100)" % a.name, a.shape, dt)

    def op_matmul(self):
        a = self.pick()
        if len(a.shape) < 2 or a.shape[-1] != self.dsym or a.dtype != "f32":
            return None
        return self.emit("%s @ w" % a.name, "np.matmul(%s, w)" % a.name,
                         a.shape[:-1] + (self.dsym,), "f32")

    # --- a whole program ---------------------------------------------------
    def sizes(self):
        r = self.r

        def one():
            u = r.random()
            if u < 0.12:
                return 1
            if u < 0.5:
                return r.randint(2, 9)
            if u < 0.85:
                return r.randint(10, 70)
            return r.randint(71, 400)
        while True:
            d = {"N": one(), "D": one()}
            if self.batched:
                d["B"] = r.choice([1, 2, 3, 5])
            if self.square:
                d["D"] = d["N"]
            tot = 1
            for v in d.values():
                tot *= v
            if self.matmul and d["D"] > 48:
                continue
            if tot <= 100000:
                return d

    def build(self):
        r = self.r
        self.inout = r.random() < 0.1
        self.batched = not self.inout and r.random() < 0.25
        self.square = not self.inout and r.random() < 0.25
        self.matmul = not self.inout and r.random() < 0.15
        self.use_scalar = False
        self.dsym = "N" if self.square else "D"
        self.dims = self.sizes()
        if self.square:
            self.dims.pop("D")
        if self.inout:
            self.dims = {"*": self.r.randint(1, 5000) if r.random() < 0.8 else 1}
            full = ("*",)
        else:
            full = (("B",) if self.batched else ()) + ("N", self.dsym)
        nin = r.randint(1, 3)
        self.inputs = []
        for i in range(nin):
            name = "xyz"[i]
            sh = full
            if i > 0 and not self.inout:
                u = r.random()
                if u < 0.25:
                    sh = full[-1:]                         # a row [D]
                elif u < 0.45:
                    sh = full[:-1] + ("1",)                # a column [N, 1]
            v = Val(name, sh, "f32")
            self.vals.append(v)
            self.inputs.append(v)
        nops = r.randint(3, 15)
        ops = [(self.op_binary, 5), (self.op_unary, 4), (self.op_where, 1.5)]
        if not self.inout:
            ops += [(self.op_reduce, 2.5), (self.op_view, 2), (self.op_concat, 1)]
        ops += [(self.op_cast, 0.7)]
        if self.matmul:
            ops += [(self.op_matmul, 1.5)]
        total = sum(w for _, w in ops)
        done = 0
        while done < nops:
            u = r.random() * total
            for fn, w in ops:
                u -= w
                if u < 0:
                    break
            if fn() is not None:
                done += 1
        return self.finish(full)

    def finish(self, full):
        r = self.r
        # results: the last value, sometimes a second one as a named result
        outs = [self.vals[-1]]
        if not self.inout and r.random() < 0.3 and len(self.vals) > len(self.inputs) + 1:
            cand = [v for v in self.vals[len(self.inputs):-1]]
            outs.append(r.choice(cand))
        fixed = []
        for v in outs:
            if v.dtype != "f32":
                v = self.emit("f32(%s)" % v.name, v.name, v.shape, "f32")
            fixed.append(v)
        outs = fixed
        params = []
        for v in self.inputs:
            params.append("%s: %s%s" % (v.name, "inout " if self.inout and v.name == "x" else "",
                                        self.tystr(v)))
        if self.matmul:
            params.append("w: f32[%s, %s]" % (self.dsym, self.dsym))
        scalars = {}
        if self.use_scalar:
            params.append("s: f32 = 0.75")
            if r.random() < 0.5:
                scalars["s"] = 1.25
        head = "fn f(%s)" % ", ".join(params)
        body = list(self.lines)
        if self.inout:
            # x's new value; broadcast in case the last value came from a
            # reduction ([1] broadcasts over [*])
            body.append("    x = %s + 0 * x" % outs[0].name)
            self.ref.append("x_out = r32(%s + 0 * x)" % outs[0].name)
            outmap = {"x": "x_out"}
            src = "%s {\n%s\n}\n" % (head, "\n".join(body))
        elif len(outs) == 1:
            src = "%s -> %s {\n%s\n    return %s\n}\n" % (head, self.tystr(outs[0]), "\n".join(body),
                                                          outs[0].name)
            outmap = {"out": outs[0].name}
        else:
            src = "%s -> (r0: %s, r1: %s) {\n%s\n    return %s, %s\n}\n" % (
                head, self.tystr(outs[0]), self.tystr(outs[1]), "\n".join(body),
                outs[0].name, outs[1].name)
            outmap = {"r0": outs[0].name, "r1": outs[1].name}
        inputs = [{"name": v.name, "shape": [self.size(s) if s != "*" else self.dims["*"]
                                              for s in v.shape], "dtype": "f32"}
                  for v in self.inputs]
        if self.matmul:
            inputs.append({"name": "w", "shape": [self.dims[self.dsym]] * 2, "dtype": "f32",
                           "scale": 1.0 / max(1, self.dims[self.dsym]) ** 0.5})
        desc = {"dims": self.dims, "inputs": inputs, "scalars": scalars,
                "scalar_defaults": {"s": 0.75} if self.use_scalar else {},
                "ref": self.ref, "outputs": outmap, "lowp": self.lowp}
        return src, desc


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--count", type=int, default=200)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    for i in range(a.count):
        rng = random.Random("%d/%d" % (a.seed, i))
        src, desc = Gen(rng, i).build()
        base = os.path.join(a.out, "p%03d" % i)
        with open(base + ".tc", "w") as f:
            f.write("# random program %d of seed %d (tests/random/gen.py)\n" % (i, a.seed))
            f.write(src)
        with open(base + ".json", "w") as f:
            json.dump(desc, f, indent=1)


if __name__ == "__main__":
    main()
