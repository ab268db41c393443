#!/bin/sh
# bench/shm-vs-mpi.sh, short: two rounds of two sizes and two nettest rounds, the placement
# lines and goals it prints, the same goals again from --report, and the argument errors.
# usage: shm_vs_mpi.sh SCRIPT BUILD_DIR
script=$1 build=$2
. "$(dirname "$0")/common.sh"
for args in "--rounds 0" "--bind socket" "--bands 0.1" "--bands a,b" "--rematch -1" "--bogus" "--report /nonexistent"; do
    # shellcheck disable=SC2086
    refused "$script" --build "$build" $args
done
command -v mpirun.openmpi >/dev/null && [ -x "$build/bench/pingpong/pingpong-mpi" ] || {
    echo "SKIP: no Open MPI twin"
    exit 77
}
[ "${SHM_VS_MPI_NO_MPI:-0}" = 1 ] && { echo "SKIP: sanitizer build"; exit 77; }
keep=$(mktemp -d /tmp/shm_vs_mpi.XXXXXX) || exit 1
trap 'rm -rf "$keep"' EXIT
export PP_ARGS="--sizes 8,1K,8K --samples 2 --sample-ms 1" NT_ROUNDS=2 KEEP_DIR=$keep
out=$("$script" --build "$build" --rounds 2 --rematch 1 2>&1) || { echo "$out"; fail "the run failed"; }
echo "$out"
for re in '^# core-to-core latency .* per round: [0-9.]+/[0-9.]+/[0-9.]+ \((core|near|far|mixed)\) ' \
    '^# placement \(--bands 0.045,0.15 us\): [0-9]+ core, [0-9]+ near, [0-9]+ far, [0-9]+ mixed rounds; [01] run again$' \
    '^#   latency 8 B: csn/MPI [0-9.]+ \(goal <= 0.8\): ' '^#   streaming 1..4K: csn/MPI >= 1.0 at [0-9]+ of 2 sizes' \
    '^# goal \(issue 19\): every cell >= 1.0x: [0-9]+ of 36 cells, [0-9]+ more missed by less than the noise' \
    '^# noise: Open MPI per cell, its median over the odd rounds against the even ones \(factor\): median [0-9.]+, ' \
    '^# line-floor \(us\) before/between/after the two libraries \(csn first in odd rounds\)' \
    '^# copy-floor \(latency us, .*\): 8 [0-9.]+ 1024 [0-9.]+$' \
    '^# cma-floor --test lat \(latency us, .*\): 8192 [0-9.]+$' \
    '^# pingpong-lean \(latency us, .*\): 8 [0-9.]+ 1024 [0-9.]+ 8192 [0-9.]+$' \
    '^# nettest-lean \(no library; LEAN_EAGER=16K\) as a reference: median cell lean/MPI [0-9.]+x, csn/lean [0-9.]+x$'; do
    echo "$out" | grep -qE "$re" || fail "no line matching $re"
done
# A round of one placement has its goals again (when the machine kept still for one).
n=$(echo "$out" | grep -cE '^# goals over the [0-9]+ (core|near|far) round\(s\) alone')
m=$(echo "$out" | grep -E '^# placement' | awk '{ print $5 + $7 + $9 }')
[ "$n" -ge 1 ] || [ "$m" = 0 ] || fail "$m rounds of one placement, but no goals per placement"
again=$("$script" --build "$build" --rounds 2 --report "$keep" 2>/dev/null) || fail "--report failed"
[ "$(echo "$out" | grep '^#   ')" = "$(echo "$again" | grep '^#   ')" ] || fail "--report gave other goals"
# A rendezvous latency missed (made up: csn 2.6, Open MPI 2.4, the pulled floor 2.2 us at 8 KiB):
# each against that floor. And 8 B (csn 0.12, Open MPI 0.13, pingpong-lean 0.08 and 2.0 us):
# the goal missed, each against pingpong-lean; a latency missed, against it too.
fake=$keep/fake
mkdir "$fake" && touch "$fake/csn.1.txt" "$fake/mpi.1.txt" || fail "cannot make $fake"
for r in 1 2; do
    for f in csn:0.12:2.6 mpi:0.13:2.4 pull::2.2 lean:0.08:2.0; do
        k=${f%%:*} rest=${f#*:}
        {
            printf '{"results": [\n'
            [ -z "${rest%%:*}" ] || printf '{"size": 8, "lat_us": {"median": %s, "min": 0.01}},\n' "${rest%%:*}"
            printf '{"size": 8192, "lat_us": {"median": %s, "min": 1}}\n]}\n' "${rest#*:}"
        } >"$fake/$k.$r.json"
    done
    printf '{"results": [\n{"size": 8192, "memcpy_MBps": {"median": 9000, "max": 9000}}\n]}\n' >"$fake/memcpy.$r.json"
done
made=$("$script" --build "$build" --rounds 2 --report "$fake" 2>/dev/null)
echo "$made" | grep -q '^#     those sizes against the pulled floor (.*), csn/floor and MPI/floor: 8192 1.18/1.09$' ||
    fail "no pulled floor beside a missed 8 KiB latency: $made"
echo "$made" | grep -q '^#   latency 8 B: csn/MPI 0.92 .*; against pingpong-lean (no library, the same loop): Open MPI 1.62x, csn 1.50x (goal 1.30x)$' ||
    fail "no pingpong-lean beside a missed 8 B latency goal: $made"
echo "$made" | grep -q '^#     those sizes against pingpong-lean (.*), csn/lean and MPI/lean: 8192 1.30/1.20$' ||
    fail "no pingpong-lean beside a missed 8 KiB latency: $made"
echo PASS
