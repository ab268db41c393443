# tests/ab.cmake: bench/ab.sh (the A/B of two commits): its arguments only; no build, no benchmark run.
add_test(NAME ab_usage COMMAND sh ${PROJECT_SOURCE_DIR}/tests/ab/usage.sh ${PROJECT_SOURCE_DIR}/bench/ab.sh)
set_tests_properties(ab_usage PROPERTIES TIMEOUT 60 SKIP_RETURN_CODE 77)
