# SPDX-License-Identifier: BSD-3-Clause
# For the cmake -P scripts that read what the layer prints (FWDIO_VERBOSE):
# run_layer_case(NP CASE OUT) runs test_mpiio_layer's case CASE on NP ranks
# in DIR (made afresh) with ${MPIEXEC} and ${PROG}, fails the test if the
# run fails, and sets OUT to everything it printed.
function(run_layer_case np case out_var)
  set(oversubscribe)
  if("$ENV{TC_MPI}" STREQUAL "openmpi")
    set(oversubscribe --oversubscribe)
  endif()
  execute_process(
    COMMAND ${MPIEXEC} -n ${np} ${oversubscribe} ${PROG} --timeout 60 --dir ${DIR} --case ${case}
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "the run failed (exit ${rc}):\n${out}")
  endif()
  set(${out_var} "${out}" PARENT_SCOPE)
endfunction()
