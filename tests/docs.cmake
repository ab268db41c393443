# tests/docs.cmake: docs/ and csn(3) document every call of include/csn.h.
add_test(NAME docs_in_step COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/docs/docs_check.sh ${PROJECT_SOURCE_DIR})
set_tests_properties(docs_in_step PROPERTIES TIMEOUT 30)
