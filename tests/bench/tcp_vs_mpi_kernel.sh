#!/bin/sh
# The kernel part of bench/tcp-vs-mpi.sh, short: its table has every size and mode on both
# paths, and the MSG_ZEROCOPY notices were counted (none counted: no zero-copy send was made).
# usage: tcp_vs_mpi_kernel.sh SCRIPT BUILD_DIR
script=$1 build=$2
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root (network namespaces)"; exit 77; }
for c in ip mpirun.openmpi iperf3 jq; do
    command -v "$c" >/dev/null || { echo "SKIP: $c not found"; exit 77; }
done
left=$(ip netns list | grep -c '^csntcp')
out=$(KERNEL_SECS=0.05 "$script" --build "$build" --parts kernel --rounds 1 2>&1) || {
    echo "$out"
    echo "FAIL: the script failed"
    exit 1
}
echo "$out"
for path in loopback netns; do
    for size in 65536 1048576 4194304 67108864; do
        n=$(echo "$out" | grep -cE "^$path +$size +(one way|both ways, 1 conn|both ways, 2 conns) +[0-9]+ +[0-9]+ +[0-9.]+ +[0-9]+ +[0-9.]+$")
        [ "$n" = 3 ] || { echo "FAIL: $path $size: $n of 3 rows"; exit 1; }
    done
    echo "$out" | grep -qE "^# $path, MSG_ZEROCOPY: the kernel copied [0-9]+ of the [1-9][0-9]* sends" ||
        { echo "FAIL: no MSG_ZEROCOPY count for $path"; exit 1; }
done
[ "$(ip netns list | grep -c '^csntcp')" -le "$left" ] || { echo "FAIL: namespaces left behind"; exit 1; }
echo "PASS"
