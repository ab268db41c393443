#!/bin/bash
# fault.sh BUILD [SEED] [RUNS]: the fault suite (issue 16): kill -9 of a random rank at a random
# moment, RUNS (default 5) runs each of nettest, pipeline, filter and threadtest, then deaths of
# the launcher (csnrun), of the node agent, of csnrun together with its agent, and of the
# guardian then the agent (2 runs each). Seeded (default 16): the same seed picks the same
# victims and moments. After each run: csnrun must end within HANG_S of the kill (else a hang),
# and no process of the job (by CSN_JOBID in its environment, plus the agent and guardian), no
# /tmp/csn-<jobid>-* directory (after one more csnrun, whose start removes the directories of
# dead creators) and no /dev/shm file naming the job may remain (else a leftover).
# Prints "fault suite: R runs, H hangs, L leftovers, M missed" (missed: the job ended before
# the kill); exits 1 unless H and L are 0.
set -u
build=$1
seed=${2:-16}
runs=${3:-5}
HANG_S=20
csnrun=$build/tools/csnrun/csnrun
T=$(mktemp -d "${TMPDIR:-/tmp}/fault.XXXXXX")
trap 'rm -rf "$T"' EXIT
mapfile -t RND < <(awk -v s="$seed" 'BEGIN { srand(s); for (i = 0; i < 1000; i++) print rand() }')
ri=0
rnd() { # rnd N: RV = the next integer in [0, N)
    RV=$(awk -v r="${RND[$ri]}" -v n="$1" 'BEGIN { printf "%d", r * n }')
    ri=$((ri + 1))
}

nruns=0 hangs=0 leftovers=0 missed=0 bad=0
now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }'; }

# The local agent of csnrun $1, its guardian and its ranks (children that are not agents).
agent_of() { pgrep -P "$1" -f -- "--agent" | head -1; }
ranks_of() {
    local p
    for p in $(pgrep -P "$1"); do
        grep -q -a -- "--agent" "/proc/$p/cmdline" 2>/dev/null || echo "$p"
    done
}
guard_of() {
    local p
    for p in $(pgrep -P "$1"); do
        grep -q -a -- "--agent" "/proc/$p/cmdline" 2>/dev/null && echo "$p"
    done | head -1
}

# check_clean JOBID PIDS...: nothing of the job after at most 6 s; counts a leftover otherwise.
check_clean() {
    local jobid=$1 i left dirs shm p
    shift
    for i in $(seq 60); do
        left=""
        for p in "$@"; do
            [ -n "$p" ] && kill -0 "$p" 2>/dev/null &&
                ! grep -q '^State:.*Z' "/proc/$p/status" 2>/dev/null && left="$left $p"
        done
        left="$left $(grep -l -a "CSN_JOBID=$jobid" /proc/[0-9]*/environ 2>/dev/null |
            sed 's|/proc/\([0-9]*\)/environ|\1|' | while read -r q; do
                grep -q '^State:.*Z' "/proc/$q/status" 2>/dev/null || echo "$q"; done | tr '\n' ' ')"
        dirs=$(ls -d /tmp/csn-"$jobid"-* 2>/dev/null | tr '\n' ' ')
        shm=$(ls /dev/shm 2>/dev/null | grep -F "$jobid" | tr '\n' ' ')
        left=$(echo "$left" | xargs)
        [ -z "$left$dirs$shm" ] && return 0
        # A job directory whose creator died before it could hand it to a survivor (csnrun
        # and its agent killed while starting) is the next run's to remove (its owner file,
        # csnrun's jobdir_sweep): run one, once the job's processes and files are gone.
        if [ -z "$left$shm" ] && [ "$i" = 30 ]; then
            "$csnrun" -np 1 true >/dev/null 2>&1
        fi
        sleep 0.1
    done
    echo "  LEFTOVER: processes [$left] directories [$dirs] shm [$shm]"
    for p in $left; do echo "    $(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null)"; done
    leftovers=$((leftovers + 1))
    for p in $left; do kill -9 "$p" 2>/dev/null; done
    rm -rf /tmp/csn-"$jobid"-*
    return 1
}

# one_run NAME KIND NP CMD...: starts the job, waits until its NP ranks run, sleeps a random
# 0.2-1.5 s, then kills according to KIND (rank, launcher, agent, both, guardian).
one_run() {
    local name=$1 kind=$2 np=$3 pid agent guard jobid ranks victim t0 i rc delay
    shift 3
    nruns=$((nruns + 1))
    exec 3>&2 2>/dev/null # bash's "Killed" notes about the job
    "$csnrun" --timeout 120 -np "$np" "$@" >"$T/out" 2>"$T/err" &
    pid=$!
    for i in $(seq 200); do
        agent=$(agent_of "$pid")
        [ -n "$agent" ] && [ "$(ranks_of "$agent" | wc -l)" -ge "$np" ] && break
        sleep 0.05
    done
    ranks=$(ranks_of "${agent:-0}" | tr '\n' ' ')
    guard=$(guard_of "${agent:-0}")
    set -- $ranks
    if [ $# -lt "$np" ] || [ -z "$guard" ]; then
        echo "  $name #$nruns: the job did not start ($# ranks): $(head -3 "$T/err")"
        kill -9 "$pid" $agent 2>/dev/null
        wait "$pid" 2>/dev/null
        bad=$((bad + 1))
        exec 2>&3 3>&-
        return
    fi
    jobid=$(tr '\0' '\n' <"/proc/$1/environ" 2>/dev/null | sed -n 's/^CSN_JOBID=//p')
    rnd 1300
    delay=$(awk -v d="$RV" 'BEGIN { printf "%.3f", 0.2 + d / 1000 }')
    sleep "$delay"
    if ! kill -0 "$pid" 2>/dev/null; then
        missed=$((missed + 1))
        wait "$pid" 2>/dev/null
        echo "  $name #$nruns: the job ended before the kill at ${delay}s (missed)"
        check_clean "$jobid" "$agent" "$guard" $ranks
        exec 2>&3 3>&-
        return
    fi
    t0=$(now)
    case $kind in
    rank)
        rnd "$np"
        victim=$(echo "$ranks" | awk -v k="$RV" '{ print $(k + 1) }')
        kill -9 "$victim"
        ;;
    launcher) kill -9 "$pid" ;;
    agent) kill -9 "$agent" ;;
    both) kill -9 "$pid" "$agent" ;;
    guardian)
        kill -9 "$guard"
        sleep 0.2
        kill -9 "$agent"
        ;;
    esac
    # csnrun ends (or, killed itself, its agent does) within HANG_S.
    for i in $(seq $((HANG_S * 10))); do
        if [ "$kind" = launcher ] || [ "$kind" = both ]; then
            kill -0 "$agent" 2>/dev/null && ! grep -q '^State:.*Z' "/proc/$agent/status" 2>/dev/null || break
        else
            kill -0 "$pid" 2>/dev/null || break
        fi
        sleep 0.1
    done
    if [ "$i" -ge $((HANG_S * 10)) ]; then
        hangs=$((hangs + 1))
        echo "  $name #$nruns: HANG: still running ${HANG_S}s after the kill ($kind)"
        kill -9 "$pid" "$agent" "$guard" $ranks 2>/dev/null
    fi
    wait "$pid" 2>/dev/null
    rc=$?
    if [ "$kind" != launcher ] && [ "$kind" != both ] && [ "$rc" -eq 0 ]; then
        echo "  $name #$nruns: csnrun exited 0 after a $kind was killed"
        bad=$((bad + 1))
    fi
    exec 2>&3 3>&-
    echo "  $name #$nruns: kill -9 of $kind at ${delay}s: csnrun $rc after $(elapsed "$t0")s"
    check_clean "$jobid" "$agent" "$guard" $ranks
}

b=$build
echo "fault suite: seed $seed, $runs runs per program"
for k in $(seq "$runs"); do
    one_run nettest rank 4 "$b/bench/nettest/nettest" uK m1 M16 K2 R1000 T100 Ptotal
done
for k in $(seq "$runs"); do
    one_run pipeline rank 3 "$b/bench/pipeline/pipeline" --nbuf 100000 --timeout 30
done
for k in $(seq "$runs"); do
    one_run filter rank 3 "$b/examples/filter" --bytes 64G --min 64K --max 64K --buffers 2
done
for k in $(seq "$runs"); do
    one_run threadtest rank 2 "$b/bench/threadtest/threadtest" --threads 4 --sizes 8,4096 --time 30
done
for kind in launcher agent both guardian; do
    for k in 1 2; do
        one_run "$kind-death" "$kind" 3 "$b/bench/nettest/nettest" uK m1 M16 K2 R1000 T100 Ptotal
    done
done
echo "fault suite: $nruns runs, $hangs hangs, $leftovers leftovers, $missed missed, $bad other failures"
[ $hangs -eq 0 ] && [ $leftovers -eq 0 ] && [ $bad -eq 0 ]
