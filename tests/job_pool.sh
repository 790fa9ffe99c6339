# SPDX-License-Identifier: Apache-2.0
#
# tests/job_pool.sh: a pool of at most POOL_JOBS background jobs for bash scripts (sourced by
# scripts/test.sh, for the programs it runs under valgrind, and by tests/fuzz/run_fuzz.sh, for
# its compilers and fuzz targets). Each job's output goes to a file of its own and is printed
# whole when the job ends, so the outputs of jobs that run at once never interleave.
#
#   pool_start OUTFILE CMD...   run CMD (a command or a shell function) once a slot is free,
#                               its stdout and stderr in OUTFILE (removed once printed)
#   pool_wait                   wait for every job
#   pool_failed                 how many jobs ended with a non-zero status so far
#
# Needs bash 5.1 (wait -n -p).

POOL_JOBS=${POOL_JOBS:-2}
pool_running=0
pool_failed=0
declare -A pool_out

# pool_reap: waits for one job, prints its output, counts it if it failed.
pool_reap() {
    local done_pid rc
    wait -n -p done_pid
    rc=$?
    cat "${pool_out[$done_pid]}"
    rm -f "${pool_out[$done_pid]}"
    unset "pool_out[$done_pid]"
    pool_running=$((pool_running - 1))
    [ "$rc" -eq 0 ] || pool_failed=$((pool_failed + 1))
}

pool_start() {
    local outfile=$1
    shift
    [ "$pool_running" -lt "$POOL_JOBS" ] || pool_reap
    "$@" >"$outfile" 2>&1 &
    pool_out[$!]=$outfile
    pool_running=$((pool_running + 1))
}

pool_wait() {
    while [ "$pool_running" -gt 0 ]; do
        pool_reap
    done
}
