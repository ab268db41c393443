#!/bin/bash
# bench/cma-batch.sh: the copy floor of both ways at once with one process_vm_readv per message
# (what csn and Open MPI both make) against one per several messages (what a layer pulling
# several announced messages at once could reach): cma-floor --test bibw --bind with --batch 1
# and --batch N, run alternately, medians of ROUNDS rounds and of the per-round ratios.
# usage: bench/cma-batch.sh [--build DIR] [--rounds R] [--batch N] [--sizes LIST]
# Takes /tmp/csn-bench.lock itself (do not wrap it in flock).
set -u
build=build rounds=5 batch=8 sizes=16K,32K,64K,128K,256K,512K,1M,4M,16M,64M
usage() { sed -n '2,7p' "$0" | sed 's/^# \{0,1\}//'; }
bad() { echo "cma-batch.sh: $*" >&2; exit 2; }
while [ $# -gt 0 ]; do
    case $1 in
    --build) [ $# -ge 2 ] || bad "--build needs a directory"; build=$2; shift ;;
    --rounds) [ $# -ge 2 ] || bad "--rounds needs a number"; rounds=$2; shift ;;
    --batch) [ $# -ge 2 ] || bad "--batch needs a number"; batch=$2; shift ;;
    --sizes) [ $# -ge 2 ] || bad "--sizes needs a list"; sizes=$2; shift ;;
    -h | --help) usage; exit 0 ;;
    *) bad "unknown argument '$1' (see --help)" ;;
    esac
    shift
done
case $rounds in '' | *[!0-9]* | 0) bad "--rounds takes a positive number, not '$rounds'" ;; esac
case $batch in '' | *[!0-9]*) bad "--batch takes a number from 2 to 64, not '$batch'" ;; esac
[ "$batch" -ge 2 ] && [ "$batch" -le 64 ] || bad "--batch takes a number from 2 to 64, not '$batch'"
floor=$build/bench/pingpong/cma-floor
[ -x "$floor" ] || bad "$floor not found (build first, or give --build)"
"$floor" --test bibw --sizes "$sizes" --samples 1 --iters 1 >/dev/null 2>&1 ||
    bad "cma-floor refused --sizes '$sizes' (or cannot pull here)"
T=$(mktemp -d /tmp/cma-batch.XXXXXX) || exit 1
trap 'rm -rf "$T"' EXIT
exec 9>/tmp/csn-bench.lock
flock 9
echo "# cma-batch.sh --rounds $rounds --batch $batch --sizes $sizes -- $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "# load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
for r in $(seq "$rounds"); do
    echo "round $r/$rounds ..." >&2
    for b in 1 "$batch"; do
        "$floor" --test bibw --bind --sizes "$sizes" --batch "$b" >"$T/b$b.$r.txt" ||
            { echo "cma-batch.sh: cma-floor --batch $b failed" >&2; exit 1; }
    done
done
echo "# both ways, MB/s (1e6 B/s): medians over the rounds; batched/single: median of per-round ratios"
awk -v rounds="$rounds" -v batch="$batch" '
function med(a, n,   i, j, t) {
    for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
FNR == 1 { split(FILENAME, p, "/"); f = p[length(p)]; split(f, q, "."); b = substr(q[1], 2); r = q[2] }
/^#/ || $1 == "size" { next }
{ v[b, r, $1] = $4; if (b == 1 && r == 1) order[++n] = $1 }
END {
    printf "%10s %12s %12s %14s\n", "size", "single", "batch" batch, "batched/single"
    for (i = 1; i <= n; i++) {
        s = order[i]
        for (r = 1; r <= rounds; r++) { a[r] = v[1, r, s]; c[r] = v[batch, r, s]; x[r] = c[r] / a[r] }
        printf "%10s %12.0f %12.0f %14.3f\n", s, med(a, rounds), med(c, rounds), med(x, rounds)
    }
}' "$T"/b*.txt
echo "# load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
