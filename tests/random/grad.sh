#!/usr/bin/env bash
# Gradients of random programs: tests/random/gen.py's programs, every float
# dtype made f64, differentiated with grad() (every float tensor parameter)
# and checked against central finite differences by tests/grad/fdcheck.c at
# the sizes gen.py chose.
#
#   tests/random/grad.sh TENSORC FDCHECK [COUNT] [SEED]     (ctest random-grad)
#
# (fdcheck checks each program's vjp pair, `fn f__fwd, f__bwd = vjp(f)`,
# against f and its grad too.)  Each program that differentiates is also
# compiled as written (its own dtypes, f16/bf16 included) with
# `fn f_grad = grad(f)` and `fn f_fwd, f_bwd = vjp(f)` appended, through
# every stage to CUDA (--emit=cuda), and one in 4 through NVRTC to PTX for
# sm_90 (--emit=ptx; left out when NVRTC is absent): the backward kernels
# of random programs are valid CUDA.
#
# Skipped, and counted: elementwise programs (inout: grad refuses them),
# programs with dtype bindings, those the f64 rewrite makes invalid (an
# integer mean is f32 whatever the rest), and those with no float input or
# output, and those that call a prelude function (prelude/*.tc's, computed
# in f32 whatever the dtype: tests/grad/prelude.tc checks the prelude at f32
# tolerance, which large random sums and kinks would exceed).  Elements whose differences are
# inf/NaN (inf is made on purpose) are no reference and are left out, and
# in programs gen.py marks nonfinite those whose gradient is inf/NaN while
# the differences are finite (fdcheck --skip-nan-grad: 0 * inf by the chain
# rule where an inf is flattened).
set -u
tc=$(realpath "$1") fd=$(realpath "$2") count=${3:-60} seed=${4:-${TC_RANDOM_SEED:-3}}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 "$here/gen.py" --seed "$seed" --count "$count" --out "$work" >/dev/null || exit 1
pass=0 skip=0 fail=0
nvrtc=0
# the prelude's functions, from prelude/*.tc (the list once written here
# lacked attention, cross_entropy_probs and nll_loss: seed 2's attn programs
# failed on attention's f32 softmax)
prelude=$(grep -ho '^fn [a-z_0-9]*' "$here/../../prelude/"*.tc | awk '{print $2}' | paste -sd'|')
[ -n "$prelude" ] || { echo "no prelude functions under $here/../../prelude"; exit 1; }
printf 'fn t(x: f32[N]) -> f32[N] {\n    return x * 2.0\n}\n' > "$work/nvrtc.tc"
"$tc" compile "$work/nvrtc.tc" --emit=ptx -o "$work/nvrtc.ptx" >/dev/null 2>&1 && nvrtc=1
for f in "$work"/p*.tc; do
  b=${f%.tc}
  read -r fam sizes bind nonfin < <(python3 -c "
import json; d = json.load(open('$b.json'))
print(d['family'], ','.join('%s=%s' % kv for kv in d['dims'].items()) or 'none', 'bind' if d.get('dtype_bind') else '-',
      'nonfinite' if d.get('nonfinite') else '-')")
  if [ "$fam" = ew ] || [ "$bind" = bind ]; then skip=$((skip+1)); continue; fi
  sed -E 's/\b(f32|f16|bf16)\b/f64/g' "$f" > "$b.f64.tc"
  if ! "$tc" compile "$b.f64.tc" --fn f --emit=graph >/dev/null 2>&1; then skip=$((skip+1)); continue; fi
  if grep -qE "\\b($prelude)\\(" "$b.f64.tc"; then
    skip=$((skip+1)); continue
  fi
  [ "$sizes" = none ] && sizes=
  # inf made on purpose, then flattened (clamp): the chain rule's 0 * inf is
  # a NaN gradient where the differences are 0 (fdcheck.c, --skip-nan-grad)
  nanok=(); [ "$nonfin" = nonfinite ] && nanok=(--skip-nan-grad)
  if grep -qE '\bgather\(' "$b.f64.tc"; then
    # gather's rule covers one index along the axis: the gradient matches the
    # differences, or with more a located error, never a crash or a wrong gradient
    out=$("$fd" "$b.f64.tc" --fn f --sizes "$sizes" --quiet --skip-nonfinite ${nanok[@]+"${nanok[@]}"} --seed "$seed" 2>&1)
    rc=$?
    if [ $rc -eq 0 ] || grep -qE "$(basename "$b").f64.tc:[0-9]+:[0-9]+: error: (grad: 'gather' has a gradient rule only for one index|'f' has no floating-point (tensor parameter|output) to differentiate)" <<<"$out"; then
      pass=$((pass+1))
    else
      fail=$((fail+1)); echo "FAIL $(basename "$f") (gather): not the located error: $(head -3 <<<"$out")"
    fi
    continue
  fi
  out=$("$fd" "$b.f64.tc" --fn f --sizes "$sizes" --quiet --skip-nonfinite ${nanok[@]+"${nanok[@]}"} --seed "$seed" 2>&1)
  if [ $? -eq 0 ]; then
    pass=$((pass+1))
    { cat "$f"; printf '\nfn f_grad = grad(f)\nfn f_fwd, f_bwd = vjp(f)\n'; } > "$b.grad.tc"
    stage=cuda
    [ $((pass % 4)) -eq 1 ] && [ "$nvrtc" = 1 ] && stage=ptx
    for fn in f_grad f_fwd f_bwd; do
      # the ptx stage once a program (the file's one NVRTC unit holds all three)
      st=$stage; [ $fn != f_grad ] && st=cuda
      if ! err=$("$tc" compile "$b.grad.tc" --fn $fn --emit=$st -o "$b.out" 2>&1); then
        pass=$((pass-1)) fail=$((fail+1))
        echo "FAIL $(basename "$f") ($fam, seed $seed): $fn --emit=$st"
        printf '%s\n' "$err" | head -5
        break
      fi
    done
  elif printf '%s' "$out" | grep -q "has no floating-point"; then
    skip=$((skip+1))
  else
    fail=$((fail+1))
    echo "FAIL $(basename "$f") ($fam, seed $seed):"
    printf '%s\n' "$out" | head -3
    sed 's/^/    /' "$b.f64.tc"
  fi
done
echo "$pass passed, $skip skipped, $fail failed"
[ $fail -eq 0 ]
