#!/bin/bash
# tcp-vs-mpi.sh: csn over TCP against Open MPI's TCP BTL and iperf3: pingpong on loopback and across two netns hosts, nettest across four.
#
# usage: bench/tcp-vs-mpi.sh [--build DIR] [--rounds N] [--sizes LIST] [--parts LIST]
#   --build DIR    build directory (default: $BUILD, else ./build)
#   --rounds N     rounds (default 3); each round runs csn (CSN_TRANSPORT=tcp csnrun -np 2
#                  pingpong), Open MPI (mpirun.openmpi --mca btl tcp,self -np 2 pingpong-mpi)
#                  and iperf3 (1 and --streams streams, one way and --bidir), the order of
#                  csn and MPI flipping every round. Figures: medians over the rounds of each
#                  run's median; ratios: medians of the per-round ratios. The noise line:
#                  Open MPI against itself in adjacent rounds (the median factor between
#                  them); a goal missed by less is marked SIZE~.
#   --sizes LIST   pingpong sizes (default 8,1K,64K,1M,4M,64M)
#   --parts LIST   any of loop,netns,nettest,kernel (default loop,netns,nettest): loopback;
#                  two network namespaces joined by an unshaped veth bridge (and tcp-floor's
#                  figures for that path, without a library); nettest and nettest-mpi with
#                  4 ranks across four namespaces (needs root); kernel: what the kernel's
#                  options do to the floor of both paths (tcp-floor as it is, with
#                  --sockbuf KERNEL_SOCKBUF and with --zerocopy, alternating)
#   --streams N    iperf3's "several streams" (default 4)
# Environment: PP_ARGS (extra pingpong options, default "--samples 5"), NT_ARGS (nettest
#   parameters, default "uK m1 M1024 K32 R1 T20 Ptotal"), KEEP_DIR (keep the raw outputs
#   there), KERNEL_SOCKBUF (the kernel part's fixed socket buffers, default 4M), KERNEL_SECS
#   (the length of each of its runs, default 1 s), CSN_* pass through to csn. Run it under
#   flock /tmp/csn-bench.lock.
# Needs: csnrun, pingpong, pingpong-mpi (nettest, nettest-mpi) in DIR, mpirun.openmpi,
# iperf3, jq; ip (iproute2) and root for the namespace parts. Namespaces are named
# csntcp<pid>*, use 10.79.0.0/24, and are deleted on exit, whatever happens.
set -u

me=tcp-vs-mpi.sh
usage() {
    sed -n '4,28p' "$0" | sed 's/^# \{0,1\}//'
}
die() { echo "$me: $2" >&2; exit "$1"; }
# The median, the noise line and the goal misses of every awk program below.
AWK_RATIOS=$(cat "$(dirname "$0")/common/ratios.awk") || die 2 "bench/common/ratios.awk is missing"

build=${BUILD:-build} ROUNDS=3 SIZES=8,1K,64K,1M,4M,64M PARTS=loop,netns,nettest STREAMS=4
while [ $# -gt 0 ]; do
    case $1 in
    -h | --help) usage; exit 0 ;;
    --build) build=${2:?--build needs a directory}; shift 2 ;;
    --rounds) ROUNDS=${2:?--rounds needs a number}; shift 2 ;;
    --sizes) SIZES=${2:?--sizes needs a list}; shift 2 ;;
    --parts) PARTS=${2:?--parts needs a list}; shift 2 ;;
    --streams) STREAMS=${2:?--streams needs a number}; shift 2 ;;
    *) die 2 "unknown argument $1 (see --help)" ;;
    esac
done
case "$ROUNDS" in '' | *[!0-9]* | 0) die 2 "--rounds must be a positive integer, not '$ROUNDS'" ;; esac
case "$STREAMS" in '' | *[!0-9]* | 0 | 1) die 2 "--streams must be an integer from 2, not '$STREAMS'" ;; esac
for p in ${PARTS//,/ }; do
    case $p in loop | netns | nettest | kernel) ;; *) die 2 "--parts: unknown part '$p' (loop, netns, nettest, kernel)" ;; esac
done
has_part() { case ",$PARTS," in *",$1,"*) return 0 ;; esac; return 1; }
B=$(cd "$build" 2>/dev/null && pwd) || die 2 "no such build directory: $build"
PP_ARGS=${PP_ARGS:---samples 5}
NT_ARGS=${NT_ARGS:-uK m1 M1024 K32 R1 T20 Ptotal}
KERNEL_SOCKBUF=${KERNEL_SOCKBUF:-4M}
KERNEL_SECS=${KERNEL_SECS:-1}

CSNRUN=$B/tools/csnrun/csnrun
PP=$B/bench/pingpong/pingpong
PPMPI=$B/bench/pingpong/pingpong-mpi
NT=$B/bench/nettest/nettest
NTMPI=$B/bench/nettest/nettest-mpi
FLOOR=$B/bench/pingpong/tcp-floor
MPIRUN=$(command -v mpirun.openmpi || true)
for f in "$CSNRUN" "$PP" "$PPMPI" "$FLOOR"; do
    [ -x "$f" ] || die 2 "$f is not built"
done
[ -n "$MPIRUN" ] || die 2 "mpirun.openmpi not found (apt-get install openmpi-bin)"
command -v iperf3 >/dev/null || die 2 "iperf3 not found (apt-get install iperf3)"
command -v jq >/dev/null || die 2 "jq not found (apt-get install jq)"
if has_part netns || has_part nettest || has_part kernel; then
    [ "$(id -u)" = 0 ] || die 2 "the netns, nettest and kernel parts need root (or --parts loop)"
    command -v ip >/dev/null || die 2 "ip (iproute2) not found"
fi
if has_part nettest && { [ ! -x "$NT" ] || [ ! -x "$NTMPI" ]; }; then
    die 2 "$NT or $NTMPI is not built (or leave out the nettest part)"
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

P="csntcp$$"
NSUP=0 IPERF_PID=
if [ -n "${KEEP_DIR:-}" ]; then
    T=$KEEP_DIR
    mkdir -p "$T" || exit 2
    KEEP=1
else
    T=$(mktemp -d /tmp/tcp-vs-mpi.XXXXXX) || exit 2
    KEEP=0
fi
cleanup() {
    local ns pids
    [ -n "$IPERF_PID" ] && kill "$IPERF_PID" 2>/dev/null && wait "$IPERF_PID" 2>/dev/null
    IPERF_PID=
    if [ "$NSUP" = 1 ]; then
        for ns in ${P}sw ${P}h1 ${P}h2 ${P}h3 ${P}h4; do
            pids=$(ip netns pids "$ns" 2>/dev/null)
            [ -n "$pids" ] && kill -KILL $pids 2>/dev/null
        done
        for ns in ${P}sw ${P}h1 ${P}h2 ${P}h3 ${P}h4; do ip netns del "$ns" 2>/dev/null; done
        NSUP=0
    fi
    [ "$KEEP" = 1 ] || rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Runs one benchmark command with a time limit, up to TRIES times: run_tries TRIES OUT CMD...;
# on its last failure prints its output and stops. run: csn's runs and the tools', tried once.
# run_mpi: Open MPI's, tried up to 3 times: its launch across the namespaces fails now and
# then before any rank starts (ORTE: "does not know how to route a message to the specified
# daemon", 2 runs of this script in 4 on 2026-11-27); the output says how many were tried again.
RETRIES=0
run_tries() {
    local tries=$1 out=$2 i
    shift 2
    for ((i = 1; ; i++)); do
        timeout 900 "$@" >"$out" 2>"$out.err" && return 0
        [ "$i" -lt "$tries" ] || break
        RETRIES=$((RETRIES + 1))
        echo "$me: failed, trying again: $*" >&2
    done
    echo "$me: failed: $*" >&2
    tail -n 30 "$out" "$out.err" >&2
    exit 1
}
run() { run_tries 1 "$@"; }
run_mpi() { run_tries 3 "$@"; }

# iperf3 client: iperf OUT NSPREFIX ADDR STREAMS [--bidir]; writes MB/s (1e6 B/s, both
# directions summed for --bidir) to OUT.
iperf() {
    local out=$1 pre=$2 addr=$3 n=$4
    shift 4
    # shellcheck disable=SC2086
    run "$out.json" $pre iperf3 -c "$addr" -p 5279 -t 3 -O 1 -P "$n" -J "$@"
    jq '((.end.sum_received.bits_per_second // 0) + (.end.sum_received_bidir_reverse.bits_per_second // 0)) / 8e6' \
        "$out.json" >"$out.mbps" || die 1 "iperf3's JSON unreadable: $out.json"
}
iperf_server() { # iperf_server NSPREFIX ADDR
    # shellcheck disable=SC2086
    $1 iperf3 -s -B "$2" -p 5279 >"$T/iperf3s.$$.out" 2>&1 &
    IPERF_PID=$!
    sleep 0.5
}
iperf_stop() {
    [ -n "$IPERF_PID" ] && kill "$IPERF_PID" 2>/dev/null && wait "$IPERF_PID" 2>/dev/null
    IPERF_PID=
}

# One part of pingpong rounds: pp_rounds TAG CSN_CMD... -- MPI_CMD... ; iperf3 with the
# prefix and address in IPF_PRE, IPF_ADDR.
pp_rounds() {
    local tag=$1 r
    shift
    local -a csn=() mpi=()
    while [ "$1" != -- ]; do csn+=("$1"); shift; done
    shift
    mpi=("$@")
    for r in $(seq 1 "$ROUNDS"); do
        echo "$tag round $r/$ROUNDS ..." >&2
        if [ $((r % 2)) = 1 ]; then
            # shellcheck disable=SC2086
            run "$T/$tag.csn.$r.txt" "${csn[@]}" "$PP" --sizes "$SIZES" $PP_ARGS --json "$T/$tag.csn.$r.json"
            # shellcheck disable=SC2086
            run_mpi "$T/$tag.mpi.$r.txt" "${mpi[@]}" "$PPMPI" --sizes "$SIZES" $PP_ARGS --json "$T/$tag.mpi.$r.json"
        else
            # shellcheck disable=SC2086
            run_mpi "$T/$tag.mpi.$r.txt" "${mpi[@]}" "$PPMPI" --sizes "$SIZES" $PP_ARGS --json "$T/$tag.mpi.$r.json"
            # shellcheck disable=SC2086
            run "$T/$tag.csn.$r.txt" "${csn[@]}" "$PP" --sizes "$SIZES" $PP_ARGS --json "$T/$tag.csn.$r.json"
        fi
        iperf "$T/$tag.ip1.$r" "$IPF_PRE" "$IPF_ADDR" 1
        iperf "$T/$tag.ipn.$r" "$IPF_PRE" "$IPF_ADDR" "$STREAMS"
        iperf "$T/$tag.ip1b.$r" "$IPF_PRE" "$IPF_ADDR" 1 --bidir
        iperf "$T/$tag.ipnb.$r" "$IPF_PRE" "$IPF_ADDR" "$STREAMS" --bidir
    done
}

# The table of one pingpong part: pp_table TAG TITLE
pp_table() {
    local tag=$1
    echo "# $2"
    echo "# csn run: $(grep -m1 '^# pingpong' "$T/$tag.csn.1.txt" | sed 's/^# pingpong: //')"
    echo "# MPI run: $(grep -m1 '^# pingpong' "$T/$tag.mpi.1.txt" | sed 's/^# pingpong: //')"
    awk -v rounds="$ROUNDS" -v streams="$STREAMS" "$AWK_RATIOS"'
function val(line, key,    i, s) {
    i = index(line, "\"" key "\": {\"median\": ")
    if (i == 0) return ""
    s = substr(line, i + length(key) + 14)
    sub(/[,}].*/, "", s)
    return s + 0
}
function med(k, m, s,    r, n, a) {
    n = 0
    for (r = 1; r <= rounds; r++) if ((k, r, s, m) in v) a[++n] = v[k, r, s, m]
    return median(a, n)
}
function ratio(k1, m1, k2, m2, s,    r, n, a) {
    n = 0
    for (r = 1; r <= rounds; r++)
        if ((k1, r, s, m1) in v && (k2, r, s, m2) in v && v[k2, r, s, m2] > 0)
            a[++n] = v[k1, r, s, m1] / v[k2, r, s, m2]
    return median(a, n)
}
function f(x, fmt) { return x == "" ? "-" : sprintf(fmt, x) }
function g(x) { return x == "" ? "-" : sprintf(x < 100 ? "%.2f" : "%.0f", x) }
FNR == 1 { split(FILENAME, p, "/"); split(p[length(p)], q, "."); k = q[2]; r = q[3] }
k ~ /^ip/ { for (s in sz) v[k, r, s, "bw"] = $1 + 0; next }
{
    if (!match($0, /"size": [0-9]+/)) next
    s = substr($0, RSTART + 8, RLENGTH - 8) + 0
    if (k == "csn" && r == 1) { order[++nsizes] = s; sz[s] = 1 }
    x = val($0, "lat_us");    if (x != "") v[k, r, s, "lat"] = x
    x = val($0, "bw_MBps");   if (x != "") v[k, r, s, "bw"] = x
    x = val($0, "bibw_MBps"); if (x != "") v[k, r, s, "bibw"] = x
}
END {
    printf "# %d rounds: medians (latency us, MB/s = 1e6 B/s) and median per-round ratios; iperf3: 1 and %d streams, one way and --bidir (sum)\n", rounds, streams
    printf "%9s %8s %8s %6s | %7s %7s %6s %6s | %8s %8s %6s %6s\n", "size", "csn_lat", "mpi_lat", "c/m", \
        "csn_bw", "mpi_bw", "c/m", "c/ip1", "csn_bibw", "mpi_bibw", "c/m", "c/ip1b"
    for (i = 1; i <= nsizes; i++) {
        s = order[i]
        printf "%9d %8s %8s %6s | %7s %7s %6s %6s | %8s %8s %6s %6s\n", s,
            f(med("csn", "lat", s), "%.1f"), f(med("mpi", "lat", s), "%.1f"), f(ratio("csn", "lat", "mpi", "lat", s), "%.2f"),
            g(med("csn", "bw", s)), g(med("mpi", "bw", s)), f(ratio("csn", "bw", "mpi", "bw", s), "%.2f"),
            f(ratio("csn", "bw", "ip1", "bw", s), "%.2f"),
            g(med("csn", "bibw", s)), g(med("mpi", "bibw", s)), f(ratio("csn", "bibw", "mpi", "bibw", s), "%.2f"),
            f(ratio("csn", "bibw", "ip1b", "bw", s), "%.2f")
    }
    s = order[1]
    printf "# iperf3 MB/s: 1 stream %s, %d streams %s; --bidir: 1 stream %s, %d streams %s\n",
        f(med("ip1", "bw", s), "%.0f"), streams, f(med("ipn", "bw", s), "%.0f"),
        f(med("ip1b", "bw", s), "%.0f"), streams, f(med("ipnb", "bw", s), "%.0f")
    noise_line()
    for (i = 1; i <= nsizes; i++) {
        s = order[i]
        x = ratio("csn", "lat", "mpi", "lat", s)
        if (x != "") { nl++; if (x <= 1.0) okl++; else badl = badl miss(s, x, "lat", 1, 1.0) }
        if (s < 65536) continue
        x = ratio("csn", "bw", "mpi", "bw", s); y = ratio("csn", "bibw", "mpi", "bibw", s)
        if (x != "" && y != "") {
            nb++
            if (x >= 1.0 && y >= 1.0) okb++
            else badb = badb (x < 1.0 ? miss(s, x, "bw", 0, 1.0) "(bw)" : "") (y < 1.0 ? miss(s, y, "bibw", 0, 1.0) "(bibw)" : "")
        }
        x = ratio("csn", "bw", "ip1", "bw", s); y = ratio("csn", "bibw", "ip1b", "bw", s)
        if (x != "" && y != "") { ni++; if (x >= 0.9 && y >= 0.9) oki++; else badi = badi " " s }
    }
    printf "# goal latency csn/MPI <= 1.0: %d of %d sizes%s\n", okl, nl, badl == "" ? "" : " (not at" badl ")"
    printf "# goal bw and bibw from 64K csn/MPI >= 1.0: %d of %d sizes%s\n", okb, nb, badb == "" ? "" : " (not at" badb ")"
    printf "# goal bw and bibw from 64K csn/iperf3 (1 stream) >= 0.9: %d of %d sizes%s\n", oki, ni, badi == "" ? "" : " (not at" badi ")"
    if (tilde) printf "#   SIZE~: missed by less than the noise above\n"
}' "$T/$tag".csn.*.json "$T/$tag".mpi.*.json "$T/$tag".ip*.mbps
    echo
}

# Four hosts h1..h4 (10.79.0.1-4) on an unshaped bridge in ${P}sw.
netns_up() {
    local i
    NSUP=1
    ip netns add "${P}sw" || die 1 "ip netns add failed"
    ip -n "${P}sw" link set lo up && ip -n "${P}sw" link add br0 type bridge || die 1 "no bridge"
    for i in 1 2 3 4; do
        ip netns add "${P}h$i" &&
            ip link add veth0 netns "${P}h$i" type veth peer name "p$i" netns "${P}sw" &&
            ip -n "${P}sw" link set "p$i" master br0 &&
            ip -n "${P}h$i" addr add "10.79.0.$i/24" dev veth0 &&
            ip -n "${P}h$i" link set lo up && ip -n "${P}h$i" link set veth0 up &&
            ip -n "${P}sw" link set "p$i" up || die 1 "setting up host $i failed"
    done
    ip -n "${P}sw" link set br0 up || die 1 "bridge up failed"
    for i in 1 2; do echo "${P}h$i" >>"$T/hosts2"; done
    for i in 1 2 3 4; do echo "${P}h$i" >>"$T/hosts4"; done
    # Open MPI's launcher thinks it talks to a remote shell: one command line in a string.
    printf '#!/bin/sh\nns=$1; shift\nexec ip netns exec "$ns" sh -c "$*"\n' >"$T/nsrsh"
    chmod +x "$T/nsrsh"
}

echo "# $me --rounds $ROUNDS --sizes $SIZES --parts $PARTS --streams $STREAMS -- $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "# host: $(uname -srm), $(nproc) cores; csn $(git -C "$(dirname "$0")" describe --always --dirty 2>/dev/null || echo '?')"
echo "# load average at start: $(cut -d' ' -f1-3 /proc/loadavg) (other jobs on the machine add noise)"
env | grep '^CSN_' | sed 's/^/# env: /'
echo

if has_part loop; then
    IPF_PRE="" IPF_ADDR=127.0.0.1
    iperf_server "" 127.0.0.1
    pp_rounds loop env CSN_TRANSPORT=tcp "$CSNRUN" -np 2 -- "$MPIRUN" -np 2 --mca btl tcp,self
    iperf_stop
    echo "# load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
    pp_table loop "loopback, 2 ranks: csn CSN_TRANSPORT=tcp; Open MPI --mca btl tcp,self"
fi

if has_part netns || has_part nettest || has_part kernel; then
    netns_up
    # Open MPI across the namespaces: one orted per "host", each of which binds its first rank
    # to core 0 by default, so every rank would share one CPU and each message wait for the
    # other's time slice (the 4 ms at 8 B of the runs before this). The namespaces share the
    # machine's CPUs: no binding, as csnrun does by default.
    MPI_NS_ARGS="--mca plm_rsh_agent $T/nsrsh --mca routed direct --bind-to none"
fi
if has_part netns; then
    IPF_PRE="ip netns exec ${P}h1" IPF_ADDR=10.79.0.2
    iperf_server "ip netns exec ${P}h2" 10.79.0.2
    # shellcheck disable=SC2086
    pp_rounds netns ip netns exec "${P}h1" "$CSNRUN" --hostfile "$T/hosts2" --rsh "ip netns exec" -np 2 -- \
        ip netns exec "${P}h1" "$MPIRUN" $MPI_NS_ARGS --host "${P}h1,${P}h2" -np 2 --mca btl tcp,self
    iperf_stop
    echo "# load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
    pp_table netns "two netns hosts (veth through an unshaped bridge), one rank each: csn over TCP (pingpong names the kind within a host; between hosts it is TCP); Open MPI --mca btl tcp,self"
    # The path's floor without a library (bench/pingpong/tcp_floor.c): one way, both ways over
    # one connection (as csn carries a pair) and over two (as iperf3 --bidir).
    echo "tcp-floor across the two hosts ..." >&2
    run "$T/floor.netns.txt" "$FLOOR" --netns "${P}h2" "${P}h1" 10.79.0.2 "$ROUNDS" 1 64K 1M 4M 64M
    echo
    cat "$T/floor.netns.txt"
fi

# The kernel's options on the path's floor: tcp-floor as it is, with fixed socket buffers and
# with MSG_ZEROCOPY, one round of each in turn (issue 21: each kept in csn only if it helps).
kernel_floor() { # kernel_floor PATHNAME [--netns LNS CNS ADDR]
    local path=$1 r v
    shift
    for r in $(seq 1 "$ROUNDS"); do
        for v in plain sockbuf zerocopy; do
            echo "tcp-floor $path $v round $r/$ROUNDS ..." >&2
            local opt=()
            [ "$v" = sockbuf ] && opt=(--sockbuf "$KERNEL_SOCKBUF")
            [ "$v" = zerocopy ] && opt=(--zerocopy)
            run "$T/kf.$path.$v.$r.txt" "$FLOOR" "$@" "${opt[@]}" 1 "$KERNEL_SECS" 64K 1M 4M 64M
        done
    done
    awk -v path="$path" -v rounds="$ROUNDS" "$AWK_RATIOS"'
{
    split(FILENAME, p, "/"); split(p[length(p)], q, ".")
    kv = q[3]
    if ($0 ~ /^# MSG_ZEROCOPY/) { zs += $6; zc += $12; next }
    if ($0 ~ /^#/ || $1 !~ /^[0-9]+$/) next
    if (!($1 in seen)) { seen[$1] = 1; order[++n] = $1 }
    split($0, f, "|")
    for (m = 1; m <= 3; m++) { split(f[m + 1], x, " "); k = ++cnt[kv, $1, m]; val[kv, $1, m, k] = x[1] }
}
function med(kv, s, m,    k, a) { for (k = 1; k <= cnt[kv, s, m]; k++) a[k] = val[kv, s, m, k]; return median(a, cnt[kv, s, m]) }
END {
    split("one way|both ways, 1 conn|both ways, 2 conns", mn, "|")
    printf "%-9s %9s  %-19s %8s %10s %6s %9s %6s\n", "path", "size", "mode", "plain", "sockbuf", "x", "zerocopy", "x"
    for (i = 1; i <= n; i++)
        for (m = 1; m <= 3; m++) {
            s = order[i]; a = med("plain", s, m); b = med("sockbuf", s, m); c = med("zerocopy", s, m)
            printf "%-9s %9s  %-19s %8.0f %10.0f %6.2f %9.0f %6.2f\n", path, s, mn[m], a, b, (a > 0 ? b / a : 0), c, (a > 0 ? c / a : 0)
        }
    printf "# %s, MSG_ZEROCOPY: the kernel copied %d of the %d sends it reported done (one process of each run)\n", path, zc, zs
}' "$T"/kf."$path".*.txt
}

if has_part kernel; then
    echo "# kernel options on the floor without a library (tcp-floor): as it is, SO_SNDBUF/SO_RCVBUF $KERNEL_SOCKBUF, MSG_ZEROCOPY; $ROUNDS alternating rounds of $KERNEL_SECS s each, MB/s medians and ratios to as it is"
    kernel_floor loopback
    kernel_floor netns --netns "${P}h2" "${P}h1" 10.79.0.2
    echo
fi

if has_part nettest; then
    # Four "hosts" on this machine's CPUs, one rank each: neither library can see that the
    # ranks outnumber the CPUs, and each then spins as if it had a CPU of its own (Open MPI's
    # 1 KiB cells were 1 MB/s). Each is told, with its own setting for shared CPUs.
    echo "# nettest across 4 netns hosts (one rank each): $NT_ARGS; $ROUNDS rounds alternating, MB/s medians per cell"
    NT_CSN_ENV=() NT_MPI_ARGS=()
    if [ "$(nproc)" -lt 4 ]; then
        echo "# 4 ranks on $(nproc) CPUs: csn CSN_CPU_SHARE=4, Open MPI --mca mpi_yield_when_idle 1"
        NT_CSN_ENV=(env CSN_CPU_SHARE=4) NT_MPI_ARGS=(--mca mpi_yield_when_idle 1)
    fi
    for r in $(seq 1 "$ROUNDS"); do
        echo "nettest round $r/$ROUNDS ..." >&2
        # shellcheck disable=SC2086
        run "$T/nt.csn.$r.txt" ip netns exec "${P}h1" "${NT_CSN_ENV[@]}" "$CSNRUN" --hostfile "$T/hosts4" --rsh "ip netns exec" -np 4 "$NT" $NT_ARGS
        # shellcheck disable=SC2086
        run_mpi "$T/nt.mpi.$r.txt" ip netns exec "${P}h1" "$MPIRUN" $MPI_NS_ARGS "${NT_MPI_ARGS[@]}" \
            --host "${P}h1,${P}h2,${P}h3,${P}h4" -np 4 --mca btl tcp,self "$NTMPI" $NT_ARGS
    done
    echo "# load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
    awk -v rounds="$ROUNDS" "$AWK_RATIOS"'
function isnum(x) { return x ~ /^[0-9]+(\.[0-9]*)?([eE][-+]?[0-9]+)?$/ }
{
    split(FILENAME, p, "/"); split(p[length(p)], q, ".")
    k = q[2]; r = q[3]
    if (NF != 7) next
    for (c = 1; c <= 7; c++) if (!isnum($c)) next
    if (k == "csn" && r == 1) order[++n] = $1
    for (c = 2; c <= 7; c++) v[k, r, $1, c] = $c
}
function med(k, s, c,    r, m, a) { m = 0; for (r = 1; r <= rounds; r++) if ((k, r, s, c) in v) a[++m] = v[k, r, s, c]; return median(a, m) }
END {
    split("Star Star2 Chaos Chaos2 Ring Ring2", name, " ")
    printf "%8s", "size,K"
    for (c = 2; c <= 7; c++) printf " %17s", name[c - 1] " csn/MPI"
    print ""
    for (i = 1; i <= n; i++) {
        s = order[i]
        printf "%8s", s
        for (c = 2; c <= 7; c++) {
            a = med("csn", s, c); b = med("mpi", s, c)
            cell = (a == "" || b == "") ? "-" : sprintf("%.0f/%.0f=%.2fx", a, b, b > 0 ? a / b : 0)
            printf " %17s", cell
            if (a != "" && b != "") { cells++; if (b > 0 && a >= b) ok++ }
        }
        print ""
    }
    printf "# cells with csn >= MPI: %d of %d\n", ok, cells
}' "$T"/nt.csn.*.txt "$T"/nt.mpi.*.txt
fi
echo "# Open MPI runs tried again after a failed launch: $RETRIES"
