# SPDX-License-Identifier: BSD-3-Clause
# Environment for the tests of a sanitizer build (FWDIO_SANITIZE): sets
# FWDIO_TEST_ENV, a list of NAME=VALUE to give every test as its ENVIRONMENT
# property, e.g.
#   include(${PROJECT_SOURCE_DIR}/cmake/sanitizer_env.cmake)
#   set_tests_properties(my_test PROPERTIES ENVIRONMENT "${FWDIO_TEST_ENV}")
# It is empty in a normal build. The suppression files in tests/sanitizers/
# cover Open MPI and PMIx only, never fwdio or its tests; each entry says why.

set(FWDIO_TEST_ENV "")
set(_fwdio_supp_dir "${PROJECT_SOURCE_DIR}/tests/sanitizers")

if(FWDIO_SANITIZE STREQUAL "address")
  # fast_unwind_on_malloc=0: Open MPI is built without frame pointers, so the
  # fast unwinder stops inside it and no stack would reach MPI_Init, the frame
  # the leak suppressions need to see. Costs time per malloc, not correctness.
  set(_fwdio_asan "halt_on_error=1:detect_leaks=1:fast_unwind_on_malloc=0")
  set(_fwdio_lsan "suppressions=${_fwdio_supp_dir}/lsan.supp:print_suppressions=0")

  # Open MPI 4.1 dlcloses its pmix component in MPI_Finalize, which unloads
  # libpmix before the exit-time leak check runs; the leaks of PMIx's own
  # progress thread then show only "<unknown module>" frames that no
  # suppression can name. Preloading libpmix keeps it mapped so those frames
  # resolve to libpmix.so (suppressed in lsan.supp). ASan then no longer comes
  # first in the library list, which is harmless here (libpmix defines no
  # allocator), so that check is turned off.
  find_library(FWDIO_PMIX_LIBRARY NAMES pmix
    HINTS ${MPI_C_LIBRARY_DIRS}
    DOC "libpmix, preloaded in ASan test runs so Open MPI's leak reports can be suppressed")
  mark_as_advanced(FWDIO_PMIX_LIBRARY)
  if(FWDIO_PMIX_LIBRARY)
    get_filename_component(_fwdio_pmix "${FWDIO_PMIX_LIBRARY}" REALPATH)
    string(APPEND _fwdio_asan ":verify_asan_link_order=0")
    list(APPEND FWDIO_TEST_ENV "LD_PRELOAD=${_fwdio_pmix}")
  endif()

  list(APPEND FWDIO_TEST_ENV
    "ASAN_OPTIONS=${_fwdio_asan}"
    "LSAN_OPTIONS=${_fwdio_lsan}"
    "UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1")
elseif(FWDIO_SANITIZE STREQUAL "thread")
  # halt_on_error=0: print every report of a run, then exit with 66.
  # history_size=7 (the most): the other access of a race is often old; with
  # the default history TSan prints "failed to restore the stack" for it, and
  # a suppression (which needs its frames) cannot recognise Open MPI there.
  list(APPEND FWDIO_TEST_ENV
    "TSAN_OPTIONS=suppressions=${_fwdio_supp_dir}/tsan.supp:halt_on_error=0:exitcode=66:second_deadlock_stack=1:history_size=7:print_suppressions=0")
endif()

unset(_fwdio_supp_dir)
unset(_fwdio_asan)
unset(_fwdio_lsan)
unset(_fwdio_pmix)
