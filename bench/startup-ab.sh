#!/bin/bash
# startup-ab.sh: A/B of two builds of libcsn on the tiny nettest of bench/startup.sh (Star and
# Ring of 1 KiB, one iteration) at N ranks on this host, rounds alternating A and B.
#
# usage: bench/startup-ab.sh [--build DIR] [--rounds N] [--timeout S] [--hello] [--netns]
#                             [--nettest-a FILE] LIBDIR_A LIBDIR_B [SIZE...]
#   LIBDIR_A, LIBDIR_B: directories that each hold a libcsn.so.0 (a copy of build/src's from
#   two commits); csnrun and nettest come from --build DIR (default: $BUILD, else ./build) and
#   load the library given by LD_LIBRARY_PATH. --rounds N (default 3); --timeout S (default 200)
#   per run, a run past it counts as failed. SIZE: job sizes (default 512 1024). --hello: time
#   examples/hello too, after the nettest of each round. --netns: across the four network-
#   namespace hosts of tests/netns/testbed.sh (root; TCP between hosts, 200 Mbit/s links).
#   --nettest-a FILE: side A runs this nettest (another commit's) instead of the build's (an
#   A/B of the program; give both sides the same LIBDIR to compare the program alone).
# Runs under flock /tmp/csn-bench.lock. Prints one line per run, then per size the median wall
# time of each side and B/A.
set -u
usage() { sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'; }
build=${BUILD:-build} ROUNDS=3 LIMIT=200 HELLO=0 NETNS=0 NETTEST_A=
args=("$@")
while [ $# -gt 0 ]; do
    case $1 in
    -h | --help) usage; exit 0 ;;
    --build) build=${2:?--build needs a directory}; shift 2 ;;
    --rounds) ROUNDS=${2:?--rounds needs a number}; shift 2 ;;
    --timeout) LIMIT=${2:?--timeout needs seconds}; shift 2 ;;
    --hello) HELLO=1; shift ;;
    --netns) NETNS=1; shift ;;
    --nettest-a) NETTEST_A=${2:?--nettest-a needs a file}; shift 2 ;;
    -*) echo "startup-ab.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    *) break ;;
    esac
done
[ $# -ge 2 ] || { usage >&2; exit 2; }
A=$1 B=$2
shift 2
for d in "$A" "$B"; do
    [ -e "$d/libcsn.so.0" ] || { echo "startup-ab.sh: no libcsn.so.0 in $d" >&2; exit 2; }
done
for v in "$ROUNDS" "$LIMIT"; do
    case "$v" in '' | *[!0-9]* | 0) echo "startup-ab.sh: --rounds and --timeout take positive integers" >&2; exit 2 ;; esac
done
BD=$(cd "$build" 2>/dev/null && pwd) || { echo "startup-ab.sh: no such build directory: $build" >&2; exit 2; }
CSNRUN=$BD/tools/csnrun/csnrun NETTEST=$BD/bench/nettest/nettest HELLOP=$BD/examples/hello
if [ -n "$NETTEST_A" ]; then
    NETTEST_A=$(cd "$(dirname "$NETTEST_A")" && pwd)/$(basename "$NETTEST_A")
else
    NETTEST_A=$NETTEST
fi
for f in "$CSNRUN" "$NETTEST" "$NETTEST_A" "$HELLOP"; do
    [ -x "$f" ] || { echo "startup-ab.sh: $f not built" >&2; exit 2; }
done
SIZES=${*:-512 1024}
HOSTARGS=()
if [ $NETNS = 1 ] && [ -z "${TB_HOSTS:-}" ]; then
    # Run again inside the testbed, which sets TB_HOSTS (lib dirs absolute: the cwd stays).
    TB=$(cd "$(dirname "$0")/../tests/netns" && pwd)/testbed.sh
    export TB_CSNRUN=$CSNRUN TB_HELLO=$HELLOP TB_NETTEST=$NETTEST
    exec "$TB" exec "$(cd "$(dirname "$0")" && pwd)/startup-ab.sh" "${args[@]}"
fi
[ $NETNS = 1 ] && HOSTARGS=(--hostfile "$TB_HOSTS" --rsh "ip netns exec")

exec 9>/tmp/csn-bench.lock
flock 9
echo "# bench/startup-ab.sh --rounds $ROUNDS --timeout $LIMIT$([ $HELLO = 1 ] && echo " --hello")$([ $NETNS = 1 ] && echo " --netns")$([ "$NETTEST_A" != "$NETTEST" ] && echo " --nettest-a $NETTEST_A") $A $B $SIZES"
echo "# $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs, load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
median() {
    [ $# -eq 0 ] && { echo -; return; }
    printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END {
    if (NR == 0) { print "-"; exit } m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; printf "%.2f\n", m }'; }
# One timed run: prints "SECONDS RC", the error's last line in $ERR.
ERR=/tmp/csn-startup-ab.err.$$
run() {
    local t0 rc
    t0=$(date +%s.%N)
    LD_LIBRARY_PATH=$1 timeout -k 5 "$LIMIT" "$CSNRUN" "${HOSTARGS[@]}" -np "$2" "${@:3}" >/dev/null 2>"$ERR"
    rc=$?
    echo "$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }') $rc"
}
progs=nettest
[ $HELLO = 1 ] && progs="nettest hello"
for n in $SIZES; do
    for prog in $progs; do
    a=() b=() af=0 bf=0
    for r in $(seq "$ROUNDS"); do
        for side in A B; do
            dir=$A
            [ $side = B ] && dir=$B
            sleep 3 # let the previous job's processes leave
            if [ $prog = hello ]; then
                set -- $(run "$dir" "$n" "$HELLOP")
            else
                prog_nt=$NETTEST
                [ $side = A ] && prog_nt=$NETTEST_A
                set -- $(run "$dir" "$n" "$prog_nt" uK m1 M1 T1 R1 Coff Ptotal)
            fi
            s=$1 rc=$2
            why=
            [ $rc -ne 0 ] && why=" -- $(tail -n 1 "$ERR")"
            echo "$prog N=$n round $r $side: $s s (exit $rc), load $(cut -d' ' -f1 /proc/loadavg)$why"
            if [ $rc -eq 0 ]; then
                [ $side = A ] && a+=("$s") || b+=("$s")
            else
                [ $side = A ] && af=$((af + 1)) || bf=$((bf + 1))
            fi
        done
    done
    ma=$(median "${a[@]}") mb=$(median "${b[@]}")
    ratio=-
    [ "$ma" != - ] && [ "$mb" != - ] && ratio=$(awk -v a="$ma" -v b="$mb" 'BEGIN { printf "%.2f", b / a }')
    echo "$prog N=$n: A median $ma s ($af failed), B median $mb s ($bf failed), B/A $ratio"
    done
done
rm -f "$ERR"
