#!/bin/sh
# bench/nettest-configs.sh, short: two rounds of a tiny nettest in four configurations (the
# host barrier on and off, nettest-floor, nettest-lean; Open MPI too when it is there), the ratio
# tables (again from the kept outputs: --from), and the argument errors.
# usage: nettest_configs.sh SCRIPT BUILD_DIR
script=$1 build=$2
. "$(dirname "$0")/common.sh"
# Argument errors: one line each, status 2, nothing run.
for args in "--rounds 0 a=$build b=$build" "--np 1 a=$build b=$build" "a=$build" \
    "a=/nonexistent b=$build" "notaconfig" "--bogus a=$build b=$build" "a.b=$build c=$build" "" \
    "--best a a=$build b=$build" "--best zz a=$build b=$build" "--from /nonexistent a=$build b=$build"; do
    # shellcheck disable=SC2086
    refused "$script" $args
done
configs="msg=$build,CSN_HOST_BARRIER=0 host=$build floor=floor:$build lean=lean:$build,LEAN_EAGER=2048"
mpi=1
command -v mpirun.openmpi >/dev/null && [ -x "$build/bench/nettest/nettest-mpi" ] || mpi=0
[ "${NETTEST_CONFIGS_NO_MPI:-0}" = 1 ] && mpi=0
[ $mpi = 1 ] && configs="$configs mpi=mpi:$build"
# shellcheck disable=SC2086
keep=$(mktemp -d /tmp/nettest_configs.XXXXXX) || exit 1
trap 'rm -rf "$keep"' EXIT
out=$("$script" --rounds 2 --np 3 --keep "$keep" --best host,lean $configs -- uK m1 M4 K4 R1 T10 Ptotal 2>&1) ||
    { echo "$out"; fail "the run failed"; }
echo "$out"
for c in host floor lean $( [ $mpi = 1 ] && echo mpi); do
    echo "$out" | grep -qE "^$c/msg: median cell [0-9.]+ over 12 cells \(per cell: median over 2 rounds\)$" ||
        fail "no summary for $c"
done
echo "$out" | grep -qE "^best\(host,lean\)/msg: median cell [0-9.]+ over 12 cells" || fail "no best summary"
echo "$out" | grep -qE "^ +size,K +Star +Star2 +Chaos +Chaos2 +Ring +Ring2$" || fail "no header"
[ "$(echo "$out" | grep -cE '^ +(1|4)( +[0-9]+\.[0-9]{2}){6}$')" = $((8 + 2 * mpi)) ] || fail "rows missing"
# --from: the same tables from the kept outputs, nothing run.
again=$("$script" --from "$keep" --best host,lean $configs 2>&1) || { echo "$again"; fail "--from failed"; }
[ "$(echo "$out" | grep -v '^#' | grep -v '^round')" = "$again" ] || { echo "$again"; fail "--from gave other tables"; }
# --wall: the whole runs' times ("complete in"), made known here: host took 2 s, msg 3 s.
sed -i 's/complete in [0-9.]* sec/complete in 2.00 sec/' "$keep"/host.*.txt
sed -i 's/complete in [0-9.]* sec/complete in 3.00 sec/' "$keep"/msg.*.txt
wall=$("$script" --from "$keep" --wall $configs 2>&1) || { echo "$wall"; fail "--wall failed"; }
echo "$wall" | grep -qxF "host/msg whole run (time of msg over time of host): median 1.500 over 2 rounds" ||
    { echo "$wall"; fail "--wall: no whole-run ratio for host"; }
echo "$wall" | grep -q "^floor/msg whole run" && fail "--wall: a ratio for nettest-floor, which prints no time"
echo PASS
