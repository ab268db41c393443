# tests/compat.cmake: programs written for the free CSN's API (txhello/rxhello style, including only <csn.h>) build unchanged with csn/meiko.h and run.
foreach(p rxhello txhello)
  add_executable(compat_${p} compat/${p}.c)
  set_target_properties(compat_${p} PROPERTIES OUTPUT_NAME ${p} RUNTIME_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/compat)
  target_compile_options(compat_${p} PRIVATE -include ${PROJECT_SOURCE_DIR}/include/csn/meiko.h)
  target_link_libraries(compat_${p} csn)
endforeach()
configure_file(compat/hello.spec ${CMAKE_CURRENT_BINARY_DIR}/compat/hello.spec COPYONLY)
add_test(NAME compat_meiko_hello
         COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/compat/run.sh ${CMAKE_BINARY_DIR}/tools/csnrun/csnrun
                 ${CMAKE_CURRENT_BINARY_DIR}/compat/hello.spec
         WORKING_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/compat)
set_tests_properties(compat_meiko_hello PROPERTIES TIMEOUT 60 ENVIRONMENT "${CSN_TEST_ENV}")
