#!/bin/sh
# rank.sh: wraps a testbed rank: records what csnrun gave it (rank, host, CSN_ADDR, CSN_NS, job id) in $CSN_TB_DIR, moves its data over ofi when CSN_TB_OFI=1 and, for rank $CSN_TB_VICTIM, schedules its own SIGKILL.
d=${CSN_TB_DIR:?CSN_TB_DIR is not set}
printf '%s %s %s %s %s\n' "$CSN_RANK" "$CSN_HOST" "${CSN_ADDR:-none}" "$CSN_NS" "$CSN_JOBID" \
    >"$d/rank.$CSN_RANK"
# CSN_TB_OFI=1: the rank's data goes over libfabric (tcp provider on the host's veth0).
if [ "${CSN_TB_OFI:-}" = 1 ]; then
    export CSN_TRANSPORT=ofi FI_PROVIDER=tcp FI_TCP_IFACE=veth0
fi
if [ "${CSN_TB_VICTIM:-}" = "$CSN_RANK" ]; then
    # $$ is this shell, which exec below turns into the program: the program is killed.
    (sleep "${CSN_TB_DELAY:-2}"; kill -KILL $$) &
fi
exec "$@"
