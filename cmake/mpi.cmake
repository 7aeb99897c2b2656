# SPDX-License-Identifier: BSD-3-Clause
# The MPI fwdio is built with, and the mpiexec that goes with it.
#
# find_package(MPI) takes the MPI of the mpicc on the PATH, or the one named
# by MPI_C_COMPILER, MPI_EXECUTABLE_SUFFIX or MPI_HOME (README.md, "Building
# by hand"). On Debian, with Open MPI and MPICH side by side:
#   cmake -S . -B build-mpich -DMPI_EXECUTABLE_SUFFIX=.mpich
# finds mpicc.mpich and mpiexec.mpich; -DMPI_C_COMPILER=mpicc.mpich finds
# MPICH but leaves MPIEXEC_EXECUTABLE at /usr/bin/mpiexec (Open MPI's), which
# the check below replaces by the compiler's own mpiexec.mpich.
#
# Sets:
#   FWDIO_MPI_IS_OPENMPI   ON when mpi.h is Open MPI's (OPEN_MPI defined)
#   FWDIO_MPI_IS_MPICH     ON when mpi.h is MPICH's or a derivative's
#                          (MPICH_VERSION: Cray MPICH, Intel MPI, MVAPICH)
#   FWDIO_MPI_NAME         openmpi, mpich or other
#   FWDIO_MPI_LIBRARY      the MPI library itself (libmpi.so, libmpich.so),
#                          for the checks that another library links the same
#   MPIEXEC_EXECUTABLE     made to belong to the same MPI where it did not
# and the function fwdio_links_same_mpi(LIBRARY OUT_VAR).
set(MPI_DETERMINE_LIBRARY_VERSION TRUE)
find_package(MPI REQUIRED COMPONENTS C)

include(CheckSymbolExists)
include(CMakePushCheckState)
cmake_push_check_state(RESET)
set(CMAKE_REQUIRED_INCLUDES ${MPI_C_INCLUDE_DIRS})
set(CMAKE_REQUIRED_DEFINITIONS ${MPI_C_COMPILE_DEFINITIONS})
set(CMAKE_REQUIRED_QUIET ON)
check_symbol_exists(OPEN_MPI "mpi.h" FWDIO_HAVE_OPEN_MPI_MACRO)
check_symbol_exists(MPICH_VERSION "mpi.h" FWDIO_HAVE_MPICH_MACRO)
cmake_pop_check_state()
set(FWDIO_MPI_IS_OPENMPI OFF)
set(FWDIO_MPI_IS_MPICH OFF)
if(FWDIO_HAVE_OPEN_MPI_MACRO)
  set(FWDIO_MPI_IS_OPENMPI ON)
  set(FWDIO_MPI_NAME openmpi)
elseif(FWDIO_HAVE_MPICH_MACRO)
  set(FWDIO_MPI_IS_MPICH ON)
  set(FWDIO_MPI_NAME mpich)
else()
  set(FWDIO_MPI_NAME other)
endif()
string(REGEX REPLACE "\n.*" "" _fwdio_mpi_first_line "${MPI_C_LIBRARY_VERSION_STRING}")
message(STATUS "fwdio: MPI is ${FWDIO_MPI_NAME} (${_fwdio_mpi_first_line}), "
               "mpicc ${MPI_C_COMPILER}")

# The MPI library among MPI_C_LIBRARIES (Open MPI: libmpi.so; MPICH: libmpich.so).
set(FWDIO_MPI_LIBRARY "")
foreach(_lib ${MPI_C_LIBRARIES})
  get_filename_component(_name "${_lib}" NAME)
  if(_name MATCHES "^lib(mpi|mpich|mpi_ibm|mpi_cray|mpich_[a-z]+)\\.(so|a|dylib)")
    set(FWDIO_MPI_LIBRARY "${_lib}")
    break()
  endif()
endforeach()

# The Fortran wrapper of the same MPI, for the later find_package(MPI
# COMPONENTS Fortran) of the Fortran module's tests: beside mpicc.mpich it is
# mpif90.mpich (FindMPI would take the default MPI's mpif90).
if(NOT MPI_Fortran_COMPILER AND MPI_C_COMPILER)
  get_filename_component(_cc_dir "${MPI_C_COMPILER}" DIRECTORY)
  get_filename_component(_cc_name "${MPI_C_COMPILER}" NAME)
  if(_cc_name MATCHES "^mpicc(\\..+)$")
    # (find_* with NO_CACHE needs CMake 3.21: a cache entry, dropped after)
    find_program(_fwdio_mpif90 NAMES mpif90${CMAKE_MATCH_1} mpifort${CMAKE_MATCH_1}
                 HINTS ${_cc_dir})
    if(_fwdio_mpif90)
      set(MPI_Fortran_COMPILER "${_fwdio_mpif90}" CACHE FILEPATH "MPI Fortran compiler wrapper")
    endif()
    unset(_fwdio_mpif90 CACHE)
  endif()
endif()

# What MPI an mpiexec belongs to, from its --version: openmpi, mpich
# (Hydra, MPICH's launcher) or other.
function(fwdio_mpiexec_kind exe out)
  set(kind other)
  if(exe)
    execute_process(COMMAND ${exe} --version OUTPUT_VARIABLE said ERROR_VARIABLE said2
                    RESULT_VARIABLE rc TIMEOUT 30)
    if(said MATCHES "Open MPI|OpenRTE|open-mpi" OR said2 MATCHES "Open MPI|OpenRTE")
      set(kind openmpi)
    elseif(said MATCHES "HYDRA|Hydra|MPICH" OR said2 MATCHES "HYDRA|MPICH")
      set(kind mpich)
    endif()
  endif()
  set(${out} ${kind} PARENT_SCOPE)
endfunction()

# An mpiexec of the other MPI cannot start these programs (each rank would
# be a singleton). FindMPI pairs MPI_C_COMPILER=mpicc.mpich with
# /usr/bin/mpiexec, the default MPI's: take the compiler's own launcher
# (mpiexec.mpich beside mpicc.mpich) instead, or say what to set.
if(NOT FWDIO_MPI_NAME STREQUAL "other")
  fwdio_mpiexec_kind("${MPIEXEC_EXECUTABLE}" _fwdio_exec_kind)
  if(NOT _fwdio_exec_kind STREQUAL FWDIO_MPI_NAME)
    set(_fwdio_found "")
    get_filename_component(_cc_dir "${MPI_C_COMPILER}" DIRECTORY)
    get_filename_component(_cc_name "${MPI_C_COMPILER}" NAME)
    set(_suffix "")
    if(_cc_name MATCHES "^mpicc(.*)$")
      set(_suffix "${CMAKE_MATCH_1}")
    endif()
    foreach(_cand mpiexec${_suffix} mpirun${_suffix} mpiexec.${FWDIO_MPI_NAME}
                  mpiexec.hydra mpirun.${FWDIO_MPI_NAME})
      unset(_fwdio_cand_path CACHE)
      find_program(_fwdio_cand_path NAMES ${_cand} HINTS ${_cc_dir})
      if(_fwdio_cand_path)
        fwdio_mpiexec_kind("${_fwdio_cand_path}" _k)
        if(_k STREQUAL FWDIO_MPI_NAME)
          set(_fwdio_found "${_fwdio_cand_path}")
          break()
        endif()
      endif()
    endforeach()
    unset(_fwdio_cand_path CACHE)
    if(_fwdio_found)
      message(STATUS "fwdio: ${MPIEXEC_EXECUTABLE} is not ${FWDIO_MPI_NAME}'s mpiexec; "
                     "using ${_fwdio_found}")
      set(MPIEXEC_EXECUTABLE "${_fwdio_found}" CACHE FILEPATH "Executable for running MPI programs." FORCE)
    elseif(FWDIO_BUILD_TESTS)
      message(FATAL_ERROR "fwdio: MPI is ${FWDIO_MPI_NAME} but ${MPIEXEC_EXECUTABLE} is "
        "${_fwdio_exec_kind}'s mpiexec, and no ${FWDIO_MPI_NAME} mpiexec was found beside "
        "${MPI_C_COMPILER}: set -DMPIEXEC_EXECUTABLE=... (or -DFWDIO_BUILD_TESTS=OFF)")
    else()
      message(WARNING "fwdio: MPI is ${FWDIO_MPI_NAME} but ${MPIEXEC_EXECUTABLE} is "
                      "${_fwdio_exec_kind}'s mpiexec")
    endif()
  endif()
endif()

# fwdio_links_same_mpi(LIBRARY OUT_VAR): OUT_VAR is TRUE unless ldd shows
# LIBRARY (a shared library or program) linking an MPI library other than
# fwdio's (Debian's LAMMPS, PnetCDF and h5py are built for Open MPI; two MPI
# libraries cannot share a process). TRUE too when this cannot be told.
find_program(FWDIO_LDD ldd)
mark_as_advanced(FWDIO_LDD)
function(fwdio_links_same_mpi lib out)
  set(same TRUE)
  if(FWDIO_LDD AND FWDIO_MPI_LIBRARY AND EXISTS "${lib}")
    execute_process(COMMAND ${FWDIO_LDD} ${lib} OUTPUT_VARIABLE deps ERROR_QUIET
                    RESULT_VARIABLE rc TIMEOUT 30)
    get_filename_component(ours "${FWDIO_MPI_LIBRARY}" REALPATH)
    if(rc EQUAL 0 AND deps MATCHES "lib(mpi|mpich)\\.so[^ \t]* => ([^ \t]+)")
      get_filename_component(theirs "${CMAKE_MATCH_2}" REALPATH)
      if(NOT theirs STREQUAL ours)
        set(same FALSE)
      endif()
    endif()
  endif()
  set(${out} ${same} PARENT_SCOPE)
endfunction()
