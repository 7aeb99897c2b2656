! SPDX-License-Identifier: BSD-3-Clause
!
! A Fortran MPI-IO program (`use mpi`) for the layer's Fortran bindings:
! every rank writes through a strided view with write_at_all, at its
! individual pointer after a seek, with iwrite_at and a wait, and an
! ordered record; syncs (sync, barrier, sync), asks the size, sets atomicity, reads its own bytes
! back before the close; then every rank reopens the file read-only and
! checks every rank's values. Run with and without the layer (compare.cmake).
program fortran_client
    use mpi
    implicit none
    integer, parameter :: n = 512
    integer :: ierr, rank, nranks, fh, provided, filetype, r, i, req, failures
    integer(kind=MPI_OFFSET_KIND) :: off, fsize, disp, head
    integer :: strided(n), tail(64), ordered(4), back(n), st(MPI_STATUS_SIZE)
    character(len=512) :: path

    failures = 0
    call mpi_init_thread(MPI_THREAD_MULTIPLE, provided, ierr)
    call mpi_comm_rank(MPI_COMM_WORLD, rank, ierr)
    call mpi_comm_size(MPI_COMM_WORLD, nranks, ierr)
    call get_command_argument(1, path)
    do i = 1, n
        strided(i) = rank * 100000 + i
    end do
    tail = rank + 7
    ordered = -(rank + 1)

    call mpi_file_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE + MPI_MODE_RDWR, MPI_INFO_NULL, &
                       fh, ierr)
    call ok(ierr, 'mpi_file_open')
    ! Region 1: ranks' ints interleaved in blocks of 8 (a vector view).
    call mpi_type_vector(n / 8, 8, 8 * nranks, MPI_INTEGER, filetype, ierr)
    call mpi_type_commit(filetype, ierr)
    disp = 4_MPI_OFFSET_KIND * 8 * rank
    call mpi_file_set_view(fh, disp, MPI_INTEGER, filetype, 'native', MPI_INFO_NULL, ierr)
    call ok(ierr, 'mpi_file_set_view')
    off = 0
    call mpi_file_write_at_all(fh, off, strided, n, MPI_INTEGER, MPI_STATUS_IGNORE, ierr)
    call ok(ierr, 'mpi_file_write_at_all')
    ! Back to bytes; region 2: each rank's 64 ints, half at its pointer, half nonblocking.
    disp = 0
    call mpi_file_set_view(fh, disp, MPI_BYTE, MPI_BYTE, 'native', MPI_INFO_NULL, ierr)
    head = 4_MPI_OFFSET_KIND * n * nranks
    off = head + 256_MPI_OFFSET_KIND * rank
    call mpi_file_seek(fh, off, MPI_SEEK_SET, ierr)
    call ok(ierr, 'mpi_file_seek')
    call mpi_file_write(fh, tail, 128, MPI_BYTE, st, ierr)
    call ok(ierr, 'mpi_file_write')
    call mpi_file_iwrite_at(fh, off + 128, tail(33), 128, MPI_BYTE, req, ierr)
    call ok(ierr, 'mpi_file_iwrite_at')
    call mpi_wait(req, st, ierr)
    call ok(ierr, 'mpi_wait')
    ! Region 3: ordered records, after the others.
    off = head + 256_MPI_OFFSET_KIND * nranks
    call mpi_file_seek_shared(fh, off, MPI_SEEK_SET, ierr)
    call ok(ierr, 'mpi_file_seek_shared')
    call mpi_file_write_ordered(fh, ordered, 16, MPI_BYTE, st, ierr)
    call ok(ierr, 'mpi_file_write_ordered')
    ! Other ranks' bytes are visible after sync, barrier, sync (MPI's rule): one
    ! sync is not a barrier (ROMIO's returns before another rank's
    ! write_ordered has written, and the file is MPI-IO's again since that call).
    call mpi_file_sync(fh, ierr)
    call ok(ierr, 'mpi_file_sync')
    call mpi_barrier(MPI_COMM_WORLD, ierr)
    call mpi_file_sync(fh, ierr)
    call ok(ierr, 'mpi_file_sync')
    call mpi_file_get_size(fh, fsize, ierr)
    call ok(ierr, 'mpi_file_get_size')
    if (fsize /= head + 256_MPI_OFFSET_KIND * nranks + 16_MPI_OFFSET_KIND * nranks) &
        call fail('the size after the sync')
    call mpi_file_set_atomicity(fh, .true., ierr)
    call ok(ierr, 'mpi_file_set_atomicity')
    ! Its own bytes, read back before the close.
    back = 0
    call mpi_file_read_at(fh, head + 256_MPI_OFFSET_KIND * rank, back, 64, MPI_INTEGER, st, ierr)
    call ok(ierr, 'mpi_file_read_at')
    if (any(back(1:64) /= tail)) call fail('its own bytes read back')
    call mpi_file_close(fh, ierr)
    call ok(ierr, 'mpi_file_close')
    if (fh /= MPI_FILE_NULL) call fail('the handle after the close')

    ! Every rank's values, from a read-only open.
    call mpi_file_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, MPI_INFO_NULL, fh, ierr)
    call ok(ierr, 'mpi_file_open (read)')
    do r = 0, nranks - 1
        disp = 4_MPI_OFFSET_KIND * 8 * r
        call mpi_file_set_view(fh, disp, MPI_INTEGER, filetype, 'native', MPI_INFO_NULL, ierr)
        off = 0
        call mpi_file_read_at_all(fh, off, back, n, MPI_INTEGER, st, ierr)
        call ok(ierr, 'mpi_file_read_at_all')
        do i = 1, n
            if (back(i) /= r * 100000 + i) then
                call fail('a strided value')
                exit
            end if
        end do
    end do
    disp = 0
    call mpi_file_set_view(fh, disp, MPI_BYTE, MPI_BYTE, 'native', MPI_INFO_NULL, ierr)
    do r = 0, nranks - 1
        call mpi_file_read_at(fh, head + 256_MPI_OFFSET_KIND * r, back, 64, MPI_INTEGER, st, ierr)
        if (any(back(1:64) /= r + 7)) call fail('a tail value')
        call mpi_file_read_at(fh, head + 256_MPI_OFFSET_KIND * nranks + 16 * r, back, 4, &
                              MPI_INTEGER, st, ierr)
        if (any(back(1:4) /= -(r + 1))) call fail('an ordered value')
    end do
    call mpi_file_close(fh, ierr)
    call mpi_type_free(filetype, ierr)
    call mpi_allreduce(MPI_IN_PLACE, failures, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
    if (rank == 0) write (*, '(a,i0,a,i0)') 'fortran_client: ', nranks, ' ranks, failures ', &
        failures
    call mpi_finalize(ierr)
    if (failures /= 0) error stop 1

contains

    subroutine ok(code, what)
        integer, intent(in) :: code
        character(len=*), intent(in) :: what
        if (code /= MPI_SUCCESS) call fail(what)
    end subroutine ok

    subroutine fail(what)
        character(len=*), intent(in) :: what
        write (*, '(a,i0,a)') 'rank ', rank, ': FAILED: '//what
        failures = failures + 1
    end subroutine fail
end program fortran_client
