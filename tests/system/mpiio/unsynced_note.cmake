# SPDX-License-Identifier: BSD-3-Clause
# FWDIO_VERBOSE names a read that may have missed another rank's
# independent write of the same step (mpiio/unsynced.c), and no other:
# test_mpiio_layer's others_unsynced case on 3 ranks (rank 0 writes
# independently, a barrier, every rank reads those bytes, then a collective
# write ends the step): every rank states MPI's rule at its first
# independent read of the file, ranks 1 and 2 name theirs at that write, rank 0 (which
# reads its own bytes) does not; in others_unsynced_alias, which reads
# them through a second handle, ranks 1 and 2 too; with
# FWDIO_MPIIO_READBACK=0 (rank 0's writes in the file at once) no rank does, nor in read_in_flight (reads of
# bytes of collective writes only). Run with cmake -P and -DMPIEXEC=...
# -DPROG=... -DDIR=...
include(${CMAKE_CURRENT_LIST_DIR}/run_layer_case.cmake)
set(ENV{FWDIO_VERBOSE} 1)
# expect_count(REGEX N WHAT): ${out} holds REGEX exactly N times (a regex
# whose matches hold no '[': a list's items may not)
function(expect_count regex n what)
  string(REGEX MATCHALL "${regex}" found "${out}")
  list(LENGTH found got)
  if(NOT got EQUAL n)
    message(FATAL_ERROR "${got} ${what}, not ${n}:\n${out}")
  endif()
endfunction()
set(ENV{FWDIO_MPIIO} "*.mpiio")
set(note "fwdio-mpiio: [^\n]*others_unsynced\\.mpiio: this rank's MPI_File_read_at read bytes within \\[0, 229376\\) and, since the last collective call on the file, rank 0 wrote bytes within \\[100, 229376\\) independently \\(found at MPI_File_write_at_all\\)")
file(REMOVE_RECURSE "${DIR}")
file(MAKE_DIRECTORY "${DIR}")
run_layer_case(3 others_unsynced out)
if(NOT out MATCHES "others_unsynced\\.mpiio: MPI_File_read_at: an independent read sees other ranks' writes once they are synced")
  message(FATAL_ERROR "MPI's rule not stated at the file's first independent read:\n${out}")
endif()
if(NOT out MATCHES "${note}")
  message(FATAL_ERROR "no rank named the reads of rank 0's unsynced writes as expected:\n${out}")
endif()
# counted by a part without brackets (a list's items may not hold one)
expect_count("229376\\) independently \\(found at MPI_File_write_at_all\\)" 2
             "ranks named the reads of rank 0's unsynced writes")
expect_count("wrote bytes within" 2 "notes in all (another than the two expected?)")
# the same read through a second handle of the path (rank 0 has none)
run_layer_case(3 others_unsynced_alias out)
if(NOT out MATCHES "this rank's MPI_File_read_at read bytes within \\[4096, 20480\\) and, since the last collective call on the file, rank 0 wrote bytes within \\[4096, 20480\\) independently \\(found at MPI_File_write_at_all\\)")
  message(FATAL_ERROR "no rank named its read through a second handle as expected:\n${out}")
endif()
expect_count("20480\\) independently \\(found at MPI_File_write_at_all\\)" 2
             "ranks named their reads through a second handle")
set(ENV{FWDIO_MPIIO_READBACK} 0)
run_layer_case(3 others_unsynced out)
if(out MATCHES "wrote bytes within")
  message(FATAL_ERROR "a note with every independent write in the file at once:\n${out}")
endif()
unset(ENV{FWDIO_MPIIO_READBACK})
run_layer_case(3 read_in_flight out)
if(out MATCHES "wrote bytes within")
  message(FATAL_ERROR "a note where no rank wrote independently:\n${out}")
endif()
file(REMOVE_RECURSE "${DIR}")
