# commit.cmake: writes OUT (bench_commit.h: #define BENCH_COMMIT "...") with the source tree's
# commit (git describe --always --dirty), at every build, touching OUT only when it changed.
execute_process(COMMAND git -C ${SRC} describe --always --dirty --abbrev=10
                OUTPUT_VARIABLE c OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE rc)
if(NOT rc EQUAL 0 OR c STREQUAL "")
  set(c "unknown")
endif()
file(WRITE ${OUT}.tmp "#define BENCH_COMMIT \"${c}\"\n")
execute_process(COMMAND ${CMAKE_COMMAND} -E copy_if_different ${OUT}.tmp ${OUT})
file(REMOVE ${OUT}.tmp)
