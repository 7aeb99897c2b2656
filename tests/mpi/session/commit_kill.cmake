# SPDX-License-Identifier: BSD-3-Clause
# A job killed while replacing a checkpoint atomically, then the next run.
# Run with cmake -P and -DMPIEXEC=... -DNP=... -DPROG=... -DDIR=... [-DARGS=...]
# (ARGS: more arguments for PROG, a ;-list):
#   1. test_commit --kill: every rank dies after writing, before closing; the
#      launcher must report the failure;
#   2. test_commit --after-kill: the old checkpoint is intact, the next
#      replacement completes and verifies, and no temporary is left.
# More ranks than cores: Open MPI refuses them without --oversubscribe,
# MPICH's Hydra needs no flag (TC_MPI: tests/CMakeLists.txt).
set(oversubscribe)
if("$ENV{TC_MPI}" STREQUAL "openmpi")
  set(oversubscribe --oversubscribe)
endif()
file(REMOVE_RECURSE "${DIR}")
file(MAKE_DIRECTORY "${DIR}")
execute_process(
  COMMAND ${MPIEXEC} -n ${NP} ${oversubscribe} ${PROG} ${ARGS} --timeout 60 --dir ${DIR} --kill
  RESULT_VARIABLE killed OUTPUT_QUIET ERROR_QUIET)
if(killed EQUAL 0)
  message(FATAL_ERROR "the killed run exited 0: it was not killed")
endif()
execute_process(
  COMMAND ${MPIEXEC} -n ${NP} ${oversubscribe} ${PROG} ${ARGS} --timeout 60 --dir ${DIR} --after-kill
  RESULT_VARIABLE after)
if(NOT after EQUAL 0)
  message(FATAL_ERROR "the run after the kill failed (exit ${after}); files kept in ${DIR}")
endif()
file(REMOVE_RECURSE "${DIR}")
