# SPDX-License-Identifier: BSD-3-Clause
# A job killed while its checkpoint drains from the node-local tier, then the
# next run (as commit_kill.cmake). Run with cmake -P and -DMPIEXEC=... -DNP=...
# -DPROG=... -DDIR=... (PROG test_local_copies as below; test_local_stream
# plays the same two sides for a stream whose step drains when it dies):
#   1. test_local_copies --kill: the new version is complete in the local
#      stores and its drain is writing the target's temporary when every rank
#      dies; the launcher must report the failure;
#   2. test_local_copies --after-kill: the old version is whole, the local
#      files are there with their indexes, and the next version drains over
#      it byte for byte, leaving no temporary.
set(oversubscribe)
if("$ENV{TC_MPI}" STREQUAL "openmpi")
  set(oversubscribe --oversubscribe)
endif()
file(REMOVE_RECURSE "${DIR}")
file(MAKE_DIRECTORY "${DIR}")
execute_process(
  COMMAND ${MPIEXEC} -n ${NP} ${oversubscribe} ${PROG} --timeout 60 --dir ${DIR} --kill
  RESULT_VARIABLE killed OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(killed EQUAL 0)
  message(FATAL_ERROR "the killed run exited 0: it was not killed")
endif()
if(out MATCHES "FAIL")
  message(FATAL_ERROR "the killed run failed a check before it died:\n${out}")
endif()
execute_process(
  COMMAND ${MPIEXEC} -n ${NP} ${oversubscribe} ${PROG} --timeout 60 --dir ${DIR} --after-kill
  RESULT_VARIABLE after)
if(NOT after EQUAL 0)
  message(FATAL_ERROR "the run after the kill failed (exit ${after}); files kept in ${DIR}")
endif()
file(REMOVE_RECURSE "${DIR}")
