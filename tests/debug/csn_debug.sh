#!/bin/sh
# csn_debug.sh CSNRUN HELLO: CSN_DEBUG's trace (docs/api.md "CSN_DEBUG"): the lines of each
# level appear (open: transports, protocols, waiting; 2: the transport of each peer; 3: the
# protocol of each message, eager or rendezvous by size), none without it, and a bad value
# gives one line naming the variable and what it accepts.
set -u
CSNRUN=$1 HELLO=$2 PINGPONG=${3:-}
T=$(mktemp -d "${TMPDIR:-/tmp}/csn-debug-XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
fail() { echo "csn_debug: FAIL: $*" >&2; echo "--- stderr:" >&2; cat "$T/err" >&2; exit 1; }
run() { # run ENV... : hello on 2 ranks, stderr in $T/err
    env "$@" timeout 60 "$CSNRUN" -np 2 "$HELLO" >"$T/out" 2>"$T/err"
}
has() { grep -q -- "$1" "$T/err" || fail "no line matching '$1'"; }
hasnt() { ! grep -q -- "$1" "$T/err" || fail "a line matching '$1' (should not be there)"; }

run CSN_DEBUG= || fail "hello without CSN_DEBUG failed"
hasnt '^csn\['

run CSN_DEBUG=1 || fail "hello with CSN_DEBUG=1 failed"
for r in 0 1; do
    has "^csn\[$r pid [0-9]*\]: CSN_DEBUG=1: rank $r of 2 on host"
    has "^csn\[$r pid [0-9]*\]: transports: within this host shm; between hosts none"
    has "^csn\[$r pid [0-9]*\]: protocols: eager up to 4096 bytes over shm (a blocking transmit up to 4096, and up to 16384 where that costs less than a rendezvous, as timed)"
    has "^csn\[$r pid [0-9]*\]: waiting: "
done
hasnt 'peer rank'
hasnt 'tx to rank'
has "^csn\[0 pid [0-9]*\]: waiting: .*naps up to 100 ms$"
# The default nap grows with the ranks per CPU beyond 50 (2 ms each, at most 2 s), so that the
# idle ranks' looks stay about 1000 wake-ups per CPU a second; CSN_NAP_MS still rules.
ncpu=$(nproc)
per=$((1024 / ncpu))
if [ "$per" -le 50 ]; then nap=100; elif [ "$per" -ge 1000 ]; then nap=2000; else nap=$((2 * per)); fi
run CSN_DEBUG=1 CSN_CPU_SHARE=1024 || fail "hello with CSN_CPU_SHARE=1024 failed"
has "^csn\[0 pid [0-9]*\]: waiting: .*1024 ranks share our $ncpu CPUs.*naps up to $nap ms$"
# A rendezvous over shm is pulled (one copy); more ranks than CPUs: eager up to 64 KiB, split
# copies from 8 MiB; else eager up to 4 KiB, split from 32 KiB. CSN_SHM_PULL_MAX: streamed.
has "^csn\[0 pid [0-9]*\]: protocols: eager up to 65536 bytes over shm.*the receiver pulls with process_vm_readv from 0 bytes, up to 16 at a time in one call (CSN_SHM_PULL_BATCH)); split copies (both sides copy) from 8388608 bytes"
# The shm doorbells: membarrier instead of the sender's fence up to 4 ranks a CPU (nettest's 4
# on 2 CPUs too), fences beyond.
hasnt "shm doorbells: a sender leaves out"
has "^csn\[0 pid [0-9]*\]: shm doorbells: a fence on both sides"
run CSN_DEBUG=1 CSN_CPU_SHARE=$((4 * ncpu)) || fail "hello with CSN_CPU_SHARE=$((4 * ncpu)) failed"
has "^csn\[0 pid [0-9]*\]: shm doorbells: a sender leaves out its fence"
run CSN_DEBUG=1 CSN_CPU_SHARE=$((4 * ncpu)) CSN_SHM_MEMBARRIER=0 || fail "hello with CSN_SHM_MEMBARRIER=0 failed"
has "^csn\[0 pid [0-9]*\]: shm doorbells: a fence on both sides"
run CSN_DEBUG=1 CSN_CPU_SHARE=1 || fail "hello with CSN_CPU_SHARE=1 failed"
has "^csn\[0 pid [0-9]*\]: protocols: eager up to 4096 bytes over shm.*the receiver pulls with process_vm_readv from 0 bytes, up to 16 at a time in one call (CSN_SHM_PULL_BATCH)); split copies (both sides copy) from 32768 bytes"
# Pulls found one after the other copied in one call, up to CSN_SHM_PULL_BATCH (1: one each).
run CSN_DEBUG=1 CSN_SHM_PULL_BATCH=1 || fail "hello with CSN_SHM_PULL_BATCH=1 failed"
has "^csn\[0 pid [0-9]*\]: protocols: .*pulls with process_vm_readv from 0 bytes); split"
run CSN_DEBUG=1 CSN_SHM_PULL_BATCH=17 && fail "CSN_SHM_PULL_BATCH=17 was taken"
has "CSN_SHM_PULL_BATCH=17: expected an integer from 1 to 16"
run CSN_DEBUG=1 CSN_SHM_PULL_MAX=0 || fail "hello with CSN_SHM_PULL_MAX=0 failed"
has "^csn\[0 pid [0-9]*\]: protocols: .*(shm: streamed through the ring)"
run CSN_DEBUG=1 CSN_SHM_PULL_MAX=1M || fail "hello with CSN_SHM_PULL_MAX=1M failed"
has "^csn\[0 pid [0-9]*\]: protocols: .*pulls with process_vm_readv from 0 bytes, streamed through the ring from 1048576"
run CSN_DEBUG=1 CSN_CPU_SHARE=1024 CSN_NAP_MS=7 || fail "hello with CSN_NAP_MS=7 failed"
has "^csn\[0 pid [0-9]*\]: waiting: .*naps up to 7 ms$"
# Biased locks: on by default where the kernel has the barrier, off with CSN_LOCK_BIAS=0.
has "^csn\[0 pid [0-9]*\]: locks: "
run CSN_DEBUG=1 CSN_LOCK_BIAS=0 || fail "hello with CSN_LOCK_BIAS=0 failed"
has "^csn\[0 pid [0-9]*\]: locks: plain spin locks"
run CSN_DEBUG=1 CSN_LOCK_BIAS=2 && fail "CSN_LOCK_BIAS=2 was taken"
has "CSN_LOCK_BIAS=2: expected an integer from 0 to 1"
# A pair's rings mapped whole up to 64 ranks on the host, else page by page; the barrier of a
# one-host job over shm through a counter, else over messages.
run CSN_DEBUG=1 || fail "hello with CSN_DEBUG=1 failed"
has "^csn\[0 pid [0-9]*\]: shm: rings of 262144 bytes (records kept to the first [0-9]* while the receiver keeps up, to the first [0-9]* while it follows a one-way stream) in /dev/shm over unix connections, mapped whole"
has "^csn\[0 pid [0-9]*\]: barrier: a counter in shared memory"
run CSN_DEBUG=1 CSN_SHM_POPULATE=0 CSN_HOST_BARRIER=0 || fail "hello with CSN_SHM_POPULATE=0 failed"
has "^csn\[0 pid [0-9]*\]: shm: .*mapped page by page"
has "^csn\[0 pid [0-9]*\]: barrier: messages"
# Records kept to the ring's first CSN_SHM_COMPACT bytes (at least 4 KiB; 0: the whole ring).
run CSN_DEBUG=1 CSN_SHM_COMPACT=16K || fail "hello with CSN_SHM_COMPACT=16K failed"
has "^csn\[0 pid [0-9]*\]: shm: .*(records kept to the first 16384 while the receiver keeps up, to the first 65536 while"
run CSN_DEBUG=1 CSN_SHM_COMPACT=100 || fail "hello with CSN_SHM_COMPACT=100 failed"
has "^csn\[0 pid [0-9]*\]: shm: .*(records kept to the first 4096 while"
run CSN_DEBUG=1 CSN_SHM_COMPACT=0 || fail "hello with CSN_SHM_COMPACT=0 failed"
has "^csn\[0 pid [0-9]*\]: shm: .*(records kept to the first 262144 while the receiver keeps up, to the first 262144 while"
run CSN_DEBUG=1 CSN_SHM_COMPACT=8Q && fail "CSN_SHM_COMPACT=8Q was taken"
has "CSN_SHM_COMPACT=8Q"
run CSN_DEBUG=1 CSN_SHM_POPULATE=2 && fail "CSN_SHM_POPULATE=2 was taken"
has "CSN_SHM_POPULATE=2: expected an integer from 0 to 1"

run CSN_DEBUG=2 CSN_TRANSPORT=unix || fail "hello with CSN_DEBUG=2 failed"
has '^csn\[1 pid [0-9]*\]: peer rank 0: unix$'
hasnt 'tx to rank'

run CSN_DEBUG=3 || fail "hello with CSN_DEBUG=3 failed"
has '^csn\[1 pid [0-9]*\]: peer rank 0: shm$'
has '^csn\[1 pid [0-9]*\]: tx to rank 0 transport 2: 12 bytes over shm: eager'
# A blocking transmit (hello's are) eager up to CSN_SHM_EAGER_BLOCKING where that is above
# CSN_SHM_EAGER; a non-blocking one up to CSN_SHM_EAGER.
run CSN_DEBUG=3 CSN_SHM_EAGER_BLOCKING=16K || fail "hello with CSN_SHM_EAGER_BLOCKING=16K failed"
has '^csn\[0 pid [0-9]*\]: protocols: eager up to 4096 bytes over shm (a blocking transmit up to 16384, and up to 16384 where that costs less than a rendezvous, as timed)'
# Above that, up to CSN_SHM_EAGER_NEAR (16 KiB; off where CSN_SHM_EAGER is set), eager or a
# rendezvous, whichever costs less as timed.
run CSN_DEBUG=1 CSN_SHM_EAGER=4K || fail "hello with CSN_SHM_EAGER=4K failed"
has '^csn\[0 pid [0-9]*\]: protocols: eager up to 4096 bytes over shm (a blocking transmit up to 4096, and up to 4096 where'
run CSN_DEBUG=3 CSN_SHM_EAGER=4 CSN_SHM_EAGER_NEAR=16 || fail "hello with CSN_SHM_EAGER_NEAR=16 failed"
has 'tx to rank 0 transport 2: 12 bytes over shm: eager or a rendezvous the receiver pulls, whichever'
run CSN_DEBUG=1 CSN_SHM_EAGER_NEAR=2M && fail "CSN_SHM_EAGER_NEAR=2M was taken"
has "CSN_SHM_EAGER_NEAR=2M"
run CSN_DEBUG=3 CSN_SHM_EAGER=8 CSN_SHM_EAGER_BLOCKING=16 ||
    fail "hello with CSN_SHM_EAGER_BLOCKING=16 failed"
has 'tx to rank 0 transport 2: 12 bytes over shm: eager'
run CSN_DEBUG=1 CSN_SHM_EAGER_BLOCKING=2M && fail "CSN_SHM_EAGER_BLOCKING=2M was taken"
has "CSN_SHM_EAGER_BLOCKING=2M"
# Above the eager limit: a rendezvous, pulled by the receiver, or split.
run CSN_DEBUG=3 CSN_SHM_EAGER=4 || fail "hello with CSN_SHM_EAGER=4 failed"
has 'tx to rank 0 transport 2: 12 bytes over shm: rendezvous'
run CSN_DEBUG=3 CSN_SHM_EAGER=4 CSN_SHM_PULL=1 CSN_SHM_SPLIT=8 ||
    fail "hello with CSN_SHM_SPLIT=8 failed"
has 'tx to rank 0 transport 2: 12 bytes over shm: rendezvous, split copy'
run CSN_DEBUG=3 CSN_SHM_EAGER=4 CSN_SHM_PULL=8 || fail "hello with CSN_SHM_PULL=8 failed"
has 'tx to rank 0 transport 2: 12 bytes over shm: rendezvous, the receiver pulls it'
has '^csn\[0 pid [0-9]*\]: protocols: .*the receiver pulls with process_vm_readv from 8 bytes'
run CSN_DEBUG=3 CSN_SHM_EAGER=4 CSN_SHM_PULL=1K ||
    fail "hello with CSN_SHM_PULL=1K failed"
has 'tx to rank 0 transport 2: 12 bytes over shm: rendezvous, streamed through the ring'
run CSN_DEBUG=3 CSN_SHM_EAGER=4 CSN_CMA=0 CSN_SHM_PULL=1 || fail "hello with CSN_CMA=0 failed"
has 'tx to rank 0 transport 2: 12 bytes over shm: rendezvous, streamed through the ring'
grep -q "Hello world" "$T/out" || fail "the message did not arrive"
# Byte counts take the benchmarks' K, M, G (binary, either case, optional i and B).
run CSN_DEBUG=1 CSN_SHM_EAGER=2k CSN_SHM_RING=1MiB || fail "hello with CSN_SHM_EAGER=2k failed"
has '^csn\[0 pid [0-9]*\]: protocols: eager up to 2048 bytes over shm'
run CSN_SHM_RING=1X && fail "CSN_SHM_RING=1X was accepted"
has '^csn: CSN_SHM_RING=1X: expected a number of bytes from 4096 to 1099511627776 (K, M, G: times 2^10, 2^20, 2^30)$'

for bad in abc 4 -1 1x; do
    run CSN_DEBUG=$bad && fail "CSN_DEBUG=$bad was accepted"
    n=$(grep -c "^csn: CSN_DEBUG=$bad: expected an integer from 0 to 3$" "$T/err")
    [ "$n" -ge 1 ] || fail "CSN_DEBUG=$bad: no line naming the variable"
    # One such line per rank (each process reads it once), nothing else from the library.
    [ "$(grep -c '^csn[:[]' "$T/err")" = "$n" ] || fail "CSN_DEBUG=$bad: more than the one line per rank"
done
# A program that asks for its rank and the job's size before csn_open (as the benchmarks do)
# still gets the line once per rank: a refused environment is not read again.
if [ -n "$PINGPONG" ]; then
    env CSN_TRANSPORT=bogus timeout 60 "$CSNRUN" -np 2 "$PINGPONG" >"$T/out" 2>"$T/err" &&
        fail "CSN_TRANSPORT=bogus was accepted"
    n=$(grep -c "^csn: CSN_TRANSPORT=bogus: expected shm, unix, tcp or ofi$" "$T/err")
    [ "$n" = 2 ] || fail "CSN_TRANSPORT=bogus: $n lines naming the variable for 2 ranks (want 2)"
fi
echo "csn_debug: the trace's levels 1-3 and bad values checked"
