# SPDX-License-Identifier: BSD-3-Clause
# One client of the MPI-IO layer, run twice on the same rank count: without
# the layer taking anything (FWDIO_MPIIO unset: every call reaches the MPI's
# own MPI-IO), then with FWDIO_MPIIO naming its file. Both runs must succeed
# (the client checks every value it wrote, in the same run and after
# reopening), the layer must say it took the file, and the two files must be
# the same, byte for byte.
#
#   cmake -DMPIEXEC=... -DNP=n -DWORKDIR=dir -DFILE=name -DPATTERN=glob
#         -DCMD="prog|args" [-DPRELOAD=libfwdio-mpiio.so] -P compare.cmake
# CMD is the client's command line with | between arguments; %FILE% in it
# stands for the file's path.
cmake_minimum_required(VERSION 3.18)
file(REMOVE_RECURSE ${WORKDIR})
file(MAKE_DIRECTORY ${WORKDIR}/without ${WORKDIR}/with)
string(REPLACE "|" ";" cmd "${CMD}")

# The run's variables go to the ranks only (LD_PRELOAD must not reach
# mpiexec), through the launcher's flag: Open MPI's -x VAR=value, MPICH's
# -genv VAR value; more ranks than cores need --oversubscribe with Open MPI
# only (TC_MPI: tests/CMakeLists.txt).
set(mpi "$ENV{TC_MPI}")
set(oversubscribe)
if(mpi STREQUAL "openmpi")
  set(oversubscribe --oversubscribe)
endif()

function(run_client dir env_args out_var)
  string(REPLACE "%FILE%" "${WORKDIR}/${dir}/${FILE}" args "${cmd}")
  set(mpi_env)
  foreach(e ${env_args})
    if(mpi STREQUAL "mpich")
      string(REGEX REPLACE "=.*" "" var "${e}")
      string(REGEX REPLACE "^[^=]*=" "" value "${e}")
      list(APPEND mpi_env -genv ${var} ${value})
    elseif(mpi STREQUAL "openmpi")
      list(APPEND mpi_env -x ${e})
    else()
      message(FATAL_ERROR "compare.cmake: TC_MPI is '${mpi}': no way known to set "
                          "${e} for the ranks only")
    endif()
  endforeach()
  execute_process(
    COMMAND ${MPIEXEC} -n ${NP} ${oversubscribe} ${mpi_env} ${args}
    WORKING_DIRECTORY ${WORKDIR}/${dir}
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "the client ${dir} the layer failed (exit ${rc}):\n${out}\n${err}")
  endif()
  message(STATUS "${dir} the layer: ${out}")
  set(${out_var} "${out}\n${err}" PARENT_SCOPE)
endfunction()

set(layer_env FWDIO_MPIIO=${PATTERN} FWDIO_VERBOSE=1)
if(PRELOAD)
  list(APPEND layer_env LD_PRELOAD=${PRELOAD})
endif()
run_client(without "" ignored)
run_client(with "${layer_env}" said)
if(NOT said MATCHES "fwdio-mpiio: [^\n]*${FILE}: taken")
  message(FATAL_ERROR "the layer did not say it took ${FILE}:\n${said}")
endif()
string(REGEX MATCH "fwdio-mpiio: [^\n]*${FILE}: closed[^\n]*" closed "${said}")
message(STATUS "${closed}")
execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files
  ${WORKDIR}/without/${FILE} ${WORKDIR}/with/${FILE} RESULT_VARIABLE differ)
if(NOT differ EQUAL 0)
  message(FATAL_ERROR "${FILE} written through the layer differs from the one written "
                      "without it (kept in ${WORKDIR})")
endif()
message(STATUS "${FILE}: the same bytes with and without the layer")
