# SPDX-License-Identifier: BSD-3-Clause
# Open MPI only (its mpiexec options --oversubscribe and -x, OMPI_* names):
# Debian's LAMMPS links Open MPI, so builds with another MPI register no
# LAMMPS test (cmake/mpi.cmake, fwdio_links_same_mpi).
# lammps-fwdio-bin2txt-mpi, run by ctest as `cmake -P` (see CMakeLists.txt
# here): the binary dump read back through fwdio's reads on several ranks.
#
# Runs the driver on NP ranks with the fwdio binary and text dumps, converts
# the binary dump with the serial lammps-fwdio-bin2txt, and checks that the
# serial text is the fwdio text dump (so it has SNAPSHOTS snapshots of ATOMS
# atoms: the comparisons below cannot pass on empty or short files). Then, for
# every rank count in CONVERT_NPS (separated by |), the parallel converter:
#   - without DAMAGED: must exit 0 with the serial converter's text, byte for
#     byte;
#   - with DAMAGED: for each damaged copy of the binary dump (cut inside a
#     snapshot, stray bytes after whole snapshots, a hole of zeros in place of
#     a record, a text file, a missing file) must exit with the same non-zero
#     status on every rank (each rank's is echoed by a shell around it), within
#     TIMEOUT seconds, with exactly one message of its own, and that message
#     the serial converter's for the same file (a missing file: fwdio's
#     "No such file or directory").
#
# Variables: MPIEXEC NP DRIVER BIN2TXT BIN2TXT_MPI WORKDIR ARGS (driver
#            arguments separated by |) ATOMS SNAPSHOTS CONVERT_NPS
#            [PRECISION] [CONVERT_ARGS] [CONVERT_ENV] (VAR=value, separated
#            by |, for the parallel converter only) [DAMAGED] [TIMEOUT]
cmake_minimum_required(VERSION 3.18)

foreach(var MPIEXEC NP DRIVER BIN2TXT BIN2TXT_MPI WORKDIR ARGS ATOMS SNAPSHOTS CONVERT_NPS)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "parallel_convert.cmake: ${var} is not set")
  endif()
endforeach()
foreach(var ARGS CONVERT_NPS CONVERT_ARGS CONVERT_ENV)
  string(REPLACE "|" ";" ${var} "${${var}}")
endforeach()
if(NOT DEFINED PRECISION)
  set(PRECISION 6)
endif()
if(NOT DEFINED TIMEOUT)
  set(TIMEOUT 60)
endif()
set(prog lammps-fwdio-bin2txt-mpi)

file(REMOVE_RECURSE "${WORKDIR}")
file(MAKE_DIRECTORY "${WORKDIR}")
set(text "${WORKDIR}/fwdio.dump")
set(binary "${WORKDIR}/fwdio.bin.dump")
set(serial "${WORKDIR}/serial.txt")

execute_process(COMMAND ${MPIEXEC} -np ${NP} --oversubscribe ${DRIVER} ${ARGS}
    --precision ${PRECISION} --dump ${text} --binary ${binary}
  RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "lammps-fwdio exited with ${rc}")
endif()

# The serial converter's text: the reference.
execute_process(COMMAND ${BIN2TXT} --precision ${PRECISION} "${binary}" "${serial}"
  RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "lammps-fwdio-bin2txt could not read the binary dump (kept in ${WORKDIR})")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files "${serial}" "${text}"
  RESULT_VARIABLE differ)
if(differ)
  message(FATAL_ERROR "lammps-fwdio-bin2txt's text differs from the fwdio text dump "
                      "(kept in ${WORKDIR})")
endif()
file(STRINGS "${serial}" timesteps REGEX "^ITEM: TIMESTEP$")
list(LENGTH timesteps got)
file(STRINGS "${serial}" atom_lines REGEX "^ *[0-9]+ +[0-9]+ +-?[0-9]+\\.[0-9]+ ")
list(LENGTH atom_lines got_atom_lines)
math(EXPR want_atom_lines "${ATOMS} * ${SNAPSHOTS}")
if(NOT got EQUAL SNAPSHOTS OR NOT got_atom_lines EQUAL want_atom_lines)
  message(FATAL_ERROR "the serial text has ${got} snapshots and ${got_atom_lines} atom lines; "
                      "expected ${SNAPSHOTS} and ${want_atom_lines}")
endif()

# Run the parallel converter on `np` ranks, each under a shell that echoes
# its exit status ("rank R exited with S") and exits 0 itself, so that mpirun
# lets every rank end on its own (it kills the others once one exits
# non-zero). Sets in the caller: rc, the converter's exit status if every
# rank exited with the same, else "ranks disagree" (or mpirun's failure, or
# the timeout); out, stdout and stderr; took, the wall time for the log.
function(convert np input output)
  string(TIMESTAMP t0 "%s%f")
  execute_process(
    COMMAND ${CMAKE_COMMAND} -E env ${CONVERT_ENV}
            ${MPIEXEC} -np ${np} --oversubscribe
            sh -c "\"$0\" \"$@\"; echo \"rank $OMPI_COMM_WORLD_RANK exited with $?\" >&2"
            ${BIN2TXT_MPI} --precision ${PRECISION} ${CONVERT_ARGS} "${input}" "${output}"
    TIMEOUT ${TIMEOUT}
    RESULT_VARIABLE result OUTPUT_VARIABLE o ERROR_VARIABLE e)
  string(TIMESTAMP t1 "%s%f")
  set(took "")
  if(t0 MATCHES "^[0-9]+$" AND t1 MATCHES "^[0-9]+$") # %f: CMake 3.23
    math(EXPR ms "(${t1} - ${t0}) / 1000")
    set(took " (${ms} ms)")
  endif()
  string(REGEX MATCHALL "rank [0-9]+ exited with [0-9]+" ends "${o}${e}")
  list(TRANSFORM ends REPLACE "rank [0-9]+ exited with " "")
  list(REMOVE_DUPLICATES ends)
  list(LENGTH ends kinds)
  string(REGEX MATCHALL "rank [0-9]+ exited" ranks "${o}${e}")
  list(LENGTH ranks nranks)
  if(NOT result EQUAL 0)
    set(result "mpirun: ${result}")
  elseif(NOT nranks EQUAL np OR NOT kinds EQUAL 1)
    set(result "ranks disagree: ${nranks} of ${np} ranks ended, with the statuses ${ends}")
  else()
    set(result "${ends}")
  endif()
  set(rc "${result}" PARENT_SCOPE)
  set(out "${o}${e}" PARENT_SCOPE)
  set(took "${took}" PARENT_SCOPE)
endfunction()

if(NOT DEFINED DAMAGED)
  foreach(np IN LISTS CONVERT_NPS)
    set(parallel "${WORKDIR}/parallel-np${np}.txt")
    convert(${np} "${binary}" "${parallel}")
    message("${out}")
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "${prog} on ${np} ranks: ${rc} (kept in ${WORKDIR})")
    endif()
    execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files "${parallel}" "${serial}"
      RESULT_VARIABLE differ)
    if(differ)
      execute_process(COMMAND cmp "${parallel}" "${serial}")
      message(FATAL_ERROR "${prog} on ${np} ranks wrote another text than lammps-fwdio-bin2txt "
                          "(kept in ${WORKDIR})")
    endif()
    message(STATUS "${prog} on ${np} ranks: byte for byte the serial text${took}")
  endforeach()
  file(REMOVE_RECURSE "${WORKDIR}")
  return()
endif()

# Damaged copies. One snapshot is 88 + 32 N bytes; the damage falls in the
# middle snapshot, so snapshots before it convert and the ones after it are
# not reached.
file(SIZE "${binary}" size)
math(EXPR snap "88 + 32 * ${ATOMS}")
math(EXPR mid "${SNAPSHOTS} / 2")
math(EXPR cut "${mid} * ${snap} + 88 + 32 * (${ATOMS} / 3) + 5")
math(EXPR stray "${mid} * ${snap} + 40")
math(EXPR hole_at "${mid} * ${snap} + 88 + 32 * (${ATOMS} * 2 / 3)")
set(cases cut stray hole text missing)
execute_process(COMMAND head -c ${cut} "${binary}" OUTPUT_FILE "${WORKDIR}/cut.bin")
execute_process(COMMAND head -c ${stray} "${binary}" OUTPUT_FILE "${WORKDIR}/stray.bin")
execute_process(COMMAND ${CMAKE_COMMAND} -E copy "${binary}" "${WORKDIR}/hole.bin")
execute_process(COMMAND dd if=/dev/zero "of=${WORKDIR}/hole.bin" bs=1 seek=${hole_at} count=32
                        conv=notrunc status=none)
execute_process(COMMAND ${CMAKE_COMMAND} -E copy "${serial}" "${WORKDIR}/text.bin")

foreach(case IN LISTS cases)
  set(damaged "${WORKDIR}/${case}.bin")
  execute_process(
    COMMAND ${BIN2TXT} --precision ${PRECISION} "${damaged}" "${WORKDIR}/serial-${case}.txt"
    RESULT_VARIABLE rc ERROR_VARIABLE err)
  string(STRIP "${err}" err)
  if(rc EQUAL 0 OR NOT err MATCHES "^lammps-fwdio-bin2txt: ")
    message(FATAL_ERROR "lammps-fwdio-bin2txt on ${case}.bin: exit ${rc}, \"${err}\"")
  endif()
  string(REGEX REPLACE "^lammps-fwdio-bin2txt: " "" want "${err}")
  if(case STREQUAL "missing")
    set(want "No such file or directory")
  endif()
  foreach(np IN LISTS CONVERT_NPS)
    convert(${np} "${damaged}" "${WORKDIR}/parallel-${case}.txt")
    message("${out}")
    if(NOT rc MATCHES "^[0-9]+$")
      message(FATAL_ERROR "${prog} on ${np} ranks, ${case}.bin: ${rc}")
    endif()
    if(rc EQUAL 0)
      message(FATAL_ERROR "${prog} on ${np} ranks accepted ${case}.bin")
    endif()
    string(REGEX MATCHALL "(^|\n)${prog}: [^\n]*" messages "${out}")
    list(LENGTH messages nmessages)
    if(NOT nmessages EQUAL 1)
      message(FATAL_ERROR "${prog} on ${np} ranks, ${case}.bin: ${nmessages} messages, not one")
    endif()
    string(REGEX REPLACE "^\n?${prog}: " "" got "${messages}")
    if(case STREQUAL "missing")
      string(FIND "${got}" "${want}" at)
      set(same 0)
      if(at GREATER -1)
        set(same 1)
      endif()
    else()
      string(COMPARE EQUAL "${got}" "${want}" same)
    endif()
    if(NOT same)
      message(FATAL_ERROR "${prog} on ${np} ranks, ${case}.bin: \"${got}\"; the serial "
                          "converter says \"${want}\"")
    endif()
    if(out MATCHES "Sanitizer|runtime error:")
      message(FATAL_ERROR "a sanitizer reported a problem (above)")
    endif()
    message(STATUS "${prog} on ${np} ranks refused ${case}.bin, every rank exiting with ${rc}: "
                   "\"${got}\"${took}")
  endforeach()
endforeach()
file(REMOVE_RECURSE "${WORKDIR}")
