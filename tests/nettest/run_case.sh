#!/bin/sh
# run_case.sh: runs nettest once with --csv/--json and an output file, and checks the table, the CSV and the JSON.
# usage: run_case.sh direct|csn|mpi|lean NP PROGRAM ROWS CHAOS_LINKS NETTEST_ARGS...
set -eu
here=$(cd "$(dirname "$0")" && pwd)
kind=$1 np=$2 prog=$3 rows=$4 links=$5
shift 5
tmp=$(mktemp -d "${TMPDIR:-/tmp}/nettest-test.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' INT TERM HUP
rc=0
sh "$here/launch.sh" "$kind" "$np" "$prog" "$@" "o$tmp/transfer.dat" --csv "$tmp/out.csv" \
    --json "$tmp/out.json" >"$tmp/stdout" 2>"$tmp/stderr" || rc=$?
if [ "$rc" -ne 0 ]; then
    echo "run_case: nettest exited with $rc" >&2
    cat "$tmp/stderr" >&2
    exit 1
fi
cat "$tmp/transfer.dat"
sh "$here/check_table.sh" "$tmp/transfer.dat" "$rows" "$links"

ntests=6
[ "$links" = off ] && ntests=4
want_check="payload check on"
for a in "$@"; do [ "$a" = --no-check ] && want_check="payload check off"; done
grep -q "$want_check" "$tmp/transfer.dat" || { echo "run_case: header does not say '$want_check'" >&2; exit 1; }

csvrows=$(grep -c -v -e '^#' -e '^repeat,' "$tmp/out.csv" || true)
if [ "$csvrows" -ne $((rows * ntests * np)) ]; then
    echo "run_case: $csvrows CSV rows, expected $((rows * ntests * np))" >&2
    exit 1
fi
jsonres=$(grep -c '"repeat":' "$tmp/out.json" || true)
jsonranks=$(grep -c '"rank":' "$tmp/out.json" || true)
if [ "$jsonres" -ne $((rows * ntests)) ] || [ "$jsonranks" -ne $((rows * ntests * np)) ]; then
    echo "run_case: JSON has $jsonres results and $jsonranks rank entries" >&2
    exit 1
fi
grep -q '"total_time_s": [0-9]' "$tmp/out.json" || { echo "run_case: JSON is not complete" >&2; exit 1; }
if command -v python3 >/dev/null 2>&1; then
    python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$tmp/out.json"
fi
echo "run_case: ok"
