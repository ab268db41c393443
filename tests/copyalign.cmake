# tests/copyalign.cmake: bench/copyalign as a smoke test (one small round) and its usage error.
if(TARGET copyalign)
  add_test(NAME copyalign_smoke
           COMMAND sh -c "out=$($<TARGET_FILE:copyalign> 4K 1) && echo \"$out\" && echo \"$out\" | grep -q '^56 '")
  csn_usage_test(copyalign_usage $<TARGET_FILE:copyalign> 12x)
  set_tests_properties(copyalign_smoke PROPERTIES TIMEOUT 60)
endif()
