! SPDX-License-Identifier: BSD-3-Clause
! An installed fwdio's Fortran module, as a user builds against it: every
! rank writes its rank number eight times, rank 0 checks the file's bytes.
program fwdio_fortran_consumer
    use, intrinsic :: iso_fortran_env, only: int64
    use mpi
    use fwdio
    implicit none
    integer :: provided, rank, nranks, ierr, u
    type(fwdio_runtime) :: rt
    type(fwdio_file) :: f
    integer(int64) :: mine(8), got(8)
    integer :: r

    call mpi_init_thread(MPI_THREAD_MULTIPLE, provided, ierr)
    call mpi_comm_rank(MPI_COMM_WORLD, rank, ierr)
    call mpi_comm_size(MPI_COMM_WORLD, nranks, ierr)
    mine = rank
    call fwdio_init(MPI_COMM_WORLD, rt)
    call fwdio_open(rt, 'consumer-fortran.dat', 64_int64 * nranks, f)
    call fwdio_write(f, mine, 64_int64, 64_int64 * rank)
    call fwdio_close(f)
    call fwdio_wait(f, ierr)
    if (ierr /= FWDIO_OK) error stop 'fwdio_wait failed'
    call fwdio_file_free(f)
    call fwdio_finalize(rt)
    if (rank == 0) then
        open (newunit=u, file='consumer-fortran.dat', access='stream', form='unformatted', &
              status='old', action='read')
        do r = 0, nranks - 1
            read (u) got
            if (any(got /= r)) error stop 'wrong bytes in the file'
        end do
        close (u, status='delete')
        write (*, '(a,a)') 'fwdio Fortran consumer: bytes right, fwdio ', fwdio_version()
    end if
    call mpi_finalize(ierr)
end program fwdio_fortran_consumer
