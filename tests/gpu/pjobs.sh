# pjobs.sh - sourced by the GPU scripts: run independent checks side by side.
#
#   pj_add LABEL CMD ARGS...   queue a command (env VAR=V ... for knobs)
#   pj_run                     run the queue, TC_GPU_JOBS at once (default 8),
#                              print "FAIL LABEL" and the error's first lines
#                              for each failure (TC_GPU_VERBOSE=1: every
#                              job's PASS line too); adds to $pass and $fail;
#                              TC_PJ_FILTER=REGEX runs only the jobs whose
#                              label matches (grep -E)
#
# Each job is a `tensorc run --check` that compiles (NVRTC, one core) and runs
# the interpreter (one core) around a short GPU call, so run serially a
# script's few hundred jobs took minutes on a 16-core machine.  Results are
# written as the jobs end, so a killed run still shows how far it got.
# Source it after making $work (the queue lives there and goes with it).
pj_queue=${work:?pjobs.sh: set work first}/pj_queue
: >"$pj_queue"
pj_add() {
    local label=$1
    shift
    printf '%s\t%s\n' "$label" "$(printf '%q ' "$@")" >>"$pj_queue"
}
pj_one() {
    local label=${1%%$'\t'*} cmd=${1#*$'\t'} log
    log=$(mktemp)
    # one write per job, so parallel jobs' lines do not interleave
    if timeout 300 bash -c "$cmd" >"$log" 2>&1; then
        echo "PASS $label"
    else
        printf 'FAIL %s\n%s\n' "$label" "$(tail -4 "$log" | sed 's/^/    /')"
    fi
    rm -f "$log"
}
pj_run() {
    local res
    res=$(mktemp)
    export -f pj_one
    if [ -n "${TC_PJ_FILTER:-}" ]; then
        grep -E -- "^[^	]*(${TC_PJ_FILTER})" "$pj_queue" >"$pj_queue.f"
        mv "$pj_queue.f" "$pj_queue"
    fi
    xargs -d '\n' -r -P "${TC_GPU_JOBS:-8}" -I{} bash -c 'pj_one "$1"' _ {} <"$pj_queue" | tee "$res" |
        awk '/^FAIL/ { p = 1; print; next } /^    / { if (p) print; next } { p = 0; if (ENVIRON["TC_GPU_VERBOSE"] != "") print }'
    pass=$((pass + $(grep -c '^PASS' "$res")))
    fail=$((fail + $(grep -c '^FAIL' "$res")))
    : >"$pj_queue"
    rm -f "$res"
}
