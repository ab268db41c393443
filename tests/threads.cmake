# tests/threads.cmake: seed 002 under stress: 16 threads x 2 processes, random checked traffic.
add_executable(test_threads_stress threads/stress.c)
target_link_libraries(test_threads_stress csn Threads::Threads)

# One process: every peer is a thread of the same process (the in-process path).
add_test(NAME threads_stress_single
         COMMAND test_threads_stress --single --threads 16 --seconds 2 --timeout 30)
set_tests_properties(threads_stress_single PROPERTIES TIMEOUT 120 ENVIRONMENT "${CSN_TEST_ENV}")

# Two processes under csnrun: remote peers over the shared connection, and one local peer.
if(TARGET csnrun)
  add_test(NAME threads_stress_2proc
           COMMAND $<TARGET_FILE:csnrun> -np 2 $<TARGET_FILE:test_threads_stress>
                   --threads 16 --seconds 2 --timeout 30)
  # The same with one connection per transport (the --conn-per-thread mode of threadtest).
  add_test(NAME threads_stress_2proc_connpt
           COMMAND $<TARGET_FILE:csnrun> -np 2 $<TARGET_FILE:test_threads_stress>
                   --threads 16 --seconds 1 --timeout 30)
  set_tests_properties(threads_stress_2proc threads_stress_2proc_connpt PROPERTIES TIMEOUT 120
                       ENVIRONMENT "${CSN_TEST_ENV}")
  set_property(TEST threads_stress_2proc_connpt APPEND PROPERTY ENVIRONMENT
               "CSN_CONN_PER_TRANSPORT=1")

  # The large-message paths under the same load: chunked DATA frames over TCP and through the
  # ring (no single-copy pulls), single-copy pulls, and split copies from 64 KiB.
  foreach(variant tcp nocma pull split)
    add_test(NAME threads_stress_2proc_${variant}
             COMMAND $<TARGET_FILE:csnrun> -np 2 $<TARGET_FILE:test_threads_stress>
                     --threads 16 --seconds 1 --timeout 30)
    set_tests_properties(threads_stress_2proc_${variant} PROPERTIES TIMEOUT 120
                         ENVIRONMENT "${CSN_TEST_ENV}")
  endforeach()
  set_property(TEST threads_stress_2proc_tcp APPEND PROPERTY ENVIRONMENT "CSN_TRANSPORT=tcp")
  set_property(TEST threads_stress_2proc_nocma APPEND PROPERTY ENVIRONMENT "CSN_CMA=0")
  set_property(TEST threads_stress_2proc_pull APPEND PROPERTY ENVIRONMENT "CSN_SHM_PULL=1")
  set_property(TEST threads_stress_2proc_split APPEND PROPERTY ENVIRONMENT
               "CSN_SHM_PULL=1;CSN_SHM_SPLIT=65536")

  # threadtest itself, briefly: the benchmark stays runnable, and its checked windows of
  # 64 eager messages from several threads on one connection load the writer hard.
  add_test(NAME threads_threadtest_smoke
           COMMAND $<TARGET_FILE:csnrun> -np 2 $<TARGET_FILE:threadtest>
                   --threads 1,4 --sizes 0,4096,16384,70000 --time 0.1)
  set_tests_properties(threads_threadtest_smoke PROPERTIES TIMEOUT 60
                       ENVIRONMENT "${CSN_TEST_ENV}")

  # Lost wake-ups: threads sleeping in epoll and on futexes at once, with a 60 s nap. Under
  # ThreadSanitizer 300 iterations took 37-42 s on this kind of 2-CPU machine, near the 45 s
  # limit (which must stay below the nap): 100 there.
  if(CSN_SANITIZER STREQUAL "thread")
    set(csn_nlw_iters 100)
  else()
    set(csn_nlw_iters 300)
  endif()
  add_test(NAME threads_no_lost_wakeup
           COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/threads/no_lost_wakeup.sh
                   $<TARGET_FILE:csnrun> $<TARGET_FILE:threadtest> ${csn_nlw_iters})
  set_tests_properties(threads_no_lost_wakeup PROPERTIES TIMEOUT 120
                       ENVIRONMENT "${CSN_TEST_ENV}")
endif()
