! SPDX-License-Identifier: BSD-3-Clause
!
! The Fortran module on 1 to N ranks (`use fwdio`, `use mpi`): a file of
! integer(int64), real(real64) 2-D and character data written by every
! rank, checked byte for byte by rank 0 through Fortran stream I/O and read
! back by every rank through fwdio_read; a stream of appended records over
! two steps; and the refusals a Fortran caller can provoke (a section that
! is not contiguous, a length past the buffer, a write past the end, a write
! after close, a bad hint), each with the status fwdio.h promises.
program test_fortran
    use, intrinsic :: iso_fortran_env, only: int64, real64, error_unit
    use mpi
    use fwdio
    implicit none

    integer, parameter :: n = 1000, rows = 30, cols = 7
    integer :: provided, rank, nranks, ierr, failures, checks
    type(fwdio_runtime) :: rt
    type(fwdio_file) :: f
    integer(int64) :: ints(n), back(n)
    real(real64) :: grid(rows, cols), grid_back(rows, cols)
    character(len=16) :: label
    integer(int64) :: share, total, base, i
    character(len=256) :: dir, path, spath
    integer :: info, i32
    logical :: flag
    type(fwdio_ckpt) :: ck
    integer(int64) :: version

    failures = 0
    checks = 0
    call mpi_init_thread(MPI_THREAD_MULTIPLE, provided, ierr)
    call mpi_comm_rank(MPI_COMM_WORLD, rank, ierr)
    call mpi_comm_size(MPI_COMM_WORLD, nranks, ierr)
    ! --dir DIR (default: the working directory); other arguments (the
    ! suite's --timeout) are not this program's
    dir = '.'
    do i = 1, command_argument_count() - 1
        call get_command_argument(int(i), label)
        if (label == '--dir') call get_command_argument(int(i) + 1, dir)
    end do
    write (path, '(a,i0,a)') trim(dir)//'/fortran-np', nranks, '.dat'
    write (spath, '(a,i0,a)') trim(dir)//'/fortran-np', nranks, '-stream.dat'

    ! Each rank's share: its integers, its grid, its label.
    share = 8_int64 * n + 8_int64 * rows * cols + 16_int64
    total = share * nranks
    base = share * rank
    do i = 1, n
        ints(i) = int(rank, int64) * 1000000_int64 + i
    end do
    grid = reshape([(real(rank * 1000 + i, real64) / 4, i = 1, rows * cols)], [rows, cols])
    write (label, '(a,i4.4,a)') 'rank ', rank, ' lbl...'

    call fwdio_init(MPI_COMM_WORLD, rt, ierr)
    call expect(ierr, FWDIO_OK, 'fwdio_init')
    call expect_text(fwdio_strerror(FWDIO_EINVAL), 'invalid argument', 'fwdio_strerror')

    ! --- a file of the three kinds of data
    call fwdio_open(rt, path, total, f, ierr)
    call expect(ierr, FWDIO_OK, 'fwdio_open')
    call fwdio_write(f, ints, 8_int64 * n, base, ierr)
    call expect(ierr, FWDIO_OK, 'fwdio_write of integers')
    call fwdio_write(f, grid, 8_int64 * rows * cols, base + 8_int64 * n, ierr)
    call expect(ierr, FWDIO_OK, 'fwdio_write of a 2-D array')
    call fwdio_write(f, label, 16_int64, base + share - 16, ierr)
    call expect(ierr, FWDIO_OK, 'fwdio_write of a character scalar')
    ! refusals, none of which touches the file
    call fwdio_write(f, ints(1:n:2), 8_int64, base, ierr)
    call expect(ierr, FWDIO_EINVAL, 'a section that is not contiguous')
    call fwdio_write(f, ints(1:10), 81_int64, base, ierr)
    call expect(ierr, FWDIO_EINVAL, 'a length past the buffer')
    call fwdio_write(f, ints, 8_int64, total, ierr)
    call expect(ierr, FWDIO_ERANGE, 'a write past the end')
    call fwdio_write(f, ints, 8_int64, -8_int64, ierr)
    call expect(ierr, FWDIO_EINVAL, 'a negative offset')
    call fwdio_close(f, ierr)
    call expect(ierr, FWDIO_OK, 'fwdio_close')
    call fwdio_write(f, ints, 8_int64, base, ierr)
    call expect(ierr, FWDIO_ECLOSED, 'a write after close')
    call fwdio_wait(f, ierr)
    call expect(ierr, FWDIO_OK, 'fwdio_wait')
    if (ierr /= FWDIO_OK) write (error_unit, '(a)') fwdio_file_error(f)
    ! without the node-local tier a file is drained once complete
    call fwdio_drain_test(f, flag, ierr)
    call expect(ierr, FWDIO_OK, 'fwdio_drain_test')
    if (.not. flag) call fail('not drained once complete')
    checks = checks + 1
    call fwdio_drain_wait(f, ierr)
    call expect(ierr, FWDIO_OK, 'fwdio_drain_wait')
    call fwdio_file_free(f)
    call mpi_barrier(MPI_COMM_WORLD, ierr)
    if (rank == 0) call check_bytes()

    ! --- the next rank's share, read back through fwdio
    call fwdio_open_read(rt, path, f, ierr)
    call expect(ierr, FWDIO_OK, 'fwdio_open_read')
    call fwdio_wait_ready(f, ierr)
    call expect(ierr, FWDIO_OK, 'fwdio_wait_ready')
    call fwdio_file_size(f, i, ierr)
    call expect(ierr, FWDIO_OK, 'fwdio_file_size')
    call expect(int(i - total), 0, 'the size read back')
    back = -1
    grid_back = -1
    base = share * mod(rank + 1, nranks)
    call fwdio_read(f, back, 8_int64 * n, base, ierr)
    call expect(ierr, FWDIO_OK, 'fwdio_read of integers')
    call fwdio_read(f, grid_back, 8_int64 * rows * cols, base + 8_int64 * n, ierr)
    call expect(ierr, FWDIO_OK, 'fwdio_read of a 2-D array')
    call fwdio_close(f, ierr)
    call fwdio_wait(f, ierr)
    call expect(ierr, FWDIO_OK, 'fwdio_wait of the reads')
    call fwdio_file_free(f)
    do i = 1, n
        if (back(i) /= int(mod(rank + 1, nranks), int64) * 1000000_int64 + i) then
            call fail('integer read back')
            exit
        end if
    end do
    checks = checks + 1
    if (.not. same_bits(grid_back, reshape([(real(mod(rank + 1, nranks) * 1000 + i, real64) / 4, &
                                             i = 1, rows * cols)], [rows, cols]))) &
        call fail('2-D array read back')
    checks = checks + 1

    ! --- a stream: every rank appends one record per step, two steps
    call fwdio_open(rt, spath, FWDIO_SIZE_GROWS, f, ierr)
    call expect(ierr, FWDIO_OK, 'fwdio_open of a stream')
    call fwdio_append(f, ints(1:rank + 1), 8_int64 * (rank + 1), ierr)
    call expect(ierr, FWDIO_OK, 'fwdio_append')
    call fwdio_step_end(f, ierr)
    call expect(ierr, FWDIO_OK, 'fwdio_step_end')
    call fwdio_append(f, ints(1:2), 16_int64, ierr)
    call fwdio_step_end(f, ierr)
    call fwdio_step_wait(f, 1_int64, ierr)
    call expect(ierr, FWDIO_OK, 'fwdio_step_wait')
    call fwdio_step_drain_wait(f, 1_int64, ierr)
    call expect(ierr, FWDIO_OK, 'fwdio_step_drain_wait')
    call fwdio_step_test(f, 0_int64, flag, ierr)
    call expect(ierr, FWDIO_OK, 'fwdio_step_test')
    if (.not. flag) call fail('step 0 not complete after step 1')
    checks = checks + 1
    call fwdio_close(f, ierr)
    call fwdio_test(f, flag, ierr)
    call expect(ierr, FWDIO_OK, 'fwdio_test')
    call fwdio_wait(f, ierr)
    call expect(ierr, FWDIO_OK, 'fwdio_wait of the stream')
    call fwdio_file_free(f)
    call mpi_barrier(MPI_COMM_WORLD, ierr)
    if (rank == 0) call check_stream()

    ! --- a hint fwdio refuses, and one it takes
    call mpi_info_create(info, ierr)
    call mpi_info_set(info, 'striping_unit', 'many', ierr)
    call fwdio_open(rt, path, total, f, ierr, info)
    call expect(ierr, FWDIO_EINVAL, 'a bad striping_unit hint')
    call mpi_info_set(info, 'striping_unit', '65536', ierr)
    call fwdio_open(rt, path, 8_int64 * nranks, f, ierr, info)
    call expect(ierr, FWDIO_OK, 'fwdio_open with a hint')
    call fwdio_write(f, ints(1:1), 8_int64, 8_int64 * rank, ierr)
    call fwdio_close(f, ierr)
    call fwdio_wait(f, ierr)
    call expect(ierr, FWDIO_OK, 'fwdio_wait of the hinted file')
    call fwdio_file_free(f)
    call mpi_info_free(info, ierr)

    ! --- a checkpoint set: two versions with keep 1, the newest read back
    do version = 1, 2
        call fwdio_ckpt_open(rt, 'fset', version, 8_int64 * n * nranks, ck, ierr, dir=dir, keep=1)
        call expect(ierr, FWDIO_OK, 'fwdio_ckpt_open')
        call fwdio_ckpt_write(ck, ints + version, 8_int64 * n, 8_int64 * n * rank, ierr)
        call expect(ierr, FWDIO_OK, 'fwdio_ckpt_write')
        call fwdio_ckpt_close(ck, ierr)
        call expect(ierr, FWDIO_OK, 'fwdio_ckpt_close')
        if (version == 1) then
            call fwdio_ckpt_wait(ck, ierr)
            call expect(ierr, FWDIO_OK, 'fwdio_ckpt_wait')
        else
            ! version 2 without blocking: fwdio_ckpt_test until done
            flag = .false.
            do while (.not. flag)
                call fwdio_ckpt_test(ck, flag, ierr)
            end do
            call expect(ierr, FWDIO_OK, 'fwdio_ckpt_test')
        end if
        call fwdio_ckpt_free(ck)
    end do
    call mpi_barrier(MPI_COMM_WORLD, ierr)
    inquire (file=trim(dir)//'/fset.v1.manifest', exist=flag)
    if (flag) call fail('version 1 kept with keep 1')
    checks = checks + 1
    call fwdio_ckpt_latest(rt, 'fset', version, ierr, dir=dir)
    call expect(ierr, FWDIO_OK, 'fwdio_ckpt_latest')
    call expect(int(version), 2, 'the newest version')
    call fwdio_ckpt_open_read(rt, 'fset', version, f, ierr, dir=dir)
    call expect(ierr, FWDIO_OK, 'fwdio_ckpt_open_read')
    back = 0
    call fwdio_read(f, back, 8_int64 * n, 8_int64 * n * rank, ierr)
    call fwdio_close(f, ierr)
    call fwdio_wait(f, ierr)
    call expect(ierr, FWDIO_OK, 'fwdio_wait of the checkpoint read')
    call fwdio_file_free(f)
    if (any(back /= ints + 2)) call fail('the checkpoint read back')
    checks = checks + 1
    call fwdio_ckpt_latest(rt, 'fset', version, ierr, dir=dir, upto=1_int64)
    call expect(ierr, FWDIO_ENOCKPT, 'fwdio_ckpt_latest upto 1 (version 1 not kept)')
    call fwdio_ckpt_latest(rt, 'fset', version, ierr, dir=dir, upto=2_int64)
    call expect(ierr, FWDIO_OK, 'fwdio_ckpt_latest upto 2')
    call expect(int(version), 2, 'the newest version up to 2')
    call fwdio_ckpt_latest(rt, 'no-such-set', version, ierr, dir=dir)
    call expect(ierr, FWDIO_ENOCKPT, 'fwdio_ckpt_latest of an empty set')
    call fwdio_ckpt_open(rt, 'bad/name', 1_int64, 8_int64, ck, ierr, dir=dir)
    call expect(ierr, FWDIO_EINVAL, 'a bad set name')
    if (rank == 0) then
        open (newunit=i32, file=trim(dir)//'/fset.v2.ckpt')
        close (i32, status='delete')
        open (newunit=i32, file=trim(dir)//'/fset.v2.manifest')
        close (i32, status='delete')
    end if

    call fwdio_finalize(rt, ierr)
    call expect(ierr, FWDIO_OK, 'fwdio_finalize')
    call mpi_allreduce(MPI_IN_PLACE, failures, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
    if (rank == 0) then
        if (failures == 0) then
            write (*, '(a,i0,a,i0,a)') 'fortran: ', nranks, ' ranks, ', checks, &
                ' checks per rank passed'
        else
            write (*, '(a,i0,a)') 'fortran: ', failures, ' checks failed'
        end if
    end if
    if (rank == 0 .and. failures == 0) then
        open (newunit=i32, file=path)
        close (i32, status='delete')
        open (newunit=i32, file=spath)
        close (i32, status='delete')
    end if
    call mpi_finalize(ierr)
    if (failures /= 0) error stop 1

contains

    ! Whether two arrays hold the same bytes (the file must, exactly).
    logical function same_bits(a, b)
        real(real64), intent(in) :: a(:, :), b(:, :)
        same_bits = all(transfer(a, 0_int64, size(a)) == transfer(b, 0_int64, size(b)))
    end function same_bits

    subroutine fail(what)
        character(len=*), intent(in) :: what
        write (error_unit, '(a,i0,a)') 'rank ', rank, ': FAILED: '//what
        failures = failures + 1
    end subroutine fail

    subroutine expect(got, want, what)
        integer, intent(in) :: got, want
        character(len=*), intent(in) :: what
        checks = checks + 1
        if (got /= want) then
            write (error_unit, '(a,i0,a,i0,a,i0,a)') 'rank ', rank, ': FAILED: '//what// &
                ': status ', got, ' (', want, ' expected): '//fwdio_strerror(got)
            failures = failures + 1
        end if
    end subroutine expect

    subroutine expect_text(got, want, what)
        character(len=*), intent(in) :: got, want, what
        checks = checks + 1
        if (got /= want) call fail(what//': "'//got//'"')
    end subroutine expect_text

    ! Rank 0 reads the whole file with Fortran stream I/O: every rank's
    ! integers, grid and label where that rank wrote them.
    subroutine check_bytes()
        integer :: u, r, ios
        integer(int64) :: want_ints(n), got_ints(n)
        real(real64) :: want_grid(rows, cols), got_grid(rows, cols)
        character(len=16) :: want_label, got_label
        integer(int64) :: j, fsize
        inquire (file=path, size=fsize)
        if (fsize /= total) call fail('file size')
        open (newunit=u, file=path, access='stream', form='unformatted', status='old', &
              action='read', iostat=ios)
        if (ios /= 0) then
            call fail('opening the file')
            return
        end if
        do r = 0, nranks - 1
            do j = 1, n
                want_ints(j) = int(r, int64) * 1000000_int64 + j
            end do
            want_grid = reshape([(real(r * 1000 + j, real64) / 4, j = 1, rows * cols)], &
                                [rows, cols])
            write (want_label, '(a,i4.4,a)') 'rank ', r, ' lbl...'
            read (u, pos=share * r + 1) got_ints
            read (u) got_grid
            read (u) got_label
            if (any(got_ints /= want_ints)) call fail('integers in the file')
            if (.not. same_bits(got_grid, want_grid)) call fail('2-D array in the file')
            if (got_label /= want_label) call fail('label in the file')
        end do
        close (u)
        checks = checks + 1
    end subroutine check_bytes

    ! The stream: step 0 holds ranks' 1, 2, ... first integers in rank
    ! order, step 1 two integers from every rank.
    subroutine check_stream()
        integer :: u, r, ios
        integer(int64) :: got(2), fsize, want_size
        want_size = 8_int64 * (int(nranks, int64) * (nranks + 1) / 2) + 16_int64 * nranks
        inquire (file=spath, size=fsize)
        if (fsize /= want_size) call fail('stream size')
        open (newunit=u, file=spath, access='stream', form='unformatted', status='old', &
              action='read', iostat=ios)
        if (ios /= 0) then
            call fail('opening the stream')
            return
        end if
        do r = 0, nranks - 1
            read (u, pos=8_int64 * (int(r, int64) * (r + 1) / 2) + 1) got(1)
            if (got(1) /= int(r, int64) * 1000000_int64 + 1) call fail('stream step 0')
            read (u, pos=8_int64 * (int(nranks, int64) * (nranks + 1) / 2) + 16_int64 * r + 1) got
            if (got(1) /= int(r, int64) * 1000000_int64 + 1 .or. &
                got(2) /= int(r, int64) * 1000000_int64 + 2) call fail('stream step 1')
        end do
        close (u)
        checks = checks + 1
    end subroutine check_stream
end program test_fortran
