#!/bin/sh
# nettest-vs-mpi.sh: runs nettest (csnrun) and nettest-mpi (mpirun) alternately with the same parameters and prints the median ratios csn/MPI.
set -eu

usage() {
    cat <<'EOF'
usage: bench/nettest-vs-mpi.sh [--build DIR] [--np NP] [--rounds N] [--] [NETTEST PARAMETERS...]
Runs `csnrun -np NP nettest PARAMS` and `mpirun -np NP nettest-mpi PARAMS` alternately
(the order flips every round), ROUNDS times each, and prints for every size and test the
median over rounds and repeats of both, their ratio csn/MPI, and per column the median over
rounds of the ratio of the two runs' best values (the seed's "best throughput").
  --build DIR   build directory (default: $BUILD, else ./build); also -b
  --np NP       number of processes (default 4); also -n
  --rounds N    rounds (default 5); also -r
  PARAMS     nettest parameters (default: uK m1 M16 K2 R2 T1000 Ptotal)
Environment: MPIRUN (default mpirun.openmpi, else mpirun), KEEP=1 keeps the raw outputs.
EOF
}

build=${BUILD:-build}
np=4
rounds=5
while [ $# -gt 0 ]; do
    case $1 in
    -b | --build) build=${2:?$1 needs a directory}; shift 2 ;;
    -n | --np) np=${2:?$1 needs a number}; shift 2 ;;
    -r | --rounds) rounds=${2:?$1 needs a number}; shift 2 ;;
    --) shift; break ;;
    -h | --help) usage; exit 0 ;;
    -*) echo "nettest-vs-mpi.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    *) break ;;
    esac
done
[ $# -gt 0 ] || set -- uK m1 M16 K2 R2 T1000 Ptotal

csnrun=$build/tools/csnrun/csnrun
nettest=$build/bench/nettest/nettest
nettest_mpi=$build/bench/nettest/nettest-mpi
for f in "$csnrun" "$nettest" "$nettest_mpi"; do
    [ -x "$f" ] || { echo "nettest-vs-mpi.sh: $f not found (build it, or give -b BUILD)" >&2; exit 2; }
done
if [ -z "${MPIRUN:-}" ]; then
    MPIRUN=mpirun
    command -v mpirun.openmpi >/dev/null 2>&1 && MPIRUN=mpirun.openmpi
fi
mpiflags=
if "$MPIRUN" --version 2>&1 | grep -q -e "Open MPI" -e "OpenRTE"; then
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    mpiflags=--oversubscribe
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/nettest-vs-mpi.XXXXXX")
if [ "${KEEP:-0}" = 1 ]; then
    echo "raw outputs kept in $tmp"
else
    trap 'rm -rf "$tmp"' EXIT
    trap 'exit 1' INT TERM HUP
fi

echo "nettest vs nettest-mpi: $np processes, $rounds rounds, parameters: $*"
echo "host: $(uname -n), $(uname -sr), $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | sed 's/.*: //')"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "csn:  $csnrun -np $np $nettest $*"
echo "MPI:  $MPIRUN $mpiflags -np $np $nettest_mpi $*"

runone() { # runone IMPL ROUND, then the nettest parameters
    impl=$1 r=$2
    shift 2
    out=$tmp/$impl.$r.txt
    start=$(date +%s)
    if [ "$impl" = csn ]; then
        "$csnrun" -np "$np" "$nettest" "$@" "o$out" >/dev/null
    else
        "$MPIRUN" $mpiflags -np "$np" "$nettest_mpi" "$@" "o$out" >/dev/null
    fi
    echo "round $r $impl: $(($(date +%s) - start)) s" >&2
}

r=1
while [ "$r" -le "$rounds" ]; do
    if [ $((r % 2)) -eq 1 ]; then
        runone csn "$r" "$@"
        runone mpi "$r" "$@"
    else
        runone mpi "$r" "$@"
        runone csn "$r" "$@"
    fi
    r=$((r + 1))
done
echo "load average after:  $(cut -d' ' -f1-3 /proc/loadavg)"

# One line per table row: IMPL ROUND SIZE v1..v6; and per run its best values: IMPL ROUND best b1..b6.
for f in "$tmp"/csn.*.txt "$tmp"/mpi.*.txt; do
    base=$(basename "$f" .txt)
    awk -v id="${base%%.*} ${base#*.}" '
        /^Size,/ { t = 1; next }
        t && /^$/ { t = 0; next }
        t { gsub(/\t/, " "); print id, $0; next }
        /Best network throughput/ { b = NR }
        b && NR == b + 2 { gsub(/\t/, " "); print id, "best" $0 }' "$f"
done >"$tmp/all.txt"

awk -v rounds="$rounds" '
function median(list,    n, a, i, j, x) {
    n = split(list, a, " ")
    for (i = 2; i <= n; i++) { x = a[i]; for (j = i - 1; j >= 1 && a[j] + 0 > x + 0; j--) a[j + 1] = a[j]; a[j + 1] = x }
    if (n == 0) return "-"
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
BEGIN { split("Star Star2 Chaos Chaos2 Ring Ring2", name, " ") }
$3 == "best" {
    for (c = 1; c <= 6; c++) best[$1, $2, c] = $(c + 3)
    next
}
{
    if (!(($3) in seen)) { seen[$3] = 1; order[++nsizes] = $3 }
    for (c = 1; c <= 6; c++) if ($(c + 3) != "-") vals[$1, $3, c] = vals[$1, $3, c] " " $(c + 3)
}
END {
    printf "\nMedian MB/s over rounds and repeats, csn / MPI = ratio\n%-6s", "Size"
    for (c = 1; c <= 6; c++) printf "  %-24s", name[c]
    printf "\n"
    for (s = 1; s <= nsizes; s++) {
        printf "%-6s", order[s]
        for (c = 1; c <= 6; c++) {
            a = median(vals["csn", order[s], c]); b = median(vals["mpi", order[s], c])
            if (a == "-" || b == "-" || b + 0 == 0) cell = "-"
            else cell = sprintf("%.1f/%.1f=%.2f", a, b, a / b)
            printf "  %-24s", cell
        }
        printf "\n"
    }
    printf "\nMedian over rounds of best(csn)/best(MPI), and the spread max/min of each side\n"
    for (c = 1; c <= 6; c++) {
        ratios = ""; cl = ""; ml = ""
        cmin = cmax = mmin = mmax = ""
        for (r = 1; r <= rounds; r++) {
            x = best["csn", r, c]; y = best["mpi", r, c]
            if (x == "" || y == "" || x == "-" || y == "-" || y + 0 == 0) continue
            ratios = ratios " " x / y
            if (cmin == "" || x + 0 < cmin) cmin = x + 0
            if (cmax == "" || x + 0 > cmax) cmax = x + 0
            if (mmin == "" || y + 0 < mmin) mmin = y + 0
            if (mmax == "" || y + 0 > mmax) mmax = y + 0
        }
        if (ratios == "") { printf "%-7s -\n", name[c]; continue }
        printf "%-7s ratio %.2f   csn best %.1f..%.1f (x%.2f)   MPI best %.1f..%.1f (x%.2f)\n",
            name[c], median(ratios), cmin, cmax, cmax / cmin, mmin, mmax, mmax / mmin
    }
}' "$tmp/all.txt"
