# SPDX-License-Identifier: BSD-3-Clause
# The layer's default stripe (mpiio/README.md, "Settings"): run
# test_mpiio_layer's contig case on 2 ranks with FWDIO_VERBOSE=1, which
# prints each file's plan, and check that the run passes and that every
# plan has the stripe and write unit expected. Run with cmake -P and
# -DMPIEXEC=... -DPROG=... -DDIR=... -DSTRIPE=<bytes> [-DSTRIPE_ENV=<size>]
# (FWDIO_STRIPE_SIZE for the run; unset: none, the layer's default).
set(oversubscribe)
if("$ENV{TC_MPI}" STREQUAL "openmpi")
  set(oversubscribe --oversubscribe)
endif()
set(ENV{FWDIO_VERBOSE} 1)
set(ENV{FWDIO_MPIIO} "*.mpiio")
unset(ENV{FWDIO_STRIPE_SIZE})
if(DEFINED STRIPE_ENV)
  set(ENV{FWDIO_STRIPE_SIZE} ${STRIPE_ENV})
endif()
file(REMOVE_RECURSE "${DIR}")
file(MAKE_DIRECTORY "${DIR}")
execute_process(
  COMMAND ${MPIEXEC} -n 2 ${oversubscribe} ${PROG} --timeout 60 --dir ${DIR} --case contig
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the run failed (exit ${rc}):\n${out}")
endif()
string(REGEX MATCHALL "stripe [0-9]+, write unit [0-9]+" plans "${out}")
if(NOT plans)
  message(FATAL_ERROR "no file's plan printed:\n${out}")
endif()
foreach(p ${plans})
  if(NOT p STREQUAL "stripe ${STRIPE}, write unit ${STRIPE}")
    message(FATAL_ERROR "a plan has '${p}', expected stripe and write unit ${STRIPE}:\n${out}")
  endif()
endforeach()
file(REMOVE_RECURSE "${DIR}")
