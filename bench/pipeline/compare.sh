#!/bin/sh
# compare.sh: pipeline (nphase 2) against nettest's Chaos2 at the same block size, runs alternated, medians.
# usage: bench/pipeline/compare.sh BUILD_DIR [NNODE [BLOCK_K [RUNS [NBUF]]]]
# Chaos2 (Ptotal) counts the bytes between different nodes per second, so it is set against
# pipeline's "between nodes" aggregate; both in MB/s with MB = 10^6 bytes.
# PL_ARGS adds options to pipeline (e.g. PL_ARGS=--threads); CSNRUN_ARGS adds options to
# csnrun for both programs (e.g. CSNRUN_ARGS="--bind-to core"). With CSNRUN_ARGS, every
# run also measures Chaos2 without them, and the ratio is taken against the better of
# Chaos2's two medians (pipeline gets no placement Chaos2 is denied, nor the reverse).
# Each run also prints its own ratio (its better Chaos2 over its pipeline, measured back to
# back); the last line is their median, which a change of the machine's speed between runs
# moves less than the ratio of the medians.
set -eu
build=${1:?usage: compare.sh BUILD_DIR [NNODE [BLOCK_K [RUNS [NBUF]]]]}
nnode=${2:-4} block=${3:-64} runs=${4:-7} nbuf=${5:-400}
csnrun="$build/tools/csnrun/csnrun ${CSNRUN_ARGS:-}"
nt_args="-np $nnode $build/bench/nettest/nettest uK m$block M$block R1 T$nbuf Ptotal"
nt_cmd="$csnrun $nt_args"
nt0_cmd="$build/tools/csnrun/csnrun $nt_args"
pl_cmd="$csnrun -np $nnode $build/bench/pipeline/pipeline --nphase 2 --bufsize ${block}K --nbuf $nbuf ${PL_ARGS:-}"
echo "nettest : $nt_cmd"
[ -z "${CSNRUN_ARGS:-}" ] || echo "nettest0: $nt0_cmd"
echo "pipeline: $pl_cmd"
# Chaos2 is the 5th column of the table row of this size.
chaos2() { timeout 300 "$@" | awk -v s="$block" '$1 == s && NF == 7 { print $5; exit }'; }
median() { printf '%s\n' $1 | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
best() { printf '%s\n' $1 | sort -g | tail -1; }
ratio() { echo "$1 $2" | awk '{ if ($2 > 0) printf "%.2f", $1 / $2; else printf "nan" }'; }
larger() { echo "$1 $2" | awk '{ print ($1 > $2) ? $1 : $2 }'; }
nt_all= nt0_all= pl_all= pr_all=
i=0
while [ $i -lt "$runs" ]; do
    nt=$(chaos2 $nt_cmd)
    pl=$(timeout 300 $pl_cmd | sed -n 's/.*B), \([0-9.]*\) MB\/s between nodes.*/\1/p')
    line="run $i: Chaos2 $nt MB/s, pipeline $pl MB/s between nodes"
    nt_all="$nt_all $nt" pl_all="$pl_all $pl"
    if [ -n "${CSNRUN_ARGS:-}" ]; then
        nt0=$(chaos2 $nt0_cmd)
        line="$line, Chaos2 without CSNRUN_ARGS $nt0 MB/s"
        nt0_all="$nt0_all $nt0"
    fi
    # The run's own ratio: its programs ran back to back, in the same state of the machine.
    pr=$(ratio "$(larger "$nt" "${nt0:-0}")" "$pl")
    pr_all="$pr_all $pr"
    echo "$line, ratio $pr"
    i=$((i + 1))
done
nt_m=$(median "$nt_all") pl_m=$(median "$pl_all") nt_b=$(best "$nt_all") pl_b=$(best "$pl_all")
if [ -n "${CSNRUN_ARGS:-}" ]; then
    nt0_m=$(median "$nt0_all") nt0_b=$(best "$nt0_all")
    echo "Chaos2 without CSNRUN_ARGS: median $nt0_m MB/s, best $nt0_b MB/s"
    nt_m=$(larger "$nt_m" "$nt0_m") nt_b=$(larger "$nt_b" "$nt0_b")
fi
echo "median: Chaos2 $nt_m MB/s, pipeline $pl_m MB/s, ratio Chaos2/pipeline $(ratio "$nt_m" "$pl_m")"
echo "best:   Chaos2 $nt_b MB/s, pipeline $pl_b MB/s, ratio Chaos2/pipeline $(ratio "$nt_b" "$pl_b")"
echo "paired: median of the runs' own ratios $(median "$pr_all" | awk '{ printf "%.2f", $1 }')"
