#!/bin/sh
# corrupt.sh: a corrupted byte (injected with NETTEST_TEST_CORRUPT) must abort nettest with a message naming rank, peer, size and offset.
# usage: corrupt.sh csn|mpi|lean PROGRAM
set -eu
here=$(cd "$(dirname "$0")" && pwd)
kind=$1 prog=$2
tmp=$(mktemp -d "${TMPDIR:-/tmp}/nettest-corrupt.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' INT TERM HUP
rc=0
if [ "$kind" = mpi ]; then
    NETTEST_TEST_CORRUPT=7 sh "$here/launch.sh" mpi 3 -x NETTEST_TEST_CORRUPT "$prog" uK m4 M4 T5 \
        >"$tmp/out" 2>"$tmp/err" || rc=$?
else
    NETTEST_TEST_CORRUPT=7 sh "$here/launch.sh" "$kind" 3 "$prog" uK m4 M4 T5 \
        >"$tmp/out" 2>"$tmp/err" || rc=$?
fi
cat "$tmp/err"
[ "$rc" -ne 0 ] || { echo "corrupt: nettest did not fail" >&2; exit 1; }
# Message 7 is the second iteration of Star2 (T5): rank 2 gets rank 0's 4096 bytes, byte 2048 flipped.
grep -q "RANK 2: payload check failed: Star2, size 4096 bytes, repeat 1, iteration 2: the message from rank 0 differs at offset 2048" "$tmp/err" ||
    { echo "corrupt: no clear message" >&2; exit 1; }
echo "corrupt: ok"
