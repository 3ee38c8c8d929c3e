#!/usr/bin/env bash
# unit_list.sh CMAKE UNIT_LIST_CMAKE: configure scratch projects that use
# tests/unit_list.cmake and check that configuring fails, naming the file,
# when a listed unit test's file is missing or a test_*.c is not listed,
# and succeeds when the list and the folder agree.
set -u
cmake=$1 rules=$(realpath "$2")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0

# project NAME "LISTED..." "FILES...": a scratch project listing LISTED
# with FILES in its unit/ folder
project() {
    local d=$tmp/$1
    mkdir -p "$d/unit"
    for f in $3; do echo "int main(void) { return 0; }" >"$d/unit/$f.c"; done
    {
        echo "cmake_minimum_required(VERSION 3.20)"
        echo "project(t NONE)"
        echo "include($rules)"
        echo "tc_unit_list_begin(\${CMAKE_CURRENT_SOURCE_DIR}/unit)"
        for n in $2; do echo "tc_unit_list_add($n)"; done
    } >"$d/CMakeLists.txt"
    "$cmake" -S "$d" -B "$d/build" >"$d/log" 2>&1
}

# want_fail NAME TEXT: configuring failed and the message has TEXT
want_fail() {
    if project "$1" "$2" "$3"; then
        echo "FAIL $1: configuring succeeded"; fail=1
    elif ! tr '\n' ' ' <"$tmp/$1/log" | tr -s ' ' | grep -qF "$4"; then
        echo "FAIL $1: the message lacks '$4':"; cat "$tmp/$1/log"; fail=1
    else
        echo "ok   $1"
    fi
}

if project agree "test_a test_b" "test_a test_b"; then echo "ok   agree"; else
    echo "FAIL agree: configuring failed:"; cat "$tmp/agree/log"; fail=1; fi
want_fail missing "test_a test_b" "test_a" "tc_unit(test_b) lists a unit test, but unit/test_b.c does not exist"
want_fail unlisted "test_a" "test_a test_c" "unit/test_c.c is not built: add a line 'tc_unit(test_c LIBS...)'"
# files that are not tests (helpers, headers) need no line
if project helpers "test_a" "test_a corpus"; then echo "ok   helpers"; else
    echo "FAIL helpers: configuring failed:"; cat "$tmp/helpers/log"; fail=1; fi
exit $fail
