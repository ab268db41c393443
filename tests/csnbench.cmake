# tests/csnbench.cmake: the results tools: every benchmark's --jsonl output against the schema
# (docs/results-jsonl.md), csnbench (quick suite, report, compare), csn-web (bad requests, a
# run over HTTP and CGI) and the headless-browser test of csn-web (skipped without chromium).
find_program(CSN_PYTHON3 python3)
if(CSN_PYTHON3 AND TARGET csnrun AND TARGET linkmatrix)
  set(CSNB_DIR ${CMAKE_SOURCE_DIR}/tests/csnbench)
  add_test(NAME csnbench_jsonl_schema
           COMMAND ${CSN_PYTHON3} ${CSNB_DIR}/test_jsonl.py ${CMAKE_BINARY_DIR} ${CMAKE_SOURCE_DIR})
  add_test(NAME csnbench_quick
           COMMAND ${CSN_PYTHON3} ${CSNB_DIR}/test_csnbench.py ${CMAKE_BINARY_DIR} ${CMAKE_SOURCE_DIR})
  add_test(NAME csnweb
           COMMAND ${CSN_PYTHON3} ${CSNB_DIR}/test_csnweb.py ${CMAKE_BINARY_DIR} ${CMAKE_SOURCE_DIR})
  add_test(NAME csnweb_browser
           COMMAND sh ${CSNB_DIR}/test_csnweb_browser.sh ${CMAKE_BINARY_DIR} ${CMAKE_SOURCE_DIR})
  # pipeline's node processes fork after csn_open started the progress thread (supported);
  # ThreadSanitizer refuses threads after such a fork unless told (as tests/pipeline.cmake).
  set(CSNB_ENV "${CSN_TEST_ENV};TSAN_OPTIONS=die_after_fork=0")
  if(CSN_SANITIZER)
    # The MPI twins under a sanitizer are slow, and Open MPI's own leaks (ASan) and races
    # (TSan, MPI_THREAD_MULTIPLE) are not csn's: the plain build tests the twins.
    list(APPEND CSNB_ENV "CSNBENCH_TEST_NO_MPI=1")
  endif()
  set_tests_properties(csnbench_jsonl_schema PROPERTIES TIMEOUT 300 ENVIRONMENT "${CSNB_ENV}")
  set_tests_properties(csnbench_quick PROPERTIES TIMEOUT 600 ENVIRONMENT "${CSNB_ENV}")
  set_tests_properties(csnweb PROPERTIES TIMEOUT 300 ENVIRONMENT "${CSNB_ENV}")
  set_tests_properties(csnweb_browser PROPERTIES TIMEOUT 400 SKIP_RETURN_CODE 77 ENVIRONMENT "${CSNB_ENV}")
  # csnbench and csn-web run a suite each: not at the same time as each other's runs.
  set_tests_properties(csnbench_quick csnweb csnweb_browser PROPERTIES RESOURCE_LOCK csnbench_suite)
endif()
