#!/bin/bash
# testbed.sh: four "hosts" (network namespaces) on a shaped Linux bridge (a fifth namespace); runs one csnrun case across them and tears everything down.
#
# Usage: testbed.sh CASE     CASE: hello | nettest | kill | refuse | rates | logp | scale
#        testbed.sh exec COMMAND [ARGS...]   runs COMMAND in host 1 with the testbed up
#        (TB_HOSTS: hostfile of the 4 hosts, one slot each; TB_NS: the namespace prefix),
#        e.g. testbed.sh exec sh -c '$TB_CSNRUN --hostfile $TB_HOSTS --rsh "ip netns exec" ...'
# Programs come from the environment (tests/netns.cmake sets them): TB_CSNRUN, TB_HELLO,
# TB_TEST_MP, TB_NETTEST, TB_PROBE, TB_INTRUDER, TB_LOGP. TB_RATE (default 200mbit) is the rate of
# every host link, each way. Exit 0 pass, 1 fail, 77 skip (not root, no ip netns, no tc,
# a program not built; rates: no iperf3, or more than 10% below the expectation on a machine
# with more runnable processes than CPUs; logp: more than 10% below its expectation, or above
# it on such a machine; unless CSN_NETNS_STRICT=1 - see there).
#
# The network: namespaces <P>h1..<P>h4 hold veth0 with 10.77.0.N/24; their peers p1..p4 sit on
# bridge br0 in <P>sw, which also has 10.77.0.254 (the outsider of the refuse case). htb
# shapes both ends of every host link, so each host sends and receives at TB_RATE, round
# robin among one short queue per other host, pure ACKs first (see shape_fair); the hosts
# run TCP Reno. For comparison, TB_SHAPE=fifo gives the former links (one tbf FIFO each way,
# 50 ms at the host, 400 ms at the switch port) and TB_CC=bbr this machine's default
# congestion control. The addresses exist inside these namespaces only. csnrun runs in <P>h1
# and reaches every host, h1 included, through --rsh "ip netns exec" with a hostfile of
# namespace names.
set -u

CASE=${1:-}
RATE=${TB_RATE:-200mbit}
P="csntb$$"
SW="${P}sw"
HOSTS="${P}h1 ${P}h2 ${P}h3 ${P}h4"
NSALL="$SW $HOSTS"
TB=
UP=0

say() { echo "testbed: $*"; }
skip() { say "SKIP: $*"; teardown; exit 77; }
# A known-answer miss that a busy CPU, not csn or the link, may cause skips (with its line)
# where more processes are runnable than there are CPUs, unless CSN_NETNS_STRICT=1.
skip_if_busy() {
    local load ncpu
    load=$(cut -d' ' -f1 /proc/loadavg)
    ncpu=$(nproc)
    [ "${CSN_NETNS_STRICT:-0}" != 1 ] && awk -v l="$load" -v n="$ncpu" 'BEGIN { exit !(l > n) }' &&
        skip "$* at load $load on $ncpu CPUs (machine busy); CSN_NETNS_STRICT=1 makes this a failure"
    return 0
}
fail() { say "FAIL: $*"; [ -n "$TB" ] && [ -d "$TB" ] && tail -n 30 "$TB"/*.err "$TB"/*.out 2>/dev/null; teardown; exit 1; }

# Kills whatever still runs in our namespaces, deletes them and the temporary directory.
teardown() {
    local ns pids
    [ "$UP" = 1 ] || { [ -n "$TB" ] && rm -rf "$TB"; return 0; }
    for ns in $NSALL; do
        pids=$(ip netns pids "$ns" 2>/dev/null)
        [ -n "$pids" ] && kill -KILL $pids 2>/dev/null
    done
    for ns in $NSALL; do
        ip netns del "$ns" 2>/dev/null
    done
    UP=0
    [ -n "$TB" ] && rm -rf "$TB"
    return 0
}
trap 'teardown' EXIT
trap 'teardown; exit 130' INT TERM

# Namespaces of a testbed whose script is gone (killed by SIGKILL: ctest's timeout): their
# processes killed, the namespaces deleted. The name holds the script's pid (csntb<pid>...).
clear_stale() {
    local ns pid pids
    for ns in $(ip netns list 2>/dev/null | awk '/^csntb[0-9]+(sw|h[1-4])( |$)/ { print $1 }'); do
        pid=${ns#csntb}
        pid=${pid%sw}
        pid=${pid%h[1-4]}
        [ "$pid" != $$ ] || continue
        grep -qs testbed.sh "/proc/$pid/cmdline" && continue
        pids=$(ip netns pids "$ns" 2>/dev/null)
        [ -n "$pids" ] && kill -KILL $pids 2>/dev/null
        ip netns del "$ns" 2>/dev/null && say "deleted $ns, left by a testbed that was killed"
    done
    return 0
}

need_prog() {
    [ -n "${2:-}" ] && [ -x "$2" ] || skip "$1 is not built (${2:-unset})"
}

# shape_fair NS DEV src|dst SELF: DEV sends at most RATE (htb), served round robin (quantum:
# two full frames) among one queue per other host - by destination on a host's link, by
# source on a switch port - each 128 KB at the host (5 ms at 200 mbit/s), 512 KB at the
# switch port; pure TCP acknowledgements go first, in a strict-priority queue of their own.
# Every host queue is guaranteed RATE/3 and may take all of RATE while the others are empty,
# so the link never idles while any queue holds a frame. The bound is unchanged: no queue
# makes a link faster than RATE, and the priority queue carries no payload. Unclassified
# frames (ARP) get a small guaranteed share.
# Why this and not one long FIFO (the first version: one tbf, 400 ms at the switch port): a
# real switch arbitrates an output among its inputs (virtual output queues, as in the CS-2's
# crossbar); a host's NIC serves its transmit queues in turn. One deep FIFO per link let
# every flow's standing queue hold up the other direction's ACKs and csn's RTS/CTS (ACK round
# trips of 12-16 ms behind 0.77 MB at a Star2 centre's port) and let TCP share a link
# unevenly: plain TCP, with no csn at all, fell 5-20% short of the shaping in the
# Star2/Chaos2/Ring2 patterns (bench/netns/RESULTS.md).
# Why the acknowledgements' queue (round 3): with data and ACKs in one queue per host pair,
# every flow's ACKs waited behind up to 2 x 128 KB of the reverse flow's data, so a flow's
# round trip (10-16 ms) needed a window larger than the queues hold and Reno, halving on each
# loss, left the links ~5% idle in every exchange (csn's Ring2 median 0.39 s against 0.351 s).
# Only segments too short to hold a csn frame (IP length < 88: a TCP header with timestamps
# and up to three SACK blocks is at most 80 bytes; a frame header alone is 40) are matched:
# giving data segments priority would reorder a flow, which TCP takes for loss.
# Why 512 KB at the switch port: in Star2 each leaf sends at RATE into its third of the
# centre's port (3:1); with 128 KB there, bursts lost retransmissions and a flow's tail waited
# for retransmission timeouts (200 ms to 1.2 s, one Star2 iteration in four). A switch has
# buffers of this order per port; ACKs and RTS/CTS no longer wait behind them (see above).
shape_fair() {
    local ns=$1 dev=$2 dir=$3 self=$4 j m lim
    lim=$([ "$dir" = dst ] && echo 131072 || echo 524288)
    tc -n "$ns" qdisc add dev "$dev" root handle 1: htb default 9 || return 1
    tc -n "$ns" class add dev "$dev" parent 1: classid 1:1 htb rate "${RATE_KBIT}kbit" \
        ceil "${RATE_KBIT}kbit" quantum 3028 || return 1
    tc -n "$ns" class add dev "$dev" parent 1:1 classid 1:9 htb rate "$((RATE_KBIT / 100))kbit" \
        ceil "${RATE_KBIT}kbit" quantum 3028 prio 1 || return 1
    # Pure ACKs: prio 0 (served first), guaranteed 5% (they use ~0.3% of the bytes).
    tc -n "$ns" class add dev "$dev" parent 1:1 classid 1:8 htb rate "$((RATE_KBIT / 20))kbit" \
        ceil "${RATE_KBIT}kbit" quantum 3028 prio 0 || return 1
    tc -n "$ns" qdisc add dev "$dev" parent 1:8 bfifo limit 131072 || return 1
    # IP total length < 88: [0,64) [64,80) [80,88), by masks of the length field.
    for m in 0x0000/0xffc0 0x0040/0xfff0 0x0050/0xfff8; do
        tc -n "$ns" filter add dev "$dev" parent 1: protocol ip prio 1 u32 \
            match u16 "${m%/*}" "${m#*/}" at 2 flowid 1:8 || return 1
    done
    for j in 1 2 3 4; do
        [ "$j" = "$self" ] && continue
        tc -n "$ns" class add dev "$dev" parent 1:1 classid "1:1$j" htb \
            rate "$((RATE_KBIT / 3))kbit" ceil "${RATE_KBIT}kbit" quantum 3028 prio 1 || return 1
        tc -n "$ns" qdisc add dev "$dev" parent "1:1$j" bfifo limit "$lim" || return 1
        tc -n "$ns" filter add dev "$dev" parent 1: protocol ip prio 2 u32 \
            match ip "$dir" "10.77.0.$j/32" flowid "1:1$j" || return 1
    done
}

setup() {
    local i
    [ "$(id -u)" = 0 ] || skip "needs root for network namespaces"
    command -v ip >/dev/null 2>&1 || skip "ip (iproute2) is not installed"
    command -v tc >/dev/null 2>&1 || skip "tc (iproute2) is not installed"
    RATE_KBIT=$(awk -v r="$RATE" 'BEGIN { n = r + 0; u = r; sub(/^[0-9.]+/, "", u)
        m = (u == "gbit") ? 1e6 : (u == "mbit") ? 1e3 : (u == "kbit") ? 1 : 0
        printf "%d", n * m }')
    [ "${RATE_KBIT:-0}" -ge 3000 ] 2>/dev/null ||
        { echo "testbed: TB_RATE '$RATE' is not a rate of at least 3mbit (e.g. 200mbit, 1gbit)" >&2; exit 2; }
    TB=$(mktemp -d "${TMPDIR:-/tmp}/csn-testbed-XXXXXX") || fail "mktemp"
    mkdir "$TB/tmp" "$TB/run"
    clear_stale
    ip netns add "$SW" 2>"$TB/netns.err" || skip "ip netns add does not work here: $(cat "$TB/netns.err")"
    UP=1
    ip -n "$SW" link set lo up || fail "lo in $SW"
    ip -n "$SW" link add br0 type bridge || skip "no Linux bridge here"
    for i in 1 2 3 4; do
        ip netns add "${P}h$i" || fail "ip netns add ${P}h$i"
        ip link add veth0 netns "${P}h$i" type veth peer name "p$i" netns "$SW" ||
            fail "veth pair for host $i"
        ip -n "$SW" link set "p$i" master br0 || fail "p$i on the bridge"
        ip -n "${P}h$i" addr add "10.77.0.$i/24" dev veth0 || fail "address of host $i"
        ip -n "${P}h$i" link set lo up || fail "lo in host $i"
        # TCP of the hosts: Reno (loss-based, in every kernel, allowed in a namespace) with
        # fixed 8 MiB socket buffers. This machine defaults to BBR, which is slow to take up
        # the bandwidth a finished flow leaves (measured: Chaos2 never better than -13%).
        ip netns exec "${P}h$i" sysctl -q net.ipv4.tcp_congestion_control="${TB_CC:-reno}" \
            net.ipv4.tcp_rmem="4096 8388608 33554432" net.ipv4.tcp_wmem="4096 8388608 33554432" ||
            fail "TCP settings of host $i"
        if [ "${TB_SHAPE:-fair}" = fifo ]; then
            # The former single-FIFO links, for comparison (bench/netns/RESULTS.md).
            tc -n "${P}h$i" qdisc add dev veth0 root tbf rate "$RATE" burst 64kb latency 50ms ||
                skip "tc tbf does not work here"
            tc -n "$SW" qdisc add dev "p$i" root tbf rate "$RATE" burst 64kb latency 400ms ||
                fail "tbf on p$i"
        else
            shape_fair "${P}h$i" veth0 dst "$i" || skip "tc htb does not work here"
            shape_fair "$SW" "p$i" src "$i" || fail "htb on p$i"
        fi
        ip -n "$SW" link set "p$i" up || fail "p$i up"
        ip -n "${P}h$i" link set veth0 up || fail "veth0 up in host $i"
    done
    ip -n "$SW" addr add 10.77.0.254/24 dev br0 || fail "bridge address"
    ip -n "$SW" link set br0 up || fail "bridge up"
    : >"$TB/hosts1"
    for i in 1 2 3 4; do echo "${P}h$i" >>"$TB/hosts1"; done
    printf '%s slots=2\n%s slots=2\n%s\n%s\n' ${HOSTS} >"$TB/hosts2"
    export TMPDIR="$TB/tmp" CSN_TB_DIR="$TB/run" CSN_LOOKUP_TIMEOUT=20
    unset CSN_ADDR CSN_IFACE CSN_TRANSPORT
    say "4 hosts ${P}h1..4 (10.77.0.1-4) on br0 in $SW, every link $RATE each way (${TB_SHAPE:-fair})"
}

# A job past its limit: where its processes wait, into $TB/LOG.hang and the output (a hang
# seen only in CI leaves its stacks behind): every process in the hosts, then gdb's stacks of
# up to 2 ranks of each host (the lowest pids, not csnrun's: rank 0 among them), 20 s each.
dump_hang() {
    local log=$1 limit=$2 pid ns n
    {
        echo "== the job ran past its limit of $limit s; processes in the hosts:"
        for ns in $HOSTS; do
            for pid in $(ip netns pids "$ns" 2>/dev/null); do
                echo "$ns $(ps -o pid=,stat=,pcpu=,args= -p "$pid" 2>/dev/null | cut -c1-120)"
            done
        done | head -n 40
        command -v gdb >/dev/null 2>&1 || { echo "(gdb is not installed: no stacks)"; return 0; }
        for ns in $HOSTS; do
            n=0
            for pid in $(ip netns pids "$ns" 2>/dev/null | sort -n); do
                [ $n -lt 2 ] || break
                [ "$(cat "/proc/$pid/comm" 2>/dev/null)" != csnrun ] || continue
                n=$((n + 1))
                echo "== $ns pid $pid: $(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | cut -c1-100)"
                timeout 20 gdb -batch -nx -p "$pid" -ex 'thread apply all bt 12' 2>&1 |
                    grep -E '^(#|Thread)' | cut -c1-200 | head -n 60
            done
        done
    } >"$TB/$log.hang" 2>&1
    cat "$TB/$log.hang"
}

# csnrun from host 1 over the four hosts: run_job HOSTFILE LOG ARGS...; sets RC (124: the job
# ran past its limit and was ended: SIGTERM, SIGKILL 10 s later). The limit is JOB_LIMIT
# seconds (default 40), cut so that the script still ends, with the stacks and its teardown,
# 30 s before TB_TIMEOUT (the test's own timeout, when set): ctest kills by SIGKILL, which
# leaves the namespaces and every process in them behind.
run_job() {
    local hf=$1 log=$2 pid ticks=0 limit=${JOB_LIMIT:-40}
    shift 2
    if [ -n "${TB_TIMEOUT:-}" ] && [ $((TB_TIMEOUT - SECONDS - 30)) -lt "$limit" ]; then
        limit=$((TB_TIMEOUT - SECONDS - 30))
        [ "$limit" -ge 5 ] || limit=5
        say "the job's limit is cut to $limit s (the setup took $SECONDS s of the test's $TB_TIMEOUT)"
    fi
    ip netns exec "${P}h1" "$TB_CSNRUN" --hostfile "$TB/$hf" --rsh "ip netns exec" \
        "$@" >"$TB/$log.out" 2>"$TB/$log.err" &
    pid=$!
    while kill -0 "$pid" 2>/dev/null && [ $ticks -lt $((limit * 10)) ]; do
        sleep 0.1
        ticks=$((ticks + 1))
    done
    if kill -0 "$pid" 2>/dev/null; then
        dump_hang "$log" "$limit"
        kill -TERM "$pid" 2>/dev/null
        for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$pid" 2>/dev/null
        wait "$pid" 2>/dev/null
        RC=124
        return
    fi
    wait "$pid"
    RC=$?
}

# What csnrun gave each rank (rank.sh): host, CSN_ADDR, CSN_NS. Rank r runs on host h(r).
check_ranks() {
    local n=$1 r host addr ns want_h
    shift
    for r in $(seq 0 $((n - 1))); do
        [ -f "$TB/run/rank.$r" ] || fail "rank $r never started"
        read -r _ host addr ns _ <"$TB/run/rank.$r"
        want_h=$1
        shift
        [ "$host" = "${P}h$want_h" ] || fail "rank $r ran on '$host', expected ${P}h$want_h"
        [ "$addr" = "10.77.0.$want_h" ] ||
            fail "rank $r on host $want_h got CSN_ADDR=$addr, expected 10.77.0.$want_h"
        case "$ns" in
        tcp:10.77.0.1:*) ;;
        *) fail "rank $r got CSN_NS=$ns, expected the name service on tcp:10.77.0.1" ;;
        esac
    done
}

# Nothing of the job is left: no process in any namespace (after a short grace for the
# last exits), no job directory, no shared-memory file of the job.
check_clean() {
    local ns left jobid
    for _ in $(seq 40); do
        left=
        for ns in $NSALL; do left="$left$(ip netns pids "$ns" 2>/dev/null)"; done
        [ -z "$left" ] && break
        sleep 0.1
    done
    [ -z "$left" ] || fail "processes left in the namespaces: $(ps -o pid=,args= -p "$(echo $left | tr ' ' ,)")"
    [ -z "$(ls -A "$TB/tmp")" ] || fail "job directories left: $(ls "$TB/tmp")"
    for f in "$TB"/run/rank.*; do
        [ -f "$f" ] || continue
        read -r _ _ _ _ jobid <"$f"
        if ls /dev/shm/csn."$jobid".* >/dev/null 2>&1; then
            fail "shared-memory files left: $(ls /dev/shm/csn."$jobid".*)"
        fi
    done
}

case_hello() {
    need_prog hello "${TB_HELLO:-}"
    need_prog test_mp "${TB_TEST_MP:-}"
    # 6 ranks: two on h1, two on h2, one each on h3 and h4 (shared memory and TCP).
    run_job hosts2 hello -np 6 "$TB_RANKSH" "$TB_HELLO"
    [ "$RC" = 0 ] || fail "hello across the hosts exited $RC"
    [ "$(grep -c '^sink received string: Hello world$' "$TB/hello.out")" = 5 ] ||
        fail "hello: the sink did not get 5 greetings: $(cat "$TB/hello.out")"
    check_ranks 6 1 1 2 2 3 4
    check_clean
    rm -f "$TB"/run/rank.*
    run_job hosts2 mp -np 6 "$TB_RANKSH" "$TB_TEST_MP" exchange
    [ "$RC" = 0 ] || fail "test_mp exchange across the hosts exited $RC"
    check_ranks 6 1 1 2 2 3 4
    check_clean
    say "hello and test_mp exchange ran across 4 hosts (6 ranks)"
}

case_nettest() {
    need_prog nettest "${TB_NETTEST:-}"
    run_job hosts1 nettest -np 4 "$TB_RANKSH" "$TB_NETTEST" uK m1 M64 K4 R1 T20 Ptotal
    [ "$RC" = 0 ] || fail "nettest across 4 hosts exited $RC"
    grep -q "^64[[:space:]]" "$TB/nettest.out" || fail "nettest printed no row for 64 K"
    check_ranks 4 1 2 3 4
    check_clean
    # The header names what was measured: one rank per host, every pair over TCP (issue 17:
    # it said "shm", the intra-host transport, while the figures were TCP's).
    grep -q "transport tcp;" "$TB/nettest.out" ||
        fail "nettest across 4 hosts (one rank each) does not say tcp: $(grep transport "$TB/nettest.out")"
    sed -n '/^Size/,/^64/p' "$TB/nettest.out"
    # Two ranks on each of hosts 1 and 2: pairs within a host and between hosts.
    run_job hosts2 nettest2 -np 6 "$TB_RANKSH" "$TB_NETTEST" uK m1 M1 K2 R1 T1 Ptotal
    [ "$RC" = 0 ] || fail "nettest -np 6 across 4 hosts exited $RC"
    grep -q "transport shm within hosts, tcp between;" "$TB/nettest2.out" ||
        fail "nettest with 2 ranks per host does not say 'shm within hosts, tcp between': $(grep transport "$TB/nettest2.out")"
    check_clean
    say "transports named: $(grep -o 'transport [^;]*' "$TB/nettest.out") (1 rank per host), $(grep -o 'transport [^;]*' "$TB/nettest2.out") (2 per host)"
}

# Start-up at scale (issue 17): 1024 ranks over the 4 hosts, a tiny nettest. Every rank
# connects to rank 0 at once, 768 of them over TCP: that overflowed rank 0's listen queue of
# 128 (SYN cookies, connections reset) and its cap of 256 connections awaiting their HELLO,
# and failed 8 runs in 13 with "peer lost". Rank 0's first answers to the 1023 ranks then
# waited one round trip each (3.6 s in all). One job of a few seconds; ctest runs it alone.
case_scale() {
    need_prog nettest "${TB_NETTEST:-}"
    JOB_LIMIT=100 run_job hosts1 scale -np 1024 "$TB_NETTEST" uK m1 M1 T1 R1 Coff Ptotal
    [ "$RC" = 0 ] || fail "1024 ranks of nettest across 4 hosts exited $RC: $(tail -n 3 "$TB/scale.err")"
    grep -q "^1[[:space:]]" "$TB/scale.out" || fail "nettest -np 1024 printed no row for 1 K"
    grep -q "transport shm within hosts, tcp between;" "$TB/scale.out" ||
        fail "nettest -np 1024 does not say 'shm within hosts, tcp between': $(grep transport "$TB/scale.out")"
    check_clean
    say "1024 ranks of nettest ran across 4 hosts: $(grep -o 'complete in .*' "$TB/scale.out")"
}

case_kill() {
    need_prog nettest "${TB_NETTEST:-}"
    # Rank 2 (host 3) is killed 2 s into a long run: the job ends everywhere.
    CSN_TB_VICTIM=2 CSN_TB_DELAY=2 run_job hosts1 kill -np 4 "$TB_RANKSH" "$TB_NETTEST" \
        uK m64 M64 R1 T1000000 Ptotal
    [ "$RC" != 0 ] || fail "csnrun exited 0 although rank 2 was killed"
    [ "$RC" != 124 ] || fail "the job did not end after rank 2 was killed (timeout)"
    grep -q "rank 2 " "$TB/kill.err" || fail "csnrun's messages do not name rank 2: $(cat "$TB/kill.err")"
    check_clean
    say "rank 2 killed: csnrun exited $RC; $(grep -m1 'csnrun: rank' "$TB/kill.err")"
}

case_refuse() {
    local ep1 ns i
    need_prog probe "${TB_PROBE:-}"
    need_prog intruder "${TB_INTRUDER:-}"
    ip netns exec "${P}h1" timeout 40 "$TB_CSNRUN" --hostfile "$TB/hosts1" --rsh "ip netns exec" \
        -np 4 "$TB_RANKSH" "$TB_PROBE" "$TB/run" >"$TB/refuse.out" 2>"$TB/refuse.err" &
    local job=$!
    for i in $(seq 300); do
        [ -f "$TB/run/ready" ] && break
        kill -0 $job 2>/dev/null || break
        sleep 0.1
    done
    [ -f "$TB/run/ready" ] || { kill $job 2>/dev/null; wait $job; fail "the probe job did not come up"; }
    ep1=$(sed -n 's/^1 .*|tcp:\([0-9.]*:[0-9]*\)|.*/\1/p' "$TB/run/ep")
    ns=$(sed -n 's/^tcp:\([0-9.]*:[0-9]*\)$/\1/p' "$TB/run/ns")
    [ -n "$ep1" ] && [ -n "$ns" ] ||
        { kill $job; wait $job; fail "no TCP endpoints published: $(cat "$TB/run/ep" "$TB/run/ns")"; }
    say "rank 1 listens on $ep1, the name service on $ns; knocking from $SW (10.77.0.254)"
    for how in garbage wrongkey; do
        ip netns exec "$SW" "$TB_INTRUDER" "$how" "$ep1" >>"$TB/intruder.out" 2>&1 ||
            { touch "$TB/run/go"; wait $job; fail "rank 1 did not refuse ($how): $(cat "$TB/intruder.out")"; }
    done
    ip netns exec "$SW" "$TB_INTRUDER" ns "$ns" >>"$TB/intruder.out" 2>&1 ||
        { touch "$TB/run/go"; wait $job; fail "the name service did not refuse: $(cat "$TB/intruder.out")"; }
    touch "$TB/run/go"
    wait $job
    RC=$?
    cat "$TB/intruder.out"
    [ "$RC" = 0 ] || fail "the job failed after the intrusions (exit $RC)"
    [ "$(grep -c 'probe: rank [0-3] ok' "$TB/refuse.out")" = 4 ] ||
        fail "not every rank finished its exchange: $(cat "$TB/refuse.out")"
    grep -q "csn\[1\]: dropping .*connection without the job key refused" "$TB/refuse.err" ||
        fail "rank 1 did not log the refused key: $(cat "$TB/refuse.err")"
    [ "$(grep -c 'csn\[1\]: dropping a connection not yet introduced' "$TB/refuse.err")" -ge 2 ] ||
        fail "rank 1 did not log both refusals: $(cat "$TB/refuse.err")"
    grep -q "name service: closed a connection that did not present the job key" "$TB/refuse.err" ||
        fail "the name service did not log the refusal: $(cat "$TB/refuse.err")"
    grep 'refused\|did not present' "$TB/refuse.err"
    check_ranks 4 1 2 3 4
    check_clean
}

# Megabytes per second (10^6) from an iperf3 "... N Mbits/sec ... receiver" line.
iperf_mbs() {
    awk '/receiver/ { for (i = 1; i < NF; i++) if ($(i + 1) == "Mbits/sec") print $i / 8 }' "$1" | tail -n 1
}

case_rates() {
    local srv ok e lo hi col v status=0 short=""
    need_prog nettest "${TB_NETTEST:-}"
    command -v iperf3 >/dev/null 2>&1 || skip "iperf3 is not installed (Debian package iperf3)"
    command -v awk >/dev/null 2>&1 || skip "awk is missing"
    # One link's reference: iperf3 from host 1 to host 2, 3 s after a 1 s warm-up.
    ip netns exec "${P}h2" iperf3 -s -B 10.77.0.2 -p 5201 >"$TB/iperf3s.out" 2>&1 &
    srv=$!
    ok=0
    for _ in $(seq 30); do
        if ip netns exec "${P}h1" iperf3 -c 10.77.0.2 -p 5201 -t 3 -O 1 -f m >"$TB/iperf3.out" 2>&1; then
            ok=1
            break
        fi
        sleep 0.2
    done
    kill $srv 2>/dev/null
    wait $srv 2>/dev/null
    [ $ok = 1 ] || fail "iperf3 between the hosts failed: $(cat "$TB/iperf3.out")"
    IPERF=$(iperf_mbs "$TB/iperf3.out")
    [ -n "$IPERF" ] || fail "no rate in iperf3's output: $(cat "$TB/iperf3.out")"
    # R(local) of the bidirectional tests: rank 0 sends and receives Ni messages of L bytes,
    # each way at the link rate, so R(local) = 2*Ni*L / (Ni*L/rate) = 2 * the link's payload
    # rate: the configured rate times 1448/1514 (TCP payload per full Ethernet frame with
    # timestamps, which tbf counts with the 14-byte header).
    RATE_MBS=$(awk -v r="$RATE" 'BEGIN {
        n = r + 0; u = r; sub(/^[0-9.]+/, "", u)
        m = (u == "gbit") ? 1e9 : (u == "mbit") ? 1e6 : (u == "kbit") ? 1e3 : 1
        print n * m / 8 / 1e6 }')
    EXPECT=$(awk -v r="$RATE_MBS" 'BEGIN { printf "%.1f", 2 * r * 1448 / 1514 }')
    # Two repeats of 4 iterations; the known answer is nettest's own summary, the best
    # repeat of each test (seed 001's "Best network throughput values"), so that one repeat
    # that TCP starts cold or the busy machine stalls does not decide. About 35 s.
    JOB_LIMIT=80 run_job hosts1 rates -np 4 "$TB_RANKSH" "$TB_NETTEST" uM m4 M4 R2 T4 Plocal
    [ "$RC" = 0 ] || fail "nettest uM m4 M4 across 4 hosts exited $RC"
    sed -n '/^Size/,$p' "$TB/rates.out"
    say "configured $RATE = $RATE_MBS MB/s each way; iperf3 one link: $IPERF MB/s; expected R(local) of Star2, Chaos2, Ring2: $EXPECT MB/s"
    for col in 3:Star2 5:Chaos2 7:Ring2; do
        v=$(awk -v c="${col%%:*}" '/Best network throughput/ { b = 1; next }
            b && /^[ \t]*[0-9]/ { print $(c - 1); exit }' "$TB/rates.out")
        [ -n "$v" ] || fail "no ${col#*:} value in nettest's table"
        e=$(awk -v v="$v" -v x="$EXPECT" 'BEGIN { printf "%+.1f", (v - x) / x * 100 }')
        say "${col#*:}: R(local) $v MB/s, $e % from the expectation"
        echo "${col#*:} $v $e" >>"$TB/rates.sum"
        if awk -v v="$v" -v x="$EXPECT" 'BEGIN { exit !(v > x * 1.10) }'; then
            # Faster than the shaping allows: the measurement or the formula is wrong.
            status=1
        elif awk -v v="$v" -v x="$EXPECT" 'BEGIN { exit !(v < x * 0.90) }'; then
            short="$short ${col#*:}"
        fi
    done
    check_clean
    echo "iperf3 $IPERF configured $RATE_MBS expected $EXPECT" >>"$TB/rates.sum"
    [ -n "${TB_RESULTS:-}" ] && cp "$TB/rates.sum" "$TB_RESULTS"
    [ $status = 0 ] || fail "R(local) above the shaped rate by more than 10%"
    # Slower fails too: on these links csn reaches 94-99.8% of the bound, also with the
    # machine loaded (Ring2 iterations 0.355-0.39 s against 0.351 s; BENCHMARKS.md section 7),
    # so a 10% miss is a fault. iperf3 is printed above to tell a slow link from a slow csn.
    # Except where the CPU, not the link, is short: a sanitizer build (TSan: 5-15x slower) on a
    # machine with more runnable processes than CPUs gave Ring2 -11.5 % in a CI run. Then the
    # miss is a skip with a line, unless CSN_NETNS_STRICT=1.
    [ -z "$short" ] || skip_if_busy "R(local) more than 10% below the expectation:$short (iperf3 one link: $IPERF MB/s)"
    [ -z "$short" ] || fail "R(local) more than 10% below the expectation:$short (iperf3 one link: $IPERF MB/s)"
}

# Issue 7's known answer for logp: rank 0 on host 1, rank 1 on host 2, so TCP over one link
# shaped to TB_RATE each way. From 64 KiB up the link, not the CPU, sets the time per byte,
# so 1/G must be the link's TCP payload rate, the configured rate times 1448/1514 (the rates
# case's expectation; iperf3 gets 90-94% of the rate here). iperf3, when installed, measures
# the same link first: printed beside the result, not checked. TB_RESULTS, when set, receives
# logp's JSON.
case_logp() {
    local srv g bw e
    need_prog logp "${TB_LOGP:-}"
    command -v awk >/dev/null 2>&1 || skip "awk is missing"
    RATE_MBS=$(awk -v r="$RATE" 'BEGIN {
        n = r + 0; u = r; sub(/^[0-9.]+/, "", u)
        m = (u == "gbit") ? 1e9 : (u == "mbit") ? 1e6 : (u == "kbit") ? 1e3 : 1
        print n * m / 8 / 1e6 }')
    EXPECT=$(awk -v r="$RATE_MBS" 'BEGIN { printf "%.2f", r * 1448 / 1514 }')
    IPERF="(iperf3 not installed)"
    if command -v iperf3 >/dev/null 2>&1; then
        ip netns exec "${P}h2" iperf3 -s -B 10.77.0.2 -p 5201 >"$TB/iperf3s.out" 2>&1 &
        srv=$!
        for _ in $(seq 30); do
            ip netns exec "${P}h1" iperf3 -c 10.77.0.2 -p 5201 -t 2 -O 1 -f m \
                >"$TB/iperf3.out" 2>&1 && break
            sleep 0.2
        done
        kill "$srv" 2>/dev/null
        wait "$srv" 2>/dev/null
        IPERF=$(iperf_mbs "$TB/iperf3.out")
        IPERF=${IPERF:+$IPERF MB/s}
        IPERF=${IPERF:-"(iperf3 failed: $(tail -n 1 "$TB/iperf3.out"))"}
    fi
    # G comes from a fit of the gap g over these sizes; each measurement stops at 0.1 s (and
    # 5 samples), so the 1 MiB streams (8 MiB each, 0.35 s on 200mbit) set the run time.
    # logp takes ~30 s here on a quiet machine; a sanitizer build on a loaded one takes longer,
    # so this job has 100 s (the ctest limit of this case is 180 s).
    JOB_LIMIT=100 run_job hosts1 logp -np 2 "$TB_RANKSH" "$TB_LOGP" --sizes 64K,256K,1M --cap 0.1 \
        --lenient --json "$TB/logp.json"
    [ "$RC" = 124 ] && fail "logp between hosts 1 and 2 did not end within 100 s"
    [ "$RC" = 0 ] || fail "logp between hosts 1 and 2 exited $RC"
    sed -n '/^ *size /,$p' "$TB/logp.out"
    check_ranks 2 1 2
    check_clean
    grep -q '"units": "seconds"' "$TB/logp.json" ||
        fail "logp's JSON does not state its units as seconds: $(head -n 3 "$TB/logp.json")"
    # The "loggp" object is one line; "G" is its gap per byte, in seconds per byte.
    g=$(sed -n 's/^ *"loggp": {.*"G": \([^,}]*\).*/\1/p' "$TB/logp.json")
    case "$g" in
    "" | null) fail "no G in logp's JSON (the fit of g failed?)" ;;
    esac
    bw=$(awk -v g="$g" 'BEGIN { if (g > 0) printf "%.2f", 1 / g / 1e6; else print "none" }')
    [ "$bw" != none ] || fail "logp's G is not positive: $g s/B"
    e=$(awk -v v="$bw" -v x="$EXPECT" 'BEGIN { printf "%+.1f", (v - x) / x * 100 }')
    say "configured $RATE = $RATE_MBS MB/s each way; expected 1/G (TCP payload rate, x 1448/1514): $EXPECT MB/s; iperf3 one link: $IPERF"
    say "logp: G = $g s/B, 1/G = $bw MB/s, $e % from the expectation"
    [ -n "${TB_RESULTS:-}" ] && cp "$TB/logp.json" "$TB_RESULTS"
    if awk -v v="$bw" -v x="$EXPECT" 'BEGIN { exit !(v > x * 1.10) }'; then
        # Above the shaped rate: the fit's slope came out too flat. On a busy machine that is
        # the small sizes' gap inflated by waits for the CPU (a CI run at load 3-6 gave +12 %
        # with o_r estimates 2-20x apart; idle runs pass). Busy: more runnable than CPUs.
        skip_if_busy "1/G = $bw MB/s is more than 10% above the shaped rate $EXPECT MB/s"
        fail "1/G = $bw MB/s is more than 10% above the shaped rate $EXPECT MB/s"
    fi
    if awk -v v="$bw" -v x="$EXPECT" 'BEGIN { exit !(v < x * 0.90) }'; then
        # Slower may be this shared machine's CPU starvation (the rates case, on the same links,
        # fails on a miss: see there).
        if [ "${CSN_NETNS_STRICT:-0}" = 1 ]; then
            fail "1/G = $bw MB/s is more than 10% below the expectation $EXPECT MB/s"
        fi
        say "SKIP: 1/G = $bw MB/s is more than 10% below the expectation $EXPECT MB/s (machine busy? iperf3 $IPERF); CSN_NETNS_STRICT=1 makes this a failure"
        teardown
        exit 77
    fi
}

TB_RANKSH="$(cd "$(dirname "$0")" && pwd)/rank.sh"
TB_CSNRUN=${TB_CSNRUN:-}
case_exec() {
    TB_HOSTS="$TB/hosts1" TB_NS="$P" TB_CSNRUN="$TB_CSNRUN" ip netns exec "${P}h1" "$@"
    RC=$?
    check_clean
    [ "$RC" = 0 ] || fail "the command exited $RC"
}

case "$CASE" in
hello | nettest | kill | refuse | rates | logp | scale) ;;
exec)
    shift
    [ $# -gt 0 ] || { echo "usage: testbed.sh exec COMMAND [ARGS...]" >&2; exit 2; }
    ;;
--help | -h)
    sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'
    exit 0
    ;;
*)
    echo "usage: testbed.sh hello|nettest|kill|refuse|rates|logp|scale|exec (see --help)" >&2
    exit 2
    ;;
esac
need_prog csnrun "$TB_CSNRUN"
setup
"case_$CASE" "$@"
teardown
for ns in $NSALL; do
    ip netns list | grep -qw "$ns" && { say "FAIL: namespace $ns is still there"; exit 1; }
done
say "ok ($CASE)"
exit 0
