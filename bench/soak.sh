#!/bin/bash
# bench/soak.sh [BUILD] [SECONDS] [EVERY]: the soak test (issue 16; not in CI). Runs nettest (4
# ranks, 1 KiB-1 MiB: eager and pulled messages, payloads checked, repeats without end),
# threadtest (2 ranks, 4 threads, payloads checked) and pingpong both ways (2 ranks, 16 KiB-4
# MiB: batched and single pulls, payloads checked; a new job each round, its ranks not sampled)
# side by side for SECONDS (default 3600), printing every EVERY seconds (default 60) each
# sampled rank's open descriptors and resident memory. At the end the jobs are stopped; it fails
# (exit 1) if a job ended early (a payload error, a crash), or if any rank's descriptors grew, or
# its memory grew by more than 10% + 4 MiB, between the first sample and the last.
set -u
build=${1:-build}
secs=${2:-3600}
every=${3:-60}
csnrun=$build/tools/csnrun/csnrun
T=$(mktemp -d "${TMPDIR:-/tmp}/soak.XXXXXX")
pids=()
cleanup() {
    for p in "${pids[@]}"; do
        pkill -TERM -P "$p" 2>/dev/null # the pingpong loop's current csnrun
        kill -TERM "$p" 2>/dev/null
    done
    wait 2>/dev/null
    rm -rf "$T"
}
trap cleanup EXIT

"$csnrun" -np 4 "$build/bench/nettest/nettest" uK m1 M1024 K4 R100000000 T100 Ptotal \
    >"$T/nettest.out" 2>&1 &
pids+=($!)
"$csnrun" -np 2 "$build/bench/threadtest/threadtest" --threads 4 --sizes 64 \
    --iters 100000000 --windows 10000000 --time "$secs" >"$T/threadtest.out" 2>&1 &
pids+=($!)
while :; do
    "$csnrun" -np 2 "$build/bench/pingpong/pingpong" --test bibw --sizes 16K,64K,256K,1M,4M \
        --samples 3 >"$T/pingpong.last" 2>&1 || { mv "$T/pingpong.last" "$T/pingpong.out"; exit 1; }
done &
pids+=($!)
sleep 5

# The ranks: children of each job's agent that are not agents themselves.
ranks() {
    local job agent p
    for job in "${pids[@]}"; do
        agent=$(pgrep -P "$job" -f -- --agent | head -1)
        [ -n "$agent" ] || continue
        for p in $(pgrep -P "${agent:-0}"); do
            grep -q -a -- --agent "/proc/$p/cmdline" 2>/dev/null || echo "$p"
        done
    done
}
sample() { # pid -> "fds rss_kib"
    echo "$(ls "/proc/$1/fd" 2>/dev/null | wc -l) $(awk '/^VmRSS/ { print $2 }' "/proc/$1/status" 2>/dev/null)"
}

mapfile -t R < <(ranks)
[ ${#R[@]} -eq 6 ] || { echo "soak: expected 6 ranks, found ${#R[@]}"; cat "$T"/*.out; exit 1; }
declare -A first last name
for p in "${R[@]}"; do
    name[$p]=$(basename "$(tr '\0' ' ' <"/proc/$p/cmdline" | cut -d' ' -f1)")
    first[$p]=$(sample "$p")
done
printf 'soak: %s s, a sample every %s s; per rank: descriptors/RSS MiB\n' "$secs" "$every"
printf '%8s' "t (s)"
for p in "${R[@]}"; do printf ' %18s' "${name[$p]}:$p"; done
echo
start=$(date +%s)
fail=0
while :; do
    now=$(($(date +%s) - start))
    printf '%8d' "$now"
    for p in "${R[@]}"; do
        s=$(sample "$p")
        last[$p]=$s
        set -- $s
        printf ' %18s' "$1/$(( ${2:-0} / 1024 ))"
    done
    echo
    for j in "${pids[@]}"; do
        kill -0 "$j" 2>/dev/null || { echo "soak: job $j ended early"; fail=1; }
    done
    [ $fail -eq 0 ] || break
    [ "$now" -lt "$secs" ] || break
    sleep "$every"
done
for p in "${R[@]}"; do
    set -- ${first[$p]} ${last[$p]}
    if [ "$#" -eq 4 ] && { [ "$3" -gt "$1" ] || [ "$4" -gt $(($2 + $2 / 10 + 4096)) ]; }; then
        echo "soak: ${name[$p]} $p grew: descriptors $1 -> $3, RSS $(($2 / 1024)) -> $(($4 / 1024)) MiB"
        fail=1
    fi
done
[ $fail -eq 0 ] || { tail -n 5 "$T"/*.out; exit 1; }
echo "soak: flat (descriptors and memory of all 6 ranks), no job failed"
