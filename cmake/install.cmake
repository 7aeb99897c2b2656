# SPDX-License-Identifier: BSD-3-Clause
# Install rules: the library, its public header (fwdio.h and the generated
# fwdio_version.h it includes), a CMake package
# (fwdio::fwdio through find_package(fwdio)) and a pkg-config file.
# Included at the end of the top-level CMakeLists.txt.

include(CMakePackageConfigHelpers)

set(FWDIO_INSTALL_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/fwdio"
    CACHE STRING "Where fwdioConfig.cmake is installed, relative to the prefix")

# A sanitizer build of libfwdio needs the sanitizer runtime in whatever links
# it: the target carries the link flag (FWDIO_SANITIZE_LINK_FLAGS, PUBLIC in
# CMakeLists.txt), so the exported target does too; fwdio.pc adds it below.

install(TARGETS fwdio EXPORT fwdioTargets
  LIBRARY DESTINATION "${CMAKE_INSTALL_LIBDIR}"
  ARCHIVE DESTINATION "${CMAKE_INSTALL_LIBDIR}"
  RUNTIME DESTINATION "${CMAKE_INSTALL_BINDIR}"
  PUBLIC_HEADER DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}")

install(EXPORT fwdioTargets
  NAMESPACE fwdio::
  FILE fwdioTargets.cmake
  DESTINATION "${FWDIO_INSTALL_CMAKEDIR}")

# A static libfwdio drags its private dependencies into the consumer's link
# line; the package config has to find them again (see fwdioConfig.cmake.in).
get_target_property(_fwdio_type fwdio TYPE)
if(_fwdio_type STREQUAL "STATIC_LIBRARY")
  set(FWDIO_STATIC 1)
else()
  set(FWDIO_STATIC 0)
endif()
unset(_fwdio_type)

configure_package_config_file(
  "${CMAKE_CURRENT_LIST_DIR}/fwdioConfig.cmake.in"
  "${CMAKE_CURRENT_BINARY_DIR}/fwdioConfig.cmake"
  INSTALL_DESTINATION "${FWDIO_INSTALL_CMAKEDIR}")

# 0.x releases promise nothing across minor versions.
write_basic_package_version_file(
  "${CMAKE_CURRENT_BINARY_DIR}/fwdioConfigVersion.cmake"
  VERSION "${PROJECT_VERSION}"
  COMPATIBILITY SameMinorVersion)

install(FILES
  "${CMAKE_CURRENT_BINARY_DIR}/fwdioConfig.cmake"
  "${CMAKE_CURRENT_BINARY_DIR}/fwdioConfigVersion.cmake"
  DESTINATION "${FWDIO_INSTALL_CMAKEDIR}")

# pkg-config. MPI has no pkg-config module that every MPI ships, so fwdio.pc
# does not name it: compile and link consumers with the MPI compiler wrapper
# (mpicc), which adds MPI's own flags.
# The prefix is found from the .pc file's own place, so an installed tree can
# be moved (or installed with `cmake --install --prefix`) and still work.
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}")
  set(FWDIO_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
  set(FWDIO_PC_LIBDIR "${CMAKE_INSTALL_LIBDIR}")
else()
  file(RELATIVE_PATH _fwdio_pc_up "/prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/prefix")
  string(REGEX REPLACE "/$" "" _fwdio_pc_up "${_fwdio_pc_up}")
  set(FWDIO_PC_PREFIX "\${pcfiledir}/${_fwdio_pc_up}")
  set(FWDIO_PC_LIBDIR "\${exec_prefix}/${CMAKE_INSTALL_LIBDIR}")
  unset(_fwdio_pc_up)
endif()
if(IS_ABSOLUTE "${CMAKE_INSTALL_INCLUDEDIR}")
  set(FWDIO_PC_INCLUDEDIR "${CMAKE_INSTALL_INCLUDEDIR}")
else()
  set(FWDIO_PC_INCLUDEDIR "\${prefix}/${CMAKE_INSTALL_INCLUDEDIR}")
endif()
set(FWDIO_PC_LIBS "-L\${libdir} -lfwdio")
if(FWDIO_SANITIZE_LINK_FLAGS)
  string(APPEND FWDIO_PC_LIBS " ${FWDIO_SANITIZE_LINK_FLAGS}")
endif()
configure_file("${CMAKE_CURRENT_LIST_DIR}/fwdio.pc.in" "${CMAKE_CURRENT_BINARY_DIR}/fwdio.pc" @ONLY)
install(FILES "${CMAKE_CURRENT_BINARY_DIR}/fwdio.pc"
  DESTINATION "${CMAKE_INSTALL_LIBDIR}/pkgconfig")
# fwdio-fortran.pc: the Fortran module (compile with mpifort; the module file
# is in includedir).
if(FWDIO_FORTRAN)
  configure_file("${CMAKE_CURRENT_LIST_DIR}/fwdio-fortran.pc.in"
                 "${CMAKE_CURRENT_BINARY_DIR}/fwdio-fortran.pc" @ONLY)
  install(FILES "${CMAKE_CURRENT_BINARY_DIR}/fwdio-fortran.pc"
    DESTINATION "${CMAKE_INSTALL_LIBDIR}/pkgconfig")
endif()

# The licence travels with the installed library (share/doc/fwdio).
install(FILES "${PROJECT_SOURCE_DIR}/LICENSE" DESTINATION "${CMAKE_INSTALL_DATAROOTDIR}/doc/fwdio")
