# tests/pingpong.cmake: pingpong (csn and MPI twin) and memcpy-bench on small sizes: options, table, JSON.
set(PP_CHECK ${CMAKE_CURRENT_SOURCE_DIR}/examples/run_check.cmake)
set(PP_SMALL "--max|4K|--samples|3|--sample-ms|1")
# Sizes 0..4K: 14 rows.
set(PP_ROWS "^# pingpong|lat_med|\n +0 +[0-9.]+ |\n +4096 +[0-9.]+ ")

# A run that exits 0, prints lines matching match ("|" between patterns) and writes a JSON file
# (NAME.json here) whose .results has `results` entries. cmd: the command line, "|" between words.
function(pp_json_test name cmd match results)
  set(json ${CMAKE_CURRENT_BINARY_DIR}/${name}.json)
  add_test(NAME ${name}
           COMMAND ${CMAKE_COMMAND} "-DCMD=${cmd}|--json|${json}" -DRC=0 "-DMATCH=${match}"
                   -DJSON=${json} -DJSON_RESULTS=${results} -P ${PP_CHECK})
endfunction()

if(TARGET memcpy-bench)
  pp_json_test(pingpong_memcpy_bench
               "$<TARGET_FILE:memcpy-bench>|--sizes|0,8,1K,64K|--samples|3|--sample-ms|1"
               "bw_med|\n +65536 +[0-9.]+ " 4)
  add_test(NAME pingpong_memcpy_bad_option
           COMMAND ${CMAKE_COMMAND} "-DCMD=$<TARGET_FILE:memcpy-bench>|--min|8M|--max|1K" -DRC=2
                   -DERR_MATCH=--min -DONE_LINE=1 -P ${PP_CHECK})
  set_tests_properties(pingpong_memcpy_bench pingpong_memcpy_bad_option PROPERTIES TIMEOUT 30)
  add_test(NAME pingpong_line_floor
           COMMAND ${CMAKE_COMMAND} "-DCMD=$<TARGET_FILE:line-floor>|50" -DRC=0
                   "-DMATCH=one_way_us|
 +7 +[0-9.]+" -P ${PP_CHECK})
  add_test(NAME pingpong_line_floor_bad
           COMMAND ${CMAKE_COMMAND} "-DCMD=$<TARGET_FILE:line-floor>|x" -DRC=2
                   -DERR_MATCH=usage -DONE_LINE=1 -P ${PP_CHECK})
  set_tests_properties(pingpong_line_floor pingpong_line_floor_bad PROPERTIES TIMEOUT 30)
  add_test(NAME pingpong_ring_floor
           COMMAND ${CMAKE_COMMAND} "-DCMD=$<TARGET_FILE:ring-floor>|20|8" -DRC=0
                   "-DMATCH=Mmsg/s.*\n +4 locked +[0-9.]+ +[0-9.]+ +[0-9.]+" -P ${PP_CHECK})
  add_test(NAME pingpong_ring_floor_bad
           COMMAND ${CMAKE_COMMAND} "-DCMD=$<TARGET_FILE:ring-floor>|20|57" -DRC=2
                   -DERR_MATCH=SIZE -DONE_LINE=1 -P ${PP_CHECK})
  set_tests_properties(pingpong_ring_floor pingpong_ring_floor_bad PROPERTIES TIMEOUT 30)
endif()
if(TARGET ring-stream)
  # A ring of 4K (one record of 1K at a time) and a compact part as large exercise the wait for
  # room and the wraps; 2K would not fit it whole at every place (refused).
  add_test(NAME pingpong_ring_stream
           COMMAND ${CMAKE_COMMAND} "-DCMD=$<TARGET_FILE:ring-stream>|--sizes|0,8,1K,2K|--samples|3|--windows|50"
                   -DRC=0 "-DMATCH=^# ring-stream: ring 262144, compact 8192|bw_med|\n +2048 +[0-9.]+ +[0-9.]+ +50\n"
                   -P ${PP_CHECK})
  add_test(NAME pingpong_ring_stream_small
           COMMAND ${CMAKE_COMMAND} -E env CSN_SHM_RING=4K CSN_SHM_COMPACT=4K
                   $<TARGET_FILE:ring-stream> --sizes 1K,1 --samples 1 --windows 20)
  add_test(NAME pingpong_ring_stream_bad
           COMMAND ${CMAKE_COMMAND} "-DCMD=$<TARGET_FILE:ring-stream>|--sizes|128K" -DRC=2
                   -DERR_MATCH=64K -DONE_LINE=1 -P ${PP_CHECK})
  add_test(NAME pingpong_ring_stream_bad_env
           COMMAND ${CMAKE_COMMAND} -E env CSN_SHM_RING=5000
                   ${CMAKE_COMMAND} "-DCMD=$<TARGET_FILE:ring-stream>" -DRC=2
                   -DERR_MATCH=CSN_SHM_RING -DONE_LINE=1 -P ${PP_CHECK})
  add_test(NAME pingpong_ring_stream_too_large
           COMMAND ${CMAKE_COMMAND} -E env CSN_SHM_RING=4K
                   ${CMAKE_COMMAND} "-DCMD=$<TARGET_FILE:ring-stream>|--sizes|2K" -DRC=2
                   -DERR_MATCH=too.large -DONE_LINE=1 -P ${PP_CHECK})
  set_tests_properties(pingpong_ring_stream pingpong_ring_stream_small pingpong_ring_stream_bad
                       pingpong_ring_stream_bad_env pingpong_ring_stream_too_large
                       PROPERTIES TIMEOUT 30)
endif()
if(TARGET memcpy-bench)
  add_test(NAME pingpong_cma_floor
           COMMAND ${CMAKE_COMMAND} "-DCMD=$<TARGET_FILE:cma-floor>|1|64K" -DRC=0
                   "-DMATCH=both_ways|\n +64K +[0-9.]+ +[0-9.]+" -P ${PP_CHECK})
  add_test(NAME pingpong_cma_floor_bad
           COMMAND ${CMAKE_COMMAND} "-DCMD=$<TARGET_FILE:cma-floor>|1|0" -DRC=2
                   -DERR_MATCH=usage -DONE_LINE=1 -P ${PP_CHECK})
  # The second form: pingpong's bw and bibw bytes, sizes below --from left out.
  pp_json_test(pingpong_cma_floor_pp
               "$<TARGET_FILE:cma-floor>|--test|bw,bibw|--sizes|4K,64K|--from|64K|--samples|1|--iters|1"
               "bibw_max +iters +window\n +65536 +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +1 +64\n$" 1)
  # Both ways a window at a time (3 windows a batch), the payload filled and checked (a
  # message pulled from the wrong place or a window begun early fails the check); and the
  # windows run free, unchecked, into one buffer.
  pp_json_test(pingpong_cma_floor_lockstep
               "$<TARGET_FILE:cma-floor>|--test|bw,bibw,split|--sizes|64K,1M|--window|4|--samples|2|--iters|3"
               "payload filled and checked as pingpong's\n.*\n +65536 +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +3 +4\n"
               2)
  pp_json_test(pingpong_cma_floor_free
               "$<TARGET_FILE:cma-floor>|--test|bibw|--sizes|64K|--free|--no-check|--reuse-buffer|--samples|2|--iters|3"
               "no payload check; bibw's windows run free\n.*\n +65536 +nan +nan +[0-9.]+ +[0-9.]+ +3 +64\n"
               1)
  # One way copied half by each process (process_vm_readv and process_vm_writev at once).
  pp_json_test(pingpong_cma_floor_split
               "$<TARGET_FILE:cma-floor>|--test|split|--sizes|64K,1M|--samples|1|--iters|1"
               "split_med +split_max +iters +window\n +65536 +nan +nan +nan +nan +[0-9.]+ +[0-9.]+ +1 +64\n +1048576 "
               2)
  # A ping-pong of pulled messages: half round trips, median and min, round trips per batch.
  pp_json_test(pingpong_cma_floor_lat
               "$<TARGET_FILE:cma-floor>|--test|lat|--sizes|8K,64K|--samples|3|--iters|50"
               "lat_med +lat_min +lat_iters\n +8192 +nan +nan +nan +nan +[0-9]+ +64 +[0-9.]+ +[0-9.]+ +50\n +65536 "
               2)
  add_test(NAME pingpong_cma_floor_pp_bad
           COMMAND ${CMAKE_COMMAND} "-DCMD=$<TARGET_FILE:cma-floor>|--test|bw,bx" -DRC=2
                   -DERR_MATCH=--test -DONE_LINE=1 -P ${PP_CHECK})
  add_test(NAME pingpong_cma_batch
           COMMAND sh ${PROJECT_SOURCE_DIR}/tests/bench/cma_batch.sh
                   ${PROJECT_SOURCE_DIR}/bench/cma-batch.sh ${CMAKE_BINARY_DIR})
  set_tests_properties(pingpong_cma_batch PROPERTIES TIMEOUT 120 SKIP_RETURN_CODE 77)
  set_tests_properties(pingpong_cma_floor pingpong_cma_floor_bad pingpong_cma_floor_pp
                       pingpong_cma_floor_split pingpong_cma_floor_lat pingpong_cma_floor_pp_bad
                       pingpong_cma_floor_lockstep pingpong_cma_floor_free PROPERTIES TIMEOUT 60)
  # An eager ping-pong's two copies through a reused slot and through a ring (no library).
  pp_json_test(pingpong_copy_floor
               "$<TARGET_FILE:copy-floor>|--sizes|8,1K|--samples|3|--iters|200|--ring|8K"
               "fixed_med +fixed_min +ring_med|\n +1024 +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +200" 2)
  add_test(NAME pingpong_copy_floor_bad
           COMMAND ${CMAKE_COMMAND} "-DCMD=$<TARGET_FILE:copy-floor>|--max|2M" -DRC=2
                   -DERR_MATCH=1M -DONE_LINE=1 -P ${PP_CHECK})
  add_test(NAME pingpong_copy_floor_bad_option
           COMMAND ${CMAKE_COMMAND} "-DCMD=$<TARGET_FILE:copy-floor>|--window|4" -DRC=2
                   -DERR_MATCH=--window -DONE_LINE=1 -P ${PP_CHECK})
  set_tests_properties(pingpong_copy_floor pingpong_copy_floor_bad pingpong_copy_floor_bad_option
                       PROPERTIES TIMEOUT 60)
  add_test(NAME pingpong_tcp_floor
           COMMAND ${CMAKE_COMMAND} "-DCMD=$<TARGET_FILE:tcp-floor>|1|0.1|64K" -DRC=0
                   "-DMATCH=2 conns/1 conn|\n +65536 . +[0-9]+ " -P ${PP_CHECK})
  add_test(NAME pingpong_tcp_floor_bad_rounds
           COMMAND ${CMAKE_COMMAND} "-DCMD=$<TARGET_FILE:tcp-floor>|0" -DRC=2
                   -DERR_MATCH=ROUNDS -DONE_LINE=1 -P ${PP_CHECK})
  add_test(NAME pingpong_tcp_floor_bad_size
           COMMAND ${CMAKE_COMMAND} "-DCMD=$<TARGET_FILE:tcp-floor>|1|1|4X" -DRC=2
                   "-DERR_MATCH=bad size" -DONE_LINE=1 -P ${PP_CHECK})
  add_test(NAME pingpong_tcp_floor_bad_netns
           COMMAND ${CMAKE_COMMAND} "-DCMD=$<TARGET_FILE:tcp-floor>|--netns|csn-no-such-ns|x|10.0.0.1" -DRC=2
                   "-DERR_MATCH=--netns: /run/netns/csn-no-such-ns" -DONE_LINE=1 -P ${PP_CHECK})
  # The kernel's options (bench/tcp-vs-mpi.sh --parts kernel): the notices of MSG_ZEROCOPY
  # sends are read and counted (a count of 0 would mean no zero-copy send was made).
  add_test(NAME pingpong_tcp_floor_kernel
           COMMAND ${CMAKE_COMMAND} "-DCMD=$<TARGET_FILE:tcp-floor>|--sockbuf|256K|--zerocopy|1|0.1|64K" -DRC=0
                   "-DMATCH=SO_SNDBUF/SO_RCVBUF 262144, MSG_ZEROCOPY|\n +65536 . +[0-9]+ |the kernel reported [1-9][0-9]* sends"
                   -P ${PP_CHECK})
  add_test(NAME pingpong_tcp_floor_bad_sockbuf
           COMMAND ${CMAKE_COMMAND} "-DCMD=$<TARGET_FILE:tcp-floor>|--sockbuf|1" -DRC=2
                   "-DERR_MATCH=--sockbuf: bad size" -DONE_LINE=1 -P ${PP_CHECK})
  add_test(NAME pingpong_tcp_floor_bad_option
           COMMAND ${CMAKE_COMMAND} "-DCMD=$<TARGET_FILE:tcp-floor>|--zerocopy|--bogus" -DRC=2
                   "-DERR_MATCH=unknown option '--bogus'" -DONE_LINE=1 -P ${PP_CHECK})
  # The raw ping-pong (issue 21's latency floor): a half round trip per size.
  add_test(NAME pingpong_tcp_floor_latency
           COMMAND ${CMAKE_COMMAND} "-DCMD=$<TARGET_FILE:tcp-floor>|--latency|1|0.1|8|1K" -DRC=0
                   "-DMATCH=half round trip|\n +8 . +[0-9]+\\.[0-9]+ |\n +1024 . +[0-9]+\\.[0-9]+ "
                   -P ${PP_CHECK})
  add_test(NAME pingpong_tcp_floor_latency_zerocopy
           COMMAND ${CMAKE_COMMAND} "-DCMD=$<TARGET_FILE:tcp-floor>|--latency|--zerocopy" -DRC=2
                   "-DERR_MATCH=not --latency" -DONE_LINE=1 -P ${PP_CHECK})
  set_tests_properties(pingpong_tcp_floor pingpong_tcp_floor_bad_rounds
    pingpong_tcp_floor_bad_size pingpong_tcp_floor_bad_netns pingpong_tcp_floor_kernel
    pingpong_tcp_floor_bad_sockbuf pingpong_tcp_floor_bad_option pingpong_tcp_floor_latency
    pingpong_tcp_floor_latency_zerocopy PROPERTIES TIMEOUT 60)
  if(TARGET pingpong-mpi)
    add_test(NAME pingpong_tcp_vs_mpi_kernel
             COMMAND sh ${PROJECT_SOURCE_DIR}/tests/bench/tcp_vs_mpi_kernel.sh
                     ${PROJECT_SOURCE_DIR}/bench/tcp-vs-mpi.sh ${CMAKE_BINARY_DIR})
    set_tests_properties(pingpong_tcp_vs_mpi_kernel PROPERTIES TIMEOUT 120 SKIP_RETURN_CODE 77)
    # bench/ofi-phases.sh: the phases of a message over libfabric, csn and Open MPI. Not in
    # sanitizer builds: Open MPI's own leaks and races are not csn's (as csnbench's twins).
    if(NOT CSN_SANITIZER)
      add_test(NAME pingpong_ofi_phases
               COMMAND sh ${PROJECT_SOURCE_DIR}/tests/bench/ofi_phases.sh
                       ${PROJECT_SOURCE_DIR}/bench/ofi-phases.sh ${CMAKE_BINARY_DIR})
      set_tests_properties(pingpong_ofi_phases PROPERTIES TIMEOUT 120 SKIP_RETURN_CODE 77)
    endif()
  endif()
endif()

if(TARGET pingpong-lean)
  # pingpong's latency loop on no library (its ranks forked): eager and pulled sizes, the JSON;
  # a bandwidth test and another rank count refused. Its ranks spin: both CPUs.
  pp_json_test(pingpong_lean "$<TARGET_FILE:pingpong-lean>|--sizes|0,8,1K,64K|--samples|3|--sample-ms|1"
               "^# pingpong: lean .no library|lat_med|\n +65536 +[0-9.]+ " 4)
  add_test(NAME pingpong_lean_bad_test
           COMMAND ${CMAKE_COMMAND} "-DCMD=$<TARGET_FILE:pingpong-lean>|--test|lat,bw" -DRC=2
                   -DERR_MATCH=lat.only -DONE_LINE=1 -P ${PP_CHECK})
  add_test(NAME pingpong_lean_bad_np
           COMMAND ${CMAKE_COMMAND} -E env LEAN_NP=3 ${CMAKE_COMMAND}
                   "-DCMD=$<TARGET_FILE:pingpong-lean>|--sizes|8" -DRC=2 -DERR_MATCH=LEAN_NP
                   -DONE_LINE=1 -P ${PP_CHECK})
  set_tests_properties(pingpong_lean pingpong_lean_bad_test pingpong_lean_bad_np
                       PROPERTIES TIMEOUT 60 PROCESSORS 2)
endif()

if(TARGET pingpong AND TARGET csnrun)
  # bench/placement.sh: configurations alternated, split by the vCPUs' placement.
  add_test(NAME pingpong_placement
           COMMAND sh ${PROJECT_SOURCE_DIR}/tests/bench/placement.sh
                   ${PROJECT_SOURCE_DIR}/bench/placement.sh ${CMAKE_BINARY_DIR})
  # Open MPI's twin not in sanitizer builds: its own leaks and races are not csn's.
  set(pp_placement_no_mpi 0)
  if(CSN_SANITIZER)
    set(pp_placement_no_mpi 1)
  endif()
  set_tests_properties(pingpong_placement PROPERTIES TIMEOUT 180 SKIP_RETURN_CODE 77
                       ENVIRONMENT "PLACEMENT_NO_MPI=${pp_placement_no_mpi}")
  # bench/shm-vs-mpi.sh, short: its placement lines and per-placement goals, --report.
  add_test(NAME pingpong_shm_vs_mpi
           COMMAND sh ${PROJECT_SOURCE_DIR}/tests/bench/shm_vs_mpi.sh
                   ${PROJECT_SOURCE_DIR}/bench/shm-vs-mpi.sh ${CMAKE_BINARY_DIR})
  set_tests_properties(pingpong_shm_vs_mpi PROPERTIES TIMEOUT 300 SKIP_RETURN_CODE 77 PROCESSORS 2
                       ENVIRONMENT "SHM_VS_MPI_NO_MPI=${pp_placement_no_mpi}")
endif()

if(TARGET pingpong)
  add_test(NAME pingpong_help
           COMMAND ${CMAKE_COMMAND} "-DCMD=$<TARGET_FILE:pingpong>|--help" -DRC=0 -DMATCH=usage
                   -P ${PP_CHECK})
  add_test(NAME pingpong_bad_option
           COMMAND ${CMAKE_COMMAND} "-DCMD=$<TARGET_FILE:pingpong>|--test|latency" -DRC=2
                   -DERR_MATCH=--test -DONE_LINE=1 -P ${PP_CHECK})
  add_test(NAME pingpong_bad_size
           COMMAND ${CMAKE_COMMAND} "-DCMD=$<TARGET_FILE:pingpong>|--sizes|8,,16" -DRC=2
                   -DERR_MATCH=--sizes -DONE_LINE=1 -P ${PP_CHECK})
  # Started alone it is a job of one rank: refused with exit status 2.
  add_test(NAME pingpong_one_rank
           COMMAND ${CMAKE_COMMAND} "-DCMD=$<TARGET_FILE:pingpong>|--max|8" -DRC=2
                   "-DERR_MATCH=needs exactly 2 ranks" -P ${PP_CHECK})
  set_tests_properties(pingpong_help pingpong_bad_option pingpong_bad_size pingpong_one_rank
                       PROPERTIES TIMEOUT 30 ENVIRONMENT "${CSN_TEST_ENV}")
  if(TARGET csnrun)
    pp_json_test(pingpong_csn "$<TARGET_FILE:csnrun>|-np|2|$<TARGET_FILE:pingpong>|${PP_SMALL}"
                 "${PP_ROWS}" 14)
    set_tests_properties(pingpong_csn PROPERTIES TIMEOUT 60 ENVIRONMENT "${CSN_TEST_ENV}")
    # Blocking transmits across CSN_SHM_EAGER_BLOCKING=16K (16 KiB: eager, 16 KiB + 1:
    # rendezvous) and CSN_SHM_EAGER (4 KiB), every payload checked; non-blocking ones (bw) alike.
    add_test(NAME pingpong_csn_blocking_eager
             COMMAND ${CMAKE_COMMAND}
                     "-DCMD=$<TARGET_FILE:csnrun>|-np|2|$<TARGET_FILE:pingpong>|--sizes|4095,4097,8K,16383,16K,16385,64K|--samples|3|--sample-ms|1"
                     "-DMATCH=payload check: on|\n +16384 +[0-9.]+ +[0-9.]+ +[0-9.]+ |\n +16385 +[0-9.]+ " -DRC=0
                     -P ${PP_CHECK})
    set_tests_properties(pingpong_csn_blocking_eager PROPERTIES TIMEOUT 60
                         ENVIRONMENT "${CSN_TEST_ENV};CSN_SHM_EAGER_BLOCKING=16K")
    # The same sizes by default: blocking transmits up to CSN_SHM_EAGER_NEAR (16 KiB) eager
    # while their copies are fast, else pulled, a choice made again and again (core/match.c).
    add_test(NAME pingpong_csn_blocking_near
             COMMAND ${CMAKE_COMMAND}
                     "-DCMD=$<TARGET_FILE:csnrun>|-np|2|$<TARGET_FILE:pingpong>|--sizes|4097,8K,16K,16385|--test|lat|--samples|3|--sample-ms|2"
                     "-DMATCH=payload check: on|\n +16384 +[0-9.]+ +[0-9.]+ +[0-9]+ *\n +16385 " -DRC=0
                     -P ${PP_CHECK})
    set_tests_properties(pingpong_csn_blocking_near PROPERTIES TIMEOUT 60
                         ENVIRONMENT "${CSN_TEST_ENV}")
    # --reuse-buffer: one receive buffer per window, said in the header and the JSON.
    pp_json_test(pingpong_csn_reuse
                 "$<TARGET_FILE:csnrun>|-np|2|$<TARGET_FILE:pingpong>|--sizes|8,4K,256K|--test|bw,bibw|--samples|3|--sample-ms|1|--reuse-buffer"
                 "--reuse-buffer|\n +262144 +[0-9.]+ " 3)
    set_tests_properties(pingpong_csn_reuse PROPERTIES TIMEOUT 60 ENVIRONMENT "${CSN_TEST_ENV}")
  endif()
endif()

if(TARGET pingpong-mpi AND MPIEXEC_EXECUTABLE)
  pp_json_test(pingpong_mpi
               "${MPIEXEC_EXECUTABLE}|${MPIEXEC_NUMPROC_FLAG}|2|$<TARGET_FILE:pingpong-mpi>|${PP_SMALL}"
               "${PP_ROWS}" 14)
  # Open MPI itself leaks at exit: LeakSanitizer would fail every MPI run of an ASan build.
  set_tests_properties(pingpong_mpi PROPERTIES TIMEOUT 60 ENVIRONMENT
                       "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1;ASAN_OPTIONS=detect_leaks=0")
endif()

# pingpong's traffic pattern straight on the csn API, each message's order and bytes checked.
add_executable(test_pingpong_window ${CMAKE_CURRENT_SOURCE_DIR}/pingpong/test_pingpong_window.c)
target_link_libraries(test_pingpong_window PRIVATE csn)
if(TARGET csnrun)
  add_test(NAME pingpong_window COMMAND $<TARGET_FILE:csnrun> -np 2 $<TARGET_FILE:test_pingpong_window>)
  set_tests_properties(pingpong_window PROPERTIES TIMEOUT 60 SKIP_RETURN_CODE 77
                       ENVIRONMENT "${CSN_TEST_ENV}")
  # The same with 256 KiB windows, in the environment given (NAME: the test's suffix).
  function(pp_window_test name)
    add_test(NAME pingpong_window_${name}
             COMMAND $<TARGET_FILE:csnrun> -np 2 $<TARGET_FILE:test_pingpong_window> 262144)
    set_tests_properties(pingpong_window_${name} PROPERTIES TIMEOUT 120 SKIP_RETURN_CODE 77
                         ENVIRONMENT "${CSN_TEST_ENV};${ARGN}")
  endfunction()
  # Rendezvous messages pulled by the receiver: receives posted after their RTS are pulled
  # later by whoever polls, those posted before by the reader at once; they must still
  # complete in the order they were posted. Pulled from 64 KiB on, and on a host taken as
  # oversubscribed (every rendezvous pulled, the progress thread polling too).
  pp_window_test(pulled CSN_SHM_EAGER=32K CSN_SHM_PULL=1)
  pp_window_test(oversubscribed CSN_CPU_SHARE=65536)
  # The defaults: every rendezvous pulled, split copies from 32 KiB, pulls found one after the
  # other made in one call; those made two at a time (the batch full at every second), and
  # one at a time.
  pp_window_test(default)
  pp_window_test(batch2 CSN_SHM_PULL_BATCH=2)
  pp_window_test(batch1 CSN_SHM_PULL_BATCH=1)
  # Streamed one way, pulled both ways (receives of our own outstanding), with 64 and 256 KiB
  # rendezvous messages changing from pulled to streamed as a rank's own receives complete.
  pp_window_test(streamed CSN_SHM_EAGER=64K CSN_SHM_PULL_MAX=0)
  # Over sockets: many frames per read, reads that end short (a reader that polls its one
  # socket itself ends its pass there, poll.c), both ways at once.
  pp_window_test(unix CSN_TRANSPORT=unix)
  pp_window_test(tcp CSN_TRANSPORT=tcp)
endif()
