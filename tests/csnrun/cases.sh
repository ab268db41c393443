#!/bin/sh
# cases.sh: the csnrun tests, one case per run: cases.sh CSNRUN CASE [NAMES_CLIENT [HELLO]]
set -u
CSNRUN=$1
CASE=$2
NAMES_CLIENT=${3:-}
HELLO=${4:-}
HERE=$(cd "$(dirname "$0")" && pwd)
MARK="csnrun-test-$CASE-$$"
T=$(mktemp -d "${TMPDIR:-/tmp}/csnrun-test.XXXXXX")
trap 'rm -rf "$T"' EXIT

fail() {
    echo "FAIL ($CASE): $*"
    exit 1
}

# Runs csnrun with a deadline; sets RC, OUT (stdout) and ERR (stderr) files.
run() {
    timeout -k 5 60 "$CSNRUN" "$@" >"$T/out" 2>"$T/err"
    RC=$?
    [ "$RC" -ne 124 ] || [ "$CASE" = timeout ] || fail "csnrun hung: $*"
}

# As run, in a subshell that first runs SETUP (a limit, or joining a cgroup): run_in SETUP ARGS...
# (RC 3: SETUP failed).
run_in() {
    setup=$1
    shift
    (
        eval "$setup" || exit 3
        run "$@"
        exit "$RC"
    )
    RC=$?
}

expect_rc() {
    [ "$RC" -eq "$1" ] || { cat "$T/err"; fail "exit status $RC, wanted $1"; }
}

expect_err() {
    grep -q -- "$1" "$T/err" || { cat "$T/err"; fail "stderr lacks '$1'"; }
}

# No process carrying the marker survives (allow a moment for SIGKILLed ones to vanish).
no_leftovers() {
    i=0
    while pgrep -f "$MARK" >/dev/null; do
        i=$((i + 1))
        [ $i -lt 20 ] || fail "processes left behind: $(pgrep -af "$MARK")"
        sleep 0.1
    done
}

# Seconds since the epoch, for coarse upper bounds only (never tight).
now() { date +%s; }

# A rank body: $1 is a shell script; the marker is in its argv so pgrep finds it.
rank() { echo sh -c "$1" "$MARK"; }

case "$CASE" in
exit0)
    run -np 3 sh -c 'exit 0' "$MARK"
    expect_rc 0
    [ ! -s "$T/err" ] || fail "unexpected stderr: $(cat "$T/err")"
    ;;
exitcode)
    # Rank 1 fails; the sleeping ranks must not keep csnrun alive.
    t0=$(now)
    run -np 3 sh -c 'if [ "$CSN_RANK" = 1 ]; then exit 3; fi; sleep 60; true' "$MARK"
    expect_rc 3
    expect_err "rank 1 (pid [0-9]*, sh) exited with status 3"
    [ "$(grep -c . "$T/err")" -eq 1 ] || fail "more than one line: $(cat "$T/err")"
    [ $(($(now) - t0)) -lt 20 ] || fail "the others were not stopped"
    no_leftovers
    ;;
signal)
    run -np 2 sh -c 'if [ "$CSN_RANK" = 1 ]; then kill -SEGV $$; fi; sleep 60; true' "$MARK"
    expect_rc 139
    expect_err "rank 1 (pid [0-9]*, sh) was killed by signal 11"
    no_leftovers
    ;;
sigint | sigterm)
    sig=INT
    want=130
    [ "$CASE" = sigterm ] && sig=TERM && want=143
    "$CSNRUN" -np 3 sh -c 'echo up > "$1.$CSN_RANK"; sleep 60; true' "$MARK" "$T/up" \
        >"$T/out" 2>"$T/err" &
    pid=$!
    i=0
    while [ "$(ls "$T" | grep -c '^up\.')" -lt 3 ]; do
        i=$((i + 1))
        [ $i -lt 300 ] || { kill -9 $pid; fail "ranks did not start"; }
        sleep 0.1
    done
    kill -$sig $pid
    wait $pid
    RC=$?
    expect_rc $want
    no_leftovers
    ;;
kill9)
    # kill -9 of one rank: csnrun ends (non-zero) within 5 s and names the rank.
    "$CSNRUN" -np 3 sh -c 'echo $$ > "$1.$CSN_RANK"; sleep 60; true' "$MARK" "$T/pid" \
        >"$T/out" 2>"$T/err" &
    pid=$!
    i=0
    while [ ! -s "$T/pid.1" ]; do
        i=$((i + 1))
        [ $i -lt 300 ] || { kill -9 $pid; fail "rank 1 did not start"; }
        sleep 0.1
    done
    kill -9 "$(cat "$T/pid.1")"
    t0=$(now)
    i=0
    while kill -0 $pid 2>/dev/null; do
        i=$((i + 1))
        [ $i -le 50 ] || { kill -9 $pid; fail "csnrun still runs 5 s after kill -9 of a rank"; }
        sleep 0.1
    done
    wait $pid
    RC=$?
    [ $(($(now) - t0)) -le 6 ] || fail "csnrun took longer than 5 s"
    expect_rc 137
    expect_err "rank 1 (pid [0-9]*, sh) was killed by signal 9 (Killed)"
    no_leftovers
    ;;
launcherkill)
    # kill -9 of csnrun itself: its agent stops the ranks and removes the job directory.
    "$CSNRUN" -np 2 sh -c 'echo "$CSN_JOBDIR" > "$1.$CSN_RANK"; sleep 60; true' "$MARK" "$T/dir" \
        >"$T/out" 2>"$T/err" &
    pid=$!
    i=0
    while [ ! -s "$T/dir.0" ] || [ ! -s "$T/dir.1" ]; do
        i=$((i + 1))
        [ $i -lt 300 ] || { kill -9 $pid; fail "ranks did not start"; }
        sleep 0.1
    done
    kill -9 $pid
    wait $pid
    # SIGTERM reaches the ranks at once; allow the 2 s SIGKILL grace and a margin.
    i=0
    while pgrep -f "$MARK" >/dev/null || [ -e "$(cat "$T/dir.0")" ]; do
        i=$((i + 1))
        [ $i -lt 50 ] || fail "ranks or job directory left after csnrun was killed"
        sleep 0.1
    done
    ;;
agentkill)
    # kill -9 of the node agent: csnrun reports the loss and fails; the agent's guardian
    # stops the ranks.
    "$CSNRUN" -np 2 sh -c 'echo up > "$1.$CSN_RANK"; sleep 60; true' "$MARK" "$T/up" \
        >"$T/out" 2>"$T/err" &
    pid=$!
    i=0
    while [ ! -s "$T/up.0" ] || [ ! -s "$T/up.1" ]; do
        i=$((i + 1))
        [ $i -lt 300 ] || { kill -9 $pid; fail "ranks did not start"; }
        sleep 0.1
    done
    kill -9 "$(pgrep -P $pid)"
    wait $pid
    RC=$?
    expect_rc 1
    expect_err "lost the agent"
    i=0
    while pgrep -f "$MARK" >/dev/null; do
        i=$((i + 1))
        [ $i -lt 50 ] || fail "ranks left after the agent was killed"
        sleep 0.1
    done
    ;;
stdin)
    echo "line for rank 0" >"$T/in"
    run -np 2 sh -c 'echo "$CSN_RANK: $(cat)"' <"$T/in"
    expect_rc 0
    grep -qx "0: line for rank 0" "$T/out" || fail "rank 0 did not read stdin: $(cat "$T/out")"
    grep -qx "1: " "$T/out" || fail "rank 1 read something: $(cat "$T/out")"
    ;;
grandchildren)
    # Processes forked by ranks go too: after a failure and after a normal end.
    run -np 2 sh -c 'sh -c "sleep 60; true" "$0" & if [ "$CSN_RANK" = 0 ]; then exit 1; fi; sleep 60; true' "$MARK"
    expect_rc 1
    no_leftovers
    run -np 2 sh -c 'sh -c "sleep 60; true" "$0" & exit 0' "$MARK"
    expect_rc 0
    no_leftovers
    ;;
cleanup)
    # The job directory and csn.<JOBID>.* in /dev/shm, or in CSN_SHM_DIR, disappear, also
    # after a failure.
    mkdir "$T/shm"
    for sd in /dev/shm "$T/shm"; do
        for code in 0 5; do
            # Rank 0 records the job's names, then ends with $code; rank 1 waits to be stopped
            # when that is a failure.
            CSN_SHM_DIR=$sd run -np 2 sh -c 'touch "$CSN_SHM_DIR/csn.$CSN_JOBID.test$CSN_RANK" "$CSN_JOBDIR/sock$CSN_RANK"
                         if [ "$CSN_RANK" = 1 ]; then [ '$code' = 0 ] || sleep 60; exit 0; fi
                         echo "$CSN_JOBDIR" > "$1.dir"; echo "$CSN_JOBID" > "$1.id"
                         exit '$code "$MARK" "$T/job"
            expect_rc $code
            dir=$(cat "$T/job.dir")
            id=$(cat "$T/job.id")
            [ -n "$dir" ] && [ -n "$id" ] || fail "no CSN_JOBDIR or CSN_JOBID"
            [ ! -e "$dir" ] || fail "job directory $dir left behind"
            ! ls "$sd"/csn."$id".* >/dev/null 2>&1 || fail "$sd/csn.$id.* left behind"
            no_leftovers
        done
    done
    ;;
env)
    CSN_FOO=foo1 XVAR=xval NOTFWD=no run -x XVAR -x SETVAR=set1 -np 3 \
        sh -c 'echo "$CSN_RANK $CSN_SIZE $CSN_LOCAL_RANK $CSN_LOCAL_SIZE $CSN_FOO $XVAR $SETVAR"'
    expect_rc 0
    sort "$T/out" >"$T/sorted"
    printf '%s\n' "0 3 0 3 foo1 xval set1" "1 3 1 3 foo1 xval set1" "2 3 2 3 foo1 xval set1" \
        >"$T/want"
    cmp -s "$T/sorted" "$T/want" || fail "environment: $(cat "$T/out")"
    run -np 1 sh -c 'test -n "$CSN_NS" && test ${#CSN_JOBKEY} -eq 32 && test -d "$CSN_JOBDIR" \
                     && test -n "$CSN_JOBID" && test -n "$CSN_HOST"'
    expect_rc 0
    ;;
spec)
    cat >"$T/job.spec" <<'EOF'
# two components; ranks in file order
2 sh -c 'echo "A $CSN_RANK $CSN_SIZE $0"' first   # a comment after the arguments

1 sh -c "echo \"B \$CSN_RANK \$CSN_SIZE \$0\"" "second word"
EOF
    run "$T/job.spec"
    expect_rc 0
    sort "$T/out" >"$T/sorted"
    printf '%s\n' "A 0 3 first" "A 1 3 first" "B 2 3 second word" >"$T/want"
    cmp -s "$T/sorted" "$T/want" || fail "spec job output: $(cat "$T/out")"
    ;;
tag)
    run --tag-output -np 2 sh -c 'echo "out $CSN_RANK"; echo "err $CSN_RANK" >&2; printf "cut $CSN_RANK"'
    expect_rc 0
    grep -qx "\[1\] out 1" "$T/out" || fail "no tagged stdout: $(cat "$T/out")"
    grep -qx "\[0\] err 0" "$T/err" || fail "no tagged stderr: $(cat "$T/err")"
    grep -qx "\[1\] cut 1" "$T/out" || fail "unfinished line lost: $(cat "$T/out")"
    ;;
timeout)
    t0=$(now)
    run --timeout 1 -np 2 sh -c 'sleep 60; true' "$MARK"
    expect_rc 124
    expect_err "timeout"
    [ $(($(now) - t0)) -lt 20 ] || fail "--timeout did not stop the job"
    no_leftovers
    ;;
badinput)
    printf 'not a spec\0binary' >"$T/binary"
    printf '2 true\n\nx false\n' >"$T/badcount.spec"
    printf '# c\n3 @\n' >"$T/emptyhost.spec"
    printf '2\n' >"$T/noprog.spec"
    printf "1 sh -c 'unterminated\n" >"$T/quote.spec"
    printf '1 true\n' >"$T/ok.spec"
    printf 'host1 slots=x\n' >"$T/bad.hosts"
    while IFS='|' read -r args want; do
        # shellcheck disable=SC2086
        run $args
        [ "$RC" -eq 2 ] || fail "'csnrun $args' gave $RC, wanted 2: $(cat "$T/err")"
        [ "$(grep -c . "$T/err")" -eq 1 ] || fail "'csnrun $args' printed: $(cat "$T/err")"
        grep -q -- "$want" "$T/err" || fail "'csnrun $args' said: $(cat "$T/err")"
    done <<EOF
--no-such-option true|unknown option
-np 0 true|-np needs
-np abc true|-np needs
-np|needs a value
-np 2|missing program
|missing program
-np 2 no-such-program-xyz|not found
-np 2 ./no/such/path|not found
-np 1 $T|is a directory
-np 1 $T/binary|neither an executable
$T/badcount.spec|badcount.spec:3:
$T/emptyhost.spec|emptyhost.spec:2:
$T/noprog.spec|noprog.spec:1: missing program
$T/quote.spec|quote.spec:1: unterminated
-np 2 $T/ok.spec|cannot be used with a spec file
$T/ok.spec extra|unexpected argument
--hostfile $T/bad.hosts -np 1 true|bad.hosts:1:
--hostfile $T/none.hosts -np 1 true|cannot read host file
--timeout 0 -np 1 true|--timeout needs
EOF
    if [ "$(id -u)" != 0 ]; then
        printf '1 true\n' >"$T/unreadable.spec"
        chmod 000 "$T/unreadable.spec"
        run "$T/unreadable.spec"
        expect_rc 2
        expect_err "cannot read spec file"
    fi
    # The largest -np with 16 arguments, under 1 GiB of address space: the ranks of one command
    # share their program and arguments (once a copy each: 8388608 x 16 strings, out of memory).
    # Not in sanitizer builds, whose shadow memory alone is more address space than that.
    if ! grep -qa -e __asan_init -e __tsan_init "$CSNRUN"; then
        run_in 'ulimit -v 1048576' -np 8388608 no-such-program-xyz a b c d e f g h i j k l m n o p
        [ "$RC" -eq 2 ] || fail "-np 8388608 with 16 arguments gave $RC: $(cat "$T/err")"
        grep -q "not found" "$T/err" || fail "-np 8388608 with 16 arguments said: $(cat "$T/err")"
        [ "$(grep -c . "$T/err")" -eq 1 ] || fail "-np 8388608 printed: $(cat "$T/err")"
    fi
    run --help
    expect_rc 0
    grep -q "usage: csnrun" "$T/out" || fail "--help"
    run --version
    expect_rc 0
    ;;
fdlimit)
    # A small descriptor limit (csnrun and the ranks inherit it): the name service takes what
    # it can (with 64 or fewer it once took none: every csn_open timed out after 30 s).
    [ -n "$NAMES_CLIENT" ] || { echo "skip (fdlimit): no names client"; exit 77; }
    run_in 'ulimit -n 32' -np 4 "$NAMES_CLIENT" job
    [ "$RC" -eq 0 ] || fail "4 ranks under ulimit -n 32: exit status $RC: $(cat "$T/err")"
    ;;
fdstarve)
    # Too few descriptors for the ranks to reach each other (ulimit -n 11, 6 ranks of hello):
    # each run ends within 10 s of the shortage (and a little more) with a line naming the
    # descriptors. Before, a run waited for ever (1 in 6: the name service's slots held by
    # lookups that waited for the sink's registration, which could not get in; or sources'
    # transmits to a sink that could accept no connection), or the sink said "needs a sink
    # and a source" after 10 s (3 in 6: it could not join its job, so its size was 1).
    [ -n "$HELLO" ] || { echo "skip (fdstarve): no hello"; exit 77; }
    for i in 1 2 3; do
        # The limit in a child that closes what this shell and the test's runner hold (this
        # shell needs descriptors of its own beyond 11 to redirect).
        timeout -k 5 25 bash -c 'for d in {3..19}; do eval "exec $d>&-"; done; ulimit -n 11
            exec "$@"' bash "$CSNRUN" -np 6 "$HELLO" >"$T/out" 2>"$T/err"
        RC=$?
        [ "$RC" -ne 124 ] || fail "run $i hung: $(cat "$T/err")"
        [ "$RC" -ne 0 ] || continue # enough descriptors for this run after all
        grep -q "needs a sink" "$T/err" && fail "run $i: hello took itself for a job of one"
        grep -q "descriptors\|Too many open files" "$T/err" ||
            fail "run $i: no line names the descriptors: $(cat "$T/err")"
    done
    ;;
startfail)
    # A rank that cannot start (fork refused: a cgroup's pids.max, as root) is the one line and
    # the exit status (127), not the SIGTERM deaths of the ranks its agent then stops. Skipped
    # (77) where no pids cgroup can be made.
    CG=
    for d in /sys/fs/cgroup/pids /sys/fs/cgroup; do
        if [ -w "$d" ] && mkdir "$d/csnrun-test-$$" 2>/dev/null; then
            if echo 40 >"$d/csnrun-test-$$/pids.max" 2>/dev/null; then
                CG=$d/csnrun-test-$$
                break
            fi
            rmdir "$d/csnrun-test-$$"
        fi
    done
    [ -n "$CG" ] || { echo "skip (startfail): no pids cgroup to limit forks"; exit 77; }
    run_in 'echo 0 >"$CG/cgroup.procs"' -np 200 sh -c 'exec sleep 5' "$MARK"
    i=0
    while [ "$(cat "$CG/pids.current")" != 0 ] && [ $i -lt 50 ]; do
        i=$((i + 1))
        sleep 0.1
    done
    rmdir "$CG"
    [ "$RC" -eq 127 ] || fail "a rank that cannot start: exit status $RC: $(cat "$T/err")"
    [ "$(grep -c . "$T/err")" -eq 1 ] || fail "a rank that cannot start printed: $(cat "$T/err")"
    expect_err "cannot start: Resource temporarily unavailable"
    no_leftovers
    ;;
remote)
    # Another "host" reached through --rsh: a stand-in that runs the command here with an
    # empty environment, as a fresh ssh session would. Only CSN_* and -x variables arrive.
    CSN_FOO=foo2 XVAR=xv NOTFWD=no run --rsh "sh '$HERE/fake_rsh.sh'" --host farhost:2,localhost \
        -x XVAR -np 3 sh -c 'echo "$CSN_RANK $CSN_HOST $CSN_LOCAL_RANK/$CSN_LOCAL_SIZE $CSN_FOO $XVAR ${NOTFWD:-unset}"'
    expect_rc 0
    sort "$T/out" >"$T/sorted"
    printf '%s\n' "0 farhost 0/2 foo2 xv unset" "1 farhost 1/2 foo2 xv unset" \
        "2 localhost 0/1 foo2 xv no" >"$T/want"
    cmp -s "$T/sorted" "$T/want" || fail "remote job: $(cat "$T/out") $(cat "$T/err")"
    # A failure on the remote host is reported with its host and stops the local rank.
    run --rsh "sh '$HERE/fake_rsh.sh'" --host farhost,localhost -np 2 \
        sh -c 'if [ "$CSN_RANK" = 0 ]; then exit 7; fi; sleep 60; true' "$MARK"
    expect_rc 7
    expect_err "rank 0 (pid [0-9]* on farhost, sh) exited with status 7"
    no_leftovers
    if [ -n "$NAMES_CLIENT" ]; then
        run --rsh "sh '$HERE/fake_rsh.sh'" --host farhost:2,localhost:2 -np 4 "$NAMES_CLIENT" job
        expect_rc 0
    fi
    ;;
bind)
    # --bind-to core: local rank r runs on the (r mod n)-th of csnrun's n CPUs only, its
    # CSN_CPU_SHARE counts the host's ranks on that CPU, and --report-bindings says so.
    cpus=$(grep Cpus_allowed_list /proc/self/status | awk '{ print $2 }' |
        awk -F, '{ for (i = 1; i <= NF; i++) { n = split($i, r, "-"); for (c = r[1]; c <= r[n]; c++) print c } }')
    ncpu=$(echo "$cpus" | grep -c .)
    run -np 3 --bind-to core --report-bindings \
        sh -c 'echo "$CSN_RANK $CSN_CPU_SHARE $(grep Cpus_allowed_list /proc/self/status | awk "{ print \$2 }")"'
    expect_rc 0
    for r in 0 1 2; do
        cpu=$(echo "$cpus" | sed -n "$((r % ncpu + 1))p")
        share=$((3 / ncpu + (r % ncpu < 3 % ncpu)))
        grep -qx "$r $share $cpu" "$T/out" || fail "rank $r: wanted '$r $share $cpu': $(cat "$T/out")"
        expect_err "rank $r on .*: bound to CPU $cpu\$"
    done
    # Without it: no binding, no CSN_CPU_SHARE, no report.
    run -np 1 sh -c 'echo "${CSN_CPU_SHARE:-unset}"'
    expect_rc 0
    [ "$(cat "$T/out")" = unset ] && [ ! -s "$T/err" ] || fail "unbound job: $(cat "$T/out" "$T/err")"
    run -np 1 --bind-to socket true
    expect_rc 2
    expect_err "^csnrun: --bind-to needs 'core' or 'none', not 'socket'$"
    ;;
*)
    fail "unknown case"
    ;;
esac
echo "ok ($CASE)"
