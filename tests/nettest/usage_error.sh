#!/bin/sh
# usage_error.sh: checks that nettest refuses a bad parameter with exit status 2 and one line naming it.
# usage: usage_error.sh PARAM direct|csn|mpi NP PROGRAM ARGS...   (the line must start "nettest: PARAM:")
set -eu
here=$(cd "$(dirname "$0")" && pwd)
param=$1 kind=$2
shift 2
tmp=$(mktemp -d "${TMPDIR:-/tmp}/nettest-usage.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' INT TERM HUP
rc=0
(cd "$tmp" && sh "$here/launch.sh" "$kind" "$@") >"$tmp/stdout" 2>"$tmp/stderr" || rc=$?
cat "$tmp/stderr"
if [ "$rc" -ne 2 ]; then
    echo "usage_error: exit status $rc, expected 2" >&2
    exit 1
fi
lines=$(grep -c '^nettest: ' "$tmp/stderr" || true)
if [ "$lines" -ne 1 ]; then
    echo "usage_error: $lines lines from nettest on stderr, expected 1" >&2
    exit 1
fi
grep -q "^nettest: $param: " "$tmp/stderr" || { echo "usage_error: the line does not name $param" >&2; exit 1; }
if [ "$kind" = direct ] && [ "$(wc -l <"$tmp/stderr")" -ne 1 ]; then
    echo "usage_error: more than one line on stderr" >&2
    exit 1
fi
if [ "$kind" != mpi ] && [ -s "$tmp/stdout" ]; then
    echo "usage_error: unexpected output on stdout" >&2
    exit 1
fi
echo "usage_error: ok"
