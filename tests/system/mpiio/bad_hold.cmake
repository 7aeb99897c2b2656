# SPDX-License-Identifier: BSD-3-Clause
# A bad FWDIO_MPIIO_HOLD (not a size, or past its 4 MiB cap, given in
# -DVALUE=...): rank 0 says so once for the process, not at every open, and
# the default hold (256 KiB) applies: test_mpiio_layer's renamed case (three
# small write-only files, 3000 bytes per rank) on 2 ranks with
# FWDIO_VERBOSE=1, each file written by the ranks themselves (held). Every
# byte is the case's to check. Run with cmake -P and -DMPIEXEC=... -DPROG=...
# -DDIR=... -DVALUE=...
include(${CMAKE_CURRENT_LIST_DIR}/run_layer_case.cmake)
set(ENV{FWDIO_VERBOSE} 1)
set(ENV{FWDIO_MPIIO} "*.mpiio")
set(ENV{FWDIO_MPIIO_HOLD} "${VALUE}")
file(REMOVE_RECURSE "${DIR}")
file(MAKE_DIRECTORY "${DIR}")
run_layer_case(2 renamed out)
string(REGEX MATCHALL "FWDIO_MPIIO_HOLD=\"[^\"]*\" is not a size from 0 to 4194304 bytes"
       said "${out}")
list(LENGTH said times)
if(NOT times EQUAL 1)
  message(FATAL_ERROR "FWDIO_MPIIO_HOLD=${VALUE} was reported ${times} times, not once:\n${out}")
endif()
string(REGEX MATCHALL "closed: 0 bytes through fwdio, 6000 written by the layer itself" held
       "${out}")
list(LENGTH held nheld)
if(NOT nheld EQUAL 3)
  message(FATAL_ERROR "${nheld} of the 3 files were held (the default hold did not apply):\n${out}")
endif()
file(REMOVE_RECURSE "${DIR}")
