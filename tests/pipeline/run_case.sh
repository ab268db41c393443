#!/bin/sh
# run_case.sh: one pipeline run under csnrun with file source and sink, checked byte for byte.
# usage: run_case.sh CSNRUN PIPELINE PL_CHECK NNODE NPHASE NBUF BUFSIZE [pernode|large|threads|lead1|lead0|normal|bound]
#   pernode: every node has its own source and sink file (names with %r); threads: --threads;
#   lead1, lead0: --lead 1, --lead 0; normal: --sched normal; bound: csnrun --bind-to core
#   with --threads
set -u
csnrun=$1 pipeline=$2 check=$3 nnode=$4 nphase=$5 nbuf=$6 bufsize=$7 mode=${8:-}
[ -x "$csnrun" ] || { echo "csnrun not built: skip"; exit 77; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/pltest.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; echo "--- stdout"; cat "$tmp/out.txt"; echo "--- stderr"; cat "$tmp/err.txt"; exit 1; }

slice=$((nbuf * nnode * bufsize))
src=$tmp/src dst=$tmp/dst
if [ "$mode" = pernode ]; then
    src=$tmp/src.%r dst=$tmp/dst.%r
    : >"$tmp/src"
    i=0
    while [ $i -lt "$nnode" ]; do
        "$check" gen "$tmp/src.$i" "$slice" "$((i + 7))" || exit 1
        cat "$tmp/src.$i" >>"$tmp/src"
        i=$((i + 1))
    done
else
    "$check" gen "$tmp/src" "$((nnode * slice))" "$((nnode * 100 + nphase))" || exit 1
fi
extra=
[ "$mode" = threads ] && extra=--threads
# lead1: the tightest flow control (the first phase one buffer ahead of the last); lead0: none
[ "$mode" = lead1 ] && extra="--lead 1"
[ "$mode" = lead0 ] && extra="--lead 0"
[ "$mode" = normal ] && extra="--sched normal"
[ "$mode" = bound ] && extra=--threads && bind="--bind-to core"
timeout -k 5 90 "$csnrun" ${bind:-} -np "$nnode" "$pipeline" $extra --nphase "$nphase" --nbuf "$nbuf" \
    --bufsize "$bufsize" --source "$src" --sink "$dst" --json "$tmp/r.json" \
    --timeout 30 >"$tmp/out.txt" 2>"$tmp/err.txt"
rc=$?
[ $rc -eq 0 ] || fail "csnrun exited $rc"
if [ "$mode" = pernode ]; then
    : >"$tmp/dst"
    i=0
    while [ $i -lt "$nnode" ]; do
        [ "$(wc -c <"$tmp/dst.$i")" -eq "$slice" ] || fail "dst.$i is not $slice bytes"
        cat "$tmp/dst.$i" >>"$tmp/dst"
        i=$((i + 1))
    done
fi
"$check" verify "$tmp/src" "$tmp/dst" "$nnode" "$nphase" "$nbuf" "$bufsize" || fail "sink differs"
grep -q "\"nnode\": $nnode," "$tmp/r.json" || fail "json lacks nnode"
grep -q "\"total_bytes\": $(( (nphase - 1) * nnode * nnode * nbuf * bufsize ))," "$tmp/r.json" ||
    fail "json total_bytes wrong"
grep -q "aggregate throughput" "$tmp/out.txt" || fail "no table"
sched=batch
[ "$mode" = normal ] && sched=normal
grep -q "\"sched\": \"$sched\"" "$tmp/r.json" || fail "json lacks sched $sched"
echo "ok: $nnode nodes x $nphase phases, $nbuf buffers of $nnode x $bufsize B"
