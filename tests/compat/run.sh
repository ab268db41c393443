#!/bin/sh
# run.sh: runs the free CSN hello pair under csnrun and checks both its exit status and output.
set -u
out=$("$1" "$2") || { echo "compat: csnrun exited $?: $out"; exit 1; }
echo "$out"
echo "$out" | grep -q "^sink received string: Hello world containing 12 bytes$" || { echo "compat: no hello"; exit 1; }
echo "$out" | grep -q "^sink answered 42$" || { echo "compat: no answer"; exit 1; }
