# SPDX-License-Identifier: BSD-3-Clause
# Open MPI only (its mpiexec options --oversubscribe and -x, OMPI_* names):
# Debian's LAMMPS links Open MPI, so builds with another MPI register no
# LAMMPS test (cmake/mpi.cmake, fwdio_links_same_mpi).
# One LAMMPS test of the MPI-IO layer, run by ctest as `cmake -P`
# (tests/system/mpiio/CMakeLists.txt).
#
# Runs LAMMPS on NP ranks with an input that writes MPI-IO dumps (dump
# custom/mpiio and dump atom/mpiio), once as it is (Open MPI's MPI-IO) in
# WORKDIR/plain and once with the layer preloaded in WORKDIR/layer
# (LD_PRELOAD=LAYER, FWDIO_MPIIO=*.mpiio, FWDIO_VERBOSE=1), then checks:
#   1. both runs exit 0, and the layer's stderr says, on a line starting with
#      "fwdio-mpiio:", that it took each dump file (and never that it handed
#      one back), so the test cannot pass by the layer not being used;
#   2. the plain dumps hold the snapshots the input asks for (4000 atoms each),
#      so the comparison cannot pass on empty or short files;
#   3. every dump written with the layer is byte for byte the plain one.
# VARIANT plain: in.melt once; before it, each directory holds a longer stale
#   file at the custom dump's path (a non-append dump must cut it: LAMMPS
#   calls MPI_File_set_size; the stale bytes must be gone).
# VARIANT append: in.melt_append (dump_modify append yes) twice in a row into
#   the same files (MPI_MODE_APPEND, MPI_File_get_size), so each dump holds
#   both runs' snapshots.
#
# Variables: MPIEXEC NP LMP LAYER VARIANT INPUTS (tests/system/mpiio) WORKDIR
cmake_minimum_required(VERSION 3.18)

foreach(var MPIEXEC NP LMP LAYER VARIANT INPUTS WORKDIR)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "lammps_mpiio.cmake: ${var} is not set")
  endif()
endforeach()

set(ATOMS 4000)
if(VARIANT STREQUAL "plain")
  set(input in.melt)
  set(dumps dump.custom.mpiio dump.atom.mpiio)
  set(runs 1)
  set(snapshots 6) # steps 0..50 every 10
elseif(VARIANT STREQUAL "append")
  set(input in.melt_append)
  set(dumps append.custom.mpiio append.atom.mpiio)
  set(runs 2)
  set(snapshots 8) # steps 0..30 every 10, twice
else()
  message(FATAL_ERROR "lammps_mpiio.cmake: VARIANT must be plain or append")
endif()

file(REMOVE_RECURSE "${WORKDIR}")
file(MAKE_DIRECTORY "${WORKDIR}/plain" "${WORKDIR}/layer")

if(VARIANT STREQUAL "plain")
  # ~2.2 MB of stale lines, longer than the custom dump (~1.4 MB).
  string(REPEAT "stale bytes of an earlier run\n" 75000 stale)
  foreach(mode plain layer)
    file(WRITE "${WORKDIR}/${mode}/dump.custom.mpiio" "${stale}")
  endforeach()
endif()

# run_lammps(mode run): LAMMPS in WORKDIR/<mode>; the layer's stderr in layer_err.
function(run_lammps mode run)
  set(extra "")
  if(mode STREQUAL "layer")
    set(extra -x LD_PRELOAD=${LAYER} -x FWDIO_MPIIO=*.mpiio -x FWDIO_VERBOSE=1)
    if(SYNC) # FWDIO_MPIIO_SYNC (the dumps' MPI_File_sync after every snapshot)
      list(APPEND extra -x FWDIO_MPIIO_SYNC=${SYNC})
    endif()
  endif()
  execute_process(
    COMMAND ${MPIEXEC} -np ${NP} --oversubscribe ${extra}
            ${LMP} -in ${INPUTS}/${input} -log none -screen none
    WORKING_DIRECTORY "${WORKDIR}/${mode}"
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 50)
  file(WRITE "${WORKDIR}/${mode}/run${run}.out" "${out}")
  file(WRITE "${WORKDIR}/${mode}/run${run}.err" "${err}")
  if(NOT rc EQUAL 0)
    message("${out}${err}")
    message(FATAL_ERROR "LAMMPS (${mode}, run ${run} of ${input}) exited with '${rc}' "
                        "(output kept in ${WORKDIR}/${mode})")
  endif()
  if(mode STREQUAL "layer")
    set(layer_err "${err}" PARENT_SCOPE)
  endif()
endfunction()

foreach(run RANGE 1 ${runs})
  run_lammps(plain ${run})
  run_lammps(layer ${run})
  # 1. the layer took every dump of this run
  string(REPLACE "\r" "" layer_err "${layer_err}")
  foreach(dump ${dumps})
    string(REPLACE "." "\\." dump_re "${dump}")
    string(REGEX MATCHALL "fwdio-mpiio:[^\n]*${dump_re}[^\n]*" lines "${layer_err}")
    set(took 0)
    foreach(line IN LISTS lines)
      if(line MATCHES "handed back|released|not taken|fail")
        message(FATAL_ERROR "run ${run}: the layer did not keep ${dump}: \"${line}\"")
      endif()
      if(line MATCHES "(^|[^a-z])(taken|took|takes|take)([^a-z]|$)")
        set(took 1)
      endif()
    endforeach()
    if(NOT took)
      message("${layer_err}")
      message(FATAL_ERROR "run ${run}: with FWDIO_VERBOSE=1 the layer's stderr (above) has no "
                          "\"fwdio-mpiio:\" line saying it took ${dump}")
    endif()
  endforeach()
endforeach()

foreach(dump ${dumps})
  set(plain_dump "${WORKDIR}/plain/${dump}")
  set(layer_dump "${WORKDIR}/layer/${dump}")
  # 2. the plain dump is as long as the input asks
  file(STRINGS "${plain_dump}" timesteps REGEX "^ITEM: TIMESTEP$")
  list(LENGTH timesteps got_snapshots)
  file(STRINGS "${plain_dump}" atom_lines REGEX "^[0-9]+ 1 ")
  list(LENGTH atom_lines got_atom_lines)
  math(EXPR want_atom_lines "${ATOMS} * ${snapshots}")
  if(NOT got_snapshots EQUAL snapshots OR NOT got_atom_lines EQUAL want_atom_lines)
    message(FATAL_ERROR "the plain ${dump} has ${got_snapshots} snapshots and ${got_atom_lines} "
                        "atom lines; expected ${snapshots} and ${want_atom_lines}")
  endif()
  foreach(f "${plain_dump}" "${layer_dump}")
    file(STRINGS "${f}" stale_lines REGEX "stale bytes")
    if(stale_lines)
      message(FATAL_ERROR "${f} still holds bytes of the stale file it replaced")
    endif()
  endforeach()
  # 3. the layer's dump is byte for byte the plain one
  execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files "${plain_dump}" "${layer_dump}"
                  RESULT_VARIABLE differ)
  if(differ)
    file(SIZE "${plain_dump}" plain_size)
    if(EXISTS "${layer_dump}")
      file(SIZE "${layer_dump}" layer_size)
    else()
      set(layer_size "(missing)")
    endif()
    execute_process(COMMAND cmp "${plain_dump}" "${layer_dump}" OUTPUT_VARIABLE cmp_out
                    ERROR_VARIABLE cmp_out)
    message(FATAL_ERROR "${dump} written with the layer (${layer_size} bytes) differs from the "
                        "plain one (${plain_size} bytes): ${cmp_out} (kept in ${WORKDIR})")
  endif()
endforeach()

file(REMOVE_RECURSE "${WORKDIR}")
