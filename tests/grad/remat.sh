#!/usr/bin/env bash
# What a vjp pair's forward saves (src/graph/grad_remat.c): the choice that
# `tensorc explain` prints for the examples' pairs, each smaller than saving
# every forward value the backward reads.  (fdcheck checks that the pairs
# compute what f and grad(f) do.)
#   tests/grad/remat.sh TENSORC
set -u
tc=$(realpath "$1")
cd "$(dirname "$0")/../../examples"
fail=0
# file, backward, saved count, saved bytes, the alternative's bytes
while read -r file fn count bytes alt; do
  out=$("$tc" explain "$file" --fn "$fn" 2>&1)
  want="$count value$([ "$count" = 1 ] || echo s) saved, $bytes bytes"
  if ! grep -qF "$want" <<<"$out" || ! grep -qF "backward reads instead: " <<<"$out" ||
     ! grep -qF "values, $alt bytes" <<<"$out"; then
    echo "FAIL $file $fn: want '$want' against '$alt'; explain says:"
    grep -A6 "vjp of" <<<"$out"
    fail=1
  elif [ "$fn" = mingru_bwd ] && ! grep -qF "2 scans recomputed from the parameters" <<<"$out"; then
    echo "FAIL $file $fn: its scans are not recomputed"; fail=1
  else
    echo "ok   $file $fn: $want (every value the backward reads: $alt)"
  fi
done <<'LIST'
layernorm_backward.tc layernorm_bwd 2 8*N 16*N*D + 4*N
layernorm_backward.tc rmsnorm_bwd 1 4*N 12*N*D + 4*N
mlp_backward.tc mlp_bwd 1 4*N*H 8*N*H
mingru_backward.tc mingru_bwd 0 0 63*B*T*H - 4*B*H
LIST
exit $fail
