#!/usr/bin/env python3
"""layers.py ROOT - check that src/ is layered: each folder includes only
headers of its own folder, of the folders below it, and the public header.

    base < front < graph < {ref, lower} < fuse < sched < codegen
         < runtime < driver < api

(ref and lower are siblings: neither includes the other.)  tools/ and
bench/ are checked by tests/package/includes.sh (test tool_includes), not
here.  An #include "x" is resolved as the compiler does: the including file's folder first, then the include path
(include/, src/, then every layer folder, then the build folder's generated
parser.h and lexer.h, which belong to front).  Prints each violation with
file:line and exits 1 if there is one."""
import os, re, sys

RANK = {"base": 0, "front": 1, "graph": 2, "ref": 3, "lower": 3, "fuse": 4, "sched": 5,
        "codegen": 6, "runtime": 7, "driver": 8, "api": 9}
GENERATED = {"parser.h": "front", "lexer.h": "front", "prelude_data.h": "front"}


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "."
    src = os.path.join(root, "src")
    path = [os.path.join(root, "include"), src] + [os.path.join(src, d) for d in ("base", "front", "runtime", "driver", "api")]
    unknown = [d for d in sorted(os.listdir(src)) if os.path.isdir(os.path.join(src, d)) and d not in RANK]
    bad = ["src/%s: a folder with no place in the layers (tests/layers.py)" % d for d in unknown]
    loose = [f for f in sorted(os.listdir(src)) if os.path.isfile(os.path.join(src, f))]
    bad += ["src/%s: a file outside every layer's folder" % f for f in loose]
    count = 0
    for top in ("src",):
        for dirpath, _, names in os.walk(os.path.join(root, top)):
            for name in sorted(names):
                if not name.endswith((".c", ".h", ".y", ".l", ".def")):
                    continue
                f = os.path.join(dirpath, name)
                rel = os.path.relpath(f, root)
                parts = rel.split(os.sep)
                mine = parts[1] if top == "src" else top
                for ln, line in enumerate(open(f, errors="replace"), 1):
                    m = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
                    if not m:
                        continue
                    count += 1
                    inc = m.group(1)
                    hit = None
                    for d in [dirpath] + path:
                        p = os.path.normpath(os.path.join(d, inc))
                        if os.path.isfile(p):
                            hit = os.path.relpath(p, root)
                            break
                    if hit is None:
                        if os.path.basename(inc) in GENERATED and top == "src":
                            layer = GENERATED[os.path.basename(inc)]
                        else:
                            continue  # a generated file of the build, or a system header spelled with quotes
                    elif hit.startswith("include" + os.sep):
                        continue
                    else:
                        hp = hit.split(os.sep)
                        layer = hp[1] if hp[0] == "src" else hp[0]
                    if layer == mine:
                        continue
                    if top != "src":
                        bad.append("%s:%d: %s includes %s (tools/ and bench/ use include/ only)" % (rel, ln, mine, hit or inc))
                    elif layer not in RANK or mine not in RANK or RANK[layer] >= RANK[mine]:
                        bad.append("%s:%d: %s includes %s, which is not below it" % (rel, ln, mine, hit or inc))
    for b in bad:
        print(b)
    print("layers: %d includes checked, %d violations" % (count, len(bad)))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
