#!/bin/bash
# one_tool.sh: the benchmarks behave as one tool: --help and --version printed once under
# csnrun -np 3 (rank 0), --version everywhere, one size syntax (4KiB = 4K accepted by all, 4X
# refused), a bad --json path names the tool, threadtest bounds its thread count, and
# pingpong-mpi started by csnrun points to mpirun.
set -u
B=$1
CSNRUN=$B/tools/csnrun/csnrun
T=$(mktemp -d "${TMPDIR:-/tmp}/one-tool.XXXXXX")
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
prog() { echo "$B/bench/$1/$1"; }
run() { timeout -k 5 60 "$@" >"$T/out" 2>"$T/err"; RC=$?; }

for p in nettest pingpong logp pipeline threadtest; do
    run "$CSNRUN" -np 3 "$(prog $p)" --help
    [ $RC -eq 0 ] || fail "$p --help under csnrun exited $RC"
    n=$(grep -c -i '^usage' "$T/out")
    [ "$n" = 1 ] || fail "$p --help printed its usage $n times with 3 ranks"
    run "$CSNRUN" -np 3 "$(prog $p)" --version
    [ $RC -eq 0 ] || fail "$p --version exited $RC"
    [ "$(wc -l <"$T/out")" = 1 ] && grep -q "^$p [0-9]" "$T/out" || fail "$p --version printed: $(cat "$T/out")"
done
for p in pingpong logp pipeline; do
    run "$CSNRUN" -np 3 "$(prog $p)" --bogus-option
    [ $RC -eq 2 ] || fail "$p --bogus-option exited $RC"
    n=$(grep -c -- "--bogus-option" "$T/err")
    [ "$n" = 1 ] || fail "$p printed its usage error $n times with 3 ranks"
done

# Sizes: one parser. Parsing passes (the run then stops for another reason) or fails naming
# the size.
size_ok() { # size_ok NAME ARGS...: parsing accepted the size
    ! grep -q -i "bad\|invalid" "$T/err" || fail "$1 refused a size: $(cat "$T/err")"
}
run "$(prog pingpong)" --sizes 4KiB,1Mi,2KB; size_ok pingpong
run "$(prog logp)" --sizes 4KiB,1Mi; size_ok logp
run "$(prog threadtest)" --sizes 4KiB,1MB --threads 1; size_ok threadtest
run "$(prog pipeline)" --bufsize 4KiB --threads --nbuf 1 --nphase 2; size_ok pipeline
for p in pingpong threadtest; do
    run "$(prog $p)" --sizes 4X
    [ $RC -eq 2 ] && grep -q "4X" "$T/err" || fail "$p took the size 4X"
done
for p in pingpong logp pipeline threadtest; do
    grep -q "4K = 4Ki = 4KiB = 4KB = 4096" <("$(prog $p)" --help) || fail "$p --help does not state the size rule"
done

# A bad --json path: one line naming the tool.
run "$CSNRUN" -np 2 "$(prog pingpong)" --sizes 8 --json /nonexistent/x
[ $RC -ne 0 ] || fail "pingpong --json /nonexistent/x exited 0"
grep -q "^pingpong: .*/nonexistent/x" "$T/err" || fail "pingpong's --json error names no tool: $(cat "$T/err")"

# threadtest: thread counts are bounded, and refused at once.
run "$(prog threadtest)" --threads 1000
[ $RC -eq 2 ] && grep -q "1..256" "$T/err" || fail "threadtest --threads 1000: exit $RC, $(cat "$T/err")"

# pingpong-mpi started by csnrun: one line pointing to mpirun.
# Two Open MPI singletons at once may race to make their session directory (/tmp/ompi.HOST.UID:
# "File exists", orte_init fails before main): Open MPI's, tried again up to 3 times.
if [ -x "$(prog pingpong)-mpi" ]; then
    for _ in 1 2 3; do
        OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 run "$CSNRUN" -np 2 "$(prog pingpong)-mpi"
        grep -q "orte_session_dir failed" "$T/err" || break
    done
    grep -q "mpirun -np 2 pingpong-mpi" "$T/err" || fail "pingpong-mpi under csnrun: $(cat "$T/err")"
    [ "$(grep -c 'needs exactly 2 ranks' "$T/err")" = 1 ] || fail "pingpong-mpi advice printed more than once"
fi
# nettest: the seed's table, then per size the median of the repeats and their spread; the run's
# date and commit beside the seed's first line (which carries the build date).
run "$CSNRUN" -np 2 "$(prog nettest)" uK m1 M2 K2 R3 T20 Ptotal
[ $RC -eq 0 ] || fail "nettest R3 exited $RC"
grep -q "^	Median of the 3 repeats (min-max) in MB/sec$" "$T/out" || fail "nettest: no median block"
[ "$(grep -c -E '^[0-9]+	[0-9.]+ \([0-9.]+-[0-9.]+\)' "$T/out")" = 2 ] || fail "nettest: median rows: $(cat "$T/out")"
grep -q "^	Run 20[0-9-]*T[0-9:]*Z, build of .* of commit " "$T/out" || fail "nettest: no run date and commit"
echo "one tool: help, version, sizes, json errors, threadtest bounds, nettest medians"
