#!/usr/bin/env bash
# symbols.sh BUILD_DIR - what tensorc's installed libraries export, and that
# programs and shared objects link against each (issue 12, issue 16):
#
#   1. `cmake --install` into an empty prefix: lib/libtensorc.a and
#      lib/libtensorc.so are there;
#   2. `nm -g --defined-only` over the installed libtensorc.a, and
#      `nm -D --defined-only` over libtensorc.so, list only tc_/TC_ names;
#   3. symbols/clash.c, which defines suggest, plural, buf_init ... (names
#      the library uses inside), links and runs against the static library
#      (pkg-config tensorc-static), the shared one (pkg-config tensorc), and
#      through the CMake package (tensorc::tensorc, tensorc::tensorc_shared);
#   4. symbols/ext.c builds as a shared object against libtensorc.a (the
#      archive is position-independent) and against libtensorc.so, and
#      symbols/load.c dlopens each and compiles a program through it.
# Prints PASS/FAIL per step and "N passed, M failed" last.
set -u
build=$(realpath "${1:?usage: symbols.sh BUILD_DIR}")
here=$(cd "$(dirname "$0")" && pwd)/symbols
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export TENSORC_CACHE_DIR=$work/cache
pass=0 fail=0
ok() { echo "PASS $*"; pass=$((pass + 1)); }
bad() { echo "FAIL $*"; fail=$((fail + 1)); }
show() { tail -n 25 "$1" | sed 's/^/    /'; }
cc=${CC:-cc}
# a sanitized build's objects need the sanitizer runtimes at link time
san=
grep -qs '^TC_SANITIZE:BOOL=ON' "$build/CMakeCache.txt" && san=-fsanitize=address,undefined,float-cast-overflow
grep -qs '^TC_UBSAN:BOOL=ON' "$build/CMakeCache.txt" && san=-fsanitize=undefined,float-cast-overflow
grep -qs '^TC_TSAN:BOOL=ON' "$build/CMakeCache.txt" && san=-fsanitize=thread

# --- 1. install ------------------------------------------------------------------
prefix=$work/prefix
if ! cmake --install "$build" --prefix "$prefix" >"$work/install.log" 2>&1; then
    bad "install: cmake --install failed"; show "$work/install.log"
    echo "$pass passed, $fail failed"; exit 1
fi
static=$(find "$prefix" -name libtensorc.a | head -n 1)
shared=$(find "$prefix" -name libtensorc.so | head -n 1)
pcdir=$(dirname "$(find "$prefix" -name tensorc.pc | head -n 1)")
if [ -n "$static" ] && [ -n "$shared" ] && [ -f "$pcdir/tensorc-static.pc" ]; then
    ok "install: libtensorc.a, libtensorc.so, tensorc.pc, tensorc-static.pc"
else
    bad "install: missing libtensorc.a, libtensorc.so or a .pc file: $(cd "$prefix" && find . | tr '\n' ' ')"
    echo "$pass passed, $fail failed"; exit 1
fi
libdir=$(dirname "$shared")

# --- 2. exported names -------------------------------------------------------------
# nm -g lines are "ADDRESS TYPE NAME"; archive member headers end in ':'.
exports() { awk 'NF == 3 { print $3 }' "$1" | sort -u; }
nm -g --defined-only "$static" >"$work/static.nm" 2>&1
exports "$work/static.nm" >"$work/static.names"
others=$(grep -v '^\(tc_\|TC_\)' "$work/static.names" | head -n 20 | tr '\n' ' ')
if [ ! -s "$work/static.names" ]; then
    bad "libtensorc.a: nm found no names"; show "$work/static.nm"
elif [ -n "$others" ]; then
    bad "libtensorc.a exports names without tc_: $others($(grep -vc '^\(tc_\|TC_\)' "$work/static.names") in all)"
else
    ok "libtensorc.a exports only tc_ names: $(tr '\n' ' ' <"$work/static.names")"
fi
nm -D --defined-only "$shared" >"$work/shared.nm" 2>&1
exports "$work/shared.nm" >"$work/shared.names"
others=$(grep -v '^\(tc_\|TC_\)' "$work/shared.names" | head -n 20 | tr '\n' ' ')
if [ ! -s "$work/shared.names" ]; then
    bad "libtensorc.so: nm found no names"; show "$work/shared.nm"
elif [ -n "$others" ]; then
    bad "libtensorc.so exports names without tc_: $others"
elif ! cmp -s "$work/static.names" "$work/shared.names"; then
    bad "libtensorc.a and libtensorc.so export different names: $(diff "$work/static.names" "$work/shared.names" | tr '\n' ' ')"
else
    ok "libtensorc.so exports the same tc_ names"
fi

# --- 3. a program with names of its own ---------------------------------------------
# link_run NAME COMMAND...: build with COMMAND, then run $work/NAME
link_run() {
    local name=$1
    shift
    if ! "$@" >"$work/$name.log" 2>&1; then
        bad "$name: does not link"; show "$work/$name.log"
    elif ! LD_LIBRARY_PATH=$libdir "$work/$name" >>"$work/$name.log" 2>&1; then
        bad "$name: does not run"; show "$work/$name.log"
    else
        ok "$name: $(tail -n 1 "$work/$name.log")"
    fi
}
export PKG_CONFIG_PATH=$pcdir
link_run clash_static sh -c "$cc $san -o '$work/clash_static' '$here/clash.c' \$(pkg-config --cflags --libs tensorc-static)"
link_run clash_shared sh -c "$cc $san -o '$work/clash_shared' '$here/clash.c' \$(pkg-config --cflags --libs tensorc)"
if ldd "$work/clash_shared" 2>/dev/null | grep -q "libtensorc.so"; then
    ok "clash_shared uses libtensorc.so"
else
    bad "clash_shared is not linked to libtensorc.so: $(ldd "$work/clash_shared" 2>&1 | tr '\n' ' ')"
fi
if cmake -S "$here" -B "$work/cmake" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release \
        -DCMAKE_C_FLAGS="$san" >"$work/cmake.log" 2>&1 && cmake --build "$work/cmake" >>"$work/cmake.log" 2>&1; then
    for t in clash_cmake_static clash_cmake_shared; do
        if LD_LIBRARY_PATH=$libdir "$work/cmake/$t" >"$work/$t.log" 2>&1; then
            ok "$t (CMake package): $(tail -n 1 "$work/$t.log")"
        else
            bad "$t does not run"; show "$work/$t.log"
        fi
    done
else
    bad "CMake package: clash.c against tensorc::tensorc and tensorc::tensorc_shared"; show "$work/cmake.log"
fi

# --- 4. a shared object built on each library ----------------------------------------
if ! $cc $san -o "$work/load" "$here/load.c" -ldl >"$work/load.log" 2>&1; then
    bad "load.c does not build"; show "$work/load.log"
fi
for kind in static shared; do
    so=$work/ext_$kind.so
    if [ $kind = static ]; then
        libs="\$(pkg-config --libs tensorc-static)"
    else
        libs="\$(pkg-config --libs tensorc)"
    fi
    if ! sh -c "$cc $san -shared -fPIC -o '$so' '$here/ext.c' \$(pkg-config --cflags tensorc) $libs" \
            >"$work/ext_$kind.log" 2>&1; then
        bad "a shared object on libtensorc.$([ $kind = static ] && echo a || echo so) does not link"
        show "$work/ext_$kind.log"
    elif ! LD_LIBRARY_PATH=$libdir "$work/load" "$so" >>"$work/ext_$kind.log" 2>&1; then
        bad "ext_$kind.so: does not load or run"; show "$work/ext_$kind.log"
    else
        ok "ext_$kind.so: $(tail -n 1 "$work/ext_$kind.log")"
    fi
done

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
