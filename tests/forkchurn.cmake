# tests/forkchurn.cmake: bench/forkchurn as a smoke test on each transport and its usage error.
# The smoke test also checks that gone children's rings and sockets do not stay in the parent:
# 60 of them once grew it by 32 MB (half a megabyte each) and 60 descriptors; the limits here
# are 16 MB and 8 descriptors.
if(TARGET forkchurn)
  foreach(tr shm tcp unix)
    add_test(NAME forkchurn_smoke_${tr}
             COMMAND sh -c "out=$(${CMAKE_BINARY_DIR}/tools/csnrun/csnrun -np 1 $<TARGET_FILE:forkchurn> --children 0,60 --iters 50) && echo \"$out\" && [ $(echo \"$out\" | grep -cE '^ +(0|60) +[0-9.]+ +[0-9]+ +[0-9]+$') -eq 2 ] && echo \"$out\" | awk '$1 == 0 { a = $4; f = $3 } $1 == 60 { b = $4; g = $3 } END { if (b - a > 16384) { print \"grew by \" b - a \" KiB\"; exit 1 } if (g - f > 8) { print \"kept \" g - f \" descriptors\"; exit 1 } }'")
    # ThreadSanitizer refuses threads after such a fork unless told (as tests/core.cmake's
    # core_fork).
    set_tests_properties(forkchurn_smoke_${tr} PROPERTIES TIMEOUT 60 ENVIRONMENT
                         "CSN_TRANSPORT=${tr};TSAN_OPTIONS=die_after_fork=0")
  endforeach()
  csn_usage_test(forkchurn_usage $<TARGET_FILE:forkchurn> --children 5,2)
endif()
