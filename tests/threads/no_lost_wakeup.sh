#!/bin/sh
# no_lost_wakeup.sh: threads sleeping in one process never miss their wake-up (threadtest with a 60 s nap must end within 45 s).
# usage: no_lost_wakeup.sh CSNRUN THREADTEST [ITERS]   (ITERS: per window size, default 300)
# A waiter that misses its wake-up sleeps until its nap ends (CSN_NAP_MS, 100 ms by default,
# which only slows a run down). Here the nap is 60 s, and the whole run, windows from 2 to 8
# threads per process sleeping and waking many thousand times (about 1 s; 37-42 s under
# ThreadSanitizer with 300 iterations, so sanitizer builds pass 100), must end within 45 s: a
# single lost wake-up fails it.
set -u
csnrun=${1:?usage: no_lost_wakeup.sh CSNRUN THREADTEST}
threadtest=${2:?usage: no_lost_wakeup.sh CSNRUN THREADTEST [ITERS]}
iters=${3:-300}
start=$(date +%s)
CSN_NAP_MS=60000 timeout 45 "$csnrun" -np 2 "$threadtest" --threads 2,4,8 --sizes 8,4096 \
    --time 0 --iters "$iters" --windows "$iters" >/dev/null
rc=$?
end=$(date +%s)
if [ $rc -eq 124 ]; then
    echo "no_lost_wakeup: threadtest did not end within 45 s: a waiter missed its wake-up" >&2
    exit 1
fi
if [ $rc -ne 0 ]; then
    echo "no_lost_wakeup: threadtest failed (exit $rc)" >&2
    exit 1
fi
echo "no_lost_wakeup: threadtest ended in $((end - start)) s"
