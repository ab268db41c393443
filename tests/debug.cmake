# tests/debug.cmake: CSN_DEBUG, the library's trace of its decisions (issue 17).
add_test(NAME csn_debug COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/debug/csn_debug.sh
         ${CMAKE_BINARY_DIR}/tools/csnrun/csnrun ${CMAKE_BINARY_DIR}/examples/hello
         $<TARGET_FILE:pingpong>)
set_tests_properties(csn_debug PROPERTIES TIMEOUT 120 ENVIRONMENT "${CSN_TEST_ENV}")
