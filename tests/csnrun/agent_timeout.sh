#!/bin/sh
# agent_timeout.sh: a host whose agent never answers (an ssh that hangs) fails the job within
# --agent-timeout, with one line naming the host, and leaves no process behind.
set -u
CSNRUN=$1
HERE=$(cd "$(dirname "$0")" && pwd)
T=$(mktemp -d "${TMPDIR:-/tmp}/csnrun-agto.XXXXXX")
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; cat "$T/err"; exit 1; }
start=$(date +%s)
timeout -k 5 30 "$CSNRUN" --rsh "sh $HERE/hang_rsh.sh" --agent-timeout 2 \
    --host localhost,unreachable-host-$$ -np 2 sleep 300.$$ >/dev/null 2>"$T/err"
rc=$?
took=$(($(date +%s) - start))
[ $rc -ne 124 ] || fail "csnrun still waiting after 30 s"
[ $rc -eq 1 ] || fail "exit status $rc, wanted 1"
[ $took -le 12 ] || fail "took $took s with --agent-timeout 2"
grep -q "unreachable-host-$$" "$T/err" || fail "no line naming the host"
sleep 0.5
! pgrep -f "hang_rsh.sh unreachable-host-$$" >/dev/null || fail "the rsh command is left behind"
! pgrep -f "sleep 300.$$" >/dev/null || fail "the local rank is left behind"
# A job that outlives --agent-timeout on hosts that answered runs to its end.
# (--agent-timeout 4: the agents must answer within it, also in a loaded sanitizer build.)
out=$(timeout -k 5 30 "$CSNRUN" --rsh "sh $HERE/fake_rsh.sh" --agent-timeout 4 \
    --host localhost,farhost -np 2 sh -c 'sleep 5; echo ok') || fail "a longer job exited $?"
[ "$(echo "$out" | grep -c '^ok$')" = 2 ] || fail "a longer job printed '$out'"
echo "agent_timeout: failed in $took s naming the host"
