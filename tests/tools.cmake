# tests/tools.cmake: the benchmarks behave as one tool (help and version once, one size syntax, named errors, bounded inputs).
add_test(NAME bench_one_tool COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/tools/one_tool.sh ${CMAKE_BINARY_DIR})
set_tests_properties(bench_one_tool PROPERTIES TIMEOUT 180 ENVIRONMENT "${CSN_TEST_ENV}")
