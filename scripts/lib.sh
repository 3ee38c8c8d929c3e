# lib.sh - shell helpers shared by setup.sh and test.sh (sourced, not run).

# quiet LOG CMD...: run CMD with its output in LOG; show the log if it fails.
quiet() {
    local log=$1
    shift
    if ! "$@" >"$log" 2>&1; then
        echo "failed: $*" >&2
        tail -40 "$log" >&2
        return 1
    fi
}
