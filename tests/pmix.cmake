# tests/pmix.cmake: csn programs started by PMIx launchers: Open MPI's mpirun and Slurm's srun --mpi=pmix (a private one-node Slurm); skipped where a piece is missing.
set(CSN_PMIX_RUN ${CMAKE_CURRENT_SOURCE_DIR}/pmix/run.sh)
set(CSN_PMIX_HAVE "${PMIX_FOUND}")
add_test(NAME pmix_mpirun_exchange
         COMMAND bash ${CSN_PMIX_RUN} mpirun "${CSN_PMIX_HAVE}" 4 $<TARGET_FILE:test_mp> exchange)
add_test(NAME pmix_mpirun_nettest
         COMMAND bash ${CSN_PMIX_RUN} mpirun "${CSN_PMIX_HAVE}" 4
                 ${CMAKE_BINARY_DIR}/bench/nettest/nettest uK m1 M16 K2 R2 T1000 Ptotal)
add_test(NAME pmix_mpirun_hello
         COMMAND bash ${CSN_PMIX_RUN} mpirun "${CSN_PMIX_HAVE}" 3 ${CMAKE_BINARY_DIR}/examples/hello)
add_test(NAME pmix_slurm_exchange
         COMMAND bash ${CSN_PMIX_RUN} slurm "${CSN_PMIX_HAVE}" 4 $<TARGET_FILE:test_mp> exchange)
add_test(NAME pmix_slurm_hello
         COMMAND bash ${CSN_PMIX_RUN} slurm "${CSN_PMIX_HAVE}" 3 ${CMAKE_BINARY_DIR}/examples/hello)
set_tests_properties(pmix_mpirun_exchange pmix_mpirun_hello pmix_slurm_exchange pmix_slurm_hello
                     PROPERTIES TIMEOUT 120 SKIP_RETURN_CODE 77)
# The seed's command: 6 tests x 5 sizes x 1000 iterations x 2 repeats, 4 ranks on 2 cores.
set_tests_properties(pmix_mpirun_nettest PROPERTIES TIMEOUT 180 SKIP_RETURN_CODE 77
                     ENVIRONMENT "RUN_TIMEOUT=170")
# One Slurm at a time on this machine (ports, node name).
set_tests_properties(pmix_slurm_exchange pmix_slurm_hello PROPERTIES RESOURCE_LOCK csn_slurm)
