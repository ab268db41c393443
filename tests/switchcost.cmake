# tests/switchcost.cmake: bench/switchcost as a smoke test (tiny counts) and its usage error.
if(TARGET switchcost)
  add_test(NAME switchcost_smoke
           COMMAND sh -c "out=$($<TARGET_FILE:switchcost> 2000 1) && echo \"$out\" && echo \"$out\" | grep -q 'processes, futex wake'")
  add_test(NAME switchcost_usage
           COMMAND sh -c "e=$(mktemp) && $<TARGET_FILE:switchcost> 12x 2>$e; rc=$?; n=$(wc -l <$e); cat $e; rm -f $e; [ $rc -eq 2 ] && [ $n -eq 1 ]")
  set_tests_properties(switchcost_smoke switchcost_usage PROPERTIES TIMEOUT 60)
endif()
