#!/bin/bash
# threadtest-vs-mpi.sh: threadtest (csn) and threadtest-mpi (Open MPI, MPI_THREAD_MULTIPLE) alternating; medians per thread count, ratios.
set -euo pipefail

usage() {
    cat <<'EOF'
usage: bench/threadtest-vs-mpi.sh [--build DIR] [--rounds N] [--mpirun CMD] [--] [THREADTEST ARGS...]
Runs, N times in turn, "csnrun -np 2 threadtest ARGS" and
"mpirun -np 2 --bind-to none threadtest-mpi ARGS", then prints per thread count and size
the median one-way latency and aggregate message rate of both, the ratio csn/MPI, and csn's
rate relative to its own rate with one thread. Checks the goals: at 4 threads csn's rate is
at least 1.5x MPI's, and csn's rate never falls below 0.8x its 1-thread rate.
  --build DIR    CMake build directory holding bench/threadtest (default: build)
  --rounds N     rounds (default 3)
  --mpirun CMD   MPI launcher (default: mpirun.openmpi, else mpirun)
  --help         this text
THREADTEST ARGS go to both programs (default: none, i.e. T = 1,2,4,8,16 and 8 B, 4 KiB).
The goals need T=1 and T=4 among the thread counts.
EOF
}

build=build
rounds=3
mpirun=
while [ $# -gt 0 ]; do
    case "$1" in
    --build) build=${2:?--build needs a directory}; shift 2 ;;
    --rounds) rounds=${2:?--rounds needs a number}; shift 2 ;;
    --mpirun) mpirun=${2:?--mpirun needs a command}; shift 2 ;;
    --help|-h) usage; exit 0 ;;
    --) shift; break ;;
    *) break ;;
    esac
done
case "$rounds" in ''|*[!0-9]*|0) echo "threadtest-vs-mpi.sh: bad --rounds '$rounds'" >&2; exit 2 ;; esac
csnrun=$build/tools/csnrun/csnrun
tt=$build/bench/threadtest/threadtest
ttmpi=$build/bench/threadtest/threadtest-mpi
for f in "$csnrun" "$tt" "$ttmpi"; do
    [ -x "$f" ] || { echo "threadtest-vs-mpi.sh: $f not found (build it, or give --build)" >&2; exit 2; }
done
if [ -z "$mpirun" ]; then
    mpirun=$(command -v mpirun.openmpi || command -v mpirun || true)
    [ -n "$mpirun" ] || { echo "threadtest-vs-mpi.sh: no mpirun found (give --mpirun)" >&2; exit 2; }
fi
if [ "$(id -u)" = 0 ]; then
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/tt-vs-mpi.XXXXXX")
trap 'rm -rf "$work"' EXIT

# Runs one program; keeps its result rows as "prog round threads size lat rate".
run() {
    local prog=$1 round=$2
    shift 2
    if ! timeout 900 "$@" >"$work/out" 2>"$work/err"; then
        echo "threadtest-vs-mpi.sh: round $round: $prog failed:" >&2
        cat "$work/out" "$work/err" >&2
        exit 1
    fi
    [ "$round" = 1 ] && grep '^# ' "$work/out" | sed "s/^# /#   [$prog] /" >>"$work/headers"
    awk -v p="$prog" -v r="$round" '!/^#/ && NF >= 6 { print p, r, $1, $2, $3, $5 }' \
        "$work/out" >>"$work/rows"
}

echo "# threadtest vs threadtest-mpi on $(hostname), $(nproc) CPUs, $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "# args: ${*:-(defaults)}; $rounds rounds, each: csn then MPI"
echo "# load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
: >"$work/rows"
: >"$work/headers"
for ((r = 1; r <= rounds; r++)); do
    run csn "$r" "$csnrun" -np 2 "$tt" "$@"
    run mpi "$r" "$mpirun" -np 2 --bind-to none "$ttmpi" "$@"
done
echo "# load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
cat "$work/headers"

# Medians over rounds per (program, threads, size); spread = (max - min) / median of the rate.
sort -k1,1 -k3,3n -k4,4n "$work/rows" | awk '
    function median(v, n,    i, j, x) {
        for (i = 2; i <= n; i++) {          # insertion sort: n is the number of rounds
            x = v[i]
            for (j = i - 1; j >= 1 && v[j] > x; j--) v[j + 1] = v[j]
            v[j + 1] = x
        }
        return (n % 2) ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
    }
    function flush(    m) {
        if (n == 0) return
        m = median(rate, n)
        print key, median(lat, n), m, (m > 0 ? (rate[n] - rate[1]) / m : 0)
        n = 0
    }
    { k = $1 " " $3 " " $4; if (k != key) { flush(); key = k }
      n++; rate[n] = $6 + 0; lat[n] = $5 + 0 }
    END { flush() }' >"$work/medians"

# Paired: per round, csn's rate at T over its rate at T=1 in the same run; the median of those.
# The machine's speed drifts between runs (a third of them 3-4x slower): a ratio taken within
# one run cancels what the run as a whole suffered; T=1 and T run seconds apart.
awk '$1 == "csn" { rate[$2, $3, $4] = $6 + 0; if (!(($3, $4) in seen)) { seen[$3, $4] = 1; keys[++nk] = $3 " " $4 }; if ($2 > nr) nr = $2 }
    END {
        for (i = 1; i <= nk; i++) {
            split(keys[i], a, " "); n = 0
            for (r = 1; r <= nr; r++)
                if (((r, 1, a[2]) in rate) && rate[r, 1, a[2]] > 0 && ((r, a[1], a[2]) in rate))
                    v[++n] = rate[r, a[1], a[2]] / rate[r, 1, a[2]]
            for (j = 2; j <= n; j++) { x = v[j]; for (k = j - 1; k >= 1 && v[k] > x; k--) v[k + 1] = v[k]; v[k + 1] = x }
            if (n > 0) print "paired", a[1], a[2], (n % 2) ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
        }
    }' "$work/rows" >>"$work/medians"

awk '
    $1 == "paired" { paired[$2, $3] = $4; next }
    { lat[$1, $2, $3] = $4; rate[$1, $2, $3] = $5; spread[$1, $2, $3] = $6
      if ($1 == "csn") { if (!(($2, $3) in seen)) { seen[$2, $3] = 1; keys[++nk] = $2 " " $3 } } }
    END {
        printf "%7s %8s %10s %10s %13s %13s %8s %9s %9s %8s %8s\n", "threads", "size",
               "csn_lat_us", "mpi_lat_us", "csn_msg/s", "mpi_msg/s", "csn/mpi", "csn/T1",
               "paired", "csn_spr", "mpi_spr"
        ok4 = 1; okT = 1; okP = 1; have4 = 0; have1 = 0; worst = 1e9; worstP = 1e9
        for (i = 1; i <= nk; i++) {
            split(keys[i], a, " "); t = a[1]; s = a[2]
            c = rate["csn", t, s]; m = rate["mpi", t, s]; one = rate["csn", 1, s]
            ratio = m > 0 ? c / m : 0; rel = one > 0 ? c / one : 0
            pr = ((t, s) in paired) ? paired[t, s] : 0
            printf "%7d %8d %10.2f %10.2f %13.0f %13.0f %8.2f %9.2f %9.2f %7.0f%% %7.0f%%\n", t, s,
                   lat["csn", t, s], lat["mpi", t, s], c, m, ratio, rel, pr,
                   100 * spread["csn", t, s], 100 * spread["mpi", t, s]
            if (t == 4) { have4 = 1; if (ratio < 1.5) ok4 = 0 }
            if (one > 0) { have1 = 1; if (rel < worst) worst = rel; if (rel < 0.8) okT = 0 }
            if (pr < worstP) worstP = pr
            if (pr < 0.8) okP = 0
        }
        print "# csn/T1: median rate at T over median rate at T=1; paired: median over rounds of"
        print "#   (rate at T / rate at T=1 in the same run); spr: (max - min) / median rate (noise)"
        if (have4) printf "# goal: rate at T=4 >= 1.5x MPI for every size: %s\n", ok4 ? "MET" : "MISSED"
        if (have1) printf "# goal: rate >= 0.8x the T=1 rate at every T: %s by medians (worst %.2f), %s paired (worst %.2f)\n",
                          okT ? "MET" : "MISSED", worst, okP ? "MET" : "MISSED", worstP
    }' "$work/medians"
