#!/bin/bash
# nettest-configs.sh: configurations of nettest run alternately, and per cell the median over
# rounds of each configuration's figure against the first configuration's.
#
# usage: bench/nettest-configs.sh [--rounds N] [--np NP] [--keep DIR] [--best N1,N2...]
#                                 [--from DIR] CONFIG... [-- PARAMS...]
#   CONFIG: NAME=BUILD_DIR[,VAR=VALUE...]  csn's nettest of that build under its csnrun, with
#           those variables set (e.g. msg=build,CSN_HOST_BARRIER=0), or
#           NAME=mpi:BUILD_DIR              that build's nettest-mpi under mpirun.openmpi
#                                           (--oversubscribe), or
#           NAME=floor:BUILD_DIR            that build's nettest-floor (the same cells with
#                                           no library: one process_vm_readv per message), or
#           NAME=lean:BUILD_DIR[,VAR=VALUE...]  that build's nettest-lean (nettest itself on the
#                                           least a single-copy message layer does, no library;
#                                           e.g. LEAN_EAGER=65536 copies messages up to that
#                                           size through shared memory, LEAN_WORK_NS=100 adds
#                                           that much work to every send and receive).
#   --rounds N   rounds (default 8); each runs every CONFIG once, round r starting at the
#                r-th CONFIG (the order turns)
#   --np NP      ranks (default 4)
#   --keep DIR   keep the outputs in DIR (NAME.ROUND.txt), else a temporary directory
#   --best N1,N2 also per cell the best of those configurations' ratios, and its median cell
#                (e.g. of several nettest-lean settings: what the best of them reaches)
#   --from DIR   run nothing: the ratios of the outputs a run kept in DIR (--keep)
#   --wall       also each configuration's whole run against the first's: the median over
#                rounds of the first's time over its own ("Network Test complete in", above 1
#                is faster). That time holds every iteration whole (the barrier before each,
#                which a cell's figure leaves out) and the payload check (--no-check: none);
#                runs shorter than 0.01 s and nettest-floor's (no such line) are left out
#   PARAMS       nettest's parameters (default: uK m1 M1024 K4 R1 T200 Ptotal, as
#                bench/shm-vs-mpi.sh runs it)
# Prints, for every CONFIG after the first, the median over all cells of the per-cell median
# ratio (CONFIG/FIRST, MB/s: above 1 is faster), then that ratio per cell (rows: sizes,
# columns: nettest's tests). Takes /tmp/csn-bench.lock itself (do not wrap it in flock).
set -u
me=nettest-configs.sh
usage() { sed -n '5,34p' "$0" | sed 's/^# \{0,1\}//'; }
die() { echo "$me: $2" >&2; exit "$1"; }

rounds=8 np=4 keep='' best='' from='' wall=0
configs=()
while [ $# -gt 0 ]; do
    case $1 in
    -h | --help) usage; exit 0 ;;
    --rounds) rounds=${2:?--rounds needs a number}; shift 2 ;;
    --np) np=${2:?--np needs a number}; shift 2 ;;
    --keep) keep=${2:?--keep needs a directory}; shift 2 ;;
    --best) best=${2:?--best needs configuration names}; shift 2 ;;
    --from) from=${2:?--from needs a directory}; shift 2 ;;
    --wall) wall=1; shift ;;
    --) shift; break ;;
    -*) die 2 "unknown option $1 (see --help)" ;;
    *=*) configs+=("$1"); shift ;;
    *) die 2 "a CONFIG is NAME=BUILD_DIR[,VAR=VALUE...], NAME=mpi:BUILD_DIR, NAME=floor:BUILD_DIR or NAME=lean:BUILD_DIR[,VAR=VALUE...], not '$1'" ;;
    esac
done
params=("$@")
[ ${#params[@]} -gt 0 ] || params=(uK m1 M1024 K4 R1 T200 Ptotal)
case $rounds in '' | *[!0-9]* | 0) die 2 "--rounds must be a positive integer, not '$rounds'" ;; esac
case $np in '' | *[!0-9]* | 0 | 1) die 2 "--np must be an integer of 2 or more, not '$np'" ;; esac
[ ${#configs[@]} -ge 2 ] || die 2 "give at least two CONFIGs (see --help)"
mpirun=$(command -v mpirun.openmpi || true)
for c in "${configs[@]}"; do
    name=${c%%=*} spec=${c#*=}
    case $name in '' | *[!A-Za-z0-9_-]*) die 2 "a CONFIG's NAME is letters, digits, _ and -, not '$name'" ;; esac
    dir=${spec%%,*}
    case $dir in
    mpi:*)
        [ -x "${dir#mpi:}/bench/nettest/nettest-mpi" ] || die 2 "${dir#mpi:}/bench/nettest/nettest-mpi is not built"
        [ -n "$mpirun" ] || die 2 "mpirun.openmpi not found (apt-get install openmpi-bin)" ;;
    floor:*)
        [ -x "${dir#floor:}/bench/nettest/nettest-floor" ] || die 2 "${dir#floor:}/bench/nettest/nettest-floor is not built" ;;
    lean:*)
        [ -x "${dir#lean:}/bench/nettest/nettest-lean" ] || die 2 "${dir#lean:}/bench/nettest/nettest-lean is not built" ;;
    *) [ -x "$dir/bench/nettest/nettest" ] && [ -x "$dir/tools/csnrun/csnrun" ] ||
        die 2 "$dir: nettest or csnrun is not built" ;;
    esac
done
if [ -n "$best" ]; then
    IFS=, read -r -a names <<<"$best"
    for b in "${names[@]}"; do
        found=0
        for c in "${configs[@]:1}"; do [ "${c%%=*}" = "$b" ] && found=1; done
        [ $found = 1 ] || die 2 "--best names configurations after the first, not '$b'"
    done
fi
if [ -n "$from" ]; then
    for c in "${configs[@]}"; do
        ls "$from/${c%%=*}".*.txt >/dev/null 2>&1 || die 2 "$from has no outputs of ${c%%=*}"
    done
    T=$from
elif [ -n "$keep" ]; then
    T=$keep
    mkdir -p "$T" || die 2 "cannot make $keep"
else
    T=$(mktemp -d /tmp/nettest-configs.XXXXXX) || exit 2
    trap 'rm -rf "$T"' EXIT
fi
trap 'exit 130' INT TERM
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

# Runs CONFIG $1 once into $2.
run_config() {
    local spec=${1#*=} out=$2 dir vars=()
    dir=${spec%%,*}
    [ "$spec" = "$dir" ] || IFS=, read -r -a vars <<<"${spec#*,}"
    case $dir in
    mpi:*) timeout 600 "$mpirun" -np "$np" --oversubscribe "${dir#mpi:}/bench/nettest/nettest-mpi" \
        "${params[@]}" >"$out" 2>&1 ;;
    floor:*) timeout 600 "${dir#floor:}/bench/nettest/nettest-floor" --np "$np" "${params[@]}" >"$out" 2>&1 ;;
    lean:*) timeout 600 env LEAN_NP="$np" "${vars[@]}" "${dir#lean:}/bench/nettest/nettest-lean" \
        "${params[@]}" >"$out" 2>&1 ;;
    *) timeout 600 env "${vars[@]}" "$dir/tools/csnrun/csnrun" -np "$np" "$dir/bench/nettest/nettest" \
        "${params[@]}" >"$out" 2>&1 ;;
    esac || { echo "$me: failed: ${1} (output: $out)" >&2; cat "$out" >&2; exit 1; }
}

if [ -z "$from" ]; then
    exec 9>/tmp/csn-bench.lock
    flock 9
    echo "# $me ${configs[*]} -- ${params[*]}; $rounds rounds, $np ranks, $(date -u '+%Y-%m-%d %H:%M UTC')"
    echo "# load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
    # The order turns by one each round: a run right after another configuration's (Open
    # MPI's exit, its files) must not always fall to the same one.
    n=${#configs[@]}
    for r in $(seq "$rounds"); do
        echo "round $r/$rounds ..." >&2
        for i in $(seq 0 $((n - 1))); do
            c=${configs[$(((i + r - 1) % n))]}
            run_config "$c" "$T/${c%%=*}.$r.txt"
        done
    done
fi
first=${configs[0]%%=*}
# ratios A B LABEL FILES...: per cell, the median over rounds of A's figure over B's (A: a
# configuration, or several separated by commas: per cell the best of their medians); then
# the median over all cells.
ratios() {
    # nettest's table rows: size then one MB/s figure per test.
    awk -v A="$1" -v B="$2" -v L="$3" '
    function med(a, n,    i, j, t) {
        for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
        return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
    }
    FNR == 1 { n = split(FILENAME, q, "/"); split(q[n], w, "."); k = w[1]; r = w[2]; tab = 0 }
    /^Size/ { tab = 1; if (hdr == "") for (c = 2; c <= NF; c++) hdr = hdr sprintf(" %6s", $c); next }
    NF == 0 { tab = 0 }
    tab && $1 ~ /^[0-9]+$/ {
        if (!($1 in seen)) { seen[$1] = 1; order[++ns] = $1 }
        if (NF - 1 > nc) nc = NF - 1
        for (c = 2; c <= NF; c++) v[k, r, $1, c] = $c
        if (r > R) R = r
    }
    END {
        na = split(A, as, ",")
        m = 0
        for (i = 1; i <= ns; i++) {
            s = order[i]; line = sprintf("%9s", s)
            for (c = 2; c <= nc + 1; c++) {
                best = -1
                for (j = 1; j <= na; j++) {
                    n = 0
                    for (r = 1; r <= R; r++)
                        if ((as[j], r, s, c) in v && (B, r, s, c) in v && v[B, r, s, c] > 0) a[++n] = v[as[j], r, s, c] / v[B, r, s, c]
                    if (n) { x = med(a, n); if (x > best) best = x }
                }
                if (best >= 0) { cell[++m] = best; line = line sprintf(" %6.2f", best) } else line = line "      -"
            }
            rows[i] = line
        }
        printf "%s/%s: median cell %.3f over %d cells (per cell: median over %d rounds)\n", L, B, m ? med(cell, m) : 0, m, R
        printf "%9s%s\n", "size,K", hdr
        for (i = 1; i <= ns; i++) print rows[i]
    }' "${@:4}"
}
for c in "${configs[@]:1}"; do
    name=${c%%=*}
    ratios "$name" "$first" "$name" "$T"/"$name".*.txt "$T"/"$first".*.txt
done
# wall A B: the median over rounds of B's whole run time over A's (nettest's last line).
wall() {
    awk -v A="$1" -v B="$2" '
    FNR == 1 { f = split(FILENAME, q, "/"); split(q[f], w, "."); k = w[1]; r = w[2] + 0; if (r > R) R = r }
    /Network Test complete in/ { t[k, r] = $(NF - 1) }
    END {
        for (r = 1; r <= R; r++)
            if ((A, r) in t && (B, r) in t && t[A, r] > 0 && t[B, r] > 0) a[++n] = t[B, r] / t[A, r]
        for (i = 2; i <= n; i++) { x = a[i]; for (j = i - 1; j >= 1 && a[j] > x; j--) a[j + 1] = a[j]; a[j + 1] = x }
        if (n) printf "%s/%s whole run (time of %s over time of %s): median %.3f over %d rounds\n", A, B, B, A, n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2, n
    }' "$T"/"$1".*.txt "$T"/"$2".*.txt
}
if [ "$wall" = 1 ]; then
    for c in "${configs[@]:1}"; do wall "${c%%=*}" "$first"; done
fi
if [ -n "$best" ]; then
    files=()
    for b in "${names[@]}"; do files+=("$T"/"$b".*.txt); done
    ratios "$best" "$first" "best($best)" "${files[@]}" "$T"/"$first".*.txt
fi
