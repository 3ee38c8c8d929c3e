#!/usr/bin/env python3
"""sass_path.py - count a kernel's instructions along one path of a loop
in its SASS, without a GPU (issue 13: the generated matmul's K step).

    tensorc compile F.tc --emit=cubin --arch=sm_90 -o k.cubin
    nvdisasm k.cubin > k.sass        (pip: nvidia-cuda-nvdisasm)
    bench/sass_path.py k.sass tc_matmul_1                 # the loops
    bench/sass_path.py k.sass tc_matmul_1 START END ntnn  # one path

The first form lists the kernel's loops that hold an HMMA or LDGSTS (a
backward branch and its target: the first and last instruction's index,
the static mix).  The second walks from instruction START to END (the
loop's branch back), taking each conditional branch as the next letter
says (t taken, n not), printing each branch it meets, and the count of
instructions issued on that path (one warp; predicated-off ones count, as
they issue).  Choose the letters by reading the branches it prints: a
missing letter stops the walk there.
"""
import collections
import re
import sys


def parse(path, kern):
    ins, labels, on = [], {}, False
    for line in open(path):
        if line.startswith("//---"):
            on = (".text." + kern + " ") in line
        if not on:
            continue
        m = re.match(r"^(\.L_\w+):", line.strip())
        if m:
            labels[m.group(1)] = len(ins)
            continue
        m = re.match(r"\s*/\*([0-9a-f]{4,})\*/\s+(.*?);", line)
        if m:
            ins.append(m.group(2))
    return ins, labels


def target(s):
    m = re.search(r"\bBRA\b.*?`\((\.L_\w+)\)", s)
    return m.group(1) if m else None


def main(argv):
    if len(argv) < 3:
        print(__doc__)
        return 2
    ins, labels = parse(argv[1], argv[2])
    if not ins:
        print("no kernel %s in %s" % (argv[2], argv[1]))
        return 1
    if len(argv) == 3:
        for i, s in enumerate(ins):
            t = target(s)
            if t in labels and labels[t] <= i:
                body = ins[labels[t]:i + 1]
                mix = collections.Counter(re.sub(r"^@!?U?P\w+\s+", "", x).split()[0].split(".")[0] for x in body)
                if mix["HMMA"] or mix["LDGSTS"]:
                    print("loop %d..%d, %d instructions: %s" % (labels[t], i, len(body),
                          " ".join("%s:%d" % kv for kv in mix.most_common())))
        return 0
    i, end, path = int(argv[3]), int(argv[4]), argv[5] if len(argv) > 5 else ""
    n = used = 0
    while True:
        s = ins[i]
        n += 1
        if i == end:
            break
        t = target(s)
        if t is not None:
            if not s.startswith("@"):
                i = labels[t]
                continue
            d = path[used] if used < len(path) else "?"
            used += 1
            print("  branch %d: %s -> %s" % (i, s, d))
            if d == "?":
                print("stopped: no letter for this branch")
                return 1
            if d == "t":
                i = labels[t]
                continue
        i += 1
    print("%d instructions from %s to %s" % (n, argv[3], argv[4]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
