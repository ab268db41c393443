# tests/jobnetid.cmake: csn_job_netid (rank r's first transport without a lookup), alone and under csnrun.
add_executable(test_job_netid names/test_job_netid.c)
target_link_libraries(test_job_netid csn)
add_test(NAME job_netid_lone COMMAND test_job_netid)
add_test(NAME job_netid_np5
         COMMAND ${CMAKE_BINARY_DIR}/tools/csnrun/csnrun -np 5 $<TARGET_FILE:test_job_netid>)
set_tests_properties(job_netid_lone job_netid_np5 PROPERTIES TIMEOUT 60 ENVIRONMENT "${CSN_TEST_ENV}")
