# tests/logp.cmake: logp's statistics, filter and fits on synthetic samples; its options; smoke runs under csnrun and mpirun.
add_executable(test_logp_stats ${CMAKE_CURRENT_SOURCE_DIR}/logp/test_logp_stats.c)
target_include_directories(test_logp_stats PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
target_link_libraries(test_logp_stats PRIVATE bench_logp_stats)
add_test(NAME logp_stats COMMAND test_logp_stats)
set_tests_properties(logp_stats PROPERTIES TIMEOUT 30)

set(LOGP_SMOKE sh ${CMAKE_CURRENT_SOURCE_DIR}/logp/run_smoke.sh)
# Tiny settings: two sizes, 20 ms per measurement (about a second in all).
set(LOGP_TINY --sizes 0,1K --cap 0.02 --lenient)

if(TARGET logp)
  # Option errors need no launcher: one line on stderr, exit status 2.
  set(LOGP_USAGE sh ${CMAKE_CURRENT_SOURCE_DIR}/logp/run_usage.sh)
  add_test(NAME logp_help
           COMMAND ${LOGP_USAGE} 0 "Filtering: a candidate counts" $<TARGET_FILE:logp> --help)
  add_test(NAME logp_bad_sizes_range
           COMMAND ${LOGP_USAGE} 2 "--sizes 1M:1K" $<TARGET_FILE:logp> --sizes 1M:1K)
  add_test(NAME logp_bad_sizes_list
           COMMAND ${LOGP_USAGE} 2 "bad size '4X'" $<TARGET_FILE:logp> --sizes 0,4X)
  add_test(NAME logp_bad_cap COMMAND ${LOGP_USAGE} 2 "bad --cap '0'" $<TARGET_FILE:logp> --cap 0)
  add_test(NAME logp_bad_precision
           COMMAND ${LOGP_USAGE} 2 "bad --precision" $<TARGET_FILE:logp> --precision 100)
  add_test(NAME logp_bad_option
           COMMAND ${LOGP_USAGE} 2 "unknown option '--bogus'" $<TARGET_FILE:logp> --bogus)
  add_test(NAME logp_one_rank
           COMMAND ${LOGP_USAGE} 2 "needs exactly 2 ranks" $<TARGET_FILE:logp> --sizes 0)
  set_tests_properties(logp_help logp_bad_sizes_range logp_bad_sizes_list logp_bad_cap
                       logp_bad_precision logp_bad_option logp_one_rank
                       PROPERTIES TIMEOUT 20 ENVIRONMENT "${CSN_TEST_ENV}")
  if(TARGET csnrun)
    foreach(tr shm unix tcp)
      add_test(NAME logp_smoke_csn_${tr}
               COMMAND ${LOGP_SMOKE} ${CMAKE_CURRENT_BINARY_DIR}/logp-csn-${tr}.json
                       $<TARGET_FILE:csnrun> -np 2 $<TARGET_FILE:logp> ${LOGP_TINY}
                       --json ${CMAKE_CURRENT_BINARY_DIR}/logp-csn-${tr}.json)
      set_tests_properties(logp_smoke_csn_${tr} PROPERTIES TIMEOUT 60 SKIP_RETURN_CODE 77
                           ENVIRONMENT "${CSN_TEST_ENV};CSN_TRANSPORT=${tr}")
    endforeach()
  endif()
endif()

if(TARGET logp-mpi AND MPIEXEC_EXECUTABLE)
  add_test(NAME logp_smoke_mpi
           COMMAND ${LOGP_SMOKE} ${CMAKE_CURRENT_BINARY_DIR}/logp-mpi.json
                   ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} 2 $<TARGET_FILE:logp-mpi>
                   ${LOGP_TINY} --json ${CMAKE_CURRENT_BINARY_DIR}/logp-mpi.json)
else()
  add_test(NAME logp_smoke_mpi COMMAND ${LOGP_SMOKE} none -)
endif()
# Open MPI leaks in MPI_Init/Finalize by design; logp's own leaks are checked by the csn runs.
set_tests_properties(logp_smoke_mpi PROPERTIES TIMEOUT 60 SKIP_RETURN_CODE 77 ENVIRONMENT
                     "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1;ASAN_OPTIONS=detect_leaks=0")
# The summary says FAILED (and logp exits 3) for a missed known answer or L < 0.
if(TARGET logp)
  add_executable(test_logp_report ${CMAKE_CURRENT_SOURCE_DIR}/logp/test_logp_report.c
                 ${PROJECT_SOURCE_DIR}/bench/logp/logp_report.c)
  target_include_directories(test_logp_report PRIVATE ${PROJECT_SOURCE_DIR}/bench/logp
                             ${PROJECT_SOURCE_DIR}/bench/common)
  target_link_libraries(test_logp_report PRIVATE bench_logp_stats m)
  add_test(NAME logp_report_checks COMMAND test_logp_report)
  set_tests_properties(logp_report_checks PROPERTIES TIMEOUT 20)
endif()
