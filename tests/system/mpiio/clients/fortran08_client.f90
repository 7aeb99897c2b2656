! SPDX-License-Identifier: BSD-3-Clause
!
! The same kind of program as fortran_client.f90 through `use mpi_f08`:
! handles are derived types, ierror is optional (left out here, so the
! layer's bindings must not write through it), MPI_STATUS_IGNORE and real
! statuses both occur. Every rank writes through a strided view with
! write_at_all, at its pointer, nonblocking, syncs, reads its own bytes back;
! then every rank reopens the file and checks every rank's values.
program fortran08_client
    use mpi_f08
    implicit none
    integer, parameter :: n = 384
    integer :: rank, nranks, provided, r, i, failures, count
    type(MPI_File) :: fh
    type(MPI_Datatype) :: filetype
    type(MPI_Request) :: req
    type(MPI_Status) :: st
    integer(kind=MPI_OFFSET_KIND) :: off, disp, head, fsize
    integer :: strided(n), tail(32), back(n)
    character(len=512) :: path

    failures = 0
    call MPI_Init_thread(MPI_THREAD_MULTIPLE, provided)
    call MPI_Comm_rank(MPI_COMM_WORLD, rank)
    call MPI_Comm_size(MPI_COMM_WORLD, nranks)
    call get_command_argument(1, path)
    do i = 1, n
        strided(i) = rank * 100000 + i
    end do
    tail = rank + 3

    call MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE + MPI_MODE_WRONLY, MPI_INFO_NULL, fh)
    call MPI_Type_vector(n / 4, 4, 4 * nranks, MPI_INTEGER, filetype)
    call MPI_Type_commit(filetype)
    disp = 16_MPI_OFFSET_KIND * rank
    call MPI_File_set_view(fh, disp, MPI_INTEGER, filetype, 'native', MPI_INFO_NULL)
    off = 0
    call MPI_File_write_at_all(fh, off, strided, n, MPI_INTEGER, st)
    call MPI_Get_count(st, MPI_INTEGER, count)
    if (count /= n) call fail('the count of write_at_all''s status')
    disp = 0
    call MPI_File_set_view(fh, disp, MPI_BYTE, MPI_BYTE, 'native', MPI_INFO_NULL)
    head = 4_MPI_OFFSET_KIND * n * nranks
    off = head + 128_MPI_OFFSET_KIND * rank
    call MPI_File_seek(fh, off, MPI_SEEK_SET)
    call MPI_File_write(fh, tail, 16, MPI_INTEGER, MPI_STATUS_IGNORE)
    call MPI_File_iwrite_at(fh, off + 64, tail(17), 16, MPI_INTEGER, req)
    call MPI_Wait(req, MPI_STATUS_IGNORE)
    ! Other ranks' bytes are visible after sync, barrier, sync (MPI's rule): one
    ! sync is not a barrier (ROMIO's returns before other ranks have written).
    call MPI_File_sync(fh)
    call MPI_Barrier(MPI_COMM_WORLD)
    call MPI_File_sync(fh)
    call MPI_File_get_size(fh, fsize)
    if (fsize /= head + 128_MPI_OFFSET_KIND * nranks) call fail('the size after the sync')
    call MPI_File_close(fh)

    call MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, MPI_INFO_NULL, fh)
    do r = 0, nranks - 1
        disp = 16_MPI_OFFSET_KIND * r
        call MPI_File_set_view(fh, disp, MPI_INTEGER, filetype, 'native', MPI_INFO_NULL)
        off = 0
        call MPI_File_read_at_all(fh, off, back, n, MPI_INTEGER, MPI_STATUS_IGNORE)
        do i = 1, n
            if (back(i) /= r * 100000 + i) then
                call fail('a strided value')
                exit
            end if
        end do
    end do
    disp = 0
    call MPI_File_set_view(fh, disp, MPI_BYTE, MPI_BYTE, 'native', MPI_INFO_NULL)
    do r = 0, nranks - 1
        call MPI_File_read_at(fh, head + 128_MPI_OFFSET_KIND * r, back, 32, MPI_INTEGER, &
                              MPI_STATUS_IGNORE)
        if (any(back(1:32) /= r + 3)) call fail('a tail value')
    end do
    call MPI_File_close(fh)
    call MPI_Type_free(filetype)
    call MPI_Allreduce(MPI_IN_PLACE, failures, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
    if (rank == 0) write (*, '(a,i0,a,i0)') 'fortran08_client: ', nranks, ' ranks, failures ', &
        failures
    call MPI_Finalize()
    if (failures /= 0) error stop 1

contains

    subroutine fail(what)
        character(len=*), intent(in) :: what
        write (*, '(a,i0,a)') 'rank ', rank, ': FAILED: '//what
        failures = failures + 1
    end subroutine fail
end program fortran08_client
