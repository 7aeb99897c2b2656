# SPDX-License-Identifier: BSD-3-Clause
# A stream with a header (commit block) per step, its job killed with SIGKILL
# at a moment drawn from each seed, then checked.
# Run with cmake -P and -DMPIEXEC=... -DNP=... -DPROG=... -DDIR=... -DSEEDS=a;b;c:
#   1. test_streams --kill DIR --seed S: every rank writes steps and kills
#      itself at about the same moment; the launcher must report the failure;
#   2. test_streams --after-kill DIR --seed S: the header counts at least
#      every step rank 0 saw complete, and every step it counts is whole.
# More ranks than cores: Open MPI refuses them without --oversubscribe,
# MPICH's Hydra needs no flag (TC_MPI: tests/CMakeLists.txt).
set(oversubscribe)
if("$ENV{TC_MPI}" STREQUAL "openmpi")
  set(oversubscribe --oversubscribe)
endif()
foreach(seed ${SEEDS})
  file(REMOVE_RECURSE "${DIR}")
  file(MAKE_DIRECTORY "${DIR}")
  execute_process(
    COMMAND ${MPIEXEC} -n ${NP} ${oversubscribe} ${PROG} --timeout 60 --seed ${seed} --kill ${DIR}
    RESULT_VARIABLE killed OUTPUT_QUIET ERROR_QUIET)
  if(killed EQUAL 0)
    message(FATAL_ERROR "seed ${seed}: the killed run exited 0: it was not killed")
  endif()
  execute_process(
    COMMAND ${MPIEXEC} -n 1 ${PROG} --timeout 60 --seed ${seed} --after-kill ${DIR}
    RESULT_VARIABLE after)
  if(NOT after EQUAL 0)
    message(FATAL_ERROR "seed ${seed}: the file the kill left is wrong (exit ${after}); kept in ${DIR}")
  endif()
endforeach()
file(REMOVE_RECURSE "${DIR}")
