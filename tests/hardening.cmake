# tests/hardening.cmake: issue 16 (hardening): strangers against the name service, launcher and
# agent deaths, the fault suite, valgrind over the single-process tests, fuzz regressions.
add_executable(test_ns_flood names/ns_flood.c ${PROJECT_SOURCE_DIR}/src/boot/boot.c ${PROJECT_SOURCE_DIR}/src/boot/watch.c ${PROJECT_SOURCE_DIR}/src/core/thread.c
               ${PROJECT_SOURCE_DIR}/src/names/names.c)
target_include_directories(test_ns_flood PRIVATE ${PROJECT_SOURCE_DIR}/include
                           ${PROJECT_SOURCE_DIR}/src ${CMAKE_CURRENT_SOURCE_DIR})
target_link_libraries(test_ns_flood PRIVATE Threads::Threads)
foreach(mode unix tcp)
  add_test(NAME names_flood_${mode}
           COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/names/ns_flood.sh
                   ${CMAKE_BINARY_DIR}/tools/csnrun/csnrun $<TARGET_FILE:test_ns_flood> ${mode})
  set_tests_properties(names_flood_${mode} PROPERTIES TIMEOUT 90)
endforeach()

# Launcher deaths (item 9): csnrun with its agent, a remote agent, the guardian then the agent,
# and a csn program below a shell rank (the library's launcher watch).
add_executable(test_sleeper csnrun/sleeper.c)
target_link_libraries(test_sleeper PRIVATE csn)
foreach(case both late remote guardian watch)
  add_test(NAME csnrun_orphans_${case}
           COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/csnrun/orphans.sh
                   ${CMAKE_BINARY_DIR}/tools/csnrun/csnrun $<TARGET_FILE:test_sleeper> ${case})
  set_tests_properties(csnrun_orphans_${case} PROPERTIES TIMEOUT 60)
endforeach()

# The fault suite (seeded): kill -9 of a random rank at a random moment in nettest, pipeline,
# filter and threadtest (5 runs each), and launcher, agent and guardian deaths.
add_test(NAME fault_suite COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/fault/fault.sh ${CMAKE_BINARY_DIR} 16 5)
set_tests_properties(fault_suite PROPERTIES TIMEOUT 600)

# csnrun removes the job's /dev/shm files of its own user only (a squatter's stay).
add_test(NAME csnrun_squat_cleanup
         COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/csnrun/squat_cleanup.sh ${CMAKE_BINARY_DIR}/tools/csnrun/csnrun)
set_tests_properties(csnrun_squat_cleanup PROPERTIES TIMEOUT 40 SKIP_RETURN_CODE 77)
# The next csnrun removes job directories (and /dev/shm files) of jobs whose csnrun is gone.
add_test(NAME csnrun_stale_jobdir
         COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/csnrun/stale_jobdir.sh ${CMAKE_BINARY_DIR}/tools/csnrun/csnrun)
set_tests_properties(csnrun_stale_jobdir PROPERTIES TIMEOUT 40)
