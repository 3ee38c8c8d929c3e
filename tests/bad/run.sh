#!/usr/bin/env bash
# Bad-input tests.  Each tests/bad/NAME.tc starts with
#     # expect: LINE:COL: error: MESSAGE
# and must make `tensorc compile NAME.tc --emit=graph` exit 1 with exactly
# "NAME.tc:LINE:COL: error: MESSAGE" as the first line of stderr, the source
# line next, and a caret under column COL on the line after.  A second line
#     # hint: TEXT
# asks for "    hint: TEXT" after the caret (a Python or PyTorch habit,
# src/front/hints.c); without it there must be no hint line.
set -u
tc=$(realpath "$1")
cd "$(dirname "$0")"
pass=0 fail=0
for f in *.tc; do
  want=$(sed -n '1s/^# expect: //p' "$f")
  if [ -z "$want" ]; then echo "FAIL $f: no '# expect:' line"; fail=$((fail+1)); continue; fi
  err=$("$tc" compile "$f" --emit=graph 2>&1 >/dev/null); rc=$?
  first=$(printf '%s\n' "$err" | sed -n 1p)
  caret=$(printf '%s\n' "$err" | sed -n 3p)
  want_hint=$(sed -n '2s/^# hint: //p' "$f")
  hint=$(printf '%s\n' "$err" | sed -n '4{/^    hint: /s/^    hint: //p}')
  col=$(printf '%s' "$want" | cut -d: -f2)
  # the caret line is 4 spaces of indent, then col-1 spaces (or tabs), then ^
  want_caret=$(printf '%*s^' $((col + 3)) '')
  if [ $rc -ne 1 ]; then
    echo "FAIL $f: exit $rc, want 1"; printf '%s\n' "$err" | head -5; fail=$((fail+1))
  elif [ "$first" != "$f:$want" ]; then
    echo "FAIL $f"; echo "  want: $f:$want"; echo "  got:  $first"; fail=$((fail+1))
  elif [ "$(printf '%s' "$caret" | tr '\t' ' ')" != "$want_caret" ]; then
    echo "FAIL $f: caret line '$caret' is not under column $col"; fail=$((fail+1))
  elif [ "$hint" != "$want_hint" ]; then
    echo "FAIL $f"; echo "  want hint: $want_hint"; echo "  got hint:  $hint"; fail=$((fail+1))
  else
    pass=$((pass+1))
  fi
done
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
