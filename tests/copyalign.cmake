# tests/copyalign.cmake: bench/copyalign as a smoke test (one small round) and its usage error.
if(TARGET copyalign)
  add_test(NAME copyalign_smoke
           COMMAND sh -c "out=$($<TARGET_FILE:copyalign> 4K 1) && echo \"$out\" && echo \"$out\" | grep -q '^56 '")
  add_test(NAME copyalign_usage
           COMMAND sh -c "e=$(mktemp) && $<TARGET_FILE:copyalign> 12x 2>$e; rc=$?; n=$(wc -l <$e); cat $e; rm -f $e; [ $rc -eq 2 ] && [ $n -eq 1 ]")
  set_tests_properties(copyalign_smoke copyalign_usage PROPERTIES TIMEOUT 60)
endif()
