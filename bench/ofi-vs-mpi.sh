#!/bin/bash
# ofi-vs-mpi.sh: csn over libfabric (CSN_TRANSPORT=ofi) against csn's own transports and Open MPI over the same provider, on this host.
#
# usage: bench/ofi-vs-mpi.sh [--build DIR] [--rounds N] [--sizes LIST]
#   Per round, one after the other (the order rotates from round to round):
#     csn-ofi-tcp    CSN_TRANSPORT=ofi FI_PROVIDER=tcp  csnrun -np 2 pingpong (rendezvous
#                    payloads moved by the provider's own protocol, the default)
#     csn-ofi-tcp-stream  the same with CSN_OFI_RNDV=0 (payloads through the link's stream)
#     csn-tcp        CSN_TRANSPORT=tcp                  csnrun -np 2 pingpong
#     ompi-ofi-tcp   mpirun --mca pml cm --mca mtl ofi (provider tcp) pingpong-mpi
#     ompi-btl-tcp   mpirun --mca pml ob1 --mca btl tcp,self pingpong-mpi
#     csn-ofi-shm    CSN_TRANSPORT=ofi FI_PROVIDER=shm  (reference)
#     csn-shm        CSN_TRANSPORT=shm                  (reference)
#     ompi-ofi-shm   mpirun --mca pml cm --mca mtl ofi (provider shm) (reference)
#     fi-pingpong-tcp  the provider alone: libfabric's fi_pingpong (libfabric-bin), reliable
#                    datagrams, tagged, one process each side; latency only (its floor)
#   Latency (half round trip, us) and bandwidth (MB/s) per size: the median over rounds of
#   each run's median; the load average (1 min) before each round is printed beside. Then,
#   csn-ofi-tcp and csn-ofi-tcp-stream against ompi-ofi-tcp: the median of the per-round ratios.
#   Runs under flock /tmp/csn-bench.lock. Default: 5 rounds, sizes 8,1K,64K,1M.
# Environment: OFI_CONFIGS (space-separated subset of the names above), PP_ARGS (extra
#   pingpong options), KEEP_DIR (keep raw outputs there).
set -u
build=build rounds=5 sizes=8,1K,64K,1M
while [ $# -gt 0 ]; do
    case $1 in
    -h | --help) sed -n '4,22p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    --build) build=${2:?--build needs a directory}; shift 2 ;;
    --rounds) rounds=${2:?--rounds needs a number}; shift 2 ;;
    --sizes) sizes=${2:?--sizes needs a list}; shift 2 ;;
    *) echo "ofi-vs-mpi.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
    esac
done
case "$rounds" in '' | *[!0-9]* | 0) echo "ofi-vs-mpi.sh: --rounds must be a positive integer" >&2; exit 2 ;; esac
B=$(cd "$build" 2>/dev/null && pwd) || { echo "ofi-vs-mpi.sh: no such build directory: $build" >&2; exit 2; }
CSNRUN=$B/tools/csnrun/csnrun PP=$B/bench/pingpong/pingpong PPMPI=$B/bench/pingpong/pingpong-mpi
for f in "$CSNRUN" "$PP"; do [ -x "$f" ] || { echo "ofi-vs-mpi.sh: $f is not built" >&2; exit 2; }; done
[ -f "$B/src/csn/libcsn-ofi.so" ] || { echo "ofi-vs-mpi.sh: $B/src/csn/libcsn-ofi.so is not built (apt-get install libfabric-dev, rebuild)" >&2; exit 2; }
MPIRUN=$(command -v mpirun.openmpi || true)
configs=${OFI_CONFIGS:-"csn-ofi-tcp csn-ofi-tcp-stream csn-tcp ompi-ofi-tcp ompi-btl-tcp fi-pingpong-tcp csn-ofi-shm csn-shm ompi-ofi-shm"}
FIPP=$(command -v fi_pingpong || true)
if [ -z "$FIPP" ] && [[ " $configs " == *" fi-pingpong-tcp "* ]]; then
    echo "ofi-vs-mpi.sh: no fi_pingpong (apt-get install libfabric-bin): fi-pingpong-tcp is left out"
    configs=$(echo "$configs" | tr ' ' '\n' | grep -v '^fi-pingpong' | tr '\n' ' ')
fi
if [ -z "$MPIRUN" ] || [ ! -x "$PPMPI" ]; then
    echo "ofi-vs-mpi.sh: no mpirun.openmpi or pingpong-mpi: the Open MPI columns are left out"
    configs=$(echo "$configs" | tr ' ' '\n' | grep -v '^ompi-' | tr '\n' ' ')
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 CSN_LOOKUP_TIMEOUT=20
if [ -n "${KEEP_DIR:-}" ]; then T=$KEEP_DIR; mkdir -p "$T" || exit 2
else T=$(mktemp -d /tmp/ofi-vs-mpi.XXXXXX) || exit 2; trap 'rm -rf "$T"' EXIT; fi
trap 'exit 130' INT TERM
# The median of the space-separated numbers in a string ("-" for none), on ratios.awk's.
AWK_MED=$(cat "$(dirname "$0")/common/ratios.awk") || { echo "ofi-vs-mpi.sh: bench/common/ratios.awk is missing" >&2; exit 2; }
AWK_MED="$AWK_MED"'
function med(str,   a, m) { m = split(str, a, " "); return m ? median(a, m) : "-" }'
ppargs="--sizes $sizes --samples 5 --test lat,bw ${PP_ARGS:-}"

# fi_pingpong, one size at a time: a server and its client on this host, each transfer's
# half round trip printed as pingpong prints a size ("SIZE LAT LAT ITERS 0": no bandwidth).
fi_pingpong_sizes() {
    local s n it port=$((47000 + RANDOM % 500)) srv out
    for s in ${sizes//,/ }; do
        case $s in *[kK]) n=$((${s%?} * 1024)) ;; *[mM]) n=$((${s%?} * 1048576)) ;; *) n=$s ;; esac
        it=$((67108864 / (n > 0 ? n : 1))); [ "$it" -gt 20000 ] && it=20000; [ "$it" -lt 100 ] && it=100
        timeout 120 "$FIPP" -e rdm -p tcp -m tagged -B "$port" -I "$it" -S "$n" >/dev/null 2>&1 &
        srv=$!
        sleep 0.3
        out=$(timeout 120 "$FIPP" -e rdm -p tcp -m tagged -P "$port" -I "$it" -S "$n" 127.0.0.1 2>&1) || { wait "$srv"; echo "$out"; return 1; }
        wait "$srv"
        echo "$out" | awk -v n="$n" -v it="$it" '$1 ~ /^[0-9]/ && NF >= 8 { printf "%10d %10.2f %10.2f %9d %10d\n", n, $7, $7, it, 0 }'
        port=$((port + 1))
    done
}

run_one() { # run_one CONFIG OUTFILE
    local c=$1 o=$2
    case $c in
    csn-ofi-tcp) CSN_TRANSPORT=ofi FI_PROVIDER=tcp timeout 300 "$CSNRUN" -np 2 "$PP" $ppargs ;;
    csn-ofi-tcp-stream) CSN_OFI_RNDV=0 CSN_TRANSPORT=ofi FI_PROVIDER=tcp timeout 300 "$CSNRUN" -np 2 "$PP" $ppargs ;;
    csn-ofi-shm) CSN_TRANSPORT=ofi FI_PROVIDER=shm timeout 300 "$CSNRUN" -np 2 "$PP" $ppargs ;;
    csn-tcp) CSN_TRANSPORT=tcp timeout 300 "$CSNRUN" -np 2 "$PP" $ppargs ;;
    csn-shm) CSN_TRANSPORT=shm timeout 300 "$CSNRUN" -np 2 "$PP" $ppargs ;;
    ompi-ofi-tcp) timeout 300 "$MPIRUN" -np 2 --mca pml cm --mca mtl ofi --mca mtl_ofi_provider_include tcp \
                      -x FI_PROVIDER=tcp "$PPMPI" $ppargs ;;
    ompi-ofi-shm) timeout 300 "$MPIRUN" -np 2 --mca pml cm --mca mtl ofi --mca mtl_ofi_provider_include shm \
                      -x FI_PROVIDER=shm "$PPMPI" $ppargs ;;
    ompi-btl-tcp) timeout 300 "$MPIRUN" -np 2 --mca pml ob1 --mca btl tcp,self "$PPMPI" $ppargs ;;
    fi-pingpong-tcp) echo "# pingpong: fi_pingpong -e rdm -p tcp -m tagged (libfabric's own test)"; fi_pingpong_sizes ;;
    *) echo "unknown config $c"; return 2 ;;
    esac >"$o" 2>&1
}

exec 9>/tmp/csn-bench.lock
flock -w 3600 9 || { echo "ofi-vs-mpi.sh: /tmp/csn-bench.lock busy for an hour" >&2; exit 1; }
echo "# ofi-vs-mpi.sh: $rounds rounds, sizes $sizes, $(date -u +%FT%TZ), $(nproc) CPUs"
read -ra C <<<"$configs"
n=${#C[@]}
for r in $(seq 1 "$rounds"); do
    echo "round $r: load $(cut -d' ' -f1-3 /proc/loadavg)"
    for k in $(seq 0 $((n - 1))); do
        c=${C[$(((k + r - 1) % n))]}
        if ! run_one "$c" "$T/$c.$r"; then
            echo "  $c failed:"; tail -5 "$T/$c.$r" | sed 's/^/    /'
            continue
        fi
        grep -m1 '^# pingpong:' "$T/$c.$r" | sed "s/^/  $c: /"
    done
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| config | size | latency us (median of rounds) | bandwidth MB/s (median of rounds) | rounds |"
echo "|---|---|---|---|---|"
for c in "${C[@]}"; do
    cat "$T/$c".* 2>/dev/null | awk -v c="$c" "$AWK_MED"'
        /^ *[0-9]+ +[0-9.]+ +[0-9.]+ +[0-9]+ +[0-9.]+/ { s = $1; lat[s] = lat[s] " " $2; bw[s] = bw[s] " " $5; if (!(s in seen)) { seen[s] = 1; order[++ns] = s } }
        END { for (i = 1; i <= ns; i++) { s = order[i]; b = med(bw[s]); printf "| %s | %s | %.2f | %s | %d |\n", c, s, med(lat[s]), (b > 0 ? sprintf("%.1f", b) : "-"), split(lat[s], x, " ") } }'
done
[ -e "$T/ompi-ofi-tcp.1" ] || exit 0
for c in csn-ofi-tcp csn-ofi-tcp-stream; do
    [ -e "$T/$c.1" ] || continue
    echo
    echo "$c against Open MPI over the same provider (tcp), median of per-round ratios"
    echo "(latency: csn/MPI, at most 1.2 asked at 8 B; bandwidth: csn/MPI, at least 1.0 asked from 64 KiB):"
    echo
    echo "| size | latency csn/MPI | bandwidth csn/MPI | rounds |"
    echo "|---|---|---|---|"
    for r in $(seq 1 "$rounds"); do
        [ -e "$T/$c.$r" ] && [ -e "$T/ompi-ofi-tcp.$r" ] || continue
        awk 'FNR == 1 { f++ }
            /^ *[0-9]+ +[0-9.]+ +[0-9.]+ +[0-9]+ +[0-9.]+/ { if (f == 1) { l[$1] = $2; b[$1] = $5 } else if ($1 in l && $2 > 0 && b[$1] > 0 && $5 > 0) print $1, l[$1] / $2, b[$1] / $5 }' \
            "$T/$c.$r" "$T/ompi-ofi-tcp.$r"
    done | awk "$AWK_MED"'{ if (!($1 in seen)) { seen[$1] = 1; order[++ns] = $1 } lat[$1] = lat[$1] " " $2; bw[$1] = bw[$1] " " $3 }
        END { for (i = 1; i <= ns; i++) { s = order[i]; printf "| %s | %.2f | %.2f | %d |\n", s, med(lat[s]), med(bw[s]), split(lat[s], x, " ") } }'
done
