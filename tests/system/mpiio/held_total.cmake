# SPDX-License-Identifier: BSD-3-Clause
# The most a process holds back over its files (mpiio/hold.c,
# MPIIO_HOLD_TOTAL, 16 MiB): test_mpiio_layer's many_open case (six files of
# 3.9 MB per rank open at once) on 2 ranks with FWDIO_MPIIO_HOLD=4M and
# FWDIO_VERBOSE=1. Every byte is the case's to check; here, from the lines
# the layer prints at each close: the first files' bytes were written by the
# ranks themselves (held), the later ones' went through fwdio (past the
# total). Run with cmake -P and -DMPIEXEC=... -DPROG=... -DDIR=...
include(${CMAKE_CURRENT_LIST_DIR}/run_layer_case.cmake)
set(ENV{FWDIO_VERBOSE} 1)
set(ENV{FWDIO_MPIIO} "*.mpiio")
set(ENV{FWDIO_MPIIO_HOLD} 4M)
file(REMOVE_RECURSE "${DIR}")
file(MAKE_DIRECTORY "${DIR}")
run_layer_case(2 many_open out)
foreach(i 0 1)
  if(NOT out MATCHES "many_${i}\\.mpiio: closed: 0 bytes through fwdio, 7800000 written by the layer itself")
    message(FATAL_ERROR "many_${i}.mpiio was not written by the ranks themselves (held):\n${out}")
  endif()
endforeach()
foreach(i 4 5)
  if(NOT out MATCHES "many_${i}\\.mpiio: closed: 7800000 bytes through fwdio, 0 written by the layer itself")
    message(FATAL_ERROR "many_${i}.mpiio did not go through fwdio (past the 16 MiB held):\n${out}")
  endif()
endforeach()
file(REMOVE_RECURSE "${DIR}")
