#!/bin/bash
# kill9.sh: kill -9 of one rank in the middle of a shared-memory transfer: csnrun exits non-zero within 5 s naming the rank, and no process or file of the job remains.
set -u
csnrun=$1 prog=$2
out=$(mktemp) || exit 1
trap 'rm -f "$out"' EXIT
"$csnrun" -np 3 "$prog" forever >"$out" 2>&1 &
launcher=$!
for _ in $(seq 100); do
    [ "$(grep -c streaming "$out")" = 3 ] && break
    sleep 0.1
done
[ "$(grep -c streaming "$out")" = 3 ] || { echo "ranks did not start"; cat "$out"; kill $launcher; exit 1; }
jobid=$(tr '\0' '\n' < /proc/$(pgrep -f -n "$prog forever")/environ | sed -n 's/^CSN_JOBID=//p')
victim=$(pgrep -f "$prog forever" | sort -n | sed -n 2p)
sleep 0.5
start=$(date +%s.%N)
kill -9 "$victim"
wait $launcher
rc=$?
elapsed=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')
cat "$out"
echo "csnrun exited $rc after ${elapsed}s"
fail=0
[ "$rc" -ne 0 ] || { echo "FAIL: exit status 0"; fail=1; }
awk -v e="$elapsed" 'BEGIN { exit !(e < 5) }' || { echo "FAIL: took ${elapsed}s"; fail=1; }
grep -q "rank .* killed by signal 9" "$out" || { echo "FAIL: no line naming the killed rank"; fail=1; }
sleep 0.2
if pgrep -f "$prog forever" >/dev/null; then echo "FAIL: processes left"; pgrep -af "$prog forever"; fail=1; fi
if ls /dev/shm/csn."$jobid".* >/dev/null 2>&1; then echo "FAIL: shm files left"; ls /dev/shm; fail=1; fi
exit $fail
