#!/bin/sh
# bench/placement.sh, short: one round of two configurations (one csn with a variable, one
# Open MPI when it is there), their rows, summary and ratios, and the argument errors.
# usage: placement.sh SCRIPT BUILD_DIR
script=$1 build=$2
. "$(dirname "$0")/common.sh"
# Argument errors: one line each, status 2, nothing run.
for args in "r=ring:/nonexistent" "f=floor:/nonexistent" "f=floor:$build,free" "--rounds 0 a=$build" "--test bw,bibw a=$build" "--far x a=$build" "a=/nonexistent" "notaconfig" "--bogus a=$build" ""; do
    # shellcheck disable=SC2086
    refused "$script" $args
done
configs="stream=$build,CSN_SHM_PULL_MAX=0 pull=$build"
mpi=1
command -v mpirun.openmpi >/dev/null && [ -x "$build/bench/pingpong/pingpong-mpi" ] || mpi=0
[ "${PLACEMENT_NO_MPI:-0}" = 1 ] && mpi=0
[ $mpi = 1 ] && configs="$configs mpi=mpi:$build"
# shellcheck disable=SC2086
out=$("$script" --rounds 1 --sizes 256K --test bibw $configs 2>&1) || { echo "$out"; fail "the run failed"; }
echo "$out"
for c in stream pull $( [ $mpi = 1 ] && echo mpi); do
    echo "$out" | grep -qE "^$c +round 1 line-floor [0-9.]+ size +262144 [0-9.]+$" || fail "no row for $c"
    echo "$out" | grep -qE "^$c +262144 +[0-9.]+ \(1\) " || fail "no summary for $c"
done
# The ratios against the first configuration, per round: one row for each of the others.
ratios=$(echo "$out" | sed -n '/^against stream, the median of the per-round ratios/,$p')
[ -n "$ratios" ] || fail "no table of ratios"
for c in pull $( [ $mpi = 1 ] && echo mpi); do
    echo "$ratios" | grep -qE "^$c +262144 +[0-9.]+ \(1\) " || fail "no ratio for $c"
done
echo "$ratios" | grep -qE "^stream " && fail "a ratio of the first configuration to itself"
# ring-stream configurations: the ring alone, bw only.
refused "$script" --test bibw "r=ring:$build"
out=$("$script" --rounds 1 --sizes 1K --test bw "r=ring:$build" "r16=ring:$build,CSN_SHM_RING=16K" 2>&1) ||
    { echo "$out"; fail "the ring-stream run failed"; }
echo "$out"
echo "$out" | grep -qE "^r16 +1024 +[0-9.]+ \(1\) " || fail "no summary for r16"
# cma-floor configurations: the figure of the test asked for (bibw, lat), not another column.
for t in bibw:262144 lat:65536; do
    out=$("$script" --rounds 1 --sizes "${t#*:}" --test "${t%%:*}" "f=floor:$build" 2>&1) ||
        { echo "$out"; fail "the cma-floor run (${t%%:*}) failed"; }
    echo "$out"
    echo "$out" | grep -qE "^f +round 1 line-floor [0-9.]+ size +${t#*:} [0-9.]+$" ||
        fail "no numeric row for cma-floor ${t%%:*}"
done
# cma-floor's own options after its build: --free (bibw's windows run free), --no-check.
out=$("$script" --rounds 1 --sizes 256K --test bibw "f=floor:$build" "free=floor:$build,--free,--no-check" 2>&1) ||
    { echo "$out"; fail "the cma-floor run with options failed"; }
echo "$out"
echo "$out" | grep -qE "^free +262144 +[0-9.]+ \(1\) " || fail "no summary for cma-floor --free --no-check"
out=$("$script" --rounds 1 --sizes 256K --test bibw "f=floor:$build,--bogus" 2>&1) &&
    fail "a cma-floor option it does not know was not refused"
echo "$out" | grep -q "cma-floor: unknown argument '--bogus'" || { echo "$out"; fail "the option did not reach cma-floor"; }
# --rotate: round 2 starts with the second configuration; the ratios stay against the first.
out=$("$script" --rounds 2 --rotate --sizes 1K --test bw "a=ring:$build" "b=ring:$build" 2>&1) ||
    { echo "$out"; fail "the --rotate run failed"; }
echo "$out"
[ "$(echo "$out" | grep -E '^[ab] +round 2 ' | head -1 | cut -c1)" = b ] || fail "round 2 did not start with b"
[ "$(echo "$out" | grep -E '^[ab] +round 1 ' | head -1 | cut -c1)" = a ] || fail "round 1 did not start with a"
echo "$out" | grep -qE "^b +1024 +[0-9.]+ \(2\) " || fail "no ratio of b over two rounds"
echo PASS
