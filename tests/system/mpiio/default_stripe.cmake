# SPDX-License-Identifier: BSD-3-Clause
# The layer's default stripe (mpiio/README.md, "Settings"): run
# test_mpiio_layer's contig case on 2 ranks with FWDIO_VERBOSE=1, which
# prints each file's plan, and check that the run passes and that every
# plan has the stripe and write unit expected. Run with cmake -P and
# -DMPIEXEC=... -DPROG=... -DDIR=... -DSTRIPE=<bytes> [-DUNIT=<bytes>]
# (the write unit expected; default STRIPE) and at most one of
# -DSTRIPE_ENV=<size> (FWDIO_STRIPE_SIZE for the run), -DWRITE_ENV=<size>
# (FWDIO_WRITE_SIZE), -DCONFIG_LINE=<line> (a config file holding that line,
# or nothing when empty, named by FWDIO_CONFIG); none: the layer's default.
include(${CMAKE_CURRENT_LIST_DIR}/run_layer_case.cmake)
if(NOT DEFINED UNIT)
  set(UNIT ${STRIPE})
endif()
set(ENV{FWDIO_VERBOSE} 1)
set(ENV{FWDIO_MPIIO} "*.mpiio")
unset(ENV{FWDIO_STRIPE_SIZE})
unset(ENV{FWDIO_WRITE_SIZE})
unset(ENV{FWDIO_CONFIG})
file(REMOVE_RECURSE "${DIR}")
file(MAKE_DIRECTORY "${DIR}")
if(DEFINED STRIPE_ENV)
  set(ENV{FWDIO_STRIPE_SIZE} ${STRIPE_ENV})
elseif(DEFINED WRITE_ENV)
  set(ENV{FWDIO_WRITE_SIZE} ${WRITE_ENV})
elseif(DEFINED CONFIG_LINE)
  file(WRITE "${DIR}/fwdio.conf" "${CONFIG_LINE}\n")
  set(ENV{FWDIO_CONFIG} "${DIR}/fwdio.conf")
endif()
run_layer_case(2 contig out)
string(REGEX MATCHALL "stripe [0-9]+, write unit [0-9]+" plans "${out}")
if(NOT plans)
  message(FATAL_ERROR "no file's plan printed:\n${out}")
endif()
foreach(p ${plans})
  if(NOT p STREQUAL "stripe ${STRIPE}, write unit ${UNIT}")
    message(FATAL_ERROR "a plan has '${p}', expected stripe ${STRIPE} and write unit ${UNIT}:\n${out}")
  endif()
endforeach()
file(REMOVE_RECURSE "${DIR}")
