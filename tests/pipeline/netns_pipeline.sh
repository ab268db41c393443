#!/bin/sh
# netns_pipeline.sh: pipeline across the four network-namespace hosts of tests/netns/testbed.sh (file source and sink checked byte for byte; a sender killed on host 4 ends the job cleanly).
# usage: netns_pipeline.sh TESTBED_SH PIPELINE PL_CHECK
#   (TB_CSNRUN must name csnrun, as for testbed.sh). Exit 0 pass, 1 fail, 77 skip (what
#   testbed.sh skips for: not root, no ip netns, no tc). testbed.sh brings the hosts up, runs
#   this script again inside host 1 ("inner"), then checks that no process, job directory or
#   shared-memory file of the jobs is left and tears the hosts down.
set -u
if [ "${1:-}" != inner ]; then
    testbed=${1:?usage: netns_pipeline.sh TESTBED_SH PIPELINE PL_CHECK}
    pipeline=${2:?} check=${3:?}
    [ -x "$pipeline" ] && [ -x "$check" ] || { echo "pipeline or pl_check not built: skip"; exit 77; }
    # The data lives outside the testbed's TMPDIR (which must be empty at its final check);
    # the namespaces share the file system, so every host sees it.
    dir=$(mktemp -d "${TMPDIR:-/tmp}/plnetns.XXXXXX") || exit 1
    trap 'rm -rf "$dir"' EXIT
    PL_NETNS_DIR=$dir bash "$testbed" exec sh "$0" inner "$pipeline" "$check"
    exit $?
fi

pipeline=$2 check=$3 dir=$PL_NETNS_DIR
run() { # NAME ARGS...: pipeline on the 4 hosts, one node each; sets rc
    name=$1
    shift
    timeout -k 5 35 "$TB_CSNRUN" --hostfile "$TB_HOSTS" --rsh "ip netns exec" -np 4 \
        "$pipeline" "$@" >"$dir/$name.out" 2>"$dir/$name.err"
    rc=$?
}
fail() { echo "FAIL: $*"; for f in "$dir"/*.out "$dir"/*.err; do echo "--- $f"; tail -n 20 "$f"; done; exit 1; }

nbuf=6 bs=16384
slice=$((nbuf * 4 * bs))
"$check" gen "$dir/src" $((4 * slice)) 77 || exit 1
for np in 2 3 5; do
    rm -f "$dir/dst"
    run p$np --nphase $np --nbuf $nbuf --bufsize $bs --source "$dir/src" --sink "$dir/dst" \
        --timeout 25
    [ $rc -eq 0 ] || fail "4 hosts x $np phases: csnrun exited $rc"
    "$check" verify "$dir/src" "$dir/dst" 4 $np $nbuf $bs || fail "4 hosts x $np phases: sink differs"
    grep -q "aggregate throughput" "$dir/p$np.out" || fail "4 hosts x $np phases: no table"
    # One node per host: every pair's figures went over tcp, and the header must say so
    # (it once named only the intra-host transport, shm).
    grep -q "^pipeline .*, transport tcp\$" "$dir/p$np.out" ||
        fail "4 hosts x $np phases: header does not say tcp: $(head -n 1 "$dir/p$np.out")"
    echo "ok: 4 hosts x $np phases, $nbuf buffers of 4 x $bs B, sink checked"
done

# Sender 0 of the last boundary on node 3 (host 4) kills itself after 20 blocks: every
# node must abort, csnrun must exit non-zero in time; testbed.sh then checks that nothing
# is left on any host.
t0=$(date +%s)
run kill --nphase 3 --nbuf 1000000 --bufsize 4K --sink "$dir/dst.kill" --timeout 10 --die-after 20
[ $rc -ne 0 ] || fail "kill: csnrun exited 0 after a sender was killed"
[ $rc -ne 124 ] && [ $rc -ne 137 ] || fail "kill: csnrun hung (ended by timeout)"
[ $(($(date +%s) - t0)) -lt 30 ] || fail "kill: the job took too long to end"
jobid=$(sed -n 's/^  job \([^:]*\):.*/\1/p' "$dir/kill.out")
[ -n "$jobid" ] && [ "$jobid" != "-" ] || fail "kill: no job id in the header"
i=0
while ls /dev/shm/csn."$jobid".* >/dev/null 2>&1 && [ $i -lt 30 ]; do sleep 0.1; i=$((i + 1)); done
ls /dev/shm/csn."$jobid".* >/dev/null 2>&1 && fail "kill: left in /dev/shm: $(ls /dev/shm/csn."$jobid".*)"
echo "ok: a sender killed on host 4 ended the job (csnrun status $rc), nothing in /dev/shm"
