# tests/wire.cmake: the frame header codec, and its libFuzzer target (clang only).
add_executable(test_frame wire/test_frame.c)
target_link_libraries(test_frame csn_internal)
add_test(NAME wire_frame COMMAND test_frame)
set_tests_properties(wire_frame PROPERTIES TIMEOUT 60)

# A short fuzzing run when the compiler is clang (CI builds with gcc; run by hand with
# CC=clang: build/tests/fuzz_frame -max_total_time=60).
if(CMAKE_C_COMPILER_ID STREQUAL "Clang")
  add_executable(fuzz_frame ${PROJECT_SOURCE_DIR}/src/wire/fuzz_frame.c ${PROJECT_SOURCE_DIR}/src/wire/frame.c)
  target_include_directories(fuzz_frame PRIVATE ${PROJECT_SOURCE_DIR}/src)
  target_compile_options(fuzz_frame PRIVATE -fsanitize=fuzzer,address)
  target_link_options(fuzz_frame PRIVATE -fsanitize=fuzzer,address)
  add_test(NAME wire_fuzz COMMAND fuzz_frame -max_total_time=20 -seed=1)
  set_tests_properties(wire_fuzz PROPERTIES TIMEOUT 60)
endif()
