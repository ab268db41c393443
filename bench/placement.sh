#!/bin/bash
# placement.sh: configurations of pingpong run alternately, each run preceded by line-floor, and
# the medians split by where the machine had our two vCPUs (near: a shared cache; far: not).
#
# usage: bench/placement.sh [--rounds N] [--sizes LIST] [--test TEST] [--far US] [--rotate] CONFIG...
#   CONFIG: NAME=BUILD_DIR[,VAR=VALUE...]  csn's pingpong of that build under its csnrun, with
#           those variables set (e.g. stream=build,CSN_SHM_PULL_MAX=0), or
#           NAME=mpi:BUILD_DIR              that build's pingpong-mpi under mpirun.openmpi, or
#           NAME=ring:BUILD_DIR[,VAR=VALUE...]  that build's ring-stream (its shared-memory ring
#           alone, no library around it; --test bw only), e.g. r16=ring:build,CSN_SHM_RING=16K,
#           or NAME=floor:BUILD_DIR[,OPTION...]  that build's cma-floor (the same bytes pulled
#           with one process_vm_readv per message, no library; --test bw, bibw or lat from
#           8 KiB) with those options, e.g. free=floor:build,--free (bibw's windows run free).
#   --rounds N    rounds (default 6); each runs every CONFIG once, in the order given (see
#                 --rotate)
#   --sizes LIST  pingpong --sizes (default 256K,1M,4M,16M)
#   --test TEST   pingpong --test: one of lat, bw, bibw (default bibw; one per run: the
#                 table holds one figure per size)
#   --far US      line-floor's one-way latency from which a run counts as far (default 0.15;
#                 this machine shows 0.05-0.08 us near and 0.26-0.30 far)
#   --rotate      round r starts with the r-th CONFIG (cyclically) instead of the first: no
#                 config always runs first or after the same one (a run's place in the round
#                 moved it 3-6 % here)
# Prints one line per run (config, round, line-floor, size, median MB/s or us), then per
# config and size the median over all runs and over the near and the far runs apart, with
# how many runs each has; then, for every CONFIG after the first, per size the median over
# rounds of each round's ratio to the first CONFIG's run (its figure over the first's: for
# latency below 1 is faster), over all rounds and over the rounds whose two runs were both near
# or both far: the host's moods move both runs of a round alike, where the plain medians mix
# them. Takes /tmp/csn-bench.lock itself (do not wrap it in flock).
# Why: csn's stream through the shared-memory ring halves where the vCPUs share no cache
# while a single-copy pull does not (BENCHMARKS.md, issue 19): a comparison that mixes the
# placements compares them, not the configurations.
set -u
me=placement.sh
usage() { sed -n '4,30p' "$0" | sed 's/^# \{0,1\}//'; }
die() { echo "$me: $2" >&2; exit "$1"; }

rounds=6 sizes=256K,1M,4M,16M test=bibw far=0.15 rotate=0
configs=()
while [ $# -gt 0 ]; do
    case $1 in
    -h | --help) usage; exit 0 ;;
    --rounds) rounds=${2:?--rounds needs a number}; shift 2 ;;
    --sizes) sizes=${2:?--sizes needs a list}; shift 2 ;;
    --test) test=${2:?--test needs lat, bw or bibw}; shift 2 ;;
    --far) far=${2:?--far needs microseconds}; shift 2 ;;
    --rotate) rotate=1; shift ;;
    -*) die 2 "unknown option $1 (see --help)" ;;
    *=*) configs+=("$1"); shift ;;
    *) die 2 "a CONFIG is NAME=BUILD_DIR[,VAR=VALUE...] or NAME=mpi:BUILD_DIR, not '$1'" ;;
    esac
done
case $rounds in '' | *[!0-9]* | 0) die 2 "--rounds must be a positive integer, not '$rounds'" ;; esac
case $test in lat | bw | bibw) ;; *) die 2 "--test takes one of lat, bw, bibw (run once per test), not '$test'" ;; esac
case $far in '' | *[!0-9.]* | *.*.*) die 2 "--far must be a number of microseconds, not '$far'" ;; esac
[ ${#configs[@]} -gt 0 ] || die 2 "no CONFIG given (see --help)"

# Each config as NAME, command prefix and environment, checked before any run.
names=() cmds=() envs=() cols=() lf=''
for c in "${configs[@]}"; do
    name=${c%%=*} rest=${c#*=}
    [ -n "$name" ] || die 2 "a CONFIG needs a NAME: '$c'"
    col=2 # the output's column of the figure: pingpong's median
    if [ "${rest#mpi:}" != "$rest" ]; then
        b=${rest#mpi:}
        mpirun=$(command -v mpirun.openmpi) || die 2 "mpirun.openmpi not found (apt-get install openmpi-bin)"
        [ -x "$b/bench/pingpong/pingpong-mpi" ] || die 2 "$name: $b/bench/pingpong/pingpong-mpi is not built"
        cmd="$mpirun -np 2 $b/bench/pingpong/pingpong-mpi" env=''
    elif [ "${rest#floor:}" != "$rest" ]; then
        b=${rest#floor:} opts=''
        [ "${b%%,*}" = "$b" ] || { opts=$(echo "${b#*,}" | tr ',' ' '); b=${b%%,*}; }
        for o in $opts; do
            case $o in --*) ;; *) die 2 "$name: '$o' is not a cma-floor option (--free, --bind)" ;; esac
        done
        [ -x "$b/bench/pingpong/cma-floor" ] || die 2 "$name: $b/bench/pingpong/cma-floor is not built"
        cmd="$b/bench/pingpong/cma-floor${opts:+ $opts}" env=''
        case $test in bw) col=2 ;; bibw) col=4 ;; lat) col=8 ;; esac
    else
        ring=''
        [ "${rest#ring:}" = "$rest" ] || { ring=1 rest=${rest#ring:}; }
        b=${rest%%,*} env=''
        [ "$b" = "$rest" ] || env=$(echo "${rest#*,}" | tr ',' ' ')
        for kv in $env; do
            case $kv in [A-Z_]*=*) ;; *) die 2 "$name: '$kv' is not VAR=VALUE" ;; esac
        done
        if [ -n "$ring" ]; then
            [ "$test" = bw ] || die 2 "$name: ring-stream measures --test bw only"
            [ -x "$b/bench/pingpong/ring-stream" ] || die 2 "$name: $b/bench/pingpong/ring-stream is not built"
            cmd="$b/bench/pingpong/ring-stream"
        else
            for f in tools/csnrun/csnrun bench/pingpong/pingpong; do
                [ -x "$b/$f" ] || die 2 "$name: $b/$f is not built"
            done
            cmd="$b/tools/csnrun/csnrun -np 2 $b/bench/pingpong/pingpong"
        fi
    fi
    [ -n "$lf" ] || lf=$b/bench/pingpong/line-floor
    names+=("$name") cmds+=("$cmd") envs+=("$env") cols+=("$col")
done
[ -x "$lf" ] || die 2 "$lf is not built"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

T=$(mktemp /tmp/placement.XXXXXX) || exit 2
trap 'rm -f "$T"' EXIT
trap 'exit 130' INT TERM
exec 9>/tmp/csn-bench.lock
flock 9 || die 2 "cannot take /tmp/csn-bench.lock"
echo "# placement.sh -- $(date -u '+%Y-%m-%d %H:%M UTC'), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# pingpong --sizes $sizes --test $test --samples 5; far: line-floor >= $far us"
for r in $(seq "$rounds"); do
    for k in "${!names[@]}"; do
        i=$(( rotate ? (k + r - 1) % ${#names[@]} : k ))
        floor=$("$lf" 100000 2>/dev/null | awk '/^ +[0-9]/ { v = $2 } END { print v }')
        out=$(env ${envs[$i]} timeout 300 ${cmds[$i]} --sizes "$sizes" --test "$test" --samples 5 2>&1) ||
            die 1 "${names[$i]}, round $r failed: $(echo "$out" | tail -3)"
        echo "$out" | awk -v c="${names[$i]}" -v r="$r" -v lf="$floor" -v col="${cols[$i]}" \
            '!/^#/ && $1 ~ /^[0-9]+$/ { printf "%-12s round %d line-floor %s size %9s %s\n", c, r, lf, $1, $col }' |
            tee -a "$T"
    done
done
echo
awk -v far="$far" "$(cat "$(dirname "$0")/common/ratios.awk")"'
{ c = $1; r = $3; s = $7; x = $8; k = ($5 >= far) ? "far" : "near"
  if (first == "") first = c
  if (!((c, s) in seen)) { seen[c, s] = 1; order[++n] = c SUBSEP s }
  all[c, s, ++na[c, s]] = x; pl[c, s, k, ++np[c, s, k]] = x
  val[c, s, r] = x; cls[c, r] = k; if (r > nr) nr = r }
# Latencies are fractions of a microsecond here: three decimals below 100, one above.
function fmt(x) { return x < 100 ? sprintf("%9.3f", x) : sprintf("%9.1f", x) }
function med(c, s, k,    a, i, m) {
  m = (k == "") ? na[c, s] : np[c, s, k]
  for (i = 1; i <= m; i++) a[i] = (k == "") ? all[c, s, i] : pl[c, s, k, i]
  return m ? sprintf("%s (%d)", fmt(median(a, m)), m) : sprintf("%13s", "-")
}
# The median over rounds of the ratio of c to the first config, run by run in each round (k: only the
# rounds where both runs were of that placement).
function ratio(c, s, k,    a, r, m) {
  m = 0
  for (r = 1; r <= nr; r++)
    if ((c, s, r) in val && (first, s, r) in val && val[first, s, r] > 0 &&
        (k == "" || (cls[c, r] == k && cls[first, r] == k)))
      a[++m] = val[c, s, r] / val[first, s, r]
  return m ? sprintf("%9.3f (%d)", median(a, m), m) : sprintf("%13s", "-")
}
END {
  printf "%-12s %9s %13s %13s %13s\n", "config", "size", "all (runs)", "near (runs)", "far (runs)"
  for (i = 1; i <= n; i++) { split(order[i], p, SUBSEP)
    printf "%-12s %9s %s %s %s\n", p[1], p[2], med(p[1], p[2], ""), med(p[1], p[2], "near"), med(p[1], p[2], "far") }
  printf "\nagainst %s, the median of the per-round ratios (rounds)\n", first
  printf "%-12s %9s %13s %13s %13s\n", "config", "size", "all", "both near", "both far"
  for (i = 1; i <= n; i++) { split(order[i], p, SUBSEP)
    if (p[1] != first)
      printf "%-12s %9s %s %s %s\n", p[1], p[2], ratio(p[1], p[2], ""), ratio(p[1], p[2], "near"), ratio(p[1], p[2], "far") }
}' "$T"
