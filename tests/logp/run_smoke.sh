#!/bin/sh
# run_smoke.sh: runs logp at tiny settings under a launcher and checks exit status, table and JSON (77 without a launcher).
# usage: run_smoke.sh JSON LAUNCHER [ARGS...]   ("-" as LAUNCHER: no launcher here, skip)
json=$1
shift
if [ "$1" = "-" ]; then
    echo "no launcher for this backend: skipped"
    exit 77
fi
out=$(mktemp) || exit 1
trap 'rm -f "$out" "$json"' EXIT
rm -f "$json"
"$@" >"$out" 2>&1
rc=$?
cat "$out"
fail() { echo "run_smoke: $*" >&2; exit 1; }
[ "$rc" -eq 0 ] || fail "exit status $rc"
grep -q '^ *size  *rtt/2  *o_s  *o_s:dir  *o_r  *o_r:dir  *o_r:prtt  *acc%  *g  *L  *flags$' "$out" ||
    fail "no table header"
grep -q '^ *0  *-*[0-9]' "$out" || fail "no row for 0 B"
grep -q '^ *1K  *-*[0-9]' "$out" || fail "no row for 1K"
grep -q '^# LogGP (at 0 B): L = ' "$out" || fail "no LogGP summary"
grep -q '^# check: L + o_s + o_r = ' "$out" || fail "no known-answer check"
[ -s "$json" ] || fail "no JSON file"
grep -q '"benchmark": "logp"' "$json" || fail "JSON lacks the benchmark name"
[ "$(grep -c '{"size": ' "$json")" -eq 2 ] || fail "JSON has not 2 sizes"
grep -q '"loggp": {"at_size": 0, "L": ' "$json" || fail "JSON lacks the LogGP summary"
tail -n 1 "$json" | grep -q '^}$' || fail "JSON not closed"
exit 0
