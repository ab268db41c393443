# tests/csnrun.cmake: the launcher: exit statuses, stopping, cleanup, environment, spec files, bad input, remote agents, CPU binding.
set(CSN_CSNRUN ${CMAKE_BINARY_DIR}/tools/csnrun/csnrun)
foreach(case exit0 exitcode signal sigint sigterm kill9 launcherkill grandchildren cleanup env spec
        tag timeout stdin agentkill
        badinput startfail fdlimit fdstarve remote bind)
  add_test(NAME csnrun_${case}
           COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/csnrun/cases.sh ${CSN_CSNRUN} ${case}
                   $<TARGET_FILE:test_names_client> $<TARGET_FILE:example_hello>)
  set_tests_properties(csnrun_${case} PROPERTIES TIMEOUT 60 SKIP_RETURN_CODE 77)
endforeach()
