# tests/install.cmake: the installed library, header, csn.pc and CMake package work for a user's program.
add_test(NAME install_pkgconfig_cmake
         COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/install/install_check.sh ${CMAKE_BINARY_DIR} "${CSN_SANITIZER}")
set_tests_properties(install_pkgconfig_cmake PROPERTIES TIMEOUT 120)
