#!/bin/sh
# bench/ofi-phases.sh, short: one round of 300 round trips recognises the phases of every half
# round trip on both sides and prints each phase; bad arguments give one line and exit 2.
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
out=$("$script" --build "$build" --rounds 1 --iters 300 2>&1) || { echo "$out"; echo "FAIL: the script failed"; exit 1; }
echo "$out"
for ph in request answer data turn total; do
    echo "$out" | grep -qE "^$ph +[0-9]+\.[0-9] +[0-9]+\.[0-9] +-?[0-9]+\.[0-9] +[0-9]+\.[0-9]{2}$" ||
        { echo "FAIL: no row for $ph"; exit 1; }
done
# 300 timed and 30 warm-up round trips: two half round trips each, nearly all recognised.
for c in csn mpi; do
    n=$(echo "$out" | sed -n "s/^# n $c: \([0-9]*\)$/\1/p")
    [ -n "$n" ] && [ "$n" -ge 600 ] || { echo "FAIL: $c: ${n:-no} half round trips recognised"; exit 1; }
done
echo "PASS"
