#!/bin/sh
# small_rx_queue.sh CSNRUN PINGPONG: a provider receive queue too small for a fabric receive
# (FI_OFI_RXM_RX_SIZE=32: csn's own 32 posted receives fill it) fails the job with one line
# saying why and "peer lost" on both ranks, at once: no hang (the test's TIMEOUT is the hang
# check). Run through ofi/run.sh (CSN_TRANSPORT=ofi).
csnrun=$1 pingpong=$2
out=$(FI_OFI_RXM_RX_SIZE=32 "$csnrun" -np 2 "$pingpong" --sizes 256K --test lat --samples 1 --iters 20 2>&1)
rc=$?
echo "$out"
[ "$rc" -ne 0 ] || { echo "FAIL: the job succeeded (the queue was not too small?)"; exit 1; }
echo "$out" | grep -q "cannot post a fabric receive (no memory, or the provider's receive queue is full)" ||
    { echo "FAIL: no line saying why"; exit 1; }
[ "$(echo "$out" | grep -c 'peer lost')" -ge 2 ] || { echo "FAIL: not both ranks saw the peer lost"; exit 1; }
echo "PASS"
