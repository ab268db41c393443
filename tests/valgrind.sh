#!/bin/sh
# tests/valgrind.sh BUILD: valgrind memcheck over the single-process tests of BUILD (a plain,
# non-sanitized build): the library's argument checks in one process, the rendezvous wait list
# (core_rndv), the frame codec, the name-service client alone, the benchmarks' unit tests, and
# every fuzz target's corpus replay.
# A memory error or a definite leak fails (exit 1); prints one line per test. .ci/run runs it.
set -u
build=${1:-build}
command -v valgrind >/dev/null || { echo "valgrind: not installed (apt-get install valgrind)"; exit 77; }
tests='^(core_api|core_rndv|core_cma|wire_frame|names_lone|names_boot|nettest_unit|logp_stats|fuzz_replay_.*)$'
list=$(mktemp) || exit 1
trap 'rm -f "$list" "$list.log"' EXIT
ctest --test-dir "$build" -N -V -R "$tests" | sed -n 's/^[0-9]*: Test command: //p' >"$list"
[ -s "$list" ] || { echo "valgrind: no tests found in $build"; exit 1; }
fail=0 n=0
while IFS= read -r cmd; do
    n=$((n + 1))
    eval "set -- $cmd"
    if valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite \
        --show-leak-kinds=definite --track-fds=no "$@" >"$list.log" 2>&1; then
        echo "valgrind ok: $(basename "$1") $(echo "${2:-}" | sed 's|.*/||')"
    else
        rc=$?
        echo "valgrind FAILED ($rc): $cmd"
        tail -40 "$list.log"
        fail=1
    fi
done <"$list"
echo "valgrind: $n tests, $([ $fail = 0 ] && echo "no errors" || echo "ERRORS")"
exit $fail
