#!/bin/bash
# run.sh PROBE COMMAND...: runs COMMAND (a transport-contract test) over CSN_TRANSPORT=ofi when
# the libfabric component and the provider FI_PROVIDER names are usable here, else exits 77
# (skip) with one line saying why. The test's own exit status is the result.
set -u
probe=$1
shift
export CSN_TRANSPORT=ofi
export FI_PROVIDER=${FI_PROVIDER:-tcp}
out=$("$probe" 2>&1)
rc=$?
if [ "$rc" -ne 0 ]; then
    echo "$out"
    [ "$rc" -eq 77 ] && echo "SKIP: ofi transport over FI_PROVIDER=$FI_PROVIDER is not available"
    exit "$rc"
fi
echo "$out"
exec "$@"
