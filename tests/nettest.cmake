# tests/nettest.cmake: nettest's tests: unit tests of the pure code, usage errors, and real runs under csnrun and MPI.
set(NT_DIR ${CMAKE_CURRENT_SOURCE_DIR}/nettest)

add_executable(test_nettest_unit ${NT_DIR}/test_nettest_unit.c)
target_include_directories(test_nettest_unit PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
target_link_libraries(test_nettest_unit PRIVATE nettest_core m)
add_test(NAME nettest_unit COMMAND test_nettest_unit)
set_tests_properties(nettest_unit PROPERTIES TIMEOUT 30)

# Launchers for the scripts (launch.sh picks the flags).
set(NT_ENV "CSNRUN=$<TARGET_FILE_DIR:nettest>/../../tools/csnrun/csnrun" ${CSN_TEST_ENV})
if(TARGET csnrun)
  set(NT_ENV "CSNRUN=$<TARGET_FILE:csnrun>" ${CSN_TEST_ENV})
endif()
if(MPI_C_FOUND)
  list(APPEND NT_ENV "MPIEXEC=${MPIEXEC_EXECUTABLE}")
endif()

# nt_test(NAME KIND TIMEOUT COMMAND...): KIND csn or mpi; the mpi ones skip (77) without MPI.
function(nt_test name kind timeout)
  if(kind STREQUAL "mpi" AND NOT MPI_C_FOUND)
    add_test(NAME ${name} COMMAND sh -c "echo 'MPI not found: skipped'; exit 77")
  else()
    add_test(NAME ${name} COMMAND ${ARGN})
  endif()
  set(env ${NT_ENV} BENCH_COMM_TIMEOUT=60)
  if(kind STREQUAL "mpi")
    # Open MPI itself leaks at exit; LeakSanitizer would fail every MPI run of an ASan build.
    list(APPEND env ASAN_OPTIONS=detect_leaks=0)
  endif()
  set_tests_properties(${name} PROPERTIES TIMEOUT ${timeout} SKIP_RETURN_CODE 77
                       ENVIRONMENT "${env}")
endfunction()

# Bad parameters: exit status 2 and one line naming the parameter, for both builds.
# Each entry: test-name|parameter named|arguments (separated by blanks).
set(NT_BAD
    "unknown_letter|Z5|Z5"
    "min_over_max|m|m32 M16"
    "mult_no_step|K|K1"
    "negative|T|T-5"
    "unit|u|uX"
    "print_mode|P|Pfast"
    "repeats_zero|R|R0")
foreach(entry ${NT_BAD})
  string(REPLACE "|" ";" parts "${entry}")
  list(GET parts 0 tname)
  list(GET parts 1 param)
  list(GET parts 2 words)
  separate_arguments(words UNIX_COMMAND "${words}")
  nt_test(nettest_bad_${tname} csn 30 sh ${NT_DIR}/usage_error.sh ${param} direct 1
          $<TARGET_FILE:nettest> ${words})
  if(MPI_C_FOUND)
    nt_test(nettest_mpi_bad_${tname} mpi 30 sh ${NT_DIR}/usage_error.sh ${param} direct 1
            $<TARGET_FILE:nettest-mpi> ${words})
  else()
    nt_test(nettest_mpi_bad_${tname} mpi 30 true)
  endif()
endforeach()

# The seed's command (with T100 instead of T1000 to stay quick): its table, best = column maxima.
set(NT_SEED uK m1 M16 K2 R2 T100 Ptotal)
nt_test(nettest_seed_csn csn 180 sh ${NT_DIR}/run_case.sh csn 4 $<TARGET_FILE:nettest> 10 6
        ${NT_SEED})
# P = 2 (a ring of two is one link), sizes of 0 bytes, average mode.
nt_test(nettest_p2_zero_csn csn 120 sh ${NT_DIR}/run_case.sh csn 2 $<TARGET_FILE:nettest> 5 1
        ub m0 M4096 K16 T20 R1 Paverage)
# P = 3, Chaos off, no payload check, local mode, additive step.
nt_test(nettest_p3_nocheck_csn csn 120 sh ${NT_DIR}/run_case.sh csn 3 $<TARGET_FILE:nettest> 3 off
        uK m1 M9 s4 T20 Coff Plocal --no-check)
# Hundreds of MiB per message, every byte checked.
nt_test(nettest_big_csn csn 240 sh ${NT_DIR}/run_case.sh csn 2 $<TARGET_FILE:nettest> 1 1
        uM m256 M256 T2 R1 Ptotal)
# A corrupted byte aborts the run with a message naming rank, peer, size and offset.
nt_test(nettest_corrupt_csn csn 60 sh ${NT_DIR}/corrupt.sh csn $<TARGET_FILE:nettest>)
# Setup errors found after start: one process, a missing output directory, too little memory.
nt_test(nettest_np1_csn csn 60 sh ${NT_DIR}/usage_error.sh np csn 1 $<TARGET_FILE:nettest> T10)
nt_test(nettest_outdir_csn csn 60 sh ${NT_DIR}/usage_error.sh o csn 2 $<TARGET_FILE:nettest>
        T10 o/nonexistent-nettest-dir/x.dat)
nt_test(nettest_nomem_csn csn 60 sh ${NT_DIR}/usage_error.sh M csn 2 $<TARGET_FILE:nettest>
        uM m1048576 M1048576)

if(MPI_C_FOUND)
  nt_test(nettest_seed_mpi mpi 180 sh ${NT_DIR}/run_case.sh mpi 4 $<TARGET_FILE:nettest-mpi> 10 6
          ${NT_SEED})
  nt_test(nettest_p2_zero_mpi mpi 120 sh ${NT_DIR}/run_case.sh mpi 2 $<TARGET_FILE:nettest-mpi> 5
          1 ub m0 M4096 K16 T20 R1 Paverage)
  nt_test(nettest_corrupt_mpi mpi 60 sh ${NT_DIR}/corrupt.sh mpi $<TARGET_FILE:nettest-mpi>)
  nt_test(nettest_np1_mpi mpi 60 sh ${NT_DIR}/usage_error.sh np mpi 1
          $<TARGET_FILE:nettest-mpi> T10)
  nt_test(nettest_outdir_mpi mpi 60 sh ${NT_DIR}/usage_error.sh o mpi 2
          $<TARGET_FILE:nettest-mpi> T10 o/nonexistent-nettest-dir/x.dat)
else()
  foreach(t nettest_seed_mpi nettest_p2_zero_mpi nettest_corrupt_mpi nettest_np1_mpi
            nettest_outdir_mpi)
    nt_test(${t} mpi 10 true)
  endforeach()
endif()

# barrier-bench (the barrier nettest ends each iteration with): its figure on 3 ranks, and a
# bad count refused with the usage line (a clean shutdown of every rank, status 2).
set(BB_CHECK ${CMAKE_CURRENT_SOURCE_DIR}/examples/run_check.cmake)
nt_test(barrier_bench_csn csn 60 ${CMAKE_COMMAND}
        "-DCMD=$<TARGET_FILE:csnrun>|-np|3|$<TARGET_FILE:barrier-bench>|50" -DRC=0
        "-DMATCH=csn.*3 ranks, 50 barriers per batch\n+barrier_us median [0-9.]+ min [0-9.]+"
        -P ${BB_CHECK})
nt_test(barrier_bench_csn_bad csn 60 ${CMAKE_COMMAND}
        "-DCMD=$<TARGET_FILE:csnrun>|-np|2|$<TARGET_FILE:barrier-bench>|0" -DRC=2
        -DERR_MATCH=usage -P ${BB_CHECK})
# barrier-bench-lean: the same on nettest-lean's counter barrier (LEAN_NP ranks, forked).
nt_test(barrier_bench_lean csn 60 ${CMAKE_COMMAND}
        "-DCMD=env|LEAN_NP=3|$<TARGET_FILE:barrier-bench-lean>|50" -DRC=0
        "-DMATCH=lean.*3 ranks, 50 barriers per batch\n+barrier_us median [0-9.]+ min [0-9.]+"
        -P ${BB_CHECK})

# nettest-floor (nettest's cells with no library): its table on 3 processes, the same
# parameters as nettest, and bad arguments refused with one line and status 2.
nt_test(nettest_floor csn 60 ${CMAKE_COMMAND}
        "-DCMD=$<TARGET_FILE:nettest-floor>|--np|3|uK|m1|M4|K4|R1|T5|Ptotal" -DRC=0
        "-DMATCH=nettest-floor: 3 processes|Size,K\tStar\tStar2\tChaos\tChaos2\tRing\tRing2\n1\t[0-9.]+\t[0-9.]+\t[0-9.]+\t[0-9.]+\t[0-9.]+\t[0-9.]+\n4\t[0-9.]+"
        -P ${BB_CHECK})
# nt_refused(NAME BEFORE AFTER ARGS...): for each ARGS (arguments separated by |), the command
# BEFORE|ARGS[|AFTER] must end with status 2 and one line starting with "NAME:" (the test:
# NAME_bad_ARGS, as an identifier).
function(nt_refused name before after)
  string(MAKE_C_IDENTIFIER "${name}" tname)
  foreach(args ${ARGN})
    string(MAKE_C_IDENTIFIER "${args}" id)
    set(cmd "${before}|${args}")
    if(after)
      set(cmd "${cmd}|${after}")
    endif()
    nt_test(${tname}_bad_${id} csn 30 ${CMAKE_COMMAND} "-DCMD=${cmd}" -DRC=2 -DONE_LINE=1
            -DERR_MATCH=${name}: -P ${BB_CHECK})
  endforeach()
endfunction()
nt_refused(nettest-floor $<TARGET_FILE:nettest-floor> "" "--np|1|uK" "--np|x" "uK|m1|bogus"
           "uK|o/tmp/x")

# nettest-lean (nettest on bench/common/comm_lean.c, no library): the seed's command with its
# table, CSV and JSON checked; messages up to 2 KiB through shared memory and larger ones
# pulled, every byte checked; sends completing unanswered (LEAN_ANSWER=0) still deliver every
# byte; a corrupted byte named; busy work added per message (LEAN_WORK_NS) changes no byte; bad
# LEAN_ variables refused in one line.
nt_test(nettest_seed_lean csn 180 sh ${NT_DIR}/run_case.sh lean 4 $<TARGET_FILE:nettest-lean> 10 6
        ${NT_SEED})
nt_test(nettest_eager_lean csn 120 env LEAN_EAGER=2048 sh ${NT_DIR}/run_case.sh lean 3
        $<TARGET_FILE:nettest-lean> 5 3 uK m1 M16 K2 T20 R1 Ptotal)
nt_test(nettest_unanswered_lean csn 120 env LEAN_ANSWER=0 LEAN_EAGER=2048 sh ${NT_DIR}/run_case.sh
        lean 4 $<TARGET_FILE:nettest-lean> 4 6 uK m1 M64 K4 T20 R1 Ptotal)
nt_test(nettest_corrupt_lean csn 60 sh ${NT_DIR}/corrupt.sh lean $<TARGET_FILE:nettest-lean>)
nt_test(nettest_work_lean csn 60 ${CMAKE_COMMAND}
        "-DCMD=env|LEAN_WORK_NS=2000|LEAN_EAGER=2048|LEAN_NP=3|$<TARGET_FILE:nettest-lean>|uK|m1|M4|K4|R1|T20|Ptotal"
        -DRC=0
        "-DMATCH=Library: lean .*LEAN_WORK_NS=2000 ns of busy work per message: [1-9][0-9]* turns\\).*payload check on.*\n4\t[0-9.]+"
        -P ${BB_CHECK})
# nettest-floor's and nettest-lean's ranks never sleep (they yield): run beside them, another
# test's ranks get a time slice per message for seconds (core_harden_outsider's 8 B latency
# 47 us against 0.12, beside nettest_seed_lean under make test). They take both CPUs.
set_tests_properties(nettest_floor nettest_seed_lean nettest_eager_lean nettest_unanswered_lean
                     nettest_corrupt_lean nettest_work_lean barrier_bench_lean PROPERTIES PROCESSORS 2)
nt_refused(nettest-lean env "$<TARGET_FILE:nettest-lean>|T5" "LEAN_NP=1" "LEAN_NP=x"
           "LEAN_EAGER=-1" "LEAN_YIELD=0" "LEAN_ANSWER=2" "LEAN_WORK_NS=-1" "LEAN_WORK_NS=2000000")

# bench/nettest-configs.sh: configurations of nettest alternated, per-cell ratios (the host
# barrier on and off; Open MPI's twin too, except in sanitizer builds: its own leaks and races
# are not csn's).
set(nt_configs_no_mpi 0)
if(CSN_SANITIZER)
  set(nt_configs_no_mpi 1)
endif()
add_test(NAME nettest_configs
         COMMAND sh ${PROJECT_SOURCE_DIR}/tests/bench/nettest_configs.sh
                 ${PROJECT_SOURCE_DIR}/bench/nettest-configs.sh ${CMAKE_BINARY_DIR})
set_tests_properties(nettest_configs PROPERTIES TIMEOUT 180 SKIP_RETURN_CODE 77 PROCESSORS 2
                     ENVIRONMENT "NETTEST_CONFIGS_NO_MPI=${nt_configs_no_mpi};BENCH_COMM_TIMEOUT=60")
