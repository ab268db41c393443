#!/bin/sh
# bench/ofi-phases.sh, short: one round of 300 round trips, at a size of rxm's rendezvous and
# at 8 B, recognises the phases of every half round trip on both sides and prints each phase;
# bad arguments give one line and exit 2.
# usage: ofi_phases.sh SCRIPT BUILD_DIR
script=$1 build=$2
for a in "--rounds 0" "--iters x" "--bogus"; do
    # shellcheck disable=SC2086
    err=$("$script" $a 2>&1 >/dev/null)
    rc=$?
    [ "$rc" = 2 ] && [ "$(echo "$err" | wc -l)" = 1 ] || { echo "FAIL: '$a': exit $rc, '$err'"; exit 1; }
done
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root (perf's syscall tracepoints)"; exit 77; }
for c in perf mpirun.openmpi; do
    command -v "$c" >/dev/null || { echo "SKIP: $c not found"; exit 77; }
done
[ -f "$build/src/csn/libcsn-ofi.so" ] || { echo "SKIP: no libfabric component built"; exit 77; }
perf record -q -e syscalls:sys_enter_sendto -o /dev/null true 2>/dev/null ||
    { echo "SKIP: perf cannot record syscall tracepoints here"; exit 77; }
# check SIZE PHASES...: one round at SIZE has a row per phase, and nearly every half round
# trip (300 timed and 30 warm-up round trips, two each) was recognised on both sides.
check() {
    size=$1
    shift
    out=$("$script" --build "$build" --rounds 1 --iters 300 --size "$size" 2>&1) ||
        { echo "$out"; echo "FAIL: the script failed at $size"; exit 1; }
    echo "$out"
    for ph in "$@"; do
        echo "$out" | grep -qE "^$ph +[0-9]+\.[0-9] +[0-9]+\.[0-9] +-?[0-9]+\.[0-9] +[0-9]+\.[0-9]{2}$" ||
            { echo "FAIL: $size: no row for $ph"; exit 1; }
    done
    for c in csn mpi; do
        n=$(echo "$out" | sed -n "s/^# n $c: \([0-9]*\)$/\1/p")
        [ -n "$n" ] && [ "$n" -ge 600 ] || { echo "FAIL: $size: $c: ${n:-no} half round trips recognised"; exit 1; }
    done
}
check 256K request answer data turn total
check 8 wire recvfrom turn total
echo "PASS"
