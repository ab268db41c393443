#!/bin/bash
# shm-vs-mpi.sh: csn against Open MPI on this host: pingpong rounds, memcpy reference, two ranks on one core, nettest on 2 cores.
#
# usage: bench/shm-vs-mpi.sh [--build DIR] [--rounds N] [--reuse-buffer] [--bind core|none]
#                            [--bands NEAR,FAR] [--rematch N] [--report DIR]
#                            (or: BUILD_DIR [ROUNDS])
#   ROUNDS (default 5): rounds of  csnrun -np 2 pingpong / mpirun -np 2 pingpong-mpi / memcpy-bench
#   / cma-floor (the bandwidth rows' bytes pulled with process_vm_readv, no library: their
#   floor, from 64 KiB, the payload filled and checked as pingpong's, both ways a window begun
#   when both sides finished the one before, as pingpong's; and one way copied half by each
#   process: the floor of csn's split copies) / copy-floor (an eager ping-pong's two copies through a shared slot, no library:
#   the latency rows' floor up to 4 KiB) / cma-floor --test lat (a ping-pong of messages
#   announced, pulled whole and answered, no library: the floor of a rendezvous latency at 8-64
#   KiB) / pingpong-lean (pingpong's latency loop on no library: the floor of a message layer
#   under the same loop), run alternately so that slow drifts of the machine hit all alike. Per size, the
#   figures are medians over the rounds of each round's median, and the ratios medians over
#   the rounds of the per-round ratios (pairs measured minutes apart, not hours). csn runs
#   first in odd rounds and Open MPI in even ones (pingpong and nettest), so that neither is
#   always the one after the others' heavy runs (the host moves the vCPUs). line-floor (the
#   machine's core-to-core latency, no library) runs before the two libraries' runs, between
#   them and after them: a change of more than 1.5x during the run is flagged with a WARNING
#   line. The
#   noise line: Open MPI against itself in adjacent rounds (the median factor); a goal missed
#   by less is marked SIZE~. nettest's noise, per cell: Open MPI's median over the odd rounds
#   against its median over the even ones; a cell below 1.0x by less is marked ~.
#   --bands NEAR,FAR: line-floor's one-way latency (us) from which the two vCPUs count as
#   near, and from which as far apart (default 0.045,0.15; this machine shows about 0.027 for
#   two threads of one core, 0.06-0.08 for a shared cache, 0.24-0.30 for none). A round whose
#   three samples are all in one band is of that placement (core, near or far); the goals are
#   given again over the rounds of each placement alone (csn and MPI in the same placement).
#   --rematch N: a round whose samples are not all in one band (the host moved the vCPUs
#   during it) is run again, up to N times in the whole run (default 2).
#   --reuse-buffer: both pingpong and pingpong-mpi receive every window message into one
#   buffer (as OSU's osu_bw); default: one receive buffer per message.
#   --bind core|none: the pingpong rounds with both ranks bound, each to one CPU (csnrun
#   --bind-to core, and mpirun's own default for 2 ranks), or neither (csnrun's default, and
#   mpirun --bind-to none). Default core: the same placement policy on both sides.
#   --report DIR: no runs; the tables and goals again from a KEEP_DIR of an earlier run
#   (with the same --rounds and NT_ROUNDS).
# Environment: PP_ARGS (extra pingpong and memcpy-bench options, e.g. "--max 4M"),
#   NT_ROUNDS (nettest rounds, default 8), KEEP_DIR (keep the raw outputs there).
# Needs: pingpong, memcpy-bench, csnrun in BUILD_DIR; pingpong-mpi and mpirun.openmpi for
# every comparison; nettest, nettest-mpi for the last part (skipped with a message if absent),
# and nettest-lean beside them as a reference with no library (its line left out if absent);
# pingpong-lean likewise beside the latency rows.
set -u

# The median, the noise line and the goal misses of the awk programs below.
AWK_RATIOS=$(cat "$(dirname "$0")/common/ratios.awk") || { echo "shm-vs-mpi.sh: bench/common/ratios.awk is missing" >&2; exit 2; }
usage() {
    sed -n '4,45p' "$0" | sed 's/^# \{0,1\}//'
}
# The options of the other comparison scripts (--build, --rounds); the positional form stays.
build=${BUILD:-build} ROUNDS=5 npos=0 REUSE='' REPORT='' BANDS=0.045,0.15 REMATCH=2 BIND=core
while [ $# -gt 0 ]; do
    case $1 in
    -h | --help) usage; exit 0 ;;
    --build) build=${2:?--build needs a directory}; shift 2 ;;
    --rounds) ROUNDS=${2:?--rounds needs a number}; shift 2 ;;
    --reuse-buffer) REUSE=--reuse-buffer; shift ;;
    --report) REPORT=${2:?--report needs a directory}; shift 2 ;;
    --bands) BANDS=${2:?--bands needs NEAR,FAR}; shift 2 ;;
    --bind) BIND=${2:?--bind needs core or none}; shift 2 ;;
    --rematch) REMATCH=${2:?--rematch needs a number}; shift 2 ;;
    -*) echo "shm-vs-mpi.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    *) [ $npos = 0 ] && build=$1 || ROUNDS=$1; npos=$((npos + 1)); shift ;;
    esac
done
[ $npos -le 2 ] || { echo "shm-vs-mpi.sh: too many arguments (see --help)" >&2; exit 2; }
B=$(cd "$build" 2>/dev/null && pwd) || { echo "shm-vs-mpi.sh: no such build directory: $build" >&2; exit 2; }
case "$ROUNDS" in
'' | *[!0-9]* | 0) echo "shm-vs-mpi.sh: ROUNDS must be a positive integer, not '$ROUNDS'" >&2; exit 2 ;;
esac
echo "$BANDS" | grep -Eq '^[0-9]*\.?[0-9]+,[0-9]*\.?[0-9]+$' ||
    { echo "shm-vs-mpi.sh: --bands must be two numbers of microseconds, NEAR,FAR (e.g. 0.045,0.15), not '$BANDS'" >&2; exit 2; }
case "$BIND" in
core) CSN_BIND=(--bind-to core) MPI_BIND=() FLOOR_BIND=(--bind) ;;
none) CSN_BIND=() MPI_BIND=(--bind-to none) FLOOR_BIND=() ;;
*) echo "shm-vs-mpi.sh: --bind must be core or none, not '$BIND'" >&2; exit 2 ;;
esac
case "$REMATCH" in
'' | *[!0-9]*) echo "shm-vs-mpi.sh: --rematch must be a number, not '$REMATCH'" >&2; exit 2 ;;
esac
NT_ROUNDS=${NT_ROUNDS:-8}
PP_ARGS=${PP_ARGS:-}

CSNRUN=$B/tools/csnrun/csnrun
PP=$B/bench/pingpong/pingpong
PPMPI=$B/bench/pingpong/pingpong-mpi
MC=$B/bench/pingpong/memcpy-bench
FLOOR=$B/bench/pingpong/cma-floor
COPYF=$B/bench/pingpong/copy-floor
PPLEAN=$B/bench/pingpong/pingpong-lean
LF=$B/bench/pingpong/line-floor
NT=$B/bench/nettest/nettest
NTMPI=$B/bench/nettest/nettest-mpi
NTLEAN=$B/bench/nettest/nettest-lean
BB=$B/bench/nettest/barrier-bench
BBMPI=$B/bench/nettest/barrier-bench-mpi
MPIRUN=$(command -v mpirun.openmpi || true)
for f in "$CSNRUN" "$PP" "$PPMPI" "$MC"; do
    [ -x "$f" ] || { echo "shm-vs-mpi.sh: $f is not built" >&2; exit 2; }
done
[ -n "$MPIRUN" ] || { echo "shm-vs-mpi.sh: mpirun.openmpi not found (apt-get install openmpi-bin)" >&2; exit 2; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

if [ -n "$REPORT" ]; then
    T=$REPORT
    [ -f "$T/csn.1.json" ] || { echo "shm-vs-mpi.sh: $T holds no earlier run (csn.1.json)" >&2; exit 2; }
elif [ -n "${KEEP_DIR:-}" ]; then
    T=$KEEP_DIR
    mkdir -p "$T" || exit 2
else
    T=$(mktemp -d /tmp/shm-vs-mpi.XXXXXX) || exit 2
    trap 'rm -rf "$T"' EXIT
fi
trap 'exit 130' INT TERM

# Runs one benchmark command with a time limit; on failure prints its output and stops.
run() {
    local out=$1
    shift
    [ -z "$REPORT" ] || return 0 # --report: the outputs are there
    if ! timeout 600 "$@" >"$out" 2>"$out.err"; then
        echo "shm-vs-mpi.sh: failed: $*" >&2
        cat "$out" "$out.err" >&2
        exit 1
    fi
}

echo "# shm-vs-mpi.sh $* -- $(date -u '+%Y-%m-%d %H:%M UTC')"
[ -z "$REPORT" ] || echo "# --report: the tables below are recomputed from $T; the load lines are of now, not of the run"
echo "# host: $(uname -srm), $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
echo "# load average at start: $(cut -d' ' -f1-3 /proc/loadavg) (other jobs on the machine add noise)"
echo "# csn: csnrun ${CSN_BIND[*]} -np 2 $PP $PP_ARGS $REUSE   MPI: mpirun.openmpi ${MPI_BIND[*]:-(default binding: core)} -np 2 $PPMPI $PP_ARGS $REUSE"
echo "# receive buffers (bw, bibw): ${REUSE:+one per window (--reuse-buffer)}${REUSE:-one per message}"
echo

# The machine's own core-to-core latency (line-floor: a cache line handed between two
# processes, no library), median of its 7 samples. On a virtual machine it can change by 4x
# for minutes (the host moves the virtual CPUs): csn's small and medium messages, near that
# floor, change with it, a library that spends longer per message less (BENCHMARKS.md, issue 19).
line_sample() {
    [ -x "$LF" ] && [ -z "$REPORT" ] || return 0
    timeout 60 "$LF" 20000 2>/dev/null | awk 'NF == 2 && $1 ~ /^[0-9]+$/ { print $2 }' | sort -n | sed -n 4p
}
# The placement of a line.txt line "R B M A" ("R B A" from before --bands): the band of its
# samples (core, near, far), or mixed when they are not all in one.
AWK_PLACE='
function band(x,    b) { split(bands, b, ","); return x < b[1] + 0 ? "core" : x < b[2] + 0 ? "near" : "far" }
function place(    i, c, p) {
    for (i = 2; i <= NF; i++) if ($i != "-") { c = band($i + 0); if (p != "" && c != p) return "mixed"; p = c }
    return p == "" ? "mixed" : p
}'
# Records round r's samples $before $mid $after in FILE; fails when the round is to run again.
rematched=0
keep_round() {
    local samples="${before:--} ${mid:--} ${after:--}"
    [ -z "$REPORT" ] || return 0
    if [ "$(echo "0 $samples" | awk -v bands="$BANDS" "$AWK_PLACE"'{ print place() }')" = mixed ] &&
        [ "$rematched" -lt "$REMATCH" ]; then
        rematched=$((rematched + 1))
        echo "round $r: line-floor $samples us, not in one of --bands $BANDS: run again ($rematched of --rematch $REMATCH)" >&2
        echo "# round $r run again, line-floor $samples" >>"$1"
        return 1
    fi
    echo "$r $samples" >>"$1"
}
[ -n "$REPORT" ] || : >"$T/line.txt"
# pingpong of csn (0) or Open MPI (1) in round R.
pp_lib() {
    # shellcheck disable=SC2086
    if [ "$1" = 0 ]; then
        run "$T/csn.$2.txt" "$CSNRUN" "${CSN_BIND[@]}" -np 2 "$PP" $PP_ARGS $REUSE --json "$T/csn.$2.json"
    else
        run "$T/mpi.$2.txt" "$MPIRUN" "${MPI_BIND[@]}" -np 2 "$PPMPI" $PP_ARGS $REUSE --json "$T/mpi.$2.json"
    fi
}
r=1
while [ "$r" -le "$ROUNDS" ]; do
    echo "round $r/$ROUNDS ..." >&2
    before=$(line_sample)
    pp_lib $((r % 2 ? 0 : 1)) "$r"
    # The latency rows' floor between the two libraries' runs, in the placement they share
    # most likely (the host moves the vCPUs within seconds).
    [ ! -x "$COPYF" ] || run "$T/copy.$r.txt" "$COPYF" --max 4K "${FLOOR_BIND[@]}" --json "$T/copy.$r.json"
    # And of a message layer under pingpong's own loop: pingpong-lean (no library).
    # shellcheck disable=SC2086
    [ ! -x "$PPLEAN" ] || run "$T/lean.$r.txt" "$PPLEAN" $PP_ARGS --test lat --json "$T/lean.$r.json"
    [ ! -x "$FLOOR" ] || run "$T/pull.$r.txt" "$FLOOR" --test lat --sizes 8K,16K,32K,64K "${FLOOR_BIND[@]}" \
        --json "$T/pull.$r.json"
    mid=$(line_sample)
    pp_lib $((r % 2 ? 1 : 0)) "$r"
    after=$(line_sample)
    # shellcheck disable=SC2086
    run "$T/memcpy.$r.txt" "$MC" $PP_ARGS --json "$T/memcpy.$r.json"
    # The floor of the bandwidth rows from 64 KiB: the same bytes pulled, no library.
    # shellcheck disable=SC2086
    [ ! -x "$FLOOR" ] || run "$T/floor.$r.txt" "$FLOOR" --test bw,bibw,split --from 64K $PP_ARGS $REUSE \
        "${FLOOR_BIND[@]}" --json "$T/floor.$r.json"
    keep_round "$T/line.txt" && r=$((r + 1))
done
echo "# csn run: $(grep -m1 '^# pingpong' "$T/csn.1.txt" | sed 's/^# pingpong: //')"
echo "# MPI run: $(grep -m1 '^# pingpong' "$T/mpi.1.txt" | sed 's/^# pingpong: //')"
echo "# load average after the rounds: $(cut -d' ' -f1-3 /proc/loadavg)"
if [ -s "$T/line.txt" ]; then
    awk -v bands="$BANDS" "$AWK_PLACE"'
    /^#/ { again++; next }
    { for (i = 2; i <= NF; i++) if ($i != "-") { v = $i + 0; if (!n++ || v < lo) lo = v; if (v > hi) hi = v }
      c = place(); cnt[c]++
      s = s sprintf(" %s", $2); for (i = 3; i <= NF; i++) s = s "/" $i; s = s " (" c ")" }
    END {
        print "# core-to-core latency (line-floor one way, us) before/between/after the two libraries (csn first in odd rounds), per round:" s
        printf "# placement (--bands %s us): %d core, %d near, %d far, %d mixed rounds; %d run again\n", bands, cnt["core"], cnt["near"], cnt["far"], cnt["mixed"], again
        if (n && lo > 0 && hi / lo > 1.5)
            printf "# WARNING: it changed %.1fx during the run: rounds at the higher figure are slower for reasons of the machine, not of either library; see the goals per placement\n", hi / lo
    }' "$T/line.txt"
fi
echo

LINE=()
[ ! -f "$T/line.txt" ] || LINE=("$T/line.txt")
# One result per line in the JSON files: {"size": N, "lat_us": {"median": X, ...}, ...}.
awk -v rounds="$ROUNDS" -v bands="$BANDS" "$AWK_RATIOS$AWK_PLACE"'
function val(line, key,    i, s) {
    i = index(line, "\"" key "\": {\"median\": ")
    if (i == 0) return ""
    s = substr(line, i + length(key) + 14)
    sub(/[,}].*/, "", s)
    return s + 0
}
# Median over rounds of metric m of kind k at size s; or of the ratio k1/k2 (per round).
function med(k, m, s,    r, n, a) {
    n = 0
    for (r = 1; r <= rounds; r++) if ((k, r, s, m) in v) a[++n] = v[k, r, s, m]
    return median(a, n)
}
function ratio(k1, m1, k2, m2, s,    r, n, a) {
    n = 0
    for (r = 1; r <= rounds; r++)
        if (counted(r) && (k1, r, s, m1) in v && (k2, r, s, m2) in v && v[k2, r, s, m2] > 0)
            a[++n] = v[k1, r, s, m1] / v[k2, r, s, m2]
    return median(a, n)
}
# The sizes from `from` on where csn missed Open MPI in metric m (lower: lower is better), each
# with csn and Open MPI against the floor fk in its metric fm: " SIZE csn/floor/MPI/floor...".
function against_floor(m, lower, from, fk, fm,    i, s, x, y, out) {
    for (i = 1; i <= nsizes; i++) {
        s = order[i]
        if (s < from || (x = ratio("csn", m, "mpi", m, s)) == "" || (lower ? x <= 1.0 : x >= 1.0) ||
            (y = ratio("csn", m, fk, fm, s)) == "")
            continue
        out = out sprintf(" %d %.2f/%.2f", s, y, ratio("mpi", m, fk, fm, s))
    }
    return out
}
# The goal lines over the counted rounds (want: all, or one placement).
function goals(title,    i, s, x, y, fl, pf, sf, nbw, okbw, badbw, nmc, okmc, badmc, nst, okst, badst, nlat, oklat, badlat, nbi, okbi, badbi) {
    print title
    for (i = 1; i <= nsizes; i++) {
        s = order[i]
        if (s == 8 || s == 1024) {
            x = ratio("csn", "lat", "mpi", "lat", s)
            if (x != "") printf "#   latency %d B: csn/MPI %.2f (goal <= 0.8): %s%s\n", s, x, x <= 0.8 ? "met" : "NOT met" (in_noise(s, x, "lat", 1, 0.8) ? " (within the noise)" : ""), \
                ((x > 0.8 && (y = ratio("mpi", "lat", "copy", "lat", s)) != "") ? sprintf("; Open MPI at %.2fx the copy floor (copy-floor), so the goal asks csn for %.2fx it", y, 0.8 * y) : "") \
                ((x > 0.8 && (y = ratio("mpi", "lat", "lean", "lat", s)) != "") ? sprintf("; against pingpong-lean (no library, the same loop): Open MPI %.2fx, csn %.2fx (goal %.2fx)", y, ratio("csn", "lat", "lean", "lat", s), 0.8 * y) : "")
        }
        if (s >= 65536) {
            x = ratio("csn", "bw", "mpi", "bw", s)
            if (x != "") { nbw++; if (x >= 1.0) okbw++; else badbw = badbw miss(s, x, "bw", 0, 1.0) }
        }
        if (s >= 4194304) {
            x = ratio("csn", "bw", "memcpy", "bw", s)
            if (x != "") { nmc++; if (x >= 0.8) okmc++; else badmc = badmc " " s }
            # Missed: csn against the floor of its split copy, and that floor against memcpy.
            if (x != "" && x < 0.8 && (y = ratio("csn", "bw", "floor", "split", s)) != "")
                sf = sf sprintf(" %d %.2f/%.2f", s, y, ratio("floor", "split", "memcpy", "bw", s))
        }
    }
    if (nbw) printf "#   bandwidth 64K..: csn/MPI >= 1.0 at %d of %d sizes%s\n", okbw, nbw, badbw == "" ? "" : " (not at" badbw ")"
    if (nmc) printf "#   bandwidth 4M..: csn/memcpy >= 0.8 at %d of %d sizes%s\n", okmc, nmc, badmc == "" ? "" : " (not at" badmc ")"
    if (sf != "") printf "#     those sizes against the split copy'"'"'s floor (cma-floor --test split: both processes copy half at once, no library), csn/floor and floor/memcpy:%s\n", sf
    # Issue 19: streaming 1 B-4 KiB, latency at every size, bidirectional 64 KiB-64 MiB.
    for (i = 1; i <= nsizes; i++) {
        s = order[i]
        if (s >= 1 && s <= 4096 && (x = ratio("csn", "bw", "mpi", "bw", s)) != "") { nst++; if (x >= 1.0) okst++; else badst = badst miss(s, x, "bw", 0, 1.0) }
        if ((x = ratio("csn", "lat", "mpi", "lat", s)) != "") { nlat++; if (x <= 1.0) oklat++; else badlat = badlat miss(s, x, "lat", 1, 1.0) }
        if (s >= 65536 && (x = ratio("csn", "bibw", "mpi", "bibw", s)) != "") { nbi++; if (x >= 1.0) okbi++; else badbi = badbi miss(s, x, "bibw", 0, 1.0) }
    }
    if (nst) printf "#   streaming 1..4K: csn/MPI >= 1.0 at %d of %d sizes%s\n", okst, nst, badst == "" ? "" : " (not at" badst ")"
    if (nlat) printf "#   latency, every size: csn/MPI <= 1.0 at %d of %d sizes%s\n", oklat, nlat, badlat == "" ? "" : " (not at" badlat ")"
    # Where a rendezvous latency is missed: each library against the floor of a pulled ping-pong.
    if (badlat != "" && (pf = against_floor("lat", 1, 0, "pull", "lat")) != "") printf "#     those sizes against the pulled floor (cma-floor --test lat: announced, pulled whole, answered, no library), csn/floor and MPI/floor:%s\n", pf
    if (badlat != "" && (pf = against_floor("lat", 1, 0, "lean", "lat")) != "") printf "#     those sizes against pingpong-lean (no library, the same loop), csn/lean and MPI/lean:%s\n", pf
    if (nbi) printf "#   bidirectional 64K..: csn/MPI >= 1.0 at %d of %d sizes%s\n", okbi, nbi, badbi == "" ? "" : " (not at" badbi ")"
    # Where both ways is missed: how far each library is from the copy floor (issue 19, item 5).
    if (nfloor && badbi != "" && (fl = against_floor("bibw", 0, 65536, "floor", "bibw")) != "") printf "#     those sizes against the copy floor (cma-floor), csn/floor and MPI/floor:%s\n", fl
}
function f(x, fmt) { return x == "" ? "-" : sprintf(fmt, x) }
FILENAME ~ /line\.txt$/ { if ($1 ~ /^[0-9]+$/) { rcls[$1] = place(); ncls[rcls[$1]]++ } next }
{
    if (!match($0, /"size": [0-9]+/)) next
    s = substr($0, RSTART + 8, RLENGTH - 8) + 0
    split(FILENAME, p, "/"); split(p[length(p)], q, ".")
    k = q[1]; r = q[2]
    if (k == "csn" && r == 1) order[++nsizes] = s
    if (k == "floor") nfloor++
    x = val($0, "lat_us");      if (x != "") v[k, r, s, "lat"] = x
    x = val($0, "bw_MBps");     if (x != "") v[k, r, s, "bw"] = x
    x = val($0, "bibw_MBps");   if (x != "") v[k, r, s, "bibw"] = x
    x = val($0, "split_MBps");  if (x != "") v[k, r, s, "split"] = x
    x = val($0, "memcpy_MBps"); if (x != "") v[k, r, s, "bw"] = x
}
END {
    printf "# pingpong, %d rounds: medians (latency us, bandwidth MB/s = 1e6 B/s) and median per-round ratios\n", rounds
    printf "%9s %8s %8s %7s | %9s %9s %9s %7s %7s | %9s %9s %7s | %9s %6s %6s\n", "size", "csn_lat", "mpi_lat", "lat c/m", \
        "csn_bw", "mpi_bw", "memcpy", "bw c/m", "c/mcpy", "csn_bibw", "mpi_bibw", "bibw c/m", "fl_bibw", "c/fl", "m/fl"
    for (i = 1; i <= nsizes; i++) {
        s = order[i]
        printf "%9d %8s %8s %7s | %9s %9s %9s %7s %7s | %9s %9s %7s | %9s %6s %6s\n", s,
            f(med("csn", "lat", s), "%.2f"), f(med("mpi", "lat", s), "%.2f"), f(ratio("csn", "lat", "mpi", "lat", s), "%.2f"),
            f(med("csn", "bw", s), "%.0f"), f(med("mpi", "bw", s), "%.0f"), f(med("memcpy", "bw", s), "%.0f"),
            f(ratio("csn", "bw", "mpi", "bw", s), "%.2f"), f(ratio("csn", "bw", "memcpy", "bw", s), "%.2f"),
            f(med("csn", "bibw", s), "%.0f"), f(med("mpi", "bibw", s), "%.0f"), f(ratio("csn", "bibw", "mpi", "bibw", s), "%.2f"),
            f(med("floor", "bibw", s), "%.0f"), f(ratio("csn", "bibw", "floor", "bibw", s), "%.2f"), f(ratio("mpi", "bibw", "floor", "bibw", s), "%.2f")
    }
    if (nfloor) print "# fl_bibw: cma-floor, the same bytes both ways pulled with one process_vm_readv per message, a window begun when both sides finished the one before, payload filled and checked as pingpong'"'"'s, no library; c/fl, m/fl: csn, MPI against it"
    for (i = 1; i <= nsizes; i++) if ((x = med("copy", "lat", order[i])) != "") cf = cf sprintf(" %d %.3f", order[i], x)
    if (cf != "") print "# copy-floor (latency us, an eager ping-pong'"'"'s two copies through one shared slot, no library):" cf
    for (i = 1; i <= nsizes; i++) if (order[i] <= 65536 && (x = med("lean", "lat", order[i])) != "") ln = ln sprintf(" %d %.3f", order[i], x)
    if (ln != "") print "# pingpong-lean (latency us, pingpong'"'"'s loop on no library: flags in shared memory, copied through it up to 16 KiB, pulled beyond):" ln
    for (i = 1; i <= nsizes; i++) if ((x = med("pull", "lat", order[i])) != "") pl = pl sprintf(" %d %.3f", order[i], x)
    if (pl != "") print "# cma-floor --test lat (latency us, a ping-pong of messages announced, pulled whole and answered, no library):" pl
    print ""
    goals("# goals (for the shared-memory transport; measured as is):")
    noise_line()
    split("core near far", cls, " ")
    for (i = 1; i <= 3; i++) if (ncls[want = cls[i]] > 0) {
        print ""
        goals(sprintf("# goals over the %d %s round(s) alone (csn and MPI in the same placement):", ncls[want], want))
        if (ncls[want] > 1) noise_line()
    }
    want = ""
    if (tilde) print "#   SIZE~: missed by less than that noise"
}' "${LINE[@]}" "$T"/csn.*.json "$T"/mpi.*.json "$T"/memcpy.*.json $(ls "$T"/floor.*.json "$T"/copy.*.json "$T"/pull.*.json "$T"/lean.*.json 2>/dev/null)
echo

# Two ranks on one core: both launchers under taskset -c 0 (children inherit the affinity).
# MPI spins for its time slice (about 4 ms per message here): the batches are calibrated
# to --sample-ms, so few iterations run, and timeout caps the whole run.
echo "# two ranks on one core (taskset -c 0), half round trip in us, median (min) of 5 batches"
ONE="--sizes 8,1K --test lat --samples 5 --sample-ms 20"
# shellcheck disable=SC2086
run "$T/one.csn.txt" taskset -c 0 "$CSNRUN" -np 2 "$PP" $ONE
# shellcheck disable=SC2086
run "$T/one.mpi.txt" taskset -c 0 "$MPIRUN" -np 2 --bind-to none "$PPMPI" $ONE
awk '
FNR == 1 { k++ }
/^ *[0-9]+ / { lat[k, $1] = $2; mn[k, $1] = $3; it[k, $1] = $4 }
END {
    printf "%9s %12s %12s %10s\n", "size", "csn", "MPI", "csn/MPI"
    n = split("8 1024", sz, " ")
    for (i = 1; i <= n; i++) {
        s = sz[i]
        printf "%9d %12s %12s %10s\n", s, lat[1, s] " (" mn[1, s] ")", lat[2, s] " (" mn[2, s] ")", \
            (lat[2, s] > 0 ? sprintf("%.4f", lat[1, s] / lat[2, s]) : "-")
    }
    if (lat[1, 8] != "") printf "# goal: csn 8 B latency on one core < 10 us: %s (%s us)\n", lat[1, 8] < 10 ? "met" : "NOT met", lat[1, 8]
}' "$T/one.csn.txt" "$T/one.mpi.txt"
echo

# nettest, 4 ranks on the 2 cores.
if [ ! -x "$NT" ] || [ ! -x "$NTMPI" ]; then
    echo "# nettest: skipped ($NT or $NTMPI is not built)"
    exit 0
fi
NTARGS="uK m1 M1024 K4 R1 T200 Ptotal"
echo "# nettest 4 ranks on 2 cores: $NTARGS; $NT_ROUNDS rounds alternating, MB/s medians per cell"
[ -n "$REPORT" ] || : >"$T/nt.line.txt"
# nettest of csn (0) or Open MPI (1) in round R.
nt_lib() {
    # shellcheck disable=SC2086
    if [ "$1" = 0 ]; then
        run "$T/nt.csn.$2.txt" "$CSNRUN" -np 4 "$NT" $NTARGS
    else
        run "$T/nt.mpi.$2.txt" "$MPIRUN" -np 4 --oversubscribe "$NTMPI" $NTARGS
    fi
}
r=1
while [ "$r" -le "$NT_ROUNDS" ]; do
    echo "nettest round $r/$NT_ROUNDS ..." >&2
    before=$(line_sample)
    nt_lib $((r % 2 ? 0 : 1)) "$r"
    mid=$(line_sample)
    nt_lib $((r % 2 ? 1 : 0)) "$r"
    after=$(line_sample)
    # The same cells with no library (nettest-lean: flags and one process_vm_readv per
    # message, up to 16 KiB through shared memory): a reference, the lean line below.
    if [ -x "$NTLEAN" ]; then
        # shellcheck disable=SC2086
        run "$T/nt.lean.$r.txt" env LEAN_NP=4 LEAN_EAGER=16384 "$NTLEAN" $NTARGS
    fi
    # The barrier each nettest iteration ends with, alone (a small part of a round's time).
    if [ -x "$BB" ] && [ -x "$BBMPI" ]; then
        run "$T/bar.csn.$r.txt" "$CSNRUN" -np 4 "$BB" 2000
        run "$T/bar.mpi.$r.txt" "$MPIRUN" -np 4 --oversubscribe "$BBMPI" 2000
    fi
    keep_round "$T/nt.line.txt" && r=$((r + 1))
done
NTLINE=()
[ ! -f "$T/nt.line.txt" ] || NTLINE=("$T/nt.line.txt")
awk -v rounds="$NT_ROUNDS" -v bands="$BANDS" "$AWK_RATIOS$AWK_PLACE"'
function isnum(x) { return x ~ /^[0-9]+(\.[0-9]*)?([eE][-+]?[0-9]+)?$/ }
FILENAME ~ /line\.txt$/ {
    if ($1 ~ /^[0-9]+$/) { rcls[$1] = c = place(); ncls[c]++; ls = ls sprintf(" %s/%s/%s (%s)", $2, $3, $4, c) }
    next
}
# Table rows: a size then the six columns, all numeric.
{
    split(FILENAME, p, "/"); split(p[length(p)], q, ".")
    k = q[2]; r = q[3]
    if (NF != 7) next
    for (c = 1; c <= 7; c++) if (!isnum($c)) next
    if (k == "csn" && r == 1) order[++n] = $1
    if (k == "lean") lean = 1
    for (c = 2; c <= 7; c++) v[k, r, $1, c] = $c
}
function med(k, s, c,    r, m, a) { m = 0; for (r = 1; r <= rounds; r++) if (counted(r) && (k, r, s, c) in v) a[++m] = v[k, r, s, c]; return median(a, m) }
# The median over the cells of the ratio of k1 to k2 (medians over the rounds), as 1.23x.
function against(k1, k2,    i, s, c, a, b, nc, rs) {
    for (i = 1; i <= n; i++) for (c = 2; c <= 7; c++) {
        s = order[i]; a = med(k1, s, c); b = med(k2, s, c)
        if (a != "" && b != "" && b > 0) rs[++nc] = a / b
    }
    return nc ? sprintf("%.2fx", median(rs, nc)) : "-"
}
# The noise of a cell of kind k: its median over the odd counted rounds against its median
# over the even ones, the factor between the two (1.00: none; "" below two rounds). A median
# of half the rounds moves more than that of all, so this errs on the side of noise. (The
# factor between adjacent rounds, noise(), is far larger here: the host moves the vCPUs
# within seconds, and a single figure of a cell moves with them; BENCHMARKS.md, issue 19.)
function half_noise(k, s, c,    r, m, i, a, x, y) {
    for (i = 0; i < 2; i++) {
        m = 0; delete a
        for (r = 1; r <= rounds; r++) if (counted(r) && r % 2 == i && (k, r, s, c) in v) a[++m] = v[k, r, s, c]
        if (i == 0) x = median(a, m); else y = median(a, m)
    }
    if (x == "" || y == "" || x <= 0 || y <= 0) return ""
    return x > y ? x / y : y / x
}
# The table (when shown) and the goal lines over the counted rounds. A cell that misses 1.0x
# by less than the noise of Open MPI in that cell is counted apart.
function cells(show,    i, s, c, a, b, cell, nc, ok, ok1, near1, rs, z, l) {
    for (i = 1; i <= n; i++) {
        s = order[i]
        if (show) printf "%8s", s
        for (c = 2; c <= 7; c++) {
            a = med("csn", s, c); b = med("mpi", s, c)
            cell = (a == "" || b == "") ? "-" : sprintf("%.0f/%.0f=%.1fx", a, b, b > 0 ? a / b : 0)
            if (a != "" && b != "" && b > 0 && a < b && (z = half_noise("mpi", s, c)) != "" && a * z >= b) {
                near1++
                cell = cell "~"
            }
            if (show) printf " %17s", cell
            if (a != "" && b != "") { nc++; if (b > 0 && a >= 2 * b) ok++; if (b > 0 && a >= b) ok1++; rs[nc] = b > 0 ? a / b : 0 }
            if (show && lean && a != "" && b != "" && a < b && (l = med("lean", s, c)) != "" && l > 0)
                floor_cells = floor_cells sprintf(" %s/%s %.2f/%.2f", s, name[c - 1], a / l, l / b)
        }
        if (show) print ""
    }
    if (show) printf "# goal: every cell csn >= 2x MPI: %d of %d cells\n", ok, nc
    return sprintf("every cell >= 1.0x: %d of %d cells, %d more missed by less than the noise (~); median cell %.2fx (goal >= 1.5x)", ok1, nc, near1, median(rs, nc))
}
# The noise of the cells (half_noise of Open MPI): the median and the range over the cells.
function cell_noise(    i, c, z, m, a) {
    for (i = 1; i <= n; i++) for (c = 2; c <= 7; c++) if ((z = half_noise("mpi", order[i], c)) != "") a[++m] = z
    if (!m) return "-"
    z = median(a, m)
    return sprintf("median %.2f, %.2f-%.2f over %d cells", z, a[1], a[m], m)
}
END {
    if (ls != "") print "# line-floor (us) before/between/after the two libraries (csn first in odd rounds), per round:" ls
    split("Star Star2 Chaos Chaos2 Ring Ring2", name, " ")
    printf "%8s", "size,K"
    for (c = 2; c <= 7; c++) printf " %17s", name[c - 1] " csn/MPI"
    print ""
    print "# goal (issue 19): " cells(1)
    if (rounds > 1) print "# noise: Open MPI per cell, its median over the odd rounds against the even ones (factor): " cell_noise()
    if (lean) printf "# nettest-lean (no library; LEAN_EAGER=16K) as a reference: median cell lean/MPI %s, csn/lean %s\n", against("lean", "mpi"), against("csn", "lean")
    if (floor_cells != "") print "#   the cells below 1.0x against nettest-lean (the same exchanges without a library), size/column csn/lean and lean/MPI:" floor_cells
    split("core near far", cls, " ")
    for (i = 1; i <= 3; i++) if (ncls[want = cls[i]] > 0)
        printf "#   over the %d %s round(s) alone: %s\n", ncls[want], want, cells(0)
}' "${NTLINE[@]}" "$T"/nt.csn.*.txt "$T"/nt.mpi.*.txt $(ls "$T"/nt.lean.*.txt 2>/dev/null)
# barrier-bench's median per round; the figures and the ratio are medians over the rounds.
# shellcheck disable=SC2046
[ -z "$(ls "$T"/bar.csn.*.txt 2>/dev/null)" ] || awk "$AWK_RATIOS"'
/^barrier_us/ { split(FILENAME, p, "/"); split(p[length(p)], q, "."); v[q[2], q[3]] = $3; if (q[3] > n) n = q[3] }
END {
    for (r = 1; r <= n; r++) if ((("csn", r) in v) && (("mpi", r) in v)) {
        m++; a[m] = v["csn", r]; b[m] = v["mpi", r]; x[m] = v["mpi", r] > 0 ? v["csn", r] / v["mpi", r] : 0
    }
    if (m) printf "# the barrier alone (barrier-bench, 4 ranks on 2 cores; nettest ends each iteration with one): csn %.2f us, MPI %.2f us, csn/MPI %.2f (medians of %d rounds)\n", median(a, m), median(b, m), median(x, m), m
}' "$T"/bar.csn.*.txt "$T"/bar.mpi.*.txt
