# tests/fuzz.cmake: every libFuzzer target of tests/fuzz/ (issue 16), built here with the
# project's compiler and a replay driver, runs its committed corpus (seeds and past findings)
# as a test. The fuzzing itself: tests/fuzz/run.sh SECONDS (clang; .ci/run runs it).
set(FZ ${CMAKE_CURRENT_SOURCE_DIR}/fuzz)
set(FZ_CSNRUN ${PROJECT_SOURCE_DIR}/tools/csnrun)
set(FZ_BENCH ${PROJECT_SOURCE_DIR}/bench)
set(fz_ns_server_src "")
set(fz_ns_client_src "")
set(fz_agent_proto_src ${FZ_CSNRUN}/proto.c ${FZ_CSNRUN}/netaddr.c)
set(fz_csnrun_src ${FZ_CSNRUN}/proto.c ${FZ_CSNRUN}/netaddr.c ${FZ_CSNRUN}/launch.c
    ${FZ_CSNRUN}/agent.c)
set(fz_hostfile_src ${fz_csnrun_src})
set(fz_specfile_src ${fz_csnrun_src})
set(fz_csnrun_args_src ${fz_csnrun_src})
set(fz_nettest_args_src ${FZ_BENCH}/nettest/params.c)
set(fz_pingpong_args_src ${FZ_BENCH}/pingpong/ppcommon.c ${FZ_BENCH}/common/comm_csn.c ${FZ_BENCH}/common/comm_p2p_coll.c ${FZ_BENCH}/common/csn_transports.c
    ${FZ_BENCH}/common/comm_common.c)
set(fz_logp_args_src ${FZ_BENCH}/logp/logp_stats.c ${FZ_BENCH}/logp/logp_report.c
    ${FZ_BENCH}/common/comm_csn.c ${FZ_BENCH}/common/comm_p2p_coll.c ${FZ_BENCH}/common/csn_transports.c
    ${FZ_BENCH}/common/comm_common.c)
set(fz_pipeline_args_src ${FZ_BENCH}/pipeline/options.c)
set(fz_threadtest_args_src ${FZ_BENCH}/threadtest/ttcomm.c ${FZ_BENCH}/common/csn_transports.c)
set(fz_size_args_src "")
foreach(t ns_server ns_client agent_proto hostfile specfile csnrun_args nettest_args
        pingpong_args logp_args pipeline_args threadtest_args size_args)
  add_executable(fuzz_replay_${t} ${FZ}/${t}/fuzz.c ${FZ}/common/replay_main.c ${fz_${t}_src})
  target_include_directories(fuzz_replay_${t} PRIVATE ${FZ_CSNRUN} ${FZ_BENCH}/common
      ${FZ_BENCH}/nettest ${FZ_BENCH}/pipeline ${FZ_BENCH}/pingpong ${FZ_BENCH}/logp
      ${FZ_BENCH}/threadtest)
  target_link_libraries(fuzz_replay_${t} PRIVATE csn_internal Threads::Threads m)
  file(GLOB fz_inputs ${FZ}/${t}/corpus/*)
  add_test(NAME fuzz_replay_${t} COMMAND fuzz_replay_${t} ${fz_inputs})
  set_tests_properties(fuzz_replay_${t} PROPERTIES TIMEOUT 60 LABELS "fuzz;valgrind")
endforeach()
