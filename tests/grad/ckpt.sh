#!/usr/bin/env bash
# Checkpointing inside a scan (src/sched/sched_ckpt.c), issue 15's must-show:
# grad(mingru)'s forward walk writes 1/K of the states it writes without
# checkpointing, and the backward's result is unchanged.
#   tests/grad/ckpt.sh TENSORC
# 1. The launch plans with and without (TENSORC_SCAN_CHECKPOINT=off): the
#    temps' bytes at B=512, H=128 and T = 64, 17, 1 (K not dividing T, one
#    step) must be ceil(T/K) rows against T per state, K the interval that
#    --emit=sched prints, with the bytes written and read that it prints
#    (ceil(T/K) - 1 rows: the first segment needs none); one kernel against
#    two.
# 2. The generated kernels on the host emulator (tests/emu/emu.py) at
#    T = 1, 17, 64 against the interpreter (`tensorc run --device=cpu`, the
#    same graph either way), and the two builds' outputs bit for bit (with
#    TENSORC_SCAN_LSE=0: below).
# Part 2 needs a C++20 compiler (g++); without one it is skipped with a note.
set -u
tc=$(realpath "$1")
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
ex=$root/examples/mingru_backward.tc
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
line=$("$tc" compile "$ex" --fn mingru_grad --emit=sched | grep -o 'checkpoint every [0-9]* steps: .* bytes against [^(]*')
K=$(echo "$line" | sed -n 's/checkpoint every \([0-9]*\) steps.*/\1/p')
if [ -z "$K" ]; then echo "FAIL: --emit=sched prints no checkpoint interval for mingru_grad"; exit 1; fi
"$tc" compile "$ex" --fn mingru_grad --emit=plan --json > "$tmp/on.json" || exit 1
TENSORC_SCAN_CHECKPOINT=off "$tc" compile "$ex" --fn mingru_grad --emit=plan --json > "$tmp/off.json" || exit 1
python3 - "$tmp/on.json" "$tmp/off.json" "$K" "$line" <<'PY' || fail=1
import json, sys, math, re
on, off = (json.load(open(p))["functions"][0] for p in sys.argv[1:3])
K = int(sys.argv[3])
def temps(f, sz):
    out = []
    for b in f["buffers"]:
        if b["kind"] == "temp":
            n = 1
            for d in b["shape"]:
                n *= eval(d.replace("/", "//"), {}, dict(sz))
            out.append((b["name"], n * {"f32": 4, "f64": 8}[b["dtype"]]))
    return out
ok = True
for T in (64, 17, 1):
    sz = {"B": 512, "T": T, "H": 128}
    a, b = temps(on, sz), temps(off, sz)
    wa, wb = sum(x[1] for x in a), sum(x[1] for x in b)
    want = math.ceil(T / K) * 512 * 128 * 4 * len(b)
    good = len(a) == len(b) == 2 and wa == want and wb == T * 512 * 128 * 4 * 2
    ok &= good
    print("%s T=%d: the plan's temps between the walks: %d bytes (%s), %d without checkpointing (%s): 1/%g" %
          ("ok  " if good else "FAIL", T, wa, ", ".join(x[0] for x in a), wb, ", ".join(x[0] for x in b), wb / wa))
    # the traffic --emit=sched prints: the first segment's carries are not
    # stored, so ceil(T/K) - 1 rows written and read, against T
    m = re.match(r"checkpoint every \d+ steps: (.*) bytes against (.*\S)", sys.argv[4])
    tw, tn = (eval(e.replace("/", "//"), {}, dict(sz)) for e in m.groups())
    good = tw == 2 * (math.ceil(T / K) - 1) * 512 * 128 * 4 * 2 and tn == 2 * T * 512 * 128 * 4 * 2
    ok &= good
    print("%s T=%d: written and read: %d bytes of checkpoints against %d stored at every step" %
          ("ok  " if good else "FAIL", T, tw, tn))
steps = (sum(1 for s in on["steps"]), sum(1 for s in off["steps"]))
print("%s kernels: %d with checkpoints, %d without" % ("ok  " if steps == (1, 2) else "FAIL", *steps))
ok &= steps == (1, 2)
sys.exit(0 if ok else 1)
PY
if ! echo '#include <barrier>' | "${CXX:-g++}" -std=c++20 -x c++ -fsyntax-only - 2>/dev/null; then
    echo "note: no C++20 compiler: the emulator's half skipped"
    exit $fail
fi
# The bits compared with TENSORC_SCAN_LSE=0: with it on (the default) the
# forward walk's logcumsumexp is carried as (max, scaled sum) where it walks
# alone, and as its log in the checkpointed pair's first walk (codegen's
# scan.c), so the two differ by rounding; each is checked against the
# interpreter here.
for T in 1 17 64; do
    python3 "$root/tests/emu/emu.py" "$tc" "$ex" mingru_grad "B=2,T=$T,H=33" "$T" || fail=1
    TENSORC_SCAN_CHECKPOINT=off python3 "$root/tests/emu/emu.py" "$tc" "$ex" mingru_grad "B=2,T=$T,H=33" "$T" || fail=1
    TENSORC_SCAN_LSE=0 EMU_KEEP=$tmp/on python3 "$root/tests/emu/emu.py" "$tc" "$ex" mingru_grad "B=2,T=$T,H=33" "$T" || fail=1
    TENSORC_SCAN_LSE=0 TENSORC_SCAN_CHECKPOINT=off EMU_KEEP=$tmp/off python3 "$root/tests/emu/emu.py" "$tc" "$ex" mingru_grad \
        "B=2,T=$T,H=33" "$T" || fail=1
    for o in out_dcombined out_dstate; do
        if cmp -s "$tmp/on.$o" "$tmp/off.$o"; then
            echo "ok   T=$T $o: the same bits with and without checkpointing"
        else
            echo "FAIL T=$T $o: differs with checkpointing"; fail=1
        fi
    done
done
exit $fail
