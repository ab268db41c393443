#!/bin/sh
# stale_jobdir.sh CSNRUN: a job directory whose csnrun (and agent and guardian) were killed at
# once is removed by the next csnrun run, with its /dev/shm files; one whose owner lives stays.
set -u
CSNRUN=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"; rm -f /dev/shm/csn.0123456789ab.*' EXIT
# A stale one: its owner file names a process that is gone (pid 1 with another start time can
# not be ours: pid 1 runs, but started at another tick than 7).
mkdir "$tmp/csn-0123456789ab-AAAAAA"
echo "1 7" >"$tmp/csn-0123456789ab-AAAAAA/owner"
: >"$tmp/csn-0123456789ab-AAAAAA/ns.sock"
: >/dev/shm/csn.0123456789ab.0.1.0.123
# A live one: owned by this shell (its real start time).
mkdir "$tmp/csn-ba9876543210-BBBBBB"
st=$(sed 's/.*) //' /proc/$$/stat | cut -d' ' -f20)
echo "$$ $st" >"$tmp/csn-ba9876543210-BBBBBB/owner"
# Not a job directory's name: never touched.
mkdir "$tmp/csn-notajob"
TMPDIR=$tmp "$CSNRUN" --timeout 20 -np 1 true || { echo "FAIL: csnrun exited $?"; exit 1; }
rc=0
[ -e "$tmp/csn-0123456789ab-AAAAAA" ] && { echo "FAIL: the stale job directory is left"; rc=1; }
[ -e /dev/shm/csn.0123456789ab.0.1.0.123 ] && { echo "FAIL: the stale job's shm file is left"; rc=1; }
[ -d "$tmp/csn-ba9876543210-BBBBBB" ] || { echo "FAIL: a live job's directory was removed"; rc=1; }
[ -d "$tmp/csn-notajob" ] || { echo "FAIL: a directory that is no job's was removed"; rc=1; }
left=$(find "$tmp" -maxdepth 1 -name 'csn-*' | wc -l)
[ "$left" = 2 ] || { echo "FAIL: csnrun's own job directory is left ($left entries)"; rc=1; }
[ "$rc" = 0 ] && echo "ok: stale job directory and its shm file removed; live and foreign kept"
exit "$rc"
