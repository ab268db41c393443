#!/bin/sh
# orphans.sh CSNRUN SLEEPER CASE: launcher deaths leave nothing behind (issue 16, item 9): no
# rank running, no /tmp/csn-<jobid>-* directory, no /dev/shm/csn.<jobid>.* file.
#   both      kill -9 of csnrun and its local agent together (the guardian cleans up)
#   late      kill -9 of the local agent; its launcher, stopped, is killed 5 s later
#   remote    kill -9 of the agent of a host reached by --rsh (its own job directory)
#   guardian  kill -9 of the agent's guardian, then of the agent (PR_SET_PDEATHSIG)
#   watch     as guardian, with the csn program a child of a shell rank: the library's
#             launcher watch (CSN_WATCH_FD) ends it
set -u
CSNRUN=$1
SLEEPER=$2
CASE=$3
HERE=$(cd "$(dirname "$0")" && pwd)
MARK="orphans-$CASE-$$"
T=$(mktemp -d "${TMPDIR:-/tmp}/orphans-test.XXXXXX")
pid=
cleanup() {
    [ -n "$pid" ] && kill -9 "$pid" 2>/dev/null
    pkill -9 -f "$MARK" 2>/dev/null
    rm -rf "$T"
}
trap cleanup EXIT

fail() {
    echo "FAIL (orphans $CASE): $*"
    [ -f "$T/err" ] && sed 's/^/  csnrun stderr: /' "$T/err"
    exit 1
}

# Waits (up to 10 s) until every rank has written its line: "JOBID JOBDIR PID PGID PPID".
wait_up() {
    i=0
    while [ "$(cat "$T"/up.* 2>/dev/null | wc -l)" -lt "$1" ]; do
        i=$((i + 1))
        [ $i -lt 100 ] || fail "ranks did not start"
        sleep 0.1
    done
    JOBID=$(cut -d' ' -f1 "$T/up.0")
}

# Nothing of the job may remain after at most $1 tenths of a second.
expect_clean() {
    i=0
    while :; do
        left=$(pgrep -f "$MARK" | tr '\n' ' ')
        dirs=$(ls -d /tmp/csn-"$JOBID"-* 2>/dev/null | tr '\n' ' ')
        shm=$(ls /dev/shm/csn."$JOBID".* 2>/dev/null | tr '\n' ' ')
        [ -z "$left$dirs$shm" ] && break
        i=$((i + 1))
        if [ $i -ge "$1" ]; then
            # What is left, for the log: the directories' files and every csnrun process.
            [ -n "$dirs" ] && ls -la $dirs | sed 's/^/  left: /'
            ps -eo pid,ppid,pgid,stat,etime,args | grep -E "csnrun|$MARK" | grep -v grep |
                sed 's/^/  ps: /'
            [ -n "${DEBUG_ORPHANS:-}" ] && cat "$T"/up.*
            fail "left behind after $(($1 / 10)) s: processes [$left] directories [$dirs] shm [$shm]"
        fi
        sleep 0.1
    done
    echo "orphans $CASE: nothing left after $((i * 100)) ms"
}

rankcmd='echo "$CSN_JOBID $CSN_JOBDIR $$ $(ps -o pgid= -p $$ | tr -d " ") $PPID" > "$1.$CSN_RANK"; exec "$2" 60 "$3"'
case $CASE in
both)
    "$CSNRUN" -np 2 sh -c "$rankcmd" sh "$T/up" "$SLEEPER" "$MARK" >"$T/out" 2>"$T/err" &
    pid=$!
    wait_up 2
    agent=$(cut -d' ' -f5 "$T/up.0")
    kill -9 "$pid" "$agent"
    wait "$pid" 2>/dev/null
    pid=
    expect_clean 100
    ;;
late)
    # The launcher outlives its killed agent by 5 s (stopped, then killed): the guardian's
    # cleaner waits for it, then removes the launcher's directory.
    "$CSNRUN" -np 2 sh -c "$rankcmd" sh "$T/up" "$SLEEPER" "$MARK" >"$T/out" 2>"$T/err" &
    pid=$!
    wait_up 2
    agent=$(cut -d' ' -f5 "$T/up.0")
    kill -STOP "$pid"
    kill -9 "$agent"
    sleep 5
    [ -n "$(ls -d /tmp/csn-"$JOBID"-* 2>/dev/null)" ] ||
        fail "the directory of a live launcher was removed"
    kill -9 "$pid"
    wait "$pid" 2>/dev/null
    pid=
    expect_clean 100
    ;;
remote)
    "$CSNRUN" --rsh "sh '$HERE/fake_rsh.sh'" --host farhost:2 -np 2 sh -c "$rankcmd" sh "$T/up" \
        "$SLEEPER" "$MARK" >"$T/out" 2>"$T/err" &
    pid=$!
    wait_up 2
    agent=$(cut -d' ' -f5 "$T/up.0")
    rdir=$(cut -d' ' -f2 "$T/up.0")
    [ -d "$rdir" ] || fail "no job directory $rdir"
    kill -9 "$agent"
    wait "$pid"
    rc=$?
    pid=
    [ "$rc" -ne 0 ] || fail "csnrun exited 0 after losing an agent"
    expect_clean 100
    ;;
guardian | watch)
    if [ "$CASE" = watch ]; then
        # The csn program is the rank's child: PR_SET_PDEATHSIG does not reach it.
        cmd='echo "$CSN_JOBID $CSN_JOBDIR $$ $(ps -o pgid= -p $$ | tr -d " ") $PPID" > "$1.$CSN_RANK"; "$2" 60 "$3"; true'
    else
        cmd=$rankcmd
    fi
    "$CSNRUN" -np 2 sh -c "$cmd" sh "$T/up" "$SLEEPER" "$MARK" >"$T/out" 2>"$T/err" &
    pid=$!
    wait_up 2
    i=0
    while [ "$(grep -c "up" "$T/out")" -lt 2 ]; do # the sleepers have opened their transports
        i=$((i + 1))
        [ $i -lt 100 ] || fail "sleepers did not start: $(cat "$T/out")"
        sleep 0.1
    done
    guard=$(cut -d' ' -f4 "$T/up.0")
    agent=$(cut -d' ' -f5 "$T/up.0")
    [ "$guard" != "$agent" ] || fail "no guardian"
    kill -9 "$guard"
    sleep 0.3
    pgrep -f "$MARK" >/dev/null || fail "the ranks died with the guardian alone (they should not)"
    kill -9 "$agent"
    wait "$pid"
    pid=
    expect_clean 100
    if [ "$CASE" = watch ]; then
        grep -q "csnrun agent that started this process is gone" "$T/err" ||
            fail "the sleepers did not say why they ended"
    fi
    ;;
*)
    fail "unknown case"
    ;;
esac
exit 0
