#!/bin/bash
# ofi-phases.sh: where one large message's time goes over libfabric's tcp provider, csn against
# Open MPI's mtl ofi, from the system calls of a ping-pong (perf, syscall tracepoints).
#
# usage: bench/ofi-phases.sh [--build DIR] [--rounds N] [--size SIZE] [--iters N]
#   Per round, csn (CSN_TRANSPORT=ofi FI_PROVIDER=tcp csnrun -np 2 pingpong) and Open MPI
#   (mpirun --mca pml cm --mca mtl ofi, provider tcp, pingpong-mpi) run the latency test at
#   one size under `perf record` of two tracepoints (sys_enter_sendto, sys_enter_sendmsg), in
#   alternating order. Both move a message above rxm's eager limit by rxm's rendezvous: the
#   sender's rxm sends a header (sendmsg), the receiver's rxm asks for the data (the tcp
#   provider's 40-byte read request, a sendto), the sender's rxm sends it (sendmsg), the
#   receiver's rxm acknowledges (an 80-byte sendto). Each half round trip is cut there:
#     request   the sender's last sendmsg before the read request, to the read request:
#               the header and, in csn, its own RTS (which rides csn's stream), matched
#     answer    the read request to the sender's data (its provider's progress)
#     data      the data to the receiver's acknowledgement (the copy through the kernel)
#     turn      the acknowledgement to the receiver's next sendmsg (the reply's header): the
#               receive completes, the program sends back
#   Below 16 KiB (SIZE under rxm's eager limit: one send per message, no rendezvous) the
#   recvfrom that returns bytes is traced too, and each half round trip has two phases:
#     wire      the sender's send to the receiver's first recvfrom with bytes: the kernel's
#               delivery and the receiver's polling until it looks
#     recvfrom  of which that recvfrom itself (it sends the connection's acknowledgement
#               when nothing going back carries it)
#     turn      that recvfrom to the receiver's next send: the message goes up to the
#               program, the program sends back
#   Printed per phase: the median over rounds of each run's median, in us (perf's tracing
#   adds about 1 us per traced call to both alike), and the half round trips the run
#   recognised. The 40- and 80-byte lengths are libfabric 1.17's rxm over tcp; another
#   version may need them changed (RXM_READ_REQ, RXM_ACK below). SIZE below 16 KiB or
#   above rxm's segmentation limit (FI_OFI_RXM_SAR_LIMIT, 128 KiB by default): between them
#   rxm sends a message in segments through its buffers and asks for nothing.
#   Runs under flock /tmp/csn-bench.lock. Needs perf with the syscall tracepoints (root).
#   Defaults: 3 rounds, size 256K, 2000 iterations.
# Environment: KEEP_DIR (keep the perf data and the phase lists there).
set -u
build=build rounds=3 size=256K iters=2000
RXM_READ_REQ=0x00000028 RXM_ACK=0x00000050
while [ $# -gt 0 ]; do
    case $1 in
    -h | --help) sed -n '4,35p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    --build) build=${2:?--build needs a directory}; shift 2 ;;
    --rounds) rounds=${2:?--rounds needs a number}; shift 2 ;;
    --size) size=${2:?--size needs a size}; shift 2 ;;
    --iters) iters=${2:?--iters needs a number}; shift 2 ;;
    *) echo "ofi-phases.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
    esac
done
for v in "$rounds" "$iters"; do
    case "$v" in '' | *[!0-9]* | 0) echo "ofi-phases.sh: --rounds and --iters take positive integers" >&2; exit 2 ;; esac
done
B=$(cd "$build" 2>/dev/null && pwd) || { echo "ofi-phases.sh: no such build directory: $build" >&2; exit 2; }
CSNRUN=$B/tools/csnrun/csnrun PP=$B/bench/pingpong/pingpong PPMPI=$B/bench/pingpong/pingpong-mpi
for f in "$CSNRUN" "$PP" "$PPMPI"; do [ -x "$f" ] || { echo "ofi-phases.sh: $f is not built" >&2; exit 2; }; done
[ -f "$B/src/csn/libcsn-ofi.so" ] || { echo "ofi-phases.sh: $B/src/csn/libcsn-ofi.so is not built (apt-get install libfabric-dev, rebuild)" >&2; exit 2; }
MPIRUN=$(command -v mpirun.openmpi) || { echo "ofi-phases.sh: no mpirun.openmpi (apt-get install openmpi-bin)" >&2; exit 2; }
command -v perf >/dev/null || { echo "ofi-phases.sh: no perf (apt-get install linux-perf)" >&2; exit 2; }
perf record -q -e syscalls:sys_enter_sendto -o /dev/null true 2>/dev/null ||
    { echo "ofi-phases.sh: perf cannot record syscalls:sys_enter_sendto here (needs root and tracefs)" >&2; exit 2; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 CSN_LOOKUP_TIMEOUT=20
if [ -n "${KEEP_DIR:-}" ]; then T=$KEEP_DIR; mkdir -p "$T" || exit 2
else T=$(mktemp -d /tmp/ofi-phases.XXXXXX) || exit 2; trap 'rm -rf "$T"' EXIT; fi
trap 'exit 130' INT TERM
AWK_LIB=$(cat "$(dirname "$0")/common/ratios.awk") || { echo "ofi-phases.sh: bench/common/ratios.awk is missing" >&2; exit 2; }
ppargs="--sizes $size --test lat --samples 1 --iters $iters --no-check"
EV="-e syscalls:sys_enter_sendto -e syscalls:sys_enter_sendmsg"
case $size in
*[kK]) bytes=$((${size%?} * 1024)) ;; *[mM]) bytes=$((${size%?} * 1048576)) ;; *) bytes=$size ;;
esac 2>/dev/null
case "$bytes" in '' | *[!0-9]*) echo "ofi-phases.sh: bad --size '$size' (bytes, or a number with K or M)" >&2; exit 2 ;; esac
if [ "$bytes" -lt 16384 ]; then
    small=1 names="wire recvfrom turn total"
    EV="$EV -e syscalls:sys_enter_recvfrom -e syscalls:sys_exit_recvfrom"
else
    small=0 names="request answer data turn total"
fi

run_one() { # run_one CONFIG PERFDATA
    case $1 in
    csn) CSN_TRANSPORT=ofi FI_PROVIDER=tcp timeout 300 perf record -q $EV -o "$2" -- "$CSNRUN" -np 2 "$PP" $ppargs ;;
    mpi) timeout 300 perf record -q $EV -o "$2" -- "$MPIRUN" -np 2 --mca pml cm --mca mtl ofi \
             --mca mtl_ofi_provider_include tcp -x FI_PROVIDER=tcp "$PPMPI" $ppargs ;;
    esac
}

# One run's phases: "PHASE US" per recognised half round trip, from perf script's lines
# "COMM PID TIME: EVENT: ARGS" of the two pingpong processes (not csnrun, mpirun, orted).
phases() {
    perf script -i "$1" -F comm,pid,time,event,trace 2>/dev/null | awk -v rq="$RXM_READ_REQ" -v ack="$RXM_ACK" -v small="$small" '
    $1 != "pingpong" && $1 != "pingpong-mpi" { next }
    {
        pid = $2; t = $3; sub(/:$/, "", t); t += 0
        len = ""; if (match($0, /len: 0x[0-9a-f]+/)) len = substr($0, RSTART + 5, RLENGTH - 5)
    }
    small && /sys_enter_recvfrom/ { entered[pid] = t; next }
    small && /sys_exit_recvfrom/ {
        if ($NF !~ /^0x/ || $NF ~ /^0xffff/ || pid in got) next # an error, or not the first
        A = 0
        for (p in last) if (p != pid && last[p] > A) A = last[p]
        if (A > 0) { got[pid] = t; from[pid] = A; took[pid] = t - entered[pid] }
        next
    }
    small && /sys_enter_send(to|msg)/ {
        if (pid in got) {
            printf "wire %.1f\nrecvfrom %.1f\nturn %.1f\ntotal %.1f\n", (got[pid] - from[pid]) * 1e6,
                took[pid] * 1e6, (t - got[pid]) * 1e6, (t - from[pid]) * 1e6
            delete got[pid]
        }
        last[pid] = t
        next
    }
    small { next }
    /sys_enter_sendmsg/ {
        if (stage == 1 && pid != R) { C = t; stage = 2 }
        else if (stage == 3 && pid == R) {
            printf "request %.1f\nanswer %.1f\ndata %.1f\nturn %.1f\ntotal %.1f\n",
                (B - A) * 1e6, (C - B) * 1e6, (D - C) * 1e6, (t - D) * 1e6, (t - A) * 1e6
            stage = 0
        }
        last[pid] = t
        next
    }
    /sys_enter_sendto/ && len == rq {
        R = pid; A = 0
        for (p in last) if (p != R && last[p] > A) A = last[p]
        B = t; stage = A > 0 ? 1 : 0
        next
    }
    /sys_enter_sendto/ && len == ack && stage == 2 && pid == R { D = t; stage = 3 }'
}

echo "# ofi-phases.sh  -- $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "# host: $(uname -srm), $(nproc) cores; load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# pingpong $ppargs, $rounds rounds, csn and Open MPI alternating (tcp provider)"
exec 9>/tmp/csn-bench.lock
flock 9
for r in $(seq 1 "$rounds"); do
    order="csn mpi"; [ $((r % 2)) -eq 0 ] && order="mpi csn"
    for c in $order; do
        run_one "$c" "$T/$c.$r.data" >"$T/$c.$r.out" 2>&1 || { echo "ofi-phases.sh: $c round $r failed:"; tail -5 "$T/$c.$r.out"; exit 1; }
        phases "$T/$c.$r.data" >"$T/$c.$r.phases"
        [ -n "${KEEP_DIR:-}" ] || rm -f "$T/$c.$r.data"
        [ -s "$T/$c.$r.phases" ] || { echo "ofi-phases.sh: no half round trip recognised in $c round $r (a size rxm segments? another libfabric? see --help)"; exit 1; }
    done
done
flock -u 9
echo
echo "# us per half round trip (median over rounds of each run's median); n: recognised per run"
printf "%-8s %10s %10s %10s %10s\n" phase csn mpi csn-mpi csn/mpi
for ph in $names; do
    for c in csn mpi; do
        # Each run's median (thousands of values: sorted by sort), then their median.
        for r in $(seq 1 "$rounds"); do
            awk -v ph="$ph" '$1 == ph { print $2 }' "$T/$c.$r.phases" | sort -n |
                awk '{ a[NR] = $1 } END { if (NR) print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'
        done | awk "$AWK_LIB"'{ m[++k] = $1 + 0 } END { printf "%s ", median(m, k) }'
    done | awk -v ph="$ph" '{ printf "%-8s %10.1f %10.1f %10.1f %10.2f\n", ph, $1, $2, $1 - $2, ($2 > 0 ? $1 / $2 : 0) }'
done
for c in csn mpi; do
    printf "# n %s:" "$c"
    for r in $(seq 1 "$rounds"); do printf " %s" "$(grep -c '^total' "$T/$c.$r.phases")"; done
    echo
done
