#!/usr/bin/env bash
# Gradients against central finite differences (tests/grad/fdcheck.c) for
# every tests/grad/*.tc at awkward sizes: 1, odd, a few larger.
set -u
fd=$1
cd "$(dirname "$0")"
fail=0
for f in *.tc; do
  "$fd" "$f" --quiet --sizes N=1,D=1,T=1 --sizes N=3,D=5,T=3 --sizes N=4,D=7,T=17 --sizes N=2,D=2,T=2 \
    || fail=1
done
exit $fail
