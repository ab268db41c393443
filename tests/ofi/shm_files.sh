#!/bin/bash
# shm_files.sh MODE CSNRUN NP PROG ARGS...: a job over FI_PROVIDER=shm leaves no file of its
# ranks in /dev/shm. libfabric's shm provider (1.17) keeps each endpoint's region there as
# PID:UID:INDEX (and PID:UID:INDEX_N for its mmap transfers); the check is by exact PID: each
# rank records its own ($$ of a shell that then execs the program), and after the job no
# /dev/shm/PID:* of those PIDs may remain. Other jobs' files are never looked at nor touched.
#   MODE run:   csnrun -np NP PROG ARGS... must exit 0.
#   MODE kill9: PROG ARGS... must print "streaming" once per rank and run until stopped
#               (test_mp forever); once its connections are at work (below) the second rank
#               gets SIGKILL, csnrun must exit non-zero.
# Run under tests/ofi/run.sh (CSN_TRANSPORT=ofi, FI_PROVIDER=shm, skip 77 without them).
set -u
mode=$1 csnrun=$2 np=$3
shift 3
case $mode in run | kill9) ;; *) echo "shm_files.sh: MODE is run or kill9, not '$mode'" >&2; exit 2 ;; esac
[ "${FI_PROVIDER:-}" = shm ] || { echo "shm_files.sh: needs FI_PROVIDER=shm" >&2; exit 2; }
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
pids=$tmp/pids out=$tmp/out
: >"$pids"
# Each rank appends its PID, then becomes the program (same PID).
set -- sh -c 'echo $$ >>"$0"; exec "$@"' "$pids" "$@"
fail=0
if [ "$mode" = run ]; then
    "$csnrun" -np "$np" "$@" >"$out" 2>&1
    rc=$?
    cat "$out"
    [ "$rc" -eq 0 ] || { echo "FAIL: the job exited $rc"; fail=1; }
else
    "$csnrun" -np "$np" "$@" >"$out" 2>&1 &
    launcher=$!
    for _ in $(seq 200); do
        [ "$(grep -c streaming "$out")" = "$np" ] && break
        sleep 0.1
    done
    if [ "$(grep -c streaming "$out")" != "$np" ]; then
        echo "FAIL: the ranks did not start streaming"
        cat "$out"
        kill "$launcher"
        wait "$launcher"
        exit 1
    fi
    # What a SIGKILL can leave depends on when it comes: a rank removes its region's name once
    # the peer has mapped it (the connection's first message). Kill once every connection is
    # at work: when no file of the ranks is left, or after 20 s (then the check below fails).
    for i in $(seq 200); do
        n=0
        while read -r p; do
            for f in /dev/shm/"$p":*; do [ -e "$f" ] && n=$((n + 1)); done
        done <"$pids"
        [ "$n" -eq 0 ] && break
        sleep 0.1
    done
    echo "files of the ranks while streaming: $n (after $i looks)"
    victim=$(sed -n 2p "$pids")
    echo "kill -9 of rank process $victim"
    kill -9 "$victim"
    wait "$launcher"
    rc=$?
    cat "$out"
    [ "$rc" -ne 0 ] || { echo "FAIL: csnrun exited 0 after a rank was killed"; fail=1; }
fi
n=$(wc -l <"$pids")
[ "$n" -eq "$np" ] || { echo "FAIL: $n of $np ranks recorded their PID"; fail=1; }
# The ranks are gone when csnrun returns; give their last exit paths a moment.
for _ in $(seq 20); do
    alive=0
    while read -r p; do kill -0 "$p" 2>/dev/null && alive=1; done <"$pids"
    [ "$alive" = 0 ] && break
    sleep 0.1
done
left=0
while read -r p; do
    case $p in '' | *[!0-9]*) echo "FAIL: bad PID line '$p'"; fail=1; continue ;; esac
    for f in /dev/shm/"$p":*; do
        [ -e "$f" ] || continue
        echo "FAIL: left behind: $f ($(stat -c %s "$f") bytes)"
        left=$((left + 1))
    done
done <"$pids"
[ "$left" -eq 0 ] || fail=1
echo "ranks $(tr '\n' ' ' <"$pids")- files of theirs left in /dev/shm: $left"
exit $fail
