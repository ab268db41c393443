#!/bin/sh
# usage.sh: pipeline's --help and its one-line usage errors (exit 2); no csnrun needed.
set -u
pipeline=$1
tmp=$(mktemp -d "${TMPDIR:-/tmp}/pltest.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
"$pipeline" --help >"$tmp/help" 2>&1 || { echo "FAIL: --help exit $?"; exit 1; }
grep -q -- "--bufsize" "$tmp/help" || { echo "FAIL: --help text"; exit 1; }
for args in "--bogus" "--nphase 1" "--nphase x" "--bufsize 0" "--bufsize 3Q" "--nbuf" \
    "--nbuf -3" "--timeout 0" "--source" "--json=" "stray" "--lead x" "--sched foo" \
    "--sched"; do
    # shellcheck disable=SC2086
    "$pipeline" $args >"$tmp/out" 2>"$tmp/err"
    rc=$?
    [ $rc -eq 2 ] || { echo "FAIL: '$args' exit $rc, want 2"; cat "$tmp/err"; exit 1; }
    [ "$(wc -l <"$tmp/err")" -eq 1 ] || { echo "FAIL: '$args' not one line:"; cat "$tmp/err"; exit 1; }
    [ ! -s "$tmp/out" ] || { echo "FAIL: '$args' wrote to stdout"; exit 1; }
done
echo ok
