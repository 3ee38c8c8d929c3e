#!/usr/bin/env bash
# The man page and bash completion that tensorc-gendoc writes at build time
# from tools/help.c (the table `tensorc --help` prints), and that table
# against the CLI itself: every option it lists is accepted, every option
# the CLI parses is listed.  Usage: tests/cli/manpage.sh TENSORC GENDOC
# BUILD_DIR.  Prints "N passed, M failed" last; exits 1 on failure.
set -u
tc=$(realpath "${1:?usage: manpage.sh TENSORC GENDOC BUILD_DIR}")
gendoc=$(realpath "${2:?}")
build=$(realpath "${3:?}")
root=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL $1"; [ -n "${2:-}" ] && sed 's/^/    /' "$2" | head -6; }

"$gendoc" options >"$tmp/opts" || bad "tensorc-gendoc options"
# the built files are today's: the same as the generator writes now
"$gendoc" man "$tmp/tensorc.1" && cmp -s "$tmp/tensorc.1" "$build/tensorc.1" && ok || bad "build/tensorc.1 is current"
"$gendoc" bash "$tmp/tensorc.bash" && cmp -s "$tmp/tensorc.bash" "$build/tensorc.bash" && ok || bad "build/tensorc.bash is current"

# --- the man page -----------------------------------------------------------------
for cmd in $(cut -d' ' -f1 "$tmp/opts" | sort -u) doctor help; do
    grep -q "^\.SS $cmd\$" "$tmp/tensorc.1" && ok || bad "man page: a section for $cmd"
done
if command -v groff >/dev/null 2>&1; then
    groff -man -ww -z "$tmp/tensorc.1" 2>"$tmp/err" && [ ! -s "$tmp/err" ] && ok || bad "groff reads the man page without warnings" "$tmp/err"
else
    echo "SKIP: groff is not installed: the man page's roff is not checked"
fi

# --- bash completion --------------------------------------------------------------
# complete WORDS...: the completions of the last word (COMPREPLY, one a line)
complete_words() {
    (cd "${cwd:-.}" && bash -c '. "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _tensorc; printf "%s\n" "${COMPREPLY[@]}"' \
        _ "$tmp/tensorc.bash" "$@")
}
has() { # has NAME WORD WORDS...: WORD among the completions of WORDS
    local name=$1 want=$2; shift 2
    complete_words "$@" >"$tmp/c" 2>"$tmp/err" && grep -qx -- "$want" "$tmp/c" && ok || bad "completion: $name" "$tmp/c"
}
has "commands" compile tensorc comp
has "run's options" --check tensorc run f.tc --ch
has "--emit's stages (the library's list)" dot tensorc compile f.tc --emit=
has "--emit's stages after a space" fused tensorc compile f.tc --emit fu
has "--device's values" cuda tensorc run f.tc --device=
has "cache's words" stats tensorc cache st
has "help's commands" explain tensorc help ex
cp "$root/examples/softmax.tc" "$tmp/sm.tc"
cwd=$tmp has "a .tc file" sm.tc tensorc compile s

# --- the table against the CLI ------------------------------------------------------
while read -r cmd opt kind; do
    args=("$cmd" /nonexistent.tc "$opt")
    [ "$cmd" = cache ] && args=(cache stats "$opt")
    [ "$kind" = value ] && args+=(x)
    "$tc" "${args[@]}" >/dev/null 2>"$tmp/err"
    grep -q "unknown option" "$tmp/err" && bad "tensorc ${args[*]}: the CLI does not know $opt" "$tmp/err" || ok
done <"$tmp/opts"
# every option the CLI's sources parse is in the table
for opt in $(grep -ohE 'opt_(flag|value)\("-[-a-z]*"' "$root"/tools/tensorc.c "$root"/tools/run.c | sed -E 's/.*\("//; s/"$//' | sort -u); do
    grep -q " $opt " "$tmp/opts" && ok || { fail=$((fail + 1)); echo "FAIL $opt is parsed but not in tools/help.c's table"; }
done

echo "$pass passed, $fail failed"
[ $fail = 0 ]
