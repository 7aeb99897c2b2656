# SPDX-License-Identifier: BSD-3-Clause
# Open MPI only (its mpiexec options --oversubscribe and -x, OMPI_* names):
# Debian's LAMMPS links Open MPI, so builds with another MPI register no
# LAMMPS test (cmake/mpi.cmake, fwdio_links_same_mpi).
# One lammps-fwdio test, run by ctest as `cmake -P` (see CMakeLists.txt here).
#
# Runs the driver on NP ranks with the fwdio text dump, the fwdio binary dump
# and LAMMPS's own `dump custom` of the same run, then checks:
#   1. LAMMPS's dump has SNAPSHOTS snapshots of ATOMS atom lines each (so the
#      comparisons below cannot pass on empty or short files);
#   2. the fwdio text dump is byte for byte LAMMPS's dump;
#   3. the binary dump, turned back into text by lammps-fwdio-bin2txt, is byte
#      for byte LAMMPS's dump too;
#   4. the converter refuses the binary dump with its last record cut off and
#      with a hole (zeros) in place of one record.
# With EXPECT_FAILURE set, the driver must instead exit non-zero with a message
# matching EXPECT_FAILURE (and not hang: ctest's timeout).
#
# Variables: MPIEXEC NP DRIVER BIN2TXT WORKDIR ARGS (driver arguments separated
#            by |) [PRECISION]
#            [ATOMS SNAPSHOTS] [EXPECT_FAILURE]
cmake_minimum_required(VERSION 3.18)

foreach(var MPIEXEC NP DRIVER BIN2TXT WORKDIR)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "run_and_compare.cmake: ${var} is not set")
  endif()
endforeach()
string(REPLACE "|" ";" ARGS "${ARGS}")
if(NOT DEFINED PRECISION)
  set(PRECISION 6)
endif()

file(REMOVE_RECURSE "${WORKDIR}")
file(MAKE_DIRECTORY "${WORKDIR}")
set(text "${WORKDIR}/fwdio.dump")
set(binary "${WORKDIR}/fwdio.bin.dump")
set(native "${WORKDIR}/lammps.dump")

if(DEFINED EXPECT_FAILURE)
  execute_process(COMMAND ${MPIEXEC} -np ${NP} --oversubscribe ${DRIVER} ${ARGS}
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  message("${out}${err}")
  if(rc EQUAL 0)
    message(FATAL_ERROR "lammps-fwdio succeeded where it should have failed")
  endif()
  if(NOT "${out}${err}" MATCHES "${EXPECT_FAILURE}")
    message(FATAL_ERROR "lammps-fwdio failed without saying \"${EXPECT_FAILURE}\"")
  endif()
  # The failure must be the driver's own, not a sanitizer's report on the way out.
  if("${out}${err}" MATCHES "Sanitizer|runtime error:")
    message(FATAL_ERROR "a sanitizer reported a problem (above)")
  endif()
  file(REMOVE_RECURSE "${WORKDIR}")
  return()
endif()

execute_process(COMMAND ${MPIEXEC} -np ${NP} --oversubscribe ${DRIVER} ${ARGS}
    --precision ${PRECISION} --dump ${text} --binary ${binary} --native ${native}
  RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "lammps-fwdio exited with ${rc}")
endif()

# 1. LAMMPS's own dump is as long as the run asks.
file(STRINGS "${native}" timesteps REGEX "^ITEM: TIMESTEP$")
list(LENGTH timesteps got_snapshots)
file(STRINGS "${native}" atom_lines REGEX "^ *[0-9]+ +[0-9]+ +-?[0-9]+\\.[0-9]+ ")
list(LENGTH atom_lines got_atom_lines)
math(EXPR want_atom_lines "${ATOMS} * ${SNAPSHOTS}")
if(NOT got_snapshots EQUAL SNAPSHOTS OR NOT got_atom_lines EQUAL want_atom_lines)
  message(FATAL_ERROR "LAMMPS's dump has ${got_snapshots} snapshots and ${got_atom_lines} "
                      "atom lines; expected ${SNAPSHOTS} and ${want_atom_lines}")
endif()

# 2. The text dump written through fwdio is LAMMPS's, byte for byte.
execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files "${text}" "${native}"
  RESULT_VARIABLE differ)
if(differ)
  execute_process(COMMAND cmp "${text}" "${native}")
  message(FATAL_ERROR "the fwdio text dump differs from LAMMPS's dump custom (kept in ${WORKDIR})")
endif()

# 3. The binary dump holds the same snapshots.
set(converted "${WORKDIR}/fwdio.bin.txt")
execute_process(COMMAND ${BIN2TXT} --precision ${PRECISION} "${binary}" "${converted}"
  RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "lammps-fwdio-bin2txt could not read the binary dump (kept in ${WORKDIR})")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files "${converted}" "${native}"
  RESULT_VARIABLE differ)
if(differ)
  execute_process(COMMAND cmp "${converted}" "${native}")
  message(FATAL_ERROR "the binary dump, as text, differs from LAMMPS's dump (kept in ${WORKDIR})")
endif()

# 4. A damaged binary dump is refused: cut one byte short, or with a hole of
#    zeros in place of one record in the middle of the last snapshot.
file(SIZE "${binary}" size)
math(EXPR cut "${size} - 1")
math(EXPR hole_at "${size} - 32 * (${ATOMS} / 2)")
set(cut_file "${WORKDIR}/cut.bin.dump")
set(hole_file "${WORKDIR}/hole.bin.dump")
execute_process(COMMAND head -c ${cut} "${binary}" OUTPUT_FILE "${cut_file}")
execute_process(COMMAND ${CMAKE_COMMAND} -E copy "${binary}" "${hole_file}")
execute_process(COMMAND dd if=/dev/zero "of=${hole_file}" bs=1 seek=${hole_at} count=32
                        conv=notrunc status=none)
foreach(damaged "${cut_file}" "${hole_file}")
  execute_process(COMMAND ${BIN2TXT} --precision ${PRECISION} "${damaged}" "${WORKDIR}/damaged.txt"
    RESULT_VARIABLE rc ERROR_VARIABLE err)
  if(rc EQUAL 0)
    message(FATAL_ERROR "lammps-fwdio-bin2txt accepted the damaged ${damaged}")
  endif()
  message("refused as expected: ${err}")
endforeach()

file(REMOVE_RECURSE "${WORKDIR}")
