# tests/csnrun_hosts.cmake: csnrun's host files in the forms of Open MPI, MPICH and Slurm.
add_test(NAME csnrun_hostfile_forms
         COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/csnrun/hostfile.sh ${CMAKE_BINARY_DIR}/tools/csnrun/csnrun)
set_tests_properties(csnrun_hostfile_forms PROPERTIES TIMEOUT 120)
# An unreachable host fails the job within --agent-timeout.
add_test(NAME csnrun_agent_timeout
         COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/csnrun/agent_timeout.sh ${CMAKE_BINARY_DIR}/tools/csnrun/csnrun)
set_tests_properties(csnrun_agent_timeout PROPERTIES TIMEOUT 60)
