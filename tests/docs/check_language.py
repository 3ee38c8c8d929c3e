#!/usr/bin/env python3
"""check_language.py TENSORC ROOT - docs/language.md cannot fall behind.

1. Every op of src/base/ops.def (its spelling), every view builtin of
   src/graph/build_views.c and every function of prelude/*.tc appears in
   language.md as `name` in a heading or in a table row.
2. Every ```tc code block compiles (`tensorc compile BLOCK`, exit 0), and
   every function in it runs on the reference interpreter (a derived
   function, fn g = grad(f, ...), with f's sizes)
   (`tensorc run BLOCK --fn F --device=cpu`, exit 0), with each symbolic
   dim bound to 4 and [*] to 6 (a comment line `# shape: D=16,...` in the
   block overrides) and random inputs.
   A block right after the line `<!-- check: error -->` is deliberately
   wrong: compiling it must exit 1 with a located "error:" message (never
   a crash).
Prints one line per failure and "N passed, M failed"; exit 1 on a failure.
Python 3 standard library only.
"""
import os
import re
import subprocess
import sys
import tempfile


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    tc, root = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    doc_path = os.path.join(root, "docs", "language.md")
    doc = open(doc_path, encoding="utf-8").read()
    passed, failed = 0, []

    # --- 1. names ---------------------------------------------------------
    # `name` or `name(...)` in a heading or a table row
    listed = set()
    for line in doc.splitlines():
        if line.startswith("#") or line.lstrip().startswith("|"):
            listed.update(re.findall(r"`([A-Za-z_][A-Za-z0-9_]*)", line))
    ops = re.findall(r'^OP\(\s*\w+\s*,\s*"([^"]+)"',
                     open(os.path.join(root, "src", "base", "ops.def"), encoding="utf-8").read(), re.M)
    if len(ops) < 40:
        failed.append("src/base/ops.def: found only %d OP rows (has its format changed?)" % len(ops))
    views = []
    vpath = os.path.join(root, "src", "graph", "build_views.c")
    if os.path.exists(vpath):
        m = re.search(r"view_names\[\]\s*=\s*\{([^}]*)\}", open(vpath, encoding="utf-8").read())
        if m:
            views = re.findall(r'"([a-z_0-9]+)"', m.group(1))
    prelude = []
    pdir = os.path.join(root, "prelude")
    for f in sorted(os.listdir(pdir)):
        if f.endswith(".tc"):
            prelude += re.findall(r"^fn\s+([A-Za-z_][A-Za-z0-9_]*)",
                                  open(os.path.join(pdir, f), encoding="utf-8").read(), re.M)
    for kind, names in (("op of src/base/ops.def", ops), ("view builtin", views),
                        ("prelude function", prelude)):
        for n in names:
            if n in listed:
                passed += 1
            else:
                failed.append("%s `%s` is not in a heading or table of docs/language.md" % (kind, n))

    # --- 2. code blocks ---------------------------------------------------
    help_text = subprocess.run([tc, "--help"], capture_output=True, text=True).stdout
    random_flag = ["--random"] if "--random" in help_text else []
    blocks = []   # (line, text, expect_error)
    lines = doc.splitlines()
    i = 0
    while i < len(lines):
        if lines[i].strip() == "```tc":
            start = i + 1
            j = start
            while j < len(lines) and lines[j].strip() != "```":
                j += 1
            k = i - 1
            while k >= 0 and not lines[k].strip():
                k -= 1
            err = k >= 0 and lines[k].strip() == "<!-- check: error -->"
            blocks.append((start + 1, "\n".join(lines[start:j]) + "\n", err))
            i = j + 1
        else:
            i += 1
    if len(blocks) < 20:
        failed.append("docs/language.md: only %d ```tc blocks found" % len(blocks))

    with tempfile.TemporaryDirectory() as work:
        env = dict(os.environ, TENSORC_CACHE_DIR=os.path.join(work, "cache"))
        for line, text, err in blocks:
            where = "docs/language.md:%d" % line
            path = os.path.join(work, "block%d.tc" % line)
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
            r = subprocess.run([tc, "compile", path], capture_output=True, text=True, env=env,
                               timeout=120)
            if err:
                if r.returncode == 1 and re.search(r":\d+:\d+: error: ", r.stderr):
                    passed += 1
                else:
                    failed.append("%s: this block should fail to compile with a located error "
                                  "(exit %d): %s" % (where, r.returncode, r.stderr.strip()[:300]))
                continue
            if r.returncode != 0:
                failed.append("%s: does not compile (exit %d): %s"
                              % (where, r.returncode, r.stderr.strip()[:600]))
                continue
            passed += 1
            overrides = {}
            for m in re.finditer(r"^\s*# shape: (\S+)", text, re.M):
                for kv in m.group(1).split(","):
                    k, _, v = kv.partition("=")
                    overrides[k] = v
            sigs = {m.group(1): m.group(2) for m in
                    re.finditer(r"^\s*fn\s+([A-Za-z_][A-Za-z0-9_]*)\s*(\([^{]*)", text, re.M)}
            fns = re.finditer(r"^\s*fn\s+([A-Za-z_][A-Za-z0-9_]*)\s*(\([^{]*|=\s*grad\(\s*\w+)",
                              text, re.M)
            for m in fns:
                fn, sig = m.group(1), m.group(2)
                # a derived function (fn g = grad(f, ...)) has f's sizes
                for _ in range(8):
                    d = re.match(r"=\s*grad\(\s*([A-Za-z_][A-Za-z0-9_]*)", sig)
                    if not d:
                        break
                    sig = sigs.get(d.group(1), "")
                # the function's own sizes: names in its signature's brackets
                brackets = " ".join(re.findall(r"\[([^\]]*)\]", sig))
                shape = {d: "4" for d in re.findall(r"\b([A-Za-z_][A-Za-z0-9_]*)\b", brackets)}
                if re.search(r"\[\s*\*\s*\]", sig.split("->")[0]):  # a [*] parameter
                    shape["*"] = "6"
                for k, v in overrides.items():
                    if k in shape:
                        shape[k] = v
                spec = ",".join("%s=%s" % kv for kv in sorted(shape.items()))
                cmd = [tc, "run", path, "--fn", fn, "--device=cpu"] + random_flag
                if spec:
                    cmd += ["--shape", spec]
                r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=120)
                if r.returncode == 0:
                    passed += 1
                else:
                    failed.append("%s: `tensorc run --fn %s --device=cpu --shape %s` exits %d: %s"
                                  % (where, fn, spec, r.returncode, r.stderr.strip()[:600]))
    for f in failed:
        print("FAIL " + f)
    print("%d passed, %d failed" % (passed, len(failed)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
