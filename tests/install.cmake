# tests/install.cmake: the installed programs, library, header, csn.pc, CMake package, man pages and docs work for a user with no environment set up.
add_test(NAME install_pkgconfig_cmake
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/install/install_check.sh ${CMAKE_BINARY_DIR}
                 ${PROJECT_SOURCE_DIR} "${CSN_SANITIZER}")
set_tests_properties(install_pkgconfig_cmake PROPERTIES TIMEOUT 240 SKIP_RETURN_CODE 77)
