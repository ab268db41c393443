#!/bin/bash
# docs_check.sh: the references in docs/ and the manual page keep up with the public header:
# every function of include/csn.h is in docs/api.md, in csn(3) and has a page name; the
# README points inside the repository only.
set -euo pipefail
src=$1
fail() { echo "docs: FAIL: $*" >&2; exit 1; }
calls=$(sed -n 's/^CSN_API[^(]*[ *]\(csn_[a-z_]*\)(.*/\1/p' "$src/include/csn.h")
[ -n "$calls" ] || fail "no functions found in include/csn.h"
for c in $calls; do
    grep -q "\\b$c(" "$src/docs/api.md" || fail "$c is not in docs/api.md"
    grep -q "$c" "$src/docs/man/csn.3" || fail "$c is not in docs/man/csn.3"
    grep -q "\\b$c\\b" "$src/docs/CMakeLists.txt" || fail "$c has no page name (docs/CMakeLists.txt)"
done
! grep -n '\.\./shared\|shared/CONTRACT' "$src/README.md" || fail "README.md points outside the repository"
for f in api.md csnrun.md nettest.md tools.md; do
    [ -s "$src/docs/$f" ] || fail "docs/$f missing"
done
echo "docs: $(echo "$calls" | wc -w) calls documented"
