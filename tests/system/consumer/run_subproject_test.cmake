# SPDX-License-Identifier: BSD-3-Clause
# Script run by the ctest `subproject_consumer` (cmake -P; the variables come
# from consumer_test.cmake): configure tests/system/consumer/subproject, which pulls
# in this fwdio tree with add_subdirectory, build it and run its consumer.
# Fails (FATAL_ERROR) at the first step that fails.

foreach(var FWDIO_SOURCE_DIR FWDIO_SUBPROJECT_WORK_DIR FWDIO_C_COMPILER)
  if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
    message(FATAL_ERROR "run_subproject_test.cmake: ${var} is not set")
  endif()
endforeach()

set(work "${FWDIO_SUBPROJECT_WORK_DIR}")
file(REMOVE_RECURSE "${work}")
file(MAKE_DIRECTORY "${work}")

function(step what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what} failed (${rc}):\n${out}\n${err}")
  endif()
  message(STATUS "${what}: ok")
  set(step_output "${out}" PARENT_SCOPE)
endfunction()

# No CMAKE_BUILD_TYPE: the project checks that fwdio does not set one.
step("configure a project with fwdio as its subproject"
  "${CMAKE_COMMAND}" -S "${FWDIO_SOURCE_DIR}/tests/system/consumer/subproject" -B "${work}/build"
  "-DFWDIO_SOURCE_DIR=${FWDIO_SOURCE_DIR}" "-DCMAKE_C_COMPILER=${FWDIO_C_COMPILER}"
  # fwdio's own -Werror on (a developer's setting), to see that it stays with fwdio
  -DFWDIO_WERROR=ON)
step("build it" "${CMAKE_COMMAND}" --build "${work}/build" -j2)
set(exe "${work}/build/fwdio_subproject_consumer")
step("run its consumer" "${exe}")
message(STATUS "${step_output}")
