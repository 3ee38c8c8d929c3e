#!/usr/bin/env python3
"""units.py TENSORC FILE... - which programs tests/nvrtc/run.sh sends to NVRTC.

Each FILE is one NVRTC unit (`tensorc compile FILE --emit=cuda`, every
function's kernels).  A program is left out when every one of its kernels
is already in an earlier program of the list (the same text, the
`// file:line` comments aside: the fuzz corpus's ex_*.tc are older copies
of examples/*.tc, whose kernels are the examples' own), so each distinct
kernel is compiled once an arch.  A program with no kernel (all cuBLAS)
is kept: the empty unit is a case of its own.  Prints one line a program:

    keep FILE N BYTES   N: its __global__ count (the CUBIN's entries must
                        match); BYTES: the unit's size (the biggest go first)
    same FILE N as PROGRAM...   every kernel seen before, in those programs

and exits 0 (2 on a usage error).  A program whose --emit=cuda fails is
kept (the compile then reports the failure)."""
import hashlib
import re
import subprocess
import sys


def kernels(text):
    """The source of each __global__ function of a unit (to its closing
    brace at column 0), comments after // removed."""
    lines = text.split("\n")
    out, i = [], 0
    while i < len(lines):
        if "__global__" in lines[i] and not lines[i].startswith((" ", "\t", "#", "/")):
            j = i
            while j < len(lines) and lines[j] != "}":
                j += 1
            body = "\n".join(re.sub(r"\s*//.*$", "", l) for l in lines[i:j + 1])
            out.append(hashlib.sha1(body.encode()).hexdigest())
            i = j
        i += 1
    return out


def main():
    if len(sys.argv) < 2:
        print(__doc__.splitlines()[0], file=sys.stderr)
        return 2
    tc, files = sys.argv[1], sys.argv[2:]
    seen = {}  # kernel hash -> the program that compiles it
    for f in files:
        p = subprocess.run([tc, "compile", f, "--emit=cuda"], capture_output=True, text=True)
        if p.returncode != 0:
            print("keep %s 0 0" % f)
            continue
        n = p.stdout.count("__global__")
        ks = kernels(p.stdout.split("\nlaunch plan of")[0])
        if ks and all(k in seen for k in ks):
            print("same %s %d as %s" % (f, n, " ".join(sorted({seen[k] for k in ks}))))
            continue
        for k in ks:
            seen.setdefault(k, f)
        print("keep %s %d %d" % (f, n, len(p.stdout)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
