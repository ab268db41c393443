# tests/core.cmake: the core library's tests (API semantics, wire format, multi-process conformance).
add_executable(test_api core/test_api.c)
target_link_libraries(test_api csn Threads::Threads)
add_test(NAME core_api COMMAND test_api)
set_tests_properties(core_api PROPERTIES TIMEOUT 60 ENVIRONMENT "CSN_LOOKUP_TIMEOUT=1")
