# SPDX-License-Identifier: BSD-3-Clause
# Script run by the ctest `install_consumer` (cmake -P); the variables come
# from consumer_test.cmake. Fails (FATAL_ERROR) at the first step that fails.

foreach(var FWDIO_BUILD_DIR FWDIO_CONSUMER_SOURCE_DIR FWDIO_CONSUMER_WORK_DIR FWDIO_LIBDIR
            FWDIO_C_COMPILER)
  if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
    message(FATAL_ERROR "run_consumer_test.cmake: ${var} is not set")
  endif()
endforeach()

set(work "${FWDIO_CONSUMER_WORK_DIR}")
set(prefix "${work}/prefix")
file(REMOVE_RECURSE "${work}")
file(MAKE_DIRECTORY "${work}")

function(step what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what} failed (${rc}):\n${out}\n${err}")
  endif()
  message(STATUS "${what}: ok")
  set(step_output "${out}" PARENT_SCOPE)
endfunction()

set(config_args "")
if(FWDIO_CONFIG)
  set(config_args --config "${FWDIO_CONFIG}")
endif()

# 1. Install the build tree into the scratch prefix.
step("install into ${prefix}"
  "${CMAKE_COMMAND}" --install "${FWDIO_BUILD_DIR}" --prefix "${prefix}" ${config_args})
foreach(f "include/fwdio.h" "include/fwdio_version.h" "${FWDIO_LIBDIR}/cmake/fwdio/fwdioConfig.cmake"
          "${FWDIO_LIBDIR}/cmake/fwdio/fwdioConfigVersion.cmake"
          "${FWDIO_LIBDIR}/cmake/fwdio/fwdioTargets.cmake" "${FWDIO_LIBDIR}/pkgconfig/fwdio.pc"
          "share/doc/fwdio/LICENSE")
  if(NOT EXISTS "${prefix}/${f}")
    message(FATAL_ERROR "installed tree lacks ${f}")
  endif()
endforeach()

# 1b. Every installed program runs from the prefix as it is (its libraries
#     found beside it, no LD_LIBRARY_PATH) and takes --help.
file(GLOB installed_programs "${prefix}/bin/*")
if(NOT installed_programs)
  message(FATAL_ERROR "installed tree has no programs in bin/")
endif()
foreach(p ${installed_programs})
  get_filename_component(name "${p}" NAME)
  step("the installed ${name} --help" "${CMAKE_COMMAND}" -E env --unset=LD_LIBRARY_PATH "${p}" --help)
endforeach()

# 2. find_package(fwdio) from a separate CMake project.
set(build_type_args "")
if(FWDIO_CONFIG)
  set(build_type_args "-DCMAKE_BUILD_TYPE=${FWDIO_CONFIG}")
endif()
# (fwdioConfig.cmake looks for the MPI fwdio was built with: no MPI named here)
step("configure the consumer with find_package(fwdio)"
  "${CMAKE_COMMAND}" -S "${FWDIO_CONSUMER_SOURCE_DIR}" -B "${work}/build"
  "-DCMAKE_PREFIX_PATH=${prefix}" "-DCMAKE_C_COMPILER=${FWDIO_C_COMPILER}" ${build_type_args})
step("build the consumer" "${CMAKE_COMMAND}" --build "${work}/build" ${config_args})
set(exe "${work}/build/fwdio_consumer")
if(FWDIO_CONFIG AND EXISTS "${work}/build/${FWDIO_CONFIG}/fwdio_consumer")
  set(exe "${work}/build/${FWDIO_CONFIG}/fwdio_consumer")
endif()
step("run the CMake-built consumer" "${exe}")
message(STATUS "${step_output}")

# 3. The Fortran module through find_package(fwdio COMPONENTS Fortran) and
#    through pkg-config (fwdio-fortran) + mpifort, when fwdio has it.
if(FWDIO_MPI_Fortran_COMPILER)
  foreach(f "include/fwdio.mod" "${FWDIO_LIBDIR}/pkgconfig/fwdio-fortran.pc")
    if(NOT EXISTS "${prefix}/${f}")
      message(FATAL_ERROR "installed tree lacks ${f}")
    endif()
  endforeach()
  step("configure the Fortran consumer with find_package(fwdio COMPONENTS Fortran)"
    "${CMAKE_COMMAND}" -S "${FWDIO_CONSUMER_SOURCE_DIR}/fortran" -B "${work}/build-fortran"
    "-DCMAKE_PREFIX_PATH=${prefix}" "-DCMAKE_C_COMPILER=${FWDIO_C_COMPILER}"
    "-DCMAKE_Fortran_COMPILER=${FWDIO_Fortran_COMPILER}"
    # the consumer finds MPI's Fortran bindings itself, first: the same MPI
    "-DMPI_Fortran_COMPILER=${FWDIO_MPI_Fortran_COMPILER}" ${build_type_args})
  step("build the Fortran consumer" "${CMAKE_COMMAND}" --build "${work}/build-fortran"
    ${config_args})
  set(fexe "${work}/build-fortran/fwdio_fortran_consumer")
  if(FWDIO_CONFIG AND EXISTS "${work}/build-fortran/${FWDIO_CONFIG}/fwdio_fortran_consumer")
    set(fexe "${work}/build-fortran/${FWDIO_CONFIG}/fwdio_fortran_consumer")
  endif()
  execute_process(COMMAND "${fexe}" WORKING_DIRECTORY "${work}" RESULT_VARIABLE rc
                  OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "run the CMake-built Fortran consumer failed (${rc}):\n${out}\n${err}")
  endif()
  message(STATUS "${out}")
  if(FWDIO_PKG_CONFIG)
    set(ENV{PKG_CONFIG_PATH} "${prefix}/${FWDIO_LIBDIR}/pkgconfig")
    set(static_arg "")
    if(FWDIO_STATIC)
      set(static_arg --static)
    endif()
    step("pkg-config --cflags --libs fwdio-fortran" "${FWDIO_PKG_CONFIG}" ${static_arg}
      --cflags --libs fwdio-fortran)
    string(STRIP "${step_output}" fflags)
    separate_arguments(fflags UNIX_COMMAND "${fflags}")
    step("build the Fortran consumer with mpifort and pkg-config"
      "${FWDIO_MPI_Fortran_COMPILER}" "${FWDIO_CONSUMER_SOURCE_DIR}/fortran/main.f90"
      -o "${work}/fwdio_fortran_consumer_pc" ${fflags} "-Wl,-rpath,${prefix}/${FWDIO_LIBDIR}")
    execute_process(COMMAND "${work}/fwdio_fortran_consumer_pc" WORKING_DIRECTORY "${work}"
                    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "run the pkg-config-built Fortran consumer failed (${rc}):\n${out}\n${err}")
    endif()
    message(STATUS "${out}")
  endif()
endif()

# 4. pkg-config + the MPI compiler wrapper, as a Makefile user would.
if(NOT FWDIO_PKG_CONFIG OR NOT FWDIO_MPI_C_COMPILER)
  message(STATUS "pkg-config or the MPI compiler wrapper is unknown: pkg-config check skipped")
  return()
endif()
set(ENV{PKG_CONFIG_PATH} "${prefix}/${FWDIO_LIBDIR}/pkgconfig")
set(static_arg "")
if(FWDIO_STATIC)
  set(static_arg --static)
endif()
step("pkg-config --cflags fwdio" "${FWDIO_PKG_CONFIG}" --cflags fwdio)
string(STRIP "${step_output}" cflags)
step("pkg-config --libs fwdio" "${FWDIO_PKG_CONFIG}" ${static_arg} --libs fwdio)
string(STRIP "${step_output}" libs)
step("pkg-config --variable=libdir fwdio" "${FWDIO_PKG_CONFIG}" --variable=libdir fwdio)
string(STRIP "${step_output}" libdir)
separate_arguments(cflags UNIX_COMMAND "${cflags}")
separate_arguments(libs UNIX_COMMAND "${libs}")
step("build the consumer with mpicc and pkg-config"
  "${FWDIO_MPI_C_COMPILER}" -std=c11 -Wall -Wextra -Werror ${cflags}
  "${FWDIO_CONSUMER_SOURCE_DIR}/main.c" -o "${work}/fwdio_consumer_pc" ${libs}
  "-Wl,-rpath,${libdir}")
step("run the pkg-config-built consumer" "${work}/fwdio_consumer_pc")
