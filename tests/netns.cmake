# tests/netns.cmake: csnrun and libcsn across four network-namespace "hosts" on a shaped bridge (tests/netns/testbed.sh; skipped unless root with ip netns).
add_executable(netns_probe netns/probe.c)
target_link_libraries(netns_probe csn_internal)
add_executable(netns_intruder netns/intruder.c)
target_link_libraries(netns_intruder csn_internal)

set(CSN_NETNS_ENV
    "TB_CSNRUN=${CMAKE_BINARY_DIR}/tools/csnrun/csnrun"
    "TB_HELLO=${CMAKE_BINARY_DIR}/examples/hello"
    "TB_TEST_MP=$<TARGET_FILE:test_mp>"
    "TB_NETTEST=${CMAKE_BINARY_DIR}/bench/nettest/nettest"
    "TB_PROBE=$<TARGET_FILE:netns_probe>"
    "TB_INTRUDER=$<TARGET_FILE:netns_intruder>"
    "TB_LOGP=${CMAKE_BINARY_DIR}/bench/logp/logp")
foreach(case hello nettest kill refuse rates logp)
  add_test(NAME netns_${case} COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/netns/testbed.sh ${case})
  # One testbed at a time: the rates and logp cases measure the shaped links. Every job
  # inside has its own limit (40 s; 80 s for the rates case's nettest, which takes ~36 s; 100 s
  # for logp), cut where the setup was slow so that the script ends 30 s before TB_TIMEOUT,
  # the test's timeout: ctest's kill would leave the namespaces and the job's processes.
  set(tb_timeout 120)
  if(case STREQUAL "logp")
    set(tb_timeout 180)
  endif()
  set_tests_properties(netns_${case} PROPERTIES TIMEOUT ${tb_timeout} SKIP_RETURN_CODE 77
                       RESOURCE_LOCK csn_netns ENVIRONMENT "${CSN_NETNS_ENV};TB_TIMEOUT=${tb_timeout}")
endforeach()
# 1024 ranks (issue 17's start-up at scale): alone, so that no other test shares the CPUs with
# them; not in sanitizer builds, whose 1024 instrumented processes this machine cannot hold.
if(NOT CSN_SANITIZER)
  add_test(NAME netns_scale COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/netns/testbed.sh scale)
  set_tests_properties(netns_scale PROPERTIES TIMEOUT 180 SKIP_RETURN_CODE 77 RUN_SERIAL TRUE
                       RESOURCE_LOCK csn_netns ENVIRONMENT "${CSN_NETNS_ENV};TB_TIMEOUT=180")
endif()
