#!/bin/bash
# netns_job.sh: run by "testbed.sh exec" in host 1 of the network-namespace testbed: test_mp
# exchange over CSN_TRANSPORT=ofi (tcp provider on each host's veth0) across the four hosts,
# then nettest, whose header must name the provider.
set -u
rank_env=(env CSN_TRANSPORT=ofi FI_PROVIDER=tcp FI_TCP_IFACE=veth0 CSN_LOOKUP_TIMEOUT=20)
timeout 60 "$TB_CSNRUN" --hostfile "$TB_HOSTS" --rsh "ip netns exec" -np 4 \
    "${rank_env[@]}" "$TB_TEST_MP" exchange || { echo "FAIL: test_mp exchange over ofi across the hosts"; exit 1; }
out=$(timeout 100 "$TB_CSNRUN" --hostfile "$TB_HOSTS" --rsh "ip netns exec" -np 4 \
    "${rank_env[@]}" "$TB_NETTEST" uK m1 M16 K4 R1 T10 Ptotal 2>&1) || { echo "$out"; echo "FAIL: nettest over ofi"; exit 1; }
echo "$out" | sed -n '/^Size/,/^16/p'
echo "$out" | grep -q "ofi:tcp" || { echo "FAIL: nettest does not name the ofi provider"; exit 1; }
echo "ok: test_mp exchange and nettest over ofi:tcp across 4 namespace hosts"
