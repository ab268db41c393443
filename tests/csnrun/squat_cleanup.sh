#!/bin/sh
# squat_cleanup.sh CSNRUN: csnrun's clean-up of the job's /dev/shm files removes only its own
# user's. A rank makes two files with the job's prefix: one of its own (must be gone after the
# job) and one handed to another user (uid 65534, as a squatter would own it: must stay).
# Root only (chown); skips (77) otherwise.
set -u
CSNRUN=$1
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root (chown to another user)"; exit 77; }
[ -d /dev/shm ] || { echo "SKIP: no /dev/shm"; exit 77; }
out=$(mktemp)
trap 'rm -f "$out"' EXIT
"$CSNRUN" --timeout 30 -np 1 sh -c '
    own=/dev/shm/csn.$CSN_JOBID.0.1.7 other=/dev/shm/csn.$CSN_JOBID.0.1.8
    echo mine >"$own" && echo squatter >"$other" && chown 65534 "$other" &&
    echo "$own $other"' >"$out" || { echo "FAIL: csnrun exited $?"; exit 1; }
read -r own other <"$out"
[ -n "$other" ] || { echo "FAIL: the rank printed no file names"; exit 1; }
rc=0
if [ -e "$own" ]; then
    echo "FAIL: the job's own file $own is left behind"
    rc=1
fi
if [ -e "$other" ] && [ "$(cat "$other")" = squatter ]; then
    echo "ok: another user's $other was left alone"
else
    echo "FAIL: another user's $other was removed or changed"
    rc=1
fi
rm -f "$own" "$other"
[ "$rc" = 0 ] && echo "ok: own file removed"
exit "$rc"
