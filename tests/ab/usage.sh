#!/bin/sh
# tests/ab/usage.sh: bench/ab.sh's argument handling (no build, no benchmark run): --help, and exit 2 with one line for each bad input.
# usage: tests/ab/usage.sh PATH/TO/bench/ab.sh
ab=${1:?usage: usage.sh PATH/TO/ab.sh}
command -v git >/dev/null 2>&1 || { echo "SKIP: git not found"; exit 77; }
git -C "$(dirname "$ab")" rev-parse --git-dir >/dev/null 2>&1 || { echo "SKIP: $ab is not in a git checkout"; exit 77; }
t=$(mktemp -d) || exit 1
trap 'rm -rf "$t"' EXIT
fail=0

"$ab" --help >"$t/out" 2>"$t/err"
rc=$?
if [ "$rc" -ne 0 ] || ! grep -q '^usage: bench/ab.sh' "$t/out" || [ -s "$t/err" ]; then
    echo "FAIL: --help: exit $rc"; cat "$t/out" "$t/err"; fail=1
fi

# expect_2 WHAT ARGS...: exit 2, nothing on stdout, exactly one line on stderr matching WHAT.
expect_2() {
    what=$1
    shift
    "$ab" "$@" >"$t/out" 2>"$t/err"
    rc=$?
    n=$(wc -l <"$t/err")
    if [ "$rc" -ne 2 ] || [ "$n" -ne 1 ] || [ -s "$t/out" ] || ! grep -q -- "$what" "$t/err"; then
        echo "FAIL: ab.sh $*: exit $rc (want 2), $n stderr lines (want 1 matching '$what'):"
        cat "$t/out" "$t/err"
        fail=1
    else
        echo "ok: ab.sh $*: $(cat "$t/err")"
    fi
}
expect_2 "neither a commit" no-such-revision-xyz
expect_2 "neither a commit" HEAD no-such-revision-xyz
expect_2 "neither a commit" HEAD "$t"
expect_2 "missing OLD_REV"
expect_2 "ROUNDS must be" -r 0 HEAD
expect_2 "ROUNDS must be" -r 3x HEAD
expect_2 "needs a value" -r
expect_2 "unknown option" --bogus HEAD
expect_2 "too many arguments" HEAD HEAD HEAD
expect_2 "cannot write" -o "$t/no/such/dir/out.md" HEAD
AB_TIMEOUT=abc expect_2 "AB_TIMEOUT" HEAD
exit $fail
