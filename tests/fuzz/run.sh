#!/bin/bash
# tests/fuzz/run.sh [SECONDS] [JOBS] [TARGET...]: builds the libFuzzer targets of tests/fuzz/ with
# clang (-fsanitize=fuzzer,address,undefined) into build-fuzz/, then runs each for SECONDS
# (default 60; 0: build only) on a copy of its seed corpus (tests/fuzz/TARGET/corpus), JOBS at
# a time (default 1). Prints one line per target with its executions and the corpus it reached;
# exits 1 when a target found a crash (the reproducer is left in build-fuzz/TARGET/). A finding
# once fixed goes into the target's corpus: tests/fuzz/regress.sh replays every corpus in CTest.
set -euo pipefail
cd "$(dirname "$0")/../.."
secs=${1:-60}
jobs=${2:-1}
shift 2 2>/dev/null || shift $# 2>/dev/null || true
out=${FUZZ_OUT:-build-fuzz}
CC=${FUZZ_CC:-clang}
command -v "$CC" >/dev/null || { echo "fuzz: $CC not found (apt-get install clang)"; exit 77; }
mkdir -p "$out/obj"
SAN="-fsanitize=address,undefined -fno-sanitize-recover=undefined"
CFLAGS="-g -O1 -std=gnu11 -D_GNU_SOURCE -fno-omit-frame-pointer $SAN -Iinclude -Isrc -Itools/csnrun
        -Ibench/common -Ibench/nettest -Ibench/pipeline -Ibench/pingpong -Ibench/logp -Ibench/threadtest"

# The library (and what the harnesses link) once, instrumented for coverage but without a main.
objs=()
for f in $(find src -name '*.c' ! -name 'fuzz_*' ! -path 'src/boot/pmix_module.c' \
             ! -path 'src/transport/ofi/ofi_module.c' | sort) \
         tools/csnrun/proto.c tools/csnrun/netaddr.c tools/csnrun/launch.c tools/csnrun/agent.c \
         bench/common/comm_csn.c bench/common/comm_common.c bench/common/comm_p2p_coll.c \
         bench/common/csn_transports.c \
         bench/nettest/params.c \
         bench/pingpong/ppcommon.c bench/logp/logp_stats.c bench/logp/logp_report.c \
         bench/pipeline/options.c bench/threadtest/ttcomm.c; do
    o="$out/obj/$(echo "$f" | tr / _).o"
    if [ ! -e "$o" ] || [ "$f" -nt "$o" ]; then
        $CC $CFLAGS -fsanitize=fuzzer-no-link -DCSN_BUILDING -c "$f" -o "$o"
    fi
    objs+=("$o")
done
lib() { for o in "${objs[@]}"; do case $o in *"$1"*) echo "$o";; esac; done; }
core=$(for o in "${objs[@]}"; do case $o in */obj/src_*) echo "$o";; esac; done)

declare -A extra=(
    [ns_server]="$core"
    [ns_client]="$core"
    [agent_proto]="$(lib tools_csnrun_proto) $(lib tools_csnrun_netaddr)"
    [hostfile]="$(lib tools_csnrun_proto) $(lib tools_csnrun_netaddr) $(lib tools_csnrun_launch) $(lib tools_csnrun_agent) $core"
    [specfile]="$(lib tools_csnrun_proto) $(lib tools_csnrun_netaddr) $(lib tools_csnrun_launch) $(lib tools_csnrun_agent) $core"
    [csnrun_args]="$(lib tools_csnrun_proto) $(lib tools_csnrun_netaddr) $(lib tools_csnrun_launch) $(lib tools_csnrun_agent) $core"
    [nettest_args]="$(lib bench_nettest_params)"
    [pingpong_args]="$(lib bench_pingpong_ppcommon) $(lib bench_common_comm) $(lib bench_common_csn_transports) $core"
    [logp_args]="$(lib bench_logp_logp_) $(lib bench_common_comm) $(lib bench_common_csn_transports) $core"
    [pipeline_args]="$(lib bench_pipeline_options) $core"
    [threadtest_args]="$(lib bench_threadtest_ttcomm) $(lib bench_common_csn_transports) $core"
    [size_args]=""
)
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(ns_server ns_client agent_proto hostfile specfile csnrun_args
                                   nettest_args pingpong_args logp_args pipeline_args
                                   threadtest_args size_args)
for t in "${targets[@]}"; do
    [ -f "tests/fuzz/$t/fuzz.c" ] || { echo "fuzz: no target $t"; exit 2; }
    if [ ! -e "$out/fuzz_$t" ] || [ -n "$(find tests/fuzz/$t/fuzz.c tests/fuzz/common \
            tools/csnrun bench src -newer "$out/fuzz_$t" -name '*.[ch]' | head -1)" ]; then
        # shellcheck disable=SC2086
        $CC $CFLAGS -fsanitize=fuzzer "tests/fuzz/$t/fuzz.c" ${extra[$t]} -lpthread -lm \
            -o "$out/fuzz_$t"
    fi
done
[ "$secs" -gt 0 ] || exit 0

run_one() {
    local t=$1 dir="$out/$t"
    rm -rf "$dir" && mkdir -p "$dir/corpus"
    cp tests/fuzz/$t/corpus/* "$dir/corpus/" 2>/dev/null || true
    local rc=0
    # -timeout 30 (FUZZ_TIMEOUT): a shared 2-core machine stalls a unit for seconds now and then.
    (cd "$dir" && ASAN_OPTIONS=detect_leaks=1 "../fuzz_$t" -max_total_time="$secs" -timeout="${FUZZ_TIMEOUT:-30}" \
        -rss_limit_mb=2048 -max_len=4096 -close_fd_mask=3 -print_final_stats=1 corpus \
        >log 2>&1) || rc=$?
    local execs cov
    execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$dir/log" | grep -o '[0-9]*$' || echo 0)
    cov=$(grep -o 'cov: [0-9]*' "$dir/log" | tail -1 || true)
    echo "fuzz $t: ${secs}s, $execs executions, $cov, corpus $(ls "$dir/corpus" | wc -l) inputs, rc $rc$( \
        ls "$dir"/crash-* "$dir"/leak-* "$dir"/timeout-* "$dir"/oom-* 2>/dev/null | sed 's/^/ FINDING /' | tr '\n' ' ')"
    return $rc
}
fail=0
pids=()
for t in "${targets[@]}"; do
    run_one "$t" &
    pids+=($!)
    if [ ${#pids[@]} -ge "$jobs" ]; then
        wait "${pids[0]}" || fail=1
        pids=("${pids[@]:1}")
    fi
done
for p in "${pids[@]}"; do wait "$p" || fail=1; done
exit $fail
