#!/bin/sh
# die_case.sh: a pipeline process killed mid-run ends the job: csnrun exits non-zero, in time,
# leaving no process and no /dev/shm file of the job.
# usage: die_case.sh CSNRUN PIPELINE NNODE NPHASE sender|rank|phase|child|stop
#   sender: --die-after makes a sender SIGKILL itself; rank: the test SIGKILLs one node process;
#   phase: one phase process; child: one sender or receiver (from outside);
#   stop: the test SIGSTOPs one sender or receiver, so only --timeout can end the wait.
set -u
csnrun=$1 pipeline=$2 nnode=$3 nphase=$4 mode=$5
[ -x "$csnrun" ] || { echo "csnrun not built: skip"; exit 77; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/pltest.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; echo "--- stdout"; cat "$tmp/out.txt"; echo "--- stderr"; cat "$tmp/err.txt"; exit 1; }

# Processes of this job: every one carries $tmp in its command line (the --sink argument).
ours() {
    for d in /proc/[0-9]*; do
        case $({ tr '\0' ' ' <"$d/cmdline"; } 2>/dev/null) in
        "$pipeline "*"$tmp/dst"*) echo "${d#/proc/}" ;;
        esac
    done
}

# A small csn backlog keeps the phases close together, so that no wait outlasts the short
# --timeout of the stop case while the job is still making progress.
CSN_UNEXPECTED_LIMIT=1048576
export CSN_UNEXPECTED_LIMIT
extra= limit=20
[ "$mode" = sender ] && extra="--die-after 20"
[ "$mode" = stop ] && limit=2
# Enough buffers that the run is still going when the kill comes.
t0=$(date +%s)
timeout -k 5 60 "$csnrun" -np "$nnode" "$pipeline" --nphase "$nphase" --nbuf 1000000 \
    --bufsize 4K --sink "$tmp/dst" --timeout $limit $extra >"$tmp/out.txt" 2>"$tmp/err.txt" &
job=$!
ppid() { { sed -n 's/^PPid:[[:space:]]*//p' "/proc/$1/status"; } 2>/dev/null; }
if [ "$mode" != sender ]; then
    # Wait until the run started (the header is printed), then pick the victim: for
    # "rank" the one of ours whose parent is not ours (a node process), for "phase" one
    # whose parent is a node process, for "stop" and "child" one whose grandparent is
    # ours (a sender or receiver).
    i=0
    while ! grep -q "^  job " "$tmp/out.txt" && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
    sleep 0.5
    all=" $(echo $(ours)) "
    victim=
    for p in $all; do
        pp=$(ppid "$p")
        case "$all" in *" $pp "*) ours_parent=1 ;; *) ours_parent=0 ;; esac
        if [ "$mode" = rank ] && [ $ours_parent = 0 ]; then victim=$p; break; fi
        if [ "$mode" = phase ] && [ $ours_parent = 1 ]; then
            case "$all" in *" $(ppid "$pp") "*) ;; *) victim=$p; break ;; esac
        fi
        if { [ "$mode" = stop ] || [ "$mode" = child ]; } && [ $ours_parent = 1 ]; then
            case "$all" in *" $(ppid "$pp") "*) victim=$p; break ;; esac
        fi
    done
    [ -n "$victim" ] || fail "no $mode victim found"
    if [ "$mode" = stop ]; then kill -STOP "$victim"; else kill -KILL "$victim"; fi
fi
wait $job
rc=$?
[ $rc -ne 0 ] || fail "csnrun exited 0 after a kill"
[ $(($(date +%s) - t0)) -lt 55 ] || fail "csnrun hung (ended by timeout, rc $rc)"
i=0
while [ -n "$(ours)" ] && [ $i -lt 30 ]; do sleep 0.1; i=$((i + 1)); done
[ -z "$(ours)" ] || fail "processes left behind: $(ours)"
jobid=$(sed -n 's/^  job \([^:]*\):.*/\1/p' "$tmp/out.txt")
[ -n "$jobid" ] && [ "$jobid" != "-" ] || fail "no job id in the header"
ls /dev/shm/csn."$jobid".* >/dev/null 2>&1 && fail "left in /dev/shm: $(ls /dev/shm/csn."$jobid".*)"
if [ "$mode" = stop ]; then
    grep -q "within 2 s\|after 2 s" "$tmp/err.txt" || fail "no timeout message"
fi
echo "ok: $mode: the run ended with status $rc, nothing left"
