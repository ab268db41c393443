# tests/names.cmake: the boot environment and the name-service client, alone and against csnrun's server.
# The client is built from its two sources only, so these tests do not wait for the core.
add_executable(test_names_client names/names_client.c ${PROJECT_SOURCE_DIR}/src/boot/boot.c ${PROJECT_SOURCE_DIR}/src/boot/watch.c ${PROJECT_SOURCE_DIR}/src/core/thread.c
               ${PROJECT_SOURCE_DIR}/src/names/names.c)
target_include_directories(test_names_client PRIVATE ${PROJECT_SOURCE_DIR}/include
                           ${PROJECT_SOURCE_DIR}/src ${CMAKE_CURRENT_SOURCE_DIR})
target_link_libraries(test_names_client PRIVATE Threads::Threads)

set(CSN_NAMES_CLIENT $<TARGET_FILE:test_names_client>)
set(CSN_CSNRUN ${CMAKE_BINARY_DIR}/tools/csnrun/csnrun)
add_test(NAME names_lone COMMAND test_names_client lone)
add_test(NAME names_boot COMMAND test_names_client boot)
add_test(NAME names_job_unix COMMAND ${CSN_CSNRUN} --timeout 60 -np 3 ${CSN_NAMES_CLIENT} job)
add_test(NAME names_job_tcp COMMAND ${CSN_CSNRUN} --ns-tcp --timeout 60 -np 4 ${CSN_NAMES_CLIENT} job)
add_test(NAME names_many COMMAND ${CSN_CSNRUN} --timeout 60 -np 2 ${CSN_NAMES_CLIENT} many)
add_test(NAME names_kept_unix COMMAND ${CSN_CSNRUN} --timeout 60 -np 3 ${CSN_NAMES_CLIENT} kept)
add_test(NAME names_kept_tcp COMMAND ${CSN_CSNRUN} --ns-tcp --timeout 60 -np 2 ${CSN_NAMES_CLIENT} kept)
# 320 descriptors: the service's cap is 256 connections, below the 300 children that keep one.
add_test(NAME names_kept_fork COMMAND sh -c "ulimit -n 320 && exec \"$0\" --timeout 60 -np 1 \"$1\" kept-fork"
         ${CSN_CSNRUN} ${CSN_NAMES_CLIENT})
add_test(NAME names_ghost COMMAND ${CSN_CSNRUN} --timeout 60 -np 2 ${CSN_NAMES_CLIENT} ghost)
set_tests_properties(names_lone names_boot PROPERTIES TIMEOUT 30)
set_tests_properties(names_job_unix names_job_tcp names_many names_ghost names_kept_unix names_kept_tcp
                     names_kept_fork PROPERTIES TIMEOUT 90)
