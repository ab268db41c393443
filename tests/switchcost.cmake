# tests/switchcost.cmake: bench/switchcost as a smoke test (tiny counts) and its usage error.
if(TARGET switchcost)
  add_test(NAME switchcost_smoke
           COMMAND sh -c "out=$($<TARGET_FILE:switchcost> 2000 1) && echo \"$out\" && echo \"$out\" | grep -q 'processes, futex wake'")
  csn_usage_test(switchcost_usage $<TARGET_FILE:switchcost> 12x)
  set_tests_properties(switchcost_smoke PROPERTIES TIMEOUT 60)
endif()
