#!/bin/sh
# bench/cma-batch.sh, short: two rounds at two sizes (the table's rows and ratios), and the
# argument errors; cma-floor's --batch checked against single pulls by the same bytes moved.
# usage: cma_batch.sh SCRIPT BUILD_DIR
script=$1 build=$2
. "$(dirname "$0")/common.sh"
for args in "--batch 1" "--batch 65" "--batch x" "--rounds 0" "--rounds" "--build /nonexistent" \
    "--sizes 1Q" "--bogus"; do
    # shellcheck disable=SC2086
    refused "$script" --build "$build" $args
done
floor=$build/bench/pingpong/cma-floor
for args in "--batch 0" "--batch 65" "--batch 2x" "--batch"; do
    # shellcheck disable=SC2086
    refused "$floor" --test bibw --sizes 4K $args
done
# A pull that cannot be made here (no ptrace permission between the two processes) is a skip.
"$floor" --test bibw --sizes 4K --samples 1 --iters 1 >/dev/null 2>&1 || exit 77
# Batched pulls of messages not a multiple of the page, window smaller than a batch: every byte
# still lands (cma-floor fails on a short or failed pull).
got=$("$floor" --test bw,bibw --sizes 5000,70000 --window 3 --batch 8 --samples 1 --iters 2) ||
    fail "cma-floor --batch failed"
echo "$got" | grep -q '8 messages per call' || fail "cma-floor --batch: no header"
# A reader gone (SIGPIPE in the first process): the second does not spin on, orphaned.
"$floor" --test bibw --sizes 4K,64K,1M --batch 2 --samples 3 2>/dev/null | head -c 1 >/dev/null
sleep 1
pgrep -f "^$floor --test bibw --sizes 4K,64K,1M --batch 2" >/dev/null && {
    pkill -9 -f "^$floor --test bibw --sizes 4K,64K,1M --batch 2"
    fail "cma-floor's second process outlived the first"
}
out=$("$script" --build "$build" --rounds 2 --batch 4 --sizes 4K,64K 2>&1) || { echo "$out"; fail "the run failed"; }
echo "$out"
for s in 4096 65536; do
    echo "$out" | grep -qE "^ +$s +[0-9]+ +[0-9]+ +[0-9.]+$" || fail "no row for $s"
done
echo "$out" | grep -q '^ *size *single *batch4 batched/single$' || fail "no header row"
