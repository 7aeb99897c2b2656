# SPDX-License-Identifier: BSD-3-Clause
# Open MPI only (its mpiexec options --oversubscribe and -x, OMPI_* names):
# Debian's LAMMPS links Open MPI, so builds with another MPI register no
# LAMMPS test (cmake/mpi.cmake, fwdio_links_same_mpi).
# lammps-fwdio with --format lammps, run by ctest as `cmake -P`: the text dump
# in LAMMPS's default `dump custom` format (variable-width numbers, each
# rank's atoms after the lower ranks') goes through a fwdio stream with
# fwdio_append, one step per snapshot. Checks:
#   1. LAMMPS's own dump of the same run has SNAPSHOTS snapshots, and, with
#      --delete-at in ARGS, fewer atoms in its last snapshot than its first
#      (the count changed during the run);
#   2. the fwdio dump is byte for byte LAMMPS's;
#   3. a second run with --append (another seed) appended to both files
#      leaves them byte for byte equal again, with SNAPSHOTS2 more snapshots.
#
# Variables: MPIEXEC NP DRIVER WORKDIR ARGS ARGS2 (driver arguments separated
#            by |) SNAPSHOTS SNAPSHOTS2
cmake_minimum_required(VERSION 3.18)

foreach(var MPIEXEC NP DRIVER WORKDIR ARGS ARGS2 SNAPSHOTS SNAPSHOTS2)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "stream_compare.cmake: ${var} is not set")
  endif()
endforeach()
string(REPLACE "|" ";" ARGS "${ARGS}")
string(REPLACE "|" ";" ARGS2 "${ARGS2}")
file(REMOVE_RECURSE "${WORKDIR}")
file(MAKE_DIRECTORY "${WORKDIR}")
set(text "${WORKDIR}/fwdio.dump")
set(native "${WORKDIR}/lammps.dump")

function(run_driver)
  execute_process(COMMAND ${MPIEXEC} -np ${NP} --oversubscribe ${DRIVER} ${ARGN}
      --format lammps --dump ${text} --native ${native}
    RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "lammps-fwdio ${ARGN} exited with ${rc}")
  endif()
endfunction()

function(compare what snapshots)
  file(STRINGS "${native}" timesteps REGEX "^ITEM: TIMESTEP$")
  list(LENGTH timesteps got)
  if(NOT got EQUAL snapshots)
    message(FATAL_ERROR "${what}: LAMMPS's dump has ${got} snapshots, expected ${snapshots}")
  endif()
  execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files "${text}" "${native}"
    RESULT_VARIABLE differ)
  if(differ)
    execute_process(COMMAND cmp "${text}" "${native}")
    message(FATAL_ERROR "${what}: the fwdio dump differs from LAMMPS's dump custom "
                        "(kept in ${WORKDIR})")
  endif()
  message(STATUS "${what}: ${snapshots} snapshots, byte for byte LAMMPS's dump custom")
endfunction()

run_driver(${ARGS})
compare("first run" ${SNAPSHOTS})
if(ARGS MATCHES "--delete-at")
  file(STRINGS "${native}" counts REGEX "^[0-9]+$")
  file(STRINGS "${native}" items REGEX "^ITEM: NUMBER OF ATOMS$")
  file(READ "${native}" all)
  string(REGEX MATCHALL "NUMBER OF ATOMS\n[0-9]+" numbers "${all}")
  list(GET numbers 0 first)
  list(GET numbers -1 last)
  string(REGEX REPLACE ".*\n" "" first "${first}")
  string(REGEX REPLACE ".*\n" "" last "${last}")
  if(NOT last LESS first)
    message(FATAL_ERROR "the atom count did not drop: ${first} atoms first, ${last} last")
  endif()
  message(STATUS "the atom count went from ${first} to ${last}")
endif()
run_driver(${ARGS2} --append)
math(EXPR both "${SNAPSHOTS} + ${SNAPSHOTS2}")
compare("appended run" ${both})
file(REMOVE_RECURSE "${WORKDIR}")
