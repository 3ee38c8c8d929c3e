#!/usr/bin/env bash
# Gradients against central finite differences (tests/grad/fdcheck.c) for
# every tests/grad/*.tc, at the sizes of its "# sizes:" line (each a set of
# NAME=VALUE,...), else at awkward default sets: all 1, odd, longer.
# A "# fdcheck:" line adds options (prelude.tc: f32 step and tolerance).
#   tests/grad/run.sh FDCHECK [TENSORC]
# With TENSORC, also the exact gradients at ties and kinks (ties.py) and
# what the examples' vjp pairs save (remat.sh), and the checkpointed scan
# pair of grad(mingru) (ckpt.sh: 1/K of the states, the same results).
set -u
fd=$(realpath "$1")
tc=${2:+$(realpath "$2")}
cd "$(dirname "$0")"
fail=0
for f in *.tc; do
  sizes=$(sed -n 's/^# sizes: //p' "$f")
  [ -n "$sizes" ] || sizes="N=1,D=1,T=1,B=1 N=3,D=5,T=3,B=2 N=4,D=7,T=17,B=3 N=2,D=2,T=2,B=1"
  args=()
  for s in $sizes; do args+=(--sizes "$s"); done
  # shellcheck disable=SC2046
  "$fd" "$f" --quiet "${args[@]}" $(sed -n 's/^# fdcheck: //p' "$f") || fail=1
done
if [ -n "$tc" ]; then
  python3 ties.py "$tc" || fail=1
  bash remat.sh "$tc" || fail=1
  bash ckpt.sh "$tc" || fail=1
fi
exit $fail
