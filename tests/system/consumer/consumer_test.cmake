# SPDX-License-Identifier: BSD-3-Clause
# Defines the ctests `install_consumer` and `subproject_consumer`.
#
# install_consumer: install this build into a scratch
# prefix, then build and run tests/system/consumer against it, once through
# find_package(fwdio) and once through pkg-config + the MPI compiler wrapper.
# tests/system/CMakeLists.txt includes it (this folder's CMakeLists.txt is
# the consumer project itself).

get_target_property(_fwdio_consumer_type fwdio TYPE)
if(_fwdio_consumer_type STREQUAL "STATIC_LIBRARY")
  set(_fwdio_consumer_static 1)
else()
  set(_fwdio_consumer_static 0)
endif()

# The Fortran consumer too, when fwdio builds its Fortran module and MPI has
# Fortran bindings.
set(_fwdio_consumer_fc "")
set(_fwdio_consumer_mpifc "")
if(FWDIO_FORTRAN)
  find_package(MPI COMPONENTS Fortran)
  if(MPI_Fortran_FOUND)
    set(_fwdio_consumer_fc "${CMAKE_Fortran_COMPILER}")
    set(_fwdio_consumer_mpifc "${MPI_Fortran_COMPILER}")
  endif()
endif()

add_test(NAME install_consumer
  COMMAND "${CMAKE_COMMAND}"
    "-DFWDIO_BUILD_DIR=${PROJECT_BINARY_DIR}"
    "-DFWDIO_CONSUMER_SOURCE_DIR=${CMAKE_CURRENT_LIST_DIR}"
    "-DFWDIO_CONSUMER_WORK_DIR=${PROJECT_BINARY_DIR}/install_consumer"
    "-DFWDIO_CONFIG=$<CONFIG>"
    "-DFWDIO_STATIC=${_fwdio_consumer_static}"
    "-DFWDIO_LIBDIR=${CMAKE_INSTALL_LIBDIR}"
    "-DFWDIO_C_COMPILER=${CMAKE_C_COMPILER}"
    "-DFWDIO_MPI_C_COMPILER=${MPI_C_COMPILER}"
    "-DFWDIO_PKG_CONFIG=${PKG_CONFIG_EXECUTABLE}"
    "-DFWDIO_Fortran_COMPILER=${_fwdio_consumer_fc}"
    "-DFWDIO_MPI_Fortran_COMPILER=${_fwdio_consumer_mpifc}"
    -P "${CMAKE_CURRENT_LIST_DIR}/run_consumer_test.cmake")
set_tests_properties(install_consumer PROPERTIES TIMEOUT 300 LABELS "install")
unset(_fwdio_consumer_type)
unset(_fwdio_consumer_static)
unset(_fwdio_consumer_fc)
unset(_fwdio_consumer_mpifc)

# The ctest `subproject_consumer`: a project that builds this fwdio tree with
# add_subdirectory (tests/system/consumer/subproject) configures without fwdio's
# build type, apps, tests or -Werror reaching it, builds, and its consumer
# (main.c, as above) runs.
add_test(NAME subproject_consumer
  COMMAND "${CMAKE_COMMAND}"
    "-DFWDIO_SOURCE_DIR=${PROJECT_SOURCE_DIR}"
    "-DFWDIO_SUBPROJECT_WORK_DIR=${PROJECT_BINARY_DIR}/subproject_consumer"
    "-DFWDIO_C_COMPILER=${CMAKE_C_COMPILER}"
    -P "${CMAKE_CURRENT_LIST_DIR}/run_subproject_test.cmake")
set_tests_properties(subproject_consumer PROPERTIES TIMEOUT 600 LABELS "install")

# The ctest `spack_recipe`: contrib/spack's recipe, loaded without Spack
# (tests/system/consumer/spack_check.py): its declarations, every combination of its
# variants configures with the CMake arguments it passes, the default builds
# and installs what it should.
add_test(NAME spack_recipe
  COMMAND /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/spack_check.py ${PROJECT_SOURCE_DIR}
          ${PROJECT_BINARY_DIR}/spack_recipe)
set_tests_properties(spack_recipe PROPERTIES TIMEOUT 900 LABELS "install")
