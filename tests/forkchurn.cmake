# tests/forkchurn.cmake: bench/forkchurn as a smoke test (a few children under csnrun) and its usage error.
if(TARGET forkchurn)
  add_test(NAME forkchurn_smoke
           COMMAND sh -c "out=$(${CMAKE_BINARY_DIR}/tools/csnrun/csnrun -np 1 $<TARGET_FILE:forkchurn> --children 0,20 --iters 50) && echo \"$out\" && [ $(echo \"$out\" | grep -cE '^ +(0|20) +[0-9.]+ +[0-9]+ +[0-9]+$') -eq 2 ]")
  add_test(NAME forkchurn_usage
           COMMAND sh -c "e=$(mktemp) && $<TARGET_FILE:forkchurn> --children 5,2 2>$e; rc=$?; n=$(wc -l <$e); cat $e; rm -f $e; [ $rc -eq 2 ] && [ $n -eq 1 ]")
  set_tests_properties(forkchurn_smoke forkchurn_usage PROPERTIES TIMEOUT 60)
  # ThreadSanitizer refuses threads after such a fork unless told (as tests/core.cmake's core_fork).
  set_tests_properties(forkchurn_smoke PROPERTIES ENVIRONMENT "TSAN_OPTIONS=die_after_fork=0")
endif()
