! SPDX-License-Identifier: BSD-3-Clause
!
! fwdio for Fortran 2008 and later (module fwdio): the C API of fwdio.h in
! the style of MPI's own Fortran bindings. Handles are derived types
! (fwdio_runtime, fwdio_file); every call that can fail ends with an
! optional integer ierr, FWDIO_OK (0) or a negative FWDIO_E* status (the same
! values as fwdio.h). Without ierr, a failure stops the program with the
! call's error text (error stop), as MPI's default error handler does.
!
! Communicators and infos are MPI's Fortran handles: an INTEGER from
! `use mpi` or mpif.h, or the MPI_VAL component of a type(MPI_Comm) or
! type(MPI_Info) from `use mpi_f08`. Sizes, offsets and lengths are
! integer(int64) bytes (integer(c_int64_t)); a buffer is a contiguous
! variable or array of any type and rank, of at least `len` bytes (checked:
! a section that is not contiguous is refused with FWDIO_EINVAL).
!
!   use fwdio
!   type(fwdio_runtime) :: rt
!   type(fwdio_file) :: f
!   call fwdio_init(MPI_COMM_WORLD, rt, ierr)
!   call fwdio_open(rt, 'out.dat', total_bytes, f, ierr)
!   call fwdio_write(f, x, 8_int64 * size(x, kind=int64), my_offset, ierr)
!   call fwdio_close(f, ierr)
!   ... compute ...
!   call fwdio_wait(f, ierr)          ! ierr: the file's status, the same on every rank
!   call fwdio_file_free(f)
!   call fwdio_finalize(rt, ierr)
!
! What each call promises is the C function's of the same name (fwdio.h):
! fwdio_write copies the bytes and returns; fwdio_read and fwdio_wait_ready
! are nonblocking and a buffer given to fwdio_read belongs to fwdio until
! fwdio_wait of its file returns (declare it asynchronous or leave it alone).
module fwdio
    use, intrinsic :: iso_c_binding
    use, intrinsic :: iso_fortran_env, only: error_unit
    implicit none
    private

    include 'fwdio_constants.inc'

    !> A runtime: one per fwdio_init, until fwdio_finalize.
    type, public, bind(c) :: fwdio_runtime
        type(c_ptr) :: ptr = c_null_ptr
    end type fwdio_runtime

    !> A file: one per fwdio_open or fwdio_open_read, until fwdio_file_free.
    type, public, bind(c) :: fwdio_file
        type(c_ptr) :: ptr = c_null_ptr
    end type fwdio_file

    !> A version of a checkpoint set being written: one per fwdio_ckpt_open,
    !> until fwdio_ckpt_free.
    type, public, bind(c) :: fwdio_ckpt
        type(c_ptr) :: ptr = c_null_ptr
    end type fwdio_ckpt

    public :: fwdio_ckpt_open, fwdio_ckpt_write, fwdio_ckpt_close, fwdio_ckpt_wait, &
              fwdio_ckpt_test, fwdio_ckpt_free, fwdio_ckpt_latest, fwdio_ckpt_open_read
    public :: fwdio_init, fwdio_finalize, fwdio_open, fwdio_open_read, fwdio_write, &
              fwdio_append, fwdio_set_commit, fwdio_step_end, fwdio_step_test, &
              fwdio_step_wait, fwdio_step_drain_wait, fwdio_read, fwdio_file_size, fwdio_close, fwdio_wait_ready, &
              fwdio_wait, fwdio_test, fwdio_drain_wait, fwdio_drain_test, fwdio_poll, fwdio_file_free, fwdio_strerror, &
              fwdio_file_error, fwdio_version

    interface
        integer(c_int) function c_init(comm, rt) bind(c, name='fwdio_f_init')
            import :: c_int, c_ptr
            integer(c_int), value :: comm
            type(c_ptr) :: rt
        end function
        integer(c_int) function c_finalize(rt) bind(c, name='fwdio_finalize')
            import :: c_int, c_ptr
            type(c_ptr), value :: rt
        end function
        integer(c_int) function c_open(rt, path, size, info, f) bind(c, name='fwdio_f_open')
            import :: c_int, c_ptr, c_char, c_int64_t
            type(c_ptr), value :: rt
            character(kind=c_char), dimension(*) :: path
            integer(c_int64_t), value :: size
            integer(c_int), value :: info
            type(c_ptr) :: f
        end function
        integer(c_int) function c_open_read(rt, path, info, f) bind(c, name='fwdio_f_open_read')
            import :: c_int, c_ptr, c_char
            type(c_ptr), value :: rt
            character(kind=c_char), dimension(*) :: path
            integer(c_int), value :: info
            type(c_ptr) :: f
        end function
        integer(c_int) function c_write(f, buf, len, offset) bind(c, name='fwdio_f_write')
            import :: c_int, c_ptr, c_int64_t
            type(c_ptr), value :: f
            type(*), dimension(..), intent(in) :: buf
            integer(c_int64_t), value :: len, offset
        end function
        integer(c_int) function c_append(f, buf, len) bind(c, name='fwdio_f_append')
            import :: c_int, c_ptr, c_int64_t
            type(c_ptr), value :: f
            type(*), dimension(..), intent(in) :: buf
            integer(c_int64_t), value :: len
        end function
        integer(c_int) function c_set_commit(f, buf, len, offset) &
                bind(c, name='fwdio_f_set_commit')
            import :: c_int, c_ptr, c_int64_t
            type(c_ptr), value :: f
            type(*), dimension(..), intent(in) :: buf
            integer(c_int64_t), value :: len, offset
        end function
        integer(c_int) function c_read(f, buf, len, offset) bind(c, name='fwdio_f_read')
            import :: c_int, c_ptr, c_int64_t
            type(c_ptr), value :: f
            type(*), dimension(..) :: buf
            integer(c_int64_t), value :: len, offset
        end function
        integer(c_int) function c_step_end(f) bind(c, name='fwdio_step_end')
            import :: c_int, c_ptr
            type(c_ptr), value :: f
        end function
        integer(c_int) function c_step_test(f, step, done) bind(c, name='fwdio_step_test')
            import :: c_int, c_ptr, c_int64_t
            type(c_ptr), value :: f
            integer(c_int64_t), value :: step
            integer(c_int) :: done
        end function
        integer(c_int) function c_step_wait(f, step) bind(c, name='fwdio_step_wait')
            import :: c_int, c_ptr, c_int64_t
            type(c_ptr), value :: f
            integer(c_int64_t), value :: step
        end function
        integer(c_int) function c_step_drain_wait(f, step) bind(c, name='fwdio_step_drain_wait')
            import :: c_int, c_ptr, c_int64_t
            type(c_ptr), value :: f
            integer(c_int64_t), value :: step
        end function
        integer(c_int) function c_file_size(f, size) bind(c, name='fwdio_file_size')
            import :: c_int, c_ptr, c_int64_t
            type(c_ptr), value :: f
            integer(c_int64_t) :: size
        end function
        integer(c_int) function c_close(f) bind(c, name='fwdio_close')
            import :: c_int, c_ptr
            type(c_ptr), value :: f
        end function
        integer(c_int) function c_wait_ready(f) bind(c, name='fwdio_wait_ready')
            import :: c_int, c_ptr
            type(c_ptr), value :: f
        end function
        integer(c_int) function c_wait(f) bind(c, name='fwdio_wait')
            import :: c_int, c_ptr
            type(c_ptr), value :: f
        end function
        integer(c_int) function c_test(f, done) bind(c, name='fwdio_test')
            import :: c_int, c_ptr
            type(c_ptr), value :: f
            integer(c_int) :: done
        end function
        integer(c_int) function c_drain_wait(f) bind(c, name='fwdio_drain_wait')
            import :: c_int, c_ptr
            type(c_ptr), value :: f
        end function
        integer(c_int) function c_drain_test(f, done) bind(c, name='fwdio_drain_test')
            import :: c_int, c_ptr
            type(c_ptr), value :: f
            integer(c_int) :: done
        end function
        integer(c_int) function c_poll(rt) bind(c, name='fwdio_poll')
            import :: c_int, c_ptr
            type(c_ptr), value :: rt
        end function
        subroutine c_file_free(f) bind(c, name='fwdio_file_free')
            import :: c_ptr
            type(c_ptr), value :: f
        end subroutine
        type(c_ptr) function c_strerror(status) bind(c, name='fwdio_strerror')
            import :: c_ptr, c_int
            integer(c_int), value :: status
        end function
        type(c_ptr) function c_file_error(f) bind(c, name='fwdio_file_error')
            import :: c_ptr
            type(c_ptr), value :: f
        end function
        type(c_ptr) function c_version() bind(c, name='fwdio_version')
            import :: c_ptr
        end function
        integer(c_int) function c_ckpt_open(rt, name, dir, keep, version, size, info, ck) &
                bind(c, name='fwdio_f_ckpt_open')
            import :: c_int, c_ptr, c_char, c_int64_t
            type(c_ptr), value :: rt
            character(kind=c_char), dimension(*) :: name, dir
            integer(c_int), value :: keep, info
            integer(c_int64_t), value :: version, size
            type(c_ptr) :: ck
        end function
        integer(c_int) function c_ckpt_write(ck, buf, len, offset) bind(c, name='fwdio_f_ckpt_write')
            import :: c_int, c_ptr, c_int64_t
            type(c_ptr), value :: ck
            type(*), dimension(..), intent(in) :: buf
            integer(c_int64_t), value :: len, offset
        end function
        integer(c_int) function c_ckpt_close(ck) bind(c, name='fwdio_ckpt_close')
            import :: c_int, c_ptr
            type(c_ptr), value :: ck
        end function
        integer(c_int) function c_ckpt_wait(ck) bind(c, name='fwdio_ckpt_wait')
            import :: c_int, c_ptr
            type(c_ptr), value :: ck
        end function
        integer(c_int) function c_ckpt_test(ck, done) bind(c, name='fwdio_ckpt_test')
            import :: c_int, c_ptr
            type(c_ptr), value :: ck
            integer(c_int) :: done
        end function
        subroutine c_ckpt_free(ck) bind(c, name='fwdio_ckpt_free')
            import :: c_ptr
            type(c_ptr), value :: ck
        end subroutine
        integer(c_int) function c_ckpt_latest(rt, name, dir, info, upto, version) &
                bind(c, name='fwdio_f_ckpt_latest')
            import :: c_int, c_ptr, c_char, c_int64_t
            type(c_ptr), value :: rt
            character(kind=c_char), dimension(*) :: name, dir
            integer(c_int), value :: info
            integer(c_int64_t), value :: upto
            integer(c_int64_t) :: version
        end function
        integer(c_int) function c_ckpt_open_read(rt, name, version, dir, info, f) &
                bind(c, name='fwdio_f_ckpt_open_read')
            import :: c_int, c_ptr, c_char, c_int64_t
            type(c_ptr), value :: rt
            character(kind=c_char), dimension(*) :: name, dir
            integer(c_int64_t), value :: version
            integer(c_int), value :: info
            type(c_ptr) :: f
        end function
        integer(c_size_t) function c_strlen(s) bind(c, name='strlen')
            import :: c_size_t, c_ptr
            type(c_ptr), value :: s
        end function
    end interface

contains

    !> A C string as a Fortran string (empty for NULL).
    function from_c(p) result(s)
        type(c_ptr), intent(in) :: p
        character(len=:), allocatable :: s
        character(kind=c_char), pointer :: chars(:)
        integer :: i, n
        if (.not. c_associated(p)) then
            s = ''
            return
        end if
        n = int(c_strlen(p))
        call c_f_pointer(p, chars, [n])
        allocate (character(len=n) :: s)
        do i = 1, n
            s(i:i) = chars(i)
        end do
    end function from_c

    !> A Fortran string as a C string (trailing blanks dropped).
    function to_c(s) result(c)
        character(len=*), intent(in) :: s
        character(kind=c_char), allocatable :: c(:)
        integer :: i, n
        n = len_trim(s)
        allocate (c(n + 1))
        do i = 1, n
            c(i) = s(i:i)
        end do
        c(n + 1) = c_null_char
    end function to_c

    !> ierr gets rc; without ierr a failure stops the program with its text.
    subroutine done(rc, call, ierr, f)
        integer(c_int), intent(in) :: rc
        character(len=*), intent(in) :: call
        integer, intent(out), optional :: ierr
        type(c_ptr), intent(in), optional :: f
        if (present(ierr)) then
            ierr = int(rc)
            return
        end if
        if (rc == FWDIO_OK) return
        if (present(f)) then
            if (c_associated(f)) then
                write (error_unit, '(a)') 'fwdio: '//call//': '//from_c(c_file_error(f))
                error stop 1
            end if
        end if
        write (error_unit, '(a)') 'fwdio: '//call//': '//from_c(c_strerror(rc))
        error stop 1
    end subroutine done

    !> Start fwdio on every rank of comm (collective): fwdio_init of fwdio.h
    !> with the default configuration (the environment and FWDIO_CONFIG).
    subroutine fwdio_init(comm, rt, ierr)
        integer, intent(in) :: comm
        type(fwdio_runtime), intent(out) :: rt
        integer, intent(out), optional :: ierr
        call done(c_init(int(comm, c_int), rt%ptr), 'fwdio_init', ierr)
    end subroutine fwdio_init

    !> Wait for every file of the runtime and stop it (collective).
    subroutine fwdio_finalize(rt, ierr)
        type(fwdio_runtime), intent(inout) :: rt
        integer, intent(out), optional :: ierr
        integer(c_int) :: rc
        rc = c_finalize(rt%ptr)
        rt%ptr = c_null_ptr
        call done(rc, 'fwdio_finalize', ierr)
    end subroutine fwdio_finalize

    !> Open `path` for writing, `size` bytes in all (FWDIO_SIZE_GROWS: a
    !> stream), collective over the runtime's ranks; `info` (optional, an MPI
    !> info handle) carries options as MPI-IO hints (striping_unit, cb_nodes,
    !> fwdio_*: see the README's hints table).
    subroutine fwdio_open(rt, path, size, file, ierr, info)
        type(fwdio_runtime), intent(in) :: rt
        character(len=*), intent(in) :: path
        integer(c_int64_t), intent(in) :: size
        type(fwdio_file), intent(out) :: file
        integer, intent(out), optional :: ierr
        integer, intent(in), optional :: info
        integer(c_int) :: i
        i = info_or_null(info)
        call done(c_open(rt%ptr, to_c(path), size, i, file%ptr), 'fwdio_open', ierr)
    end subroutine fwdio_open

    !> Open `path` for reading (collective), as fwdio_open_read of fwdio.h.
    subroutine fwdio_open_read(rt, path, file, ierr, info)
        type(fwdio_runtime), intent(in) :: rt
        character(len=*), intent(in) :: path
        type(fwdio_file), intent(out) :: file
        integer, intent(out), optional :: ierr
        integer, intent(in), optional :: info
        call done(c_open_read(rt%ptr, to_c(path), info_or_null(info), file%ptr), &
                  'fwdio_open_read', ierr)
    end subroutine fwdio_open_read

    !> The directory argument of the checkpoint calls ('' when absent: ".").
    function dir_or_default(dir) result(c)
        character(len=*), intent(in), optional :: dir
        character(kind=c_char), allocatable :: c(:)
        if (present(dir)) then
            c = to_c(dir)
        else
            c = to_c('')
        end if
    end function dir_or_default

    !> Start writing version `version` (>= 0) of checkpoint set `name`
    !> (collective), as fwdio_ckpt_open of fwdio.h: `dir` the set's
    !> directory (default '.'), `keep` the complete versions kept (default
    !> 2), `info` the data file's options as hints.
    subroutine fwdio_ckpt_open(rt, name, version, size, ck, ierr, dir, keep, info)
        type(fwdio_runtime), intent(in) :: rt
        character(len=*), intent(in) :: name
        integer(c_int64_t), intent(in) :: version, size
        type(fwdio_ckpt), intent(out) :: ck
        integer, intent(out), optional :: ierr
        character(len=*), intent(in), optional :: dir
        integer, intent(in), optional :: keep, info
        integer(c_int) :: k
        k = 0
        if (present(keep)) k = int(keep, c_int)
        call done(c_ckpt_open(rt%ptr, to_c(name), dir_or_default(dir), k, version, size, &
                              info_or_null(info), ck%ptr), 'fwdio_ckpt_open', ierr)
    end subroutine fwdio_ckpt_open

    !> Write `len` bytes of `buf` at `offset` into the version, with their
    !> part of its checksum (copied; returns at once).
    subroutine fwdio_ckpt_write(ck, buf, len, offset, ierr)
        type(fwdio_ckpt), intent(in) :: ck
        type(*), dimension(..), intent(in) :: buf
        integer(c_int64_t), intent(in) :: len, offset
        integer, intent(out), optional :: ierr
        call done(c_ckpt_write(ck%ptr, buf, len, offset), 'fwdio_ckpt_write', ierr)
    end subroutine fwdio_ckpt_write

    !> This rank has written all of the version (returns at once).
    subroutine fwdio_ckpt_close(ck, ierr)
        type(fwdio_ckpt), intent(in) :: ck
        integer, intent(out), optional :: ierr
        call done(c_ckpt_close(ck%ptr), 'fwdio_ckpt_close', ierr)
    end subroutine fwdio_ckpt_close

    !> Complete the version (collective, blocking); ierr its status, the
    !> same on every rank (FWDIO_OK: complete, its manifest in place).
    subroutine fwdio_ckpt_wait(ck, ierr)
        type(fwdio_ckpt), intent(in) :: ck
        integer, intent(out), optional :: ierr
        call done(c_ckpt_wait(ck%ptr), 'fwdio_ckpt_wait', ierr)
    end subroutine fwdio_ckpt_wait

    !> Whether the version is complete, without blocking (fwdio_ckpt_test
    !> of fwdio.h: each call takes the completion a step further; every
    !> rank calls it until flag is .true., or calls fwdio_ckpt_wait); ierr
    !> the version's status once flag is .true., the same on every rank.
    subroutine fwdio_ckpt_test(ck, flag, ierr)
        type(fwdio_ckpt), intent(in) :: ck
        logical, intent(out) :: flag
        integer, intent(out), optional :: ierr
        integer(c_int) :: d, rc
        d = 0
        rc = c_ckpt_test(ck%ptr, d)
        flag = d /= 0
        call done(rc, 'fwdio_ckpt_test', ierr)
    end subroutine fwdio_ckpt_test

    !> Release the version's handle.
    subroutine fwdio_ckpt_free(ck)
        type(fwdio_ckpt), intent(inout) :: ck
        call c_ckpt_free(ck%ptr)
        ck%ptr = c_null_ptr
    end subroutine fwdio_ckpt_free

    !> The newest intact version of set `name` (collective, blocking), or
    !> with `upto` the newest at most `upto` (fwdio_ckpt_latest_upto);
    !> FWDIO_ENOCKPT in ierr when there is none.
    subroutine fwdio_ckpt_latest(rt, name, version, ierr, dir, info, upto)
        type(fwdio_runtime), intent(in) :: rt
        character(len=*), intent(in) :: name
        integer(c_int64_t), intent(out) :: version
        integer, intent(out), optional :: ierr
        character(len=*), intent(in), optional :: dir
        integer, intent(in), optional :: info
        integer(c_int64_t), intent(in), optional :: upto
        integer(c_int64_t) :: bound
        bound = -1_c_int64_t
        if (present(upto)) bound = upto
        call done(c_ckpt_latest(rt%ptr, to_c(name), dir_or_default(dir), info_or_null(info), &
                                bound, version), 'fwdio_ckpt_latest', ierr)
    end subroutine fwdio_ckpt_latest

    !> Open version `version` of set `name` for reading (collective), a
    !> file read with fwdio_read and closed, waited and freed as any.
    subroutine fwdio_ckpt_open_read(rt, name, version, file, ierr, dir, info)
        type(fwdio_runtime), intent(in) :: rt
        character(len=*), intent(in) :: name
        integer(c_int64_t), intent(in) :: version
        type(fwdio_file), intent(out) :: file
        integer, intent(out), optional :: ierr
        character(len=*), intent(in), optional :: dir
        integer, intent(in), optional :: info
        call done(c_ckpt_open_read(rt%ptr, to_c(name), version, dir_or_default(dir), &
                                   info_or_null(info), file%ptr), 'fwdio_ckpt_open_read', ierr)
    end subroutine fwdio_ckpt_open_read

    !> MPI_INFO_NULL's Fortran handle when no info is given.
    integer(c_int) function info_or_null(info)
        integer, intent(in), optional :: info
        interface
            integer(c_int) function c_info_null() bind(c, name='fwdio_f_info_null')
                import :: c_int
            end function
        end interface
        if (present(info)) then
            info_or_null = int(info, c_int)
        else
            info_or_null = c_info_null()
        end if
    end function info_or_null

    !> Write `len` bytes of `buf` at `offset` (copied; returns at once).
    subroutine fwdio_write(file, buf, len, offset, ierr)
        type(fwdio_file), intent(in) :: file
        type(*), dimension(..), intent(in) :: buf
        integer(c_int64_t), intent(in) :: len, offset
        integer, intent(out), optional :: ierr
        call done(c_write(file%ptr, buf, len, offset), 'fwdio_write', ierr, file%ptr)
    end subroutine fwdio_write

    !> Append `len` bytes of `buf` to a stream, in rank order within the step.
    subroutine fwdio_append(file, buf, len, ierr)
        type(fwdio_file), intent(in) :: file
        type(*), dimension(..), intent(in) :: buf
        integer(c_int64_t), intent(in) :: len
        integer, intent(out), optional :: ierr
        call done(c_append(file%ptr, buf, len), 'fwdio_append', ierr, file%ptr)
    end subroutine fwdio_append

    !> The file's (or the step's) commit block, written last (one rank).
    subroutine fwdio_set_commit(file, buf, len, offset, ierr)
        type(fwdio_file), intent(in) :: file
        type(*), dimension(..), intent(in) :: buf
        integer(c_int64_t), intent(in) :: len, offset
        integer, intent(out), optional :: ierr
        call done(c_set_commit(file%ptr, buf, len, offset), 'fwdio_set_commit', ierr, file%ptr)
    end subroutine fwdio_set_commit

    !> End this rank's step of a stream (collective; returns at once).
    subroutine fwdio_step_end(file, ierr)
        type(fwdio_file), intent(in) :: file
        integer, intent(out), optional :: ierr
        call done(c_step_end(file%ptr), 'fwdio_step_end', ierr, file%ptr)
    end subroutine fwdio_step_end

    !> Whether step `step` (0, 1, ...) is complete; ierr its status once it is.
    subroutine fwdio_step_test(file, step, flag, ierr)
        type(fwdio_file), intent(in) :: file
        integer(c_int64_t), intent(in) :: step
        logical, intent(out) :: flag
        integer, intent(out), optional :: ierr
        integer(c_int) :: d
        integer(c_int) :: rc
        d = 0
        rc = c_step_test(file%ptr, step, d)
        flag = d /= 0
        call done(rc, 'fwdio_step_test', ierr, file%ptr)
    end subroutine fwdio_step_test

    !> Wait until step `step` is complete; ierr its status.
    subroutine fwdio_step_wait(file, step, ierr)
        type(fwdio_file), intent(in) :: file
        integer(c_int64_t), intent(in) :: step
        integer, intent(out), optional :: ierr
        call done(c_step_wait(file%ptr, step), 'fwdio_step_wait', ierr, file%ptr)
    end subroutine fwdio_step_wait

    !> Wait until steps 0..step of a stream of the node-local tier are drained
    !> to the path (a stream written straight: fwdio_step_wait); ierr their status.
    subroutine fwdio_step_drain_wait(file, step, ierr)
        type(fwdio_file), intent(in) :: file
        integer(c_int64_t), intent(in) :: step
        integer, intent(out), optional :: ierr
        call done(c_step_drain_wait(file%ptr, step), 'fwdio_step_drain_wait', ierr, file%ptr)
    end subroutine fwdio_step_drain_wait

    !> Read `len` bytes at `offset` into `buf` (nonblocking: `buf` is filled
    !> by the time fwdio_wait of the file returns; leave it alone until then).
    subroutine fwdio_read(file, buf, len, offset, ierr)
        type(fwdio_file), intent(in) :: file
        type(*), dimension(..), asynchronous :: buf
        integer(c_int64_t), intent(in) :: len, offset
        integer, intent(out), optional :: ierr
        call done(c_read(file%ptr, buf, len, offset), 'fwdio_read', ierr, file%ptr)
    end subroutine fwdio_read

    !> The size of a file opened for reading, once it is ready.
    subroutine fwdio_file_size(file, size, ierr)
        type(fwdio_file), intent(in) :: file
        integer(c_int64_t), intent(out) :: size
        integer, intent(out), optional :: ierr
        size = 0
        call done(c_file_size(file%ptr, size), 'fwdio_file_size', ierr, file%ptr)
    end subroutine fwdio_file_size

    !> This rank is done with the file (returns at once).
    subroutine fwdio_close(file, ierr)
        type(fwdio_file), intent(in) :: file
        integer, intent(out), optional :: ierr
        call done(c_close(file%ptr), 'fwdio_close', ierr, file%ptr)
    end subroutine fwdio_close

    !> Wait until every rank has opened the file; ierr the open's status.
    subroutine fwdio_wait_ready(file, ierr)
        type(fwdio_file), intent(in) :: file
        integer, intent(out), optional :: ierr
        call done(c_wait_ready(file%ptr), 'fwdio_wait_ready', ierr, file%ptr)
    end subroutine fwdio_wait_ready

    !> Wait until the file is complete; ierr its final status, the same on
    !> every rank (fwdio_file_error says what failed).
    subroutine fwdio_wait(file, ierr)
        type(fwdio_file), intent(in) :: file
        integer, intent(out), optional :: ierr
        call done(c_wait(file%ptr), 'fwdio_wait', ierr, file%ptr)
    end subroutine fwdio_wait

    !> Whether the file is complete; ierr its final status once it is.
    subroutine fwdio_test(file, flag, ierr)
        type(fwdio_file), intent(in) :: file
        logical, intent(out) :: flag
        integer, intent(out), optional :: ierr
        integer(c_int) :: d, rc
        d = 0
        rc = c_test(file%ptr, d)
        flag = d /= 0
        call done(rc, 'fwdio_test', ierr, file%ptr)
    end subroutine fwdio_test

    !> The node-local tier (the fwdio_local_dir hint, FWDIO_LOCAL_DIR): wait
    !> until the file is drained to its target; ierr the drain's status, the
    !> same on every rank (a file without the tier: its final status).
    subroutine fwdio_drain_wait(file, ierr)
        type(fwdio_file), intent(in) :: file
        integer, intent(out), optional :: ierr
        call done(c_drain_wait(file%ptr), 'fwdio_drain_wait', ierr, file%ptr)
    end subroutine fwdio_drain_wait

    !> Whether the file is drained to its target; ierr the drain's status
    !> once it is.
    subroutine fwdio_drain_test(file, flag, ierr)
        type(fwdio_file), intent(in) :: file
        logical, intent(out) :: flag
        integer, intent(out), optional :: ierr
        integer(c_int) :: d, rc
        d = 0
        rc = c_drain_test(file%ptr, d)
        flag = d /= 0
        call done(rc, 'fwdio_drain_test', ierr, file%ptr)
    end subroutine fwdio_drain_test

    !> Run the callbacks due (poll mode); nothing else to do from Fortran.
    subroutine fwdio_poll(rt, ierr)
        type(fwdio_runtime), intent(in) :: rt
        integer, intent(out), optional :: ierr
        integer(c_int) :: rc
        rc = c_poll(rt%ptr)
        if (rc > 0) rc = FWDIO_OK ! the number of callbacks run
        call done(rc, 'fwdio_poll', ierr)
    end subroutine fwdio_poll

    !> Release the handle (after fwdio_wait, or to abandon it).
    subroutine fwdio_file_free(file)
        type(fwdio_file), intent(inout) :: file
        call c_file_free(file%ptr)
        file%ptr = c_null_ptr
    end subroutine fwdio_file_free

    !> The text of a status code.
    function fwdio_strerror(status) result(text)
        integer, intent(in) :: status
        character(len=:), allocatable :: text
        text = from_c(c_strerror(int(status, c_int)))
    end function fwdio_strerror

    !> What failed for the file, with rank, offset and system error ('' if nothing).
    function fwdio_file_error(file) result(text)
        type(fwdio_file), intent(in) :: file
        character(len=:), allocatable :: text
        text = from_c(c_file_error(file%ptr))
    end function fwdio_file_error

    !> The library's version, "MAJOR.MINOR.PATCH".
    function fwdio_version() result(text)
        character(len=:), allocatable :: text
        text = from_c(c_version())
    end function fwdio_version
end module fwdio
