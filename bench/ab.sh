#!/bin/bash
# ab.sh: A/B of two revisions of csn in one run: builds both, runs pingpong and nettest alternately, prints NEW/OLD ratios against the runs' own spread.
#
# usage: bench/ab.sh [-r ROUNDS] [-o OUT.md] [-j JOBS] [-k] OLD_REV [NEW_REV|SOURCE_DIR]
#   OLD_REV      a commit of this repository (anything git rev-parse accepts: HEAD~1, d77a7e5, a branch)
#   NEW_REV      a commit, or a source directory (a worktree, built as it is, uncommitted edits
#                included); default: this repository's working tree
#   -r ROUNDS    rounds (default 5); each round runs pingpong then nettest, OLD and NEW one after
#                the other, and the side that goes first alternates from round to round
#   -o OUT.md    also write the report (markdown) to OUT.md
#   -j JOBS      build parallelism (default: nproc)
#   -k           keep the temporary directory (sources, builds, raw outputs) and say where
# Each commit is extracted with git archive into a temporary directory and built there
# (cmake -DCMAKE_BUILD_TYPE=RelWithDebInfo, the targets csnrun, pingpong, nettest); the runs
# take /tmp/csn-bench.lock (flock) themselves: do not wrap this script in flock.
# Measurements: pingpong latency, bandwidth and bidirectional bandwidth at 8 B, 1 KiB, 64 KiB,
# 1 MiB, 4 MiB (csnrun -np 2; each run's median), nettest 4 ranks at 1 KiB, 32 KiB, 1 MiB (the
# geometric mean of its six tests). The ratio is oriented so that > 1 means NEW is better
# (OLD/NEW for latency, NEW/OLD for bandwidth) and is the median over rounds of each round's
# own ratio; "worse" flags a ratio below 1/spread, spread = the larger max/min of the two
# sides' per-round values.
# Environment: CSN_* (e.g. CSN_TRANSPORT; =ofi also builds the libfabric component, FI_* go
#   to libfabric) and CSNRUN_ARGS pass through to both sides;
#   AB_PP_ARGS (extra pingpong options), AB_NT_ARGS (nettest parameters, default
#   "uK m1 M1024 K32 R1 T200 Ptotal"), AB_BUILD_TYPE (default RelWithDebInfo), AB_CMAKE_FLAGS,
#   AB_TIMEOUT (seconds per benchmark run, default 300), AB_LOCK_WAIT (seconds to wait for
#   the lock, default 3600).
# Exit status: 0 done (whatever the ratios), 1 a build or a run failed, 2 bad arguments.
set -u

me=ab.sh
usage() {
    sed -n '4,28p' "$0" | sed 's/^# \{0,1\}//'
}
die() { # die STATUS MESSAGE
    echo "$me: $2" >&2
    exit "$1"
}

rounds=5 out='' jobs=$(nproc 2>/dev/null || echo 2) keep=0
while [ $# -gt 0 ]; do
    case $1 in
    -h | --help) usage; exit 0 ;;
    -r | -o | -j)
        [ $# -ge 2 ] || die 2 "option $1 needs a value (see --help)"
        case $1 in -r) rounds=$2 ;; -o) out=$2 ;; -j) jobs=$2 ;; esac
        shift 2 ;;
    -k) keep=1; shift ;;
    --) shift; break ;;
    -*) die 2 "unknown option '$1' (see --help)" ;;
    *) break ;;
    esac
done
case $rounds in '' | *[!0-9]* | 0*) die 2 "ROUNDS must be a positive integer, not '$rounds'" ;; esac
case $jobs in '' | *[!0-9]* | 0*) die 2 "JOBS must be a positive integer, not '$jobs'" ;; esac
[ $# -ge 1 ] || die 2 "missing OLD_REV (usage: bench/ab.sh [-r ROUNDS] [-o OUT.md] OLD_REV [NEW_REV|SOURCE_DIR])"
[ $# -le 2 ] || die 2 "too many arguments: $* (see --help)"
if [ -n "$out" ]; then
    outdir=$(dirname "$out")
    { [ -d "$outdir" ] && [ -w "$outdir" ]; } || die 2 "cannot write $out (no such directory, or not writable)"
    [ ! -e "$out" ] || [ -w "$out" ] || die 2 "cannot write $out"
fi
tmo=${AB_TIMEOUT:-300}
case $tmo in '' | *[!0-9]* | 0*) die 2 "AB_TIMEOUT must be a positive integer, not '$tmo'" ;; esac
lockwait=${AB_LOCK_WAIT:-3600}
case $lockwait in '' | *[!0-9]*) die 2 "AB_LOCK_WAIT must be a non-negative integer, not '$lockwait'" ;; esac
for tool in git cmake tar flock timeout awk; do
    command -v "$tool" >/dev/null 2>&1 || die 2 "$tool not found"
done

repo=$(git -C "$(dirname "$0")" rev-parse --show-toplevel 2>/dev/null) ||
    die 2 "$(dirname "$0") is not inside a git repository (ab.sh builds commits of it)"

# resolve SIDE ARG: sets <SIDE>_sha (empty for a directory), <SIDE>_src (empty for a commit), <SIDE>_label.
resolve() {
    local side=$1 arg=$2 sha dir head dirty=
    if [ -d "$arg" ] && [ -f "$arg/CMakeLists.txt" ] && [ -f "$arg/include/csn.h" ]; then
        dir=$(cd "$arg" && pwd) || die 2 "cannot enter $arg"
        head=$(git -C "$dir" log -1 --format='%h %s' 2>/dev/null) || head="not a git tree"
        if [ -n "$(git -C "$dir" status --porcelain -uno 2>/dev/null)" ]; then dirty=", with uncommitted changes"; fi
        printf -v "${side}_sha" '%s' ""
        printf -v "${side}_src" '%s' "$dir"
        printf -v "${side}_label" '%s' "source tree $dir (HEAD $head$dirty)"
        return
    fi
    sha=$(git -C "$repo" rev-parse --verify --quiet "${arg}^{commit}") ||
        die 2 "'$arg' is neither a commit of $repo nor a csn source directory"
    printf -v "${side}_sha" '%s' "$sha"
    printf -v "${side}_src" '%s' ""
    printf -v "${side}_label" '%s' "$(git -C "$repo" log -1 --format='%h %s' "$sha")"
}
# shellcheck disable=SC2034 # read through eval in build()
old_sha='' old_src='' old_label='' new_sha='' new_src='' new_label=''
resolve old "$1"
resolve new "${2:-$repo}"

# Temporary directory; a run in the background is stopped on a signal; nothing stays behind.
T=$(mktemp -d "${TMPDIR:-/tmp}/csn-ab.XXXXXX") || die 1 "mktemp failed"
child=
cleanup() {
    if [ -n "$child" ]; then
        kill -TERM "$child" 2>/dev/null
        wait "$child" 2>/dev/null
    fi
    if [ "$keep" = 1 ]; then
        echo "$me: kept $T" >&2
    else
        rm -rf "$T"
    fi
}
trap cleanup EXIT
trap 'echo "$me: interrupted" >&2; exit 130' INT TERM HUP

# bg OUT CMD...: runs CMD with its output in OUT, in the background so that a signal stops it
# at once; never gives the lock's descriptor to CMD. Returns CMD's status.
bg() {
    local o=$1 rc
    shift
    "$@" >"$o" 2>&1 9>&- &
    child=$!
    wait "$child"
    rc=$?
    child=
    return "$rc"
}

build() { # build SIDE
    local side=$1 sha src b log
    eval "sha=\$${side}_sha; src=\$${side}_src"
    b=$T/$side/build log=$T/$side/build.log
    mkdir -p "$T/$side" || die 1 "mkdir failed"
    if [ -n "$sha" ]; then
        src=$T/$side/src
        mkdir -p "$src" || die 1 "mkdir failed"
        # shellcheck disable=SC2016 # the arguments are expanded by the inner shell
        bg "$log" bash -c 'set -o pipefail; git -C "$1" archive --format=tar "$2" | tar -x -C "$3"' sh "$repo" "$sha" "$src" ||
            { cat "$log" >&2; die 1 "git archive of $sha failed"; }
    fi
    echo "$me: building ${side^^} (${sha:-$src}) in $b ..." >&2
    # shellcheck disable=SC2016 # the arguments are expanded by the inner shell
    if ! bg "$log" sh -c 'cmake -S "$1" -B "$2" -DCMAKE_BUILD_TYPE="$3" $4 &&
            cmake --build "$2" -j "$5" --target csnrun pingpong nettest &&
            if [ "$6" = ofi ]; then cmake --build "$2" -j "$5" --target csn-ofi; fi' sh \
        "$src" "$b" "${AB_BUILD_TYPE:-RelWithDebInfo}" "${AB_CMAKE_FLAGS:-}" "$jobs" "${CSN_TRANSPORT:-}"; then
        tail -n 30 "$log" >&2
        die 1 "build of ${side^^} (${sha:-$src}) failed (the last lines of its log are above)"
    fi
    for f in tools/csnrun/csnrun bench/pingpong/pingpong bench/nettest/nettest; do
        [ -x "$b/$f" ] || die 1 "build of ${side^^} has no $f"
    done
}
build old
build new

pp_args="--sizes 8,1K,64K,1M,4M --test lat,bw,bibw${AB_PP_ARGS:+ $AB_PP_ARGS}"
nt_args=${AB_NT_ARGS:-uK m1 M1024 K32 R1 T200 Ptotal}

run() { # run SIDE BENCH ROUND
    local side=$1 bench=$2 r=$3 b=$T/$1/build o rc
    o=$T/$bench.$side.$r
    # shellcheck disable=SC2086
    if [ "$bench" = pp ]; then
        bg "$o.txt" timeout -k 10 "$tmo" "$b/tools/csnrun/csnrun" ${CSNRUN_ARGS:-} -np 2 \
            "$b/bench/pingpong/pingpong" $pp_args --json "$o.json"
    else
        bg "$o.txt" timeout -k 10 "$tmo" "$b/tools/csnrun/csnrun" ${CSNRUN_ARGS:-} -np 4 \
            "$b/bench/nettest/nettest" $nt_args
    fi
    rc=$?
    if [ "$rc" -ne 0 ]; then
        cat "$o.txt" >&2
        [ "$rc" -eq 124 ] && echo "$me: (timed out after $tmo s; AB_TIMEOUT sets the limit)" >&2
        die 1 "round $r, ${side^^}: $( [ "$bench" = pp ] && echo pingpong || echo nettest) failed (exit $rc; its output is above)"
    fi
}

# The runs, under the benchmark lock.
exec 9>>/tmp/csn-bench.lock || die 1 "cannot open /tmp/csn-bench.lock"
if ! flock -n 9; then
    echo "$me: waiting for /tmp/csn-bench.lock (another benchmark runs; up to $lockwait s)" >&2
    flock -w "$lockwait" 9 || die 1 "gave up waiting for /tmp/csn-bench.lock after $lockwait s"
fi
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
start=$(date -u '+%Y-%m-%d %H:%M UTC')
for r in $(seq 1 "$rounds"); do
    if [ $((r % 2)) -eq 1 ]; then order="old new"; else order="new old"; fi
    echo "$me: round $r/$rounds (${order^^}) ..." >&2
    for bench in pp nt; do
        for side in $order; do run "$side" "$bench" "$r"; done
    done
done
load_after=$(cut -d' ' -f1-3 /proc/loadavg)
flock -u 9
exec 9>&-

# One value per line: SIDE ROUND KEY VALUE. KEY: ppl.SIZE / ppb.SIZE / nt.SIZE (in nettest's unit).
for f in "$T"/pp.*.json; do
    base=${f##*/}
    awk -v id="$(echo "$base" | cut -d. -f2,3 | tr . ' ')" '
    function val(line, key,    i, s) {
        i = index(line, "\"" key "\": {\"median\": ")
        if (i == 0) return ""
        s = substr(line, i + length(key) + 14)
        sub(/[,}].*/, "", s)
        return s
    }
    match($0, /"size": [0-9]+/) {
        s = substr($0, RSTART + 8, RLENGTH - 8) + 0
        x = val($0, "lat_us"); if (x != "") print id, "ppl." s, x
        x = val($0, "bw_MBps"); if (x != "") print id, "ppb." s, x
        x = val($0, "bibw_MBps"); if (x != "") print id, "ppd." s, x
    }' "$f"
done >"$T/values.txt"
for f in "$T"/nt.*.txt; do
    base=${f##*/}
    awk -v id="$(echo "$base" | cut -d. -f2,3 | tr . ' ')" '
    /Message length unit is/ { u = $NF == "bytes" ? $(NF - 1) + 0 : 1 }
    /^Size,/ { t = 1; if (u < 1) u = 1; next }
    t && NF == 0 { t = 0; next }
    t {
        n = 0; lg = 0
        for (c = 2; c <= NF; c++) if ($c ~ /^[0-9.]+$/ && $c + 0 > 0) { n++; lg += log($c) }
        if (n > 0) print id, "nt." ($1 * u), exp(lg / n)
    }' "$f"
done >>"$T/values.txt"

pp_lib() { sed -n 's/^# pingpong: //p' "$T/pp.$1.1.txt" | head -n 1; }
envs=$(env | grep -E '^(CSN_|CSNRUN_ARGS=)' | sort | tr '\n' ' ' | sed 's/ $//')
{
    echo "## A/B: OLD ${old_label%% *} vs NEW $([ -n "$new_sha" ] && echo "${new_label%% *}" || echo "$new_src")"
    echo
    echo "- OLD: ${old_label}"
    echo "- NEW: ${new_label}"
    echo "- $start, $(uname -n), $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | sed 's/.*: //');" \
        "load average before $load_before, after $load_after"
    echo "- build: CMAKE_BUILD_TYPE=${AB_BUILD_TYPE:-RelWithDebInfo}${AB_CMAKE_FLAGS:+ $AB_CMAKE_FLAGS}; environment: ${envs:-(no CSN_* variables)}"
    echo "- pingpong: \`csnrun ${CSNRUN_ARGS:-}-np 2 pingpong $pp_args\` (OLD: $(pp_lib old); NEW: $(pp_lib new))"
    echo "- nettest: \`csnrun ${CSNRUN_ARGS:-}-np 4 nettest $nt_args\` (MB/s; a row is the geometric mean of its six tests)"
    echo "- $rounds round$([ "$rounds" -gt 1 ] && echo s); each: pingpong OLD and NEW, then nettest OLD and NEW, the first side alternating"
    if awk -v a="${load_before%% *}" -v b="${load_after%% *}" -v n="$(nproc)" 'BEGIN { exit !(a + 0 >= n || b + 0 >= n) }'; then
        echo "- note: the load average reached the CPU count: other work shared the CPUs, expect a wide spread"
    fi
    echo
    awk -v rounds="$rounds" '
    function median(a, n,    i, j, t) {
        for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
        return (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
    }
    function human(s) {
        if (s >= 1048576 && s % 1048576 == 0) return (s / 1048576) " MiB"
        if (s >= 1024 && s % 1024 == 0) return (s / 1024) " KiB"
        return s " B"
    }
    function fmt(x) { return x >= 100 ? sprintf("%.0f", x) : (x >= 10 ? sprintf("%.1f", x) : sprintf("%.2f", x)) }
    {
        side = $1; r = $2; k = $3; v[side, r, k] = $4
        if (!(k in seen)) { seen[k] = 1; keys[++nk] = k }
    }
    END {
        # Rows in a fixed order: latency by size, bandwidth by size, nettest by size.
        n = 0
        for (pass = 1; pass <= 4; pass++) {
            pre = pass == 1 ? "ppl." : (pass == 2 ? "ppb." : (pass == 3 ? "ppd." : "nt."))
            m = 0
            for (i = 1; i <= nk; i++) if (index(keys[i], pre) == 1) sz[++m] = substr(keys[i], length(pre) + 1) + 0
            for (i = 2; i <= m; i++) { t = sz[i]; for (j = i - 1; j >= 1 && sz[j] > t; j--) sz[j + 1] = sz[j]; sz[j + 1] = t }
            for (i = 1; i <= m; i++) row[++n] = pre sz[i]
        }
        print "| measurement | OLD median | NEW median | ratio, > 1 = NEW better | ratio per round, min..max | OLD min..max | NEW min..max | spread | verdict |"
        print "|---|---:|---:|---:|---|---|---|---:|---|"
        worse = ""; nworse = 0
        for (i = 1; i <= n; i++) {
            k = row[i]; split(k, p, "."); s = p[2] + 0
            if (p[1] == "ppl") { name = "pingpong latency " human(s) " (us)"; lower = 1 }
            else if (p[1] == "ppb") { name = "pingpong bandwidth " human(s) " (MB/s)"; lower = 0 }
            else if (p[1] == "ppd") { name = "pingpong both ways " human(s) " (MB/s)"; lower = 0 }
            else { name = "nettest 4 ranks " human(s) " (MB/s)"; lower = 0 }
            no = nn = nr = 0
            omin = omax = nmin = nmax = rmin = rmax = ""
            for (r = 1; r <= rounds; r++) {
                if (("old", r, k) in v) {
                    x = v["old", r, k] + 0; ov[++no] = x
                    if (omin == "" || x < omin) omin = x
                    if (omax == "" || x > omax) omax = x
                }
                if (("new", r, k) in v) {
                    y = v["new", r, k] + 0; nv[++nn] = y
                    if (nmin == "" || y < nmin) nmin = y
                    if (nmax == "" || y > nmax) nmax = y
                }
                if ((("old", r, k) in v) && (("new", r, k) in v) && x > 0 && y > 0) {
                    q = lower ? x / y : y / x; rv[++nr] = q
                    if (rmin == "" || q < rmin) rmin = q
                    if (rmax == "" || q > rmax) rmax = q
                }
            }
            if (no == 0 || nn == 0 || nr == 0) { printf "| %s | - | - | - | - | - | - | - | missing |\n", name; continue }
            ratio = median(rv, nr)
            spread = omax / omin; if (nmax / nmin > spread) spread = nmax / nmin
            verdict = "within spread"
            if (nr < 2) verdict = "- (one round)"
            else if (ratio < 1 / spread) { verdict = "**WORSE**"; nworse++; worse = worse "; " name }
            else if (ratio > spread) verdict = "better"
            printf "| %s | %s | %s | %.2f | %.2f..%.2f | %s..%s | %s..%s | %.2f | %s |\n", name,
                fmt(median(ov, no)), fmt(median(nv, nn)), ratio, rmin, rmax,
                fmt(omin), fmt(omax), fmt(nmin), fmt(nmax), spread, verdict
        }
        print ""
        print "ratio: the median over rounds of each round'"'"'s OLD/NEW (latency) or NEW/OLD (bandwidth); > 1 means NEW is better."
        print "spread: the larger of max/min of the OLD and of the NEW per-round values; **WORSE**: ratio < 1/spread, better: ratio > spread."
        if (rounds < 2) { print "\nOne round: no spread to judge the ratios by (use -r 2 or more)."; exit }
        printf "\n%d of %d measurements worse than the runs'"'"' own spread%s\n", nworse, n, nworse ? ":" substr(worse, 2) : "."
    }' "$T/values.txt"
} >"$T/report.md"
[ -s "$T/report.md" ] || die 1 "no report (the raw outputs did not parse)"
cat "$T/report.md"
if [ -n "$out" ]; then
    cp "$T/report.md" "$out" || die 1 "cannot write $out"
    echo "$me: report written to $out" >&2
fi
