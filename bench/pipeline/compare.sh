#!/bin/sh
# compare.sh: pipeline (nphase 2) against nettest's Chaos2 at the same block size, runs alternated, medians.
# usage: bench/pipeline/compare.sh BUILD_DIR [NNODE [BLOCK_K [RUNS [NBUF]]]]
# Chaos2 (Ptotal) counts the bytes between different nodes per second, so it is set against
# pipeline's "between nodes" aggregate; both in MB/s with MB = 10^6 bytes.
# PL_ARGS adds options to pipeline (e.g. PL_ARGS=--threads); CSNRUN_ARGS adds options to
# csnrun for both programs (e.g. CSNRUN_ARGS="--bind-to core").
set -eu
build=${1:?usage: compare.sh BUILD_DIR [NNODE [BLOCK_K [RUNS [NBUF]]]]}
nnode=${2:-4} block=${3:-64} runs=${4:-7} nbuf=${5:-400}
csnrun="$build/tools/csnrun/csnrun ${CSNRUN_ARGS:-}"
nt_cmd="$csnrun -np $nnode $build/bench/nettest/nettest uK m$block M$block R1 T$nbuf Ptotal"
pl_cmd="$csnrun -np $nnode $build/bench/pipeline/pipeline --nphase 2 --bufsize ${block}K --nbuf $nbuf ${PL_ARGS:-}"
echo "nettest : $nt_cmd"
echo "pipeline: $pl_cmd"
nt_all= pl_all=
i=0
while [ $i -lt "$runs" ]; do
    # Chaos2 is the 5th column of the table row of this size.
    nt=$(timeout 300 $nt_cmd | awk -v s="$block" '$1 == s && NF == 7 { print $5; exit }')
    pl=$(timeout 300 $pl_cmd | sed -n 's/.*B), \([0-9.]*\) MB\/s between nodes.*/\1/p')
    echo "run $i: Chaos2 $nt MB/s, pipeline $pl MB/s between nodes"
    nt_all="$nt_all $nt" pl_all="$pl_all $pl"
    i=$((i + 1))
done
median() { printf '%s\n' $1 | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
nt_m=$(median "$nt_all") pl_m=$(median "$pl_all")
echo "median: Chaos2 $nt_m MB/s, pipeline $pl_m MB/s, ratio Chaos2/pipeline $(echo "$nt_m $pl_m" | awk '{ printf "%.2f", $1 / $2 }')"
