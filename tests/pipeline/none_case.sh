#!/bin/sh
# none_case.sh: pipeline with --source none and --sink none (the transfers alone), and with
# a file sink after an unfilled source: runs, reports "none", sizes the sink as usual.
set -u
csnrun=$1 pipeline=$2
[ -x "$csnrun" ] || { echo "csnrun not built: skip"; exit 77; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/pltest.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; echo "--- stdout"; cat "$tmp/out.txt"; echo "--- stderr"; cat "$tmp/err.txt"; exit 1; }
run() {
    timeout -k 5 90 "$csnrun" -np 2 "$pipeline" --nphase 3 --nbuf 20 --bufsize 4096 \
        --json "$tmp/r.json" --timeout 30 "$@" >"$tmp/out.txt" 2>"$tmp/err.txt" ||
        fail "csnrun exited $? ($*)"
}
for extra in "" --threads; do
    # shellcheck disable=SC2086
    run --source none --sink none $extra
    grep -q "source none, sink none" "$tmp/out.txt" || fail "header lacks source/sink none"
    grep -q '"source": "none"' "$tmp/r.json" || fail "json source"
    grep -q '"sink": "none"' "$tmp/r.json" || fail "json sink"
    grep -q '"total_bytes": 655360,' "$tmp/r.json" || fail "json total_bytes"
    grep -q "aggregate throughput" "$tmp/out.txt" || fail "no table"
done
run --source none --sink "$tmp/dst"
[ "$(wc -c <"$tmp/dst")" -eq 327680 ] || fail "sink file is not 2 x 20 x 2 x 4096 bytes"
grep -q "source none, sink $tmp/dst" "$tmp/out.txt" || fail "header lacks source none"
echo ok
