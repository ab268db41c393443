#!/bin/sh
# run_usage.sh: runs logp with given options and checks the exit status and one line of output matching a pattern.
# usage: run_usage.sh RC PATTERN CMD [ARGS...]   (RC 0: PATTERN in stdout; else: stderr is one line matching PATTERN)
want=$1
pat=$2
shift 2
out=$(mktemp) && err=$(mktemp) || exit 1
trap 'rm -f "$out" "$err"' EXIT
"$@" >"$out" 2>"$err"
rc=$?
cat "$out" "$err"
fail() { echo "run_usage: $*" >&2; exit 1; }
[ "$rc" -eq "$want" ] || fail "exit status $rc, wanted $want"
if [ "$want" -eq 0 ]; then
    grep -q -e "$pat" "$out" || fail "stdout lacks '$pat'"
else
    [ "$(wc -l <"$err")" -eq 1 ] || fail "stderr is not exactly one line"
    grep -q -e "$pat" "$err" || fail "stderr lacks '$pat'"
fi
exit 0
