#!/bin/bash
# startup.sh: job start-up at scale on this host: wall time of  csnrun -np N hello  and of a tiny
# nettest (Star and Ring of 1 KiB, one iteration) for N = 2, 16, 64, 256, 1024, oversubscribed
# on purpose, and the time per rank.
#
# usage: bench/startup.sh [--build DIR] [--rounds N] [--csnrun FILE] [--] [SIZE...]
#   --build DIR (default: $BUILD, else ./build); --rounds N (default 3): runs per cell, the
#   table gives the median and the range; --csnrun FILE: another launcher (an A/B of csnrun
#   alone); SIZE: the job sizes (default 2 16 64 256 1024).
# Runs under flock /tmp/csn-bench.lock (one benchmark at a time on this machine). Prints a
# Markdown table (for BENCHMARKS.md) after the machine's load average at the start.
set -u
usage() { sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; }
build=${BUILD:-build} ROUNDS=3 launcher=
while [ $# -gt 0 ]; do
    case $1 in
    -h | --help) usage; exit 0 ;;
    --build) build=${2:?--build needs a directory}; shift 2 ;;
    --rounds) ROUNDS=${2:?--rounds needs a number}; shift 2 ;;
    --csnrun) launcher=${2:?--csnrun needs a file}; shift 2 ;;
    --) shift; break ;;
    -*) echo "startup.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    *) break ;;
    esac
done
B=$(cd "$build" 2>/dev/null && pwd) || { echo "startup.sh: no such build directory: $build" >&2; exit 2; }
case "$ROUNDS" in
'' | *[!0-9]* | 0) echo "startup.sh: --rounds must be a positive integer, not '$ROUNDS'" >&2; exit 2 ;;
esac
SIZES=${*:-2 16 64 256 1024}
for n in $SIZES; do
    case "$n" in '' | *[!0-9]* | 0 | 1) echo "startup.sh: bad job size '$n' (2 or more)" >&2; exit 2 ;; esac
done
CSNRUN=${launcher:-$B/tools/csnrun/csnrun} HELLO=$B/examples/hello NETTEST=$B/bench/nettest/nettest
for f in "$CSNRUN" "$HELLO" "$NETTEST"; do
    [ -x "$f" ] || { echo "startup.sh: $f not built" >&2; exit 2; }
done

# One timed run: prints seconds, or "fail".
timed() {
    local t0 t1
    t0=$(date +%s.%N)
    if timeout -k 5 120 "$@" >/dev/null 2>/tmp/csn-startup.err.$$; then
        t1=$(date +%s.%N)
        awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f\n", b - a }' 
    else
        echo fail
        # Why, for the notes under the table (the command's last line on stderr).
        echo "- failed: ${*#"$B/"} -- $(tail -n 1 /tmp/csn-startup.err.$$)" >>/tmp/csn-startup.why.$$
    fi
}
stats() { # median min max of the numbers given ("fail" if any failed)
    case " $* " in *" fail "*) echo "fail - -"; return ;; esac
    printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END {
        m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; printf "%.2f %.2f %.2f\n", m, v[1], v[NR] }'
}

exec 9>/tmp/csn-bench.lock
flock 9
echo "# bench/startup.sh --build $B --rounds $ROUNDS${launcher:+ --csnrun $launcher} $SIZES"
echo "# $(date -u '+%Y-%m-%d %H:%M UTC'), commit $(git -C "$(dirname "$0")" rev-parse --short HEAD 2>/dev/null || echo unknown), $(nproc) CPUs, load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| N | hello: wall s (median, range) | per rank ms | tiny nettest: wall s (median, range) | per rank ms |"
echo "|---:|---|---:|---|---:|"
for n in $SIZES; do
    h=() t=()
    for _ in $(seq "$ROUNDS"); do
        h+=("$(timed "$CSNRUN" -np "$n" "$HELLO")")
        t+=("$(timed "$CSNRUN" -np "$n" "$NETTEST" uK m1 M1 T1 R1 Coff Ptotal)")
    done
    read -r hm hlo hhi <<<"$(stats "${h[@]}")"
    read -r tm tlo thi <<<"$(stats "${t[@]}")"
    hp=- tp=-
    [ "$hm" != fail ] && hp=$(awk -v s="$hm" -v n="$n" 'BEGIN { printf "%.1f", s * 1000 / n }')
    [ "$tm" != fail ] && tp=$(awk -v s="$tm" -v n="$n" 'BEGIN { printf "%.1f", s * 1000 / n }')
    echo "| $n | $hm ($hlo-$hhi) | $hp | $tm ($tlo-$thi) | $tp |"
done
if [ -s /tmp/csn-startup.why.$$ ]; then
    echo
    cat /tmp/csn-startup.why.$$
fi
rm -f /tmp/csn-startup.err.$$ /tmp/csn-startup.why.$$
