#!/usr/bin/env bash
# Output files that cannot destroy data (src/base/outfile.h): --output and
# compile -o into devices, FIFOs, symbolic links, missing directories, beside
# a planted PATH.tmp, with a failing second output, from 8 concurrent
# writers, onto a full disk.  Usage: tests/cli/outputs.sh [TENSORC_BIN].
# Prints "N passed, M failed" last; exits 1 on failure.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
tc=$(realpath "${1:-$root/build/tensorc}")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"

pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL $1"; [ -n "${2:-}" ] && printf '  %s\n' "$2"; sed 's/^/    /' err | head -6; }
t() { if [ "$1" = timeout ]; then "$@" >out 2>err; else "$tc" "$@" >out 2>err; fi; rc=$?; }
expect_err() {
    if [ "$rc" -ne "$2" ]; then bad "$1" "want exit $2, got $rc"
    elif ! grep -qF -- "$3" err; then bad "$1" "stderr lacks: $3"
    else ok; fi
}
check() { local n=$1; shift; if "$@"; then ok; else bad "$n" "condition failed: $*"; fi; }

cat >p.tc <<'EOF'
fn add(x: f32[*], s: f32) -> f32[*] {
    return x + s
}
fn two(x: f32[*]) -> (a: f32[*], b: f32[*]) {
    return x + 1, x * 2
}
EOF
# x.npy: 1M zeros (4 MB, so concurrent writers overlap), written by hand:
# the 118-byte dict padded to a 128-byte header
hdr="{'descr': '<f4', 'fortran_order': False, 'shape': (1048576,), }"
{ printf '\x93NUMPY\x01\x00\x76\x00%s' "$hdr"; printf '%*s\n' $((117 - ${#hdr})) ''; head -c 4194304 /dev/zero; } >x.npy
t run p.tc --fn add --input x=x.npy --input s=1 --output out=ref.npy --device=cpu
check "input made by hand reads" [ "$rc" -eq 0 -a -s ref.npy ]

# --- devices, FIFOs, standard streams: written in place, never replaced ------------------
# A regression here would replace the machine's own /dev/null and /dev/full
# (as root it did), so private copies of them are tried first (mknod, as
# root), and the real ones only once the copies came through unharmed.
full=/dev/full
safe=true
if mknod null c 1 3 2>/dev/null && mknod full c 1 7 2>/dev/null && [ -c null ] && [ -c full ]; then
    t run p.tc --fn add --input x=x.npy --input s=1 --output out=null --device=cpu
    check "private null: still a character device" [ -c null ]
    [ -c null ] || safe=false
    t run p.tc --fn add --input x=x.npy --input s=1 --output out=full --device=cpu
    expect_err "private full: the write error" 1 "--output out: cannot write 'full': No space left on device"
    check "private full: still a character device" [ -c full ]
    [ -c full ] || safe=false
    full=$tmp/full
fi
if $safe && [ -c /dev/null ] && [ -w /dev/null ]; then
    t run p.tc --fn add --input x=x.npy --input s=1 --output out=/dev/null --device=cpu
    check "/dev/null: exit 0" [ "$rc" -eq 0 ]
    check "/dev/null: still a character device" [ -c /dev/null ]
fi
$safe || full=/nonexistent/full
mkfifo fifo
timeout 60 cat fifo >fromfifo &
reader=$!
t timeout 60 "$tc" run p.tc --fn add --input x=x.npy --input s=1 --output out=fifo --device=cpu
[ -p fifo ] || kill "$reader" 2>/dev/null
wait "$reader"
check "FIFO: exit 0" [ "$rc" -eq 0 ]
check "FIFO: still a FIFO" [ -p fifo ]
check "FIFO: the reader got the file" cmp -s fromfifo ref.npy
# /dev/fd/1 first: a regression there fails to create /proc/self/fd/1.tmp,
# where one with /dev/stdout replaced the machine's /dev/stdout link
"$tc" run p.tc --fn add --input x=x.npy --input s=1 --output out=/dev/fd/1 --device=cpu >fromfd1 2>err
check "/dev/fd/1: the stream gets the file" cmp -s fromfd1 ref.npy
if $safe && cmp -s fromfd1 ref.npy; then
    "$tc" run p.tc --fn add --input x=x.npy --input s=1 --output out=/dev/stdout --device=cpu >fromstdout 2>err
    check "/dev/stdout: the stream gets the file" cmp -s fromstdout ref.npy
    check "/dev/stdout: still a link" [ -L /dev/stdout ]
fi
if $safe && [ -w /dev/full ]; then
    t run p.tc --fn add --input x=x.npy --input s=1 --output out=/dev/full --device=cpu
    expect_err "/dev/full: the write error" 1 "--output out: cannot write '/dev/full': No space left on device"
    check "/dev/full: still a character device" [ -c /dev/full ]
fi

# --- paths checked before any work, naming the output --------------------------------------
t run p.tc --fn add --input x=x.npy --input s=1 --output out=nodir/y.npy --device=cpu
expect_err "missing directory" 1 "--output out: cannot write 'nodir/y.npy': directory 'nodir': No such file or directory"
mkdir adir
t run p.tc --fn add --input x=x.npy --input s=1 --output out=adir --device=cpu
expect_err "a directory" 1 "--output out: cannot write 'adir': it is a directory"
t run p.tc --fn two --input x=x.npy --output a=same.npy --output b=same.npy --device=cpu
expect_err "two outputs, one file" 1 "--output a and --output b both write 'same.npy'"
t compile p.tc -o nodir/k.cu
expect_err "compile -o: missing directory" 1 "-o: cannot write 'nodir/k.cu': directory 'nodir'"

# --- a planted PATH.tmp is never touched ------------------------------------------------------
echo planted >y.npy.tmp
ln -s victim y2.npy.tmp
t run p.tc --fn add --input x=x.npy --input s=1 --output out=y.npy --device=cpu
check "planted PATH.tmp: run ok" [ "$rc" -eq 0 ]
check "planted PATH.tmp: content kept" [ "$(cat y.npy.tmp)" = planted ]
t run p.tc --fn add --input x=x.npy --input s=1 --output out=y2.npy --device=cpu
check "planted PATH.tmp link: not followed" [ ! -e victim ]
check "no temporaries left" [ -z "$(ls -A | grep tensorc-out)" ]

# --- symbolic links: written through to the target; the link stays ------------------------------
echo old >target.npy
ln -s target.npy link.npy
t run p.tc --fn add --input x=x.npy --input s=1 --output out=link.npy --device=cpu
check "symlink: exit 0" [ "$rc" -eq 0 ]
check "symlink: still a link" [ -L link.npy ]
check "symlink: target written" cmp -s target.npy ref.npy
ln -s missing.npy dangling.npy
t run p.tc --fn add --input x=x.npy --input s=1 --output out=dangling.npy --device=cpu
expect_err "dangling symlink refused" 1 "it is a symbolic link to 'missing.npy', which does not exist"
check "dangling symlink: still a link" [ -L dangling.npy ]
if [ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1; then
    # a link planted by another user in a directory it does not own
    echo secret >secret.npy
    ln -s secret.npy planted.npy && chown -h nobody planted.npy
    t run p.tc --fn add --input x=x.npy --input s=1 --output out=planted.npy --device=cpu
    expect_err "foreign symlink refused" 1 "symbolic link owned by another user"
    check "foreign symlink: target untouched" [ "$(cat secret.npy)" = secret ]
fi

# --- modes: a new file honours the umask, a replaced one keeps its mode ------------------------
(umask 077; "$tc" run p.tc --fn add --input x=x.npy --input s=1 --output out=m.npy --device=cpu)
check "new file: umask 077 gives 0600" [ "$(stat -c %a m.npy)" = 600 ]
chmod 640 m.npy
t run p.tc --fn add --input x=x.npy --input s=1 --output out=m.npy --device=cpu
check "replaced file keeps 0640" [ "$(stat -c %a m.npy)" = 640 ]

# --- a failing second output leaves the first file's old content -----------------------------
if [ -c "$full" ] && [ -w "$full" ]; then
    echo old-a >a.npy
    t run p.tc --fn two --input x=x.npy --output a=a.npy --output b=$full --device=cpu
    expect_err "second output fails" 1 "--output b: cannot write '$full'"
    check "first output untouched" [ "$(cat a.npy)" = old-a ]
    echo old-b >b.npy
    t run p.tc --fn two --input x=x.npy --output a=$full --output b=b.npy --device=cpu
    check "other order: untouched" [ "$(cat b.npy)" = old-b ]
fi

# --- the same over tensor groups: nothing replaced unless every group's file is written -----------
if [ -c "$full" ] && [ -w "$full" ]; then
    echo old-g0 >g0.npy
    t run p.tc --fn add --input x=x.npy,x.npy --input s=1 --output out=g0.npy,$full --device=cpu
    expect_err "groups: second file fails" 1 "--output out (group 1): cannot write '$full'"
    check "groups: first file untouched" [ "$(cat g0.npy)" = old-g0 ]
fi
t run p.tc --fn add --input x=x.npy,x.npy --input s=1 --output out=g0.npy,nodir/g1.npy --device=cpu
expect_err "groups: checked before the run" 1 "--output out (group 1): cannot write 'nodir/g1.npy'"

# --- 8 concurrent writers: the file is whole, one of theirs ------------------------------------
for i in 1 2 3 4 5 6 7 8; do
    "$tc" run p.tc --fn add --input x=x.npy --input s=$i --output out=ref$i.npy --device=cpu
done
pids=
for i in 1 2 3 4 5 6 7 8; do
    "$tc" run p.tc --fn add --input x=x.npy --input s=$i --output out=shared.npy --device=cpu 2>err$i &
    pids="$pids $!"
done
allok=true
for p in $pids; do wait "$p" || allok=false; done
check "concurrent writers: all exit 0" $allok
whole=false
for i in 1 2 3 4 5 6 7 8; do cmp -s shared.npy ref$i.npy && whole=true; done
check "concurrent writers: a whole file of one run" $whole

# --- compile -o onto a full disk: an error, the old file whole ----------------------------------
"$tc" compile p.tc --emit=cuda -o k.cu
cp k.cu k.orig
echo short >k.cu
# a file size limit stands in for a full disk: write(2) fails with EFBIG
(ulimit -f 4; trap '' XFSZ; "$tc" compile p.tc --emit=cuda -o k.cu >out 2>err; echo $? >rcfile)
rc=$(cat rcfile)
if [ "$(stat -c %s k.orig)" -gt 4096 ]; then
    expect_err "compile -o past the size limit" 1 "-o: cannot write 'k.cu': File too large"
    check "compile -o: old file untouched" [ "$(cat k.cu)" = short ]
fi
if [ -c "$full" ] && [ -w "$full" ]; then
    t compile p.tc --emit=cuda -o $full
    expect_err "compile -o $full" 1 "-o: cannot write '$full': No space left on device"
fi
t compile p.tc --emit=cuda -o k.cu
check "compile -o: written" cmp -s k.cu k.orig

# --- TENSORC_DUMP_DIR: a link planted at a dump's name is replaced, not written through ----------
mkdir dumps
ln -s ../dumped-through dumps/p.ast
TENSORC_DUMP_DIR=$tmp/dumps "$tc" compile p.tc --emit=ast >/dev/null 2>err
check "dump: not written through a link" [ ! -e dumped-through ]
check "dump: written" [ -s dumps/p.graph ]

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
