# tests/pipeline.cmake: tests of bench/pipeline (file source and sink checked byte for byte, kills, usage).
if(TARGET pipeline)
  add_executable(pl_check ${CMAKE_CURRENT_SOURCE_DIR}/pipeline/pl_check.c)
  if(TARGET csnrun)
    set(PL_CSNRUN $<TARGET_FILE:csnrun>)
  else()
    set(PL_CSNRUN ${CMAKE_BINARY_DIR}/tools/csnrun/csnrun)
  endif()
  set(PL_DIR ${CMAKE_CURRENT_SOURCE_DIR}/pipeline)
  # Node processes fork after csn_open started the library's progress thread (the pattern
  # the library supports); ThreadSanitizer refuses threads after such a fork unless told.
  set(PL_ENV "${CSN_TEST_ENV};TSAN_OPTIONS=die_after_fork=0")

  # NNODE;NPHASE;NBUF;BLOCK[;MODE], kept small: 4 x 5 is 152 processes on 2 cores. MODE
  # "large" only names a case with blocks above the eager limit; "pernode" uses %r files;
  # "threads" runs with --threads; "lead1" and "lead0" with --lead 1 and --lead 0; "normal"
  # with --sched normal; "bound" with --threads under csnrun --bind-to core.
  foreach(case "1;2;40;4096" "1;3;30;1000" "1;5;20;512" "2;2;30;4096" "2;3;25;1000" "2;5;12;512"
               "4;2;16;2048" "4;3;12;1000" "4;5;8;256" "2;3;6;262144;large" "2;4;9;3000;pernode"
               "2;3;25;1000;threads" "4;5;8;256;threads" "4;2;16;2048;lead1"
               "4;3;12;1000;lead1" "2;3;25;1000;lead0" "2;3;25;1000;normal"
               "4;2;16;2048;bound")
    list(GET case 0 nn)
    list(GET case 1 np)
    list(GET case 2 nb)
    list(GET case 3 bs)
    set(mode "")
    set(name pipeline_n${nn}_p${np})
    list(LENGTH case len)
    if(len GREATER 4)
      list(GET case 4 mode)
      set(name ${name}_${mode})
    endif()
    add_test(NAME ${name}
             COMMAND sh ${PL_DIR}/run_case.sh ${PL_CSNRUN} $<TARGET_FILE:pipeline>
                     $<TARGET_FILE:pl_check> ${nn} ${np} ${nb} ${bs} ${mode})
    set_tests_properties(${name} PROPERTIES TIMEOUT 120 SKIP_RETURN_CODE 77
                         ENVIRONMENT "${PL_ENV}")
  endforeach()

  add_test(NAME pipeline_die_sender
           COMMAND sh ${PL_DIR}/die_case.sh ${PL_CSNRUN} $<TARGET_FILE:pipeline> 2 3 sender)
  add_test(NAME pipeline_die_rank
           COMMAND sh ${PL_DIR}/die_case.sh ${PL_CSNRUN} $<TARGET_FILE:pipeline> 2 3 rank)
  add_test(NAME pipeline_stop_timeout
           COMMAND sh ${PL_DIR}/die_case.sh ${PL_CSNRUN} $<TARGET_FILE:pipeline> 2 3 stop)
  add_test(NAME pipeline_die_phase
           COMMAND sh ${PL_DIR}/die_case.sh ${PL_CSNRUN} $<TARGET_FILE:pipeline> 2 3 phase)
  add_test(NAME pipeline_die_child
           COMMAND sh ${PL_DIR}/die_case.sh ${PL_CSNRUN} $<TARGET_FILE:pipeline> 4 3 child)
  set_tests_properties(pipeline_die_sender pipeline_die_rank pipeline_die_phase
                       pipeline_die_child pipeline_stop_timeout
                       PROPERTIES TIMEOUT 90
                       SKIP_RETURN_CODE 77 ENVIRONMENT "${PL_ENV}")

  # Across the four network-namespace hosts of tests/netns/testbed.sh (skipped unless root
  # with ip netns and tc); one testbed at a time, as the netns tests.
  if(EXISTS ${CMAKE_CURRENT_SOURCE_DIR}/netns/testbed.sh)
    add_test(NAME pipeline_netns
             COMMAND sh ${PL_DIR}/netns_pipeline.sh ${CMAKE_CURRENT_SOURCE_DIR}/netns/testbed.sh
                     $<TARGET_FILE:pipeline> $<TARGET_FILE:pl_check>)
    set_tests_properties(pipeline_netns PROPERTIES TIMEOUT 200 SKIP_RETURN_CODE 77
                         RESOURCE_LOCK csn_netns
                         ENVIRONMENT "${PL_ENV};TB_CSNRUN=${PL_CSNRUN}")
  endif()

  add_test(NAME pipeline_none
           COMMAND sh ${PL_DIR}/none_case.sh ${PL_CSNRUN} $<TARGET_FILE:pipeline>)
  set_tests_properties(pipeline_none PROPERTIES TIMEOUT 120 SKIP_RETURN_CODE 77
                       ENVIRONMENT "${PL_ENV}")

  add_test(NAME pipeline_usage COMMAND sh ${PL_DIR}/usage.sh $<TARGET_FILE:pipeline>)
  set_tests_properties(pipeline_usage PROPERTIES TIMEOUT 30)
endif()
