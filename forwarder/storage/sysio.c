/* SPDX-License-Identifier: BSD-3-Clause */
#include "storage/sysio.h"

#include "clock.h"

#include "storage/fault.h"

#include <errno.h>
#include <stdint.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* ---- the first failure, for timing a fault to its report ---- */

static _Atomic uint64_t first_failure_ns;

static void note_failure(void)
{
    int saved = errno;
    uint64_t ns = fwdioi_now_ns(), none = 0;
    atomic_compare_exchange_strong(&first_failure_ns, &none, ns);
    errno = saved;
}

double fwdioi_sys_first_failure(void)
{
    return 1e-9 * (double)atomic_load(&first_failure_ns);
}

void fwdioi_sys_failure_reset(void) { atomic_store(&first_failure_ns, 0); }

/* A call's result, noting a failure. */
static int checked(int rc)
{
    if (rc < 0 && errno != EINTR)
        note_failure();
    return rc;
}

/* An injected error: the call is not made (or, for close, made all the same). */
static int injected(int err)
{
    errno = err;
    note_failure();
    return -1;
}

/* The installed rules' verdict, or "do it" when none are installed. */
static fwdioi_fault_t fault_path(fwdioi_syscall_t call, const char *path, const char *path2)
{
    if (!fwdioi_fault_armed())
        return (fwdioi_fault_t){FWDIOI_FAULT_NONE, 0, 0, 0};
    return fwdioi_fault_on_path(call, path, path2);
}

static fwdioi_fault_t fault_fd(fwdioi_syscall_t call, int fd)
{
    if (!fwdioi_fault_armed())
        return (fwdioi_fault_t){FWDIOI_FAULT_NONE, 0, 0, 0};
    return fwdioi_fault_on_fd(call, fd);
}

/* ---- the calls ---- */

int fwdioi_sys_open(const char *path, int flags, mode_t mode)
{
    fwdioi_fault_t f = fault_path(FWDIOI_CALL_OPEN, path, NULL);
    if (f.kind == FWDIOI_FAULT_ERROR)
        return injected(f.err);
    int fd = checked(open(path, flags, mode));
    if (fd >= 0 && fwdioi_fault_armed())
        fwdioi_fault_fd_opened(fd, path);
    return fd;
}

int fwdioi_sys_ftruncate(int fd, off_t length)
{
    fwdioi_fault_t f = fault_fd(FWDIOI_CALL_FTRUNCATE, fd);
    if (f.kind == FWDIOI_FAULT_ERROR)
        return injected(f.err);
    return checked(ftruncate(fd, length));
}

ssize_t fwdioi_sys_pwrite(int fd, const void *buf, size_t len, off_t offset)
{
    fwdioi_fault_t f = fault_fd(FWDIOI_CALL_PWRITE, fd);
    ssize_t n;
    switch (f.kind) {
    case FWDIOI_FAULT_ERROR:
        return injected(f.err);
    case FWDIOI_FAULT_STALL:
        n = 0;
        break;
    case FWDIOI_FAULT_SHORT: /* fewer bytes, but progress */
        n = pwrite(fd, buf, len > 1 ? len / 2 : len, offset);
        break;
    default:
        n = pwrite(fd, buf, len, offset);
        break;
    }
    if (n < 0 ? errno != EINTR : n == 0 && len > 0)
        note_failure();
    return n;
}

ssize_t fwdioi_sys_pread(int fd, void *buf, size_t len, off_t offset)
{
    fwdioi_fault_t f = fault_fd(FWDIOI_CALL_PREAD, fd);
    ssize_t n;
    switch (f.kind) {
    case FWDIOI_FAULT_ERROR:
        return injected(f.err);
    case FWDIOI_FAULT_STALL: /* as if the file ended here */
        n = 0;
        break;
    case FWDIOI_FAULT_SHORT:
        n = pread(fd, buf, len > 1 ? len / 2 : len, offset);
        break;
    default:
        n = pread(fd, buf, len, offset);
        break;
    }
    if (n < 0 && errno != EINTR)
        note_failure();
    return n;
}

int fwdioi_sys_fstat(int fd, struct stat *st) { return checked(fstat(fd, st)); }

int fwdioi_sys_fdatasync(int fd)
{
    fwdioi_fault_t f = fault_fd(FWDIOI_CALL_FDATASYNC, fd);
    if (f.kind == FWDIOI_FAULT_ERROR)
        return injected(f.err);
    return checked(fdatasync(fd));
}

int fwdioi_sys_close(int fd)
{
    fwdioi_fault_t f = fault_fd(FWDIOI_CALL_CLOSE, fd);
    int rc = close(fd); /* released even when a failure is injected */
    if (f.kind == FWDIOI_FAULT_ERROR)
        return injected(f.err);
    return checked(rc);
}

int fwdioi_sys_rename(const char *from, const char *to)
{
    fwdioi_fault_t f = fault_path(FWDIOI_CALL_RENAME, from, to);
    if (f.kind == FWDIOI_FAULT_ERROR)
        return injected(f.err);
    return checked(rename(from, to));
}

int fwdioi_sys_unlink(const char *path)
{
    fwdioi_fault_t f = fault_path(FWDIOI_CALL_UNLINK, path, NULL);
    if (f.kind == FWDIOI_FAULT_ERROR)
        return injected(f.err);
    return checked(unlink(path));
}

int fwdioi_sys_statvfs(const char *path, struct statvfs *st)
{
    fwdioi_fault_t f = fault_path(FWDIOI_CALL_STATVFS, path, NULL);
    int rc = statvfs(path, st);
    if (rc == 0 && f.kind == FWDIOI_FAULT_ERROR)
        st->f_bavail = 0; /* a full store, as the rule asks */
    return checked(rc);
}

int fwdioi_sys_mkdir(const char *path, mode_t mode)
{
    fwdioi_fault_t f = fault_path(FWDIOI_CALL_MKDIR, path, NULL);
    if (f.kind == FWDIOI_FAULT_ERROR)
        return injected(f.err);
    int rc = mkdir(path, mode);
    if (rc != 0 && errno == EEXIST)
        return rc; /* a directory made before: not a failure worth timing */
    return checked(rc);
}

int fwdioi_sys_fsync_dir(const char *dir)
{
    fwdioi_fault_t f = fault_path(FWDIOI_CALL_FSYNC_DIR, dir, NULL);
    if (f.kind == FWDIOI_FAULT_ERROR)
        return injected(f.err);
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return checked(-1);
    int rc = fsync(fd);
    int saved = errno;
    close(fd);
    errno = saved;
    return checked(rc);
}

int fwdioi_pwrite_all(int fd, const uint8_t *buf, uint64_t len, uint64_t offset,
                      uint64_t *failed_at)
{
    /* Bounded chunks: Linux moves at most ~2 GiB per call anyway. */
    const uint64_t max_chunk = (uint64_t)1 << 30;
    uint64_t done = 0;
    while (done < len) {
        uint64_t want = len - done < max_chunk ? len - done : max_chunk;
        ssize_t n = fwdioi_sys_pwrite(fd, buf + done, (size_t)want, (off_t)(offset + done));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            if (n == 0)
                errno = 0; /* no progress and no error: do not spin */
            *failed_at = offset + done;
            return -1;
        }
        done += (uint64_t)n;
    }
    return 0;
}

int fwdioi_pread_all(int fd, uint8_t *buf, uint64_t len, uint64_t offset, uint64_t *failed_at)
{
    const uint64_t max_chunk = (uint64_t)1 << 30;
    uint64_t done = 0;
    while (done < len) {
        uint64_t want = len - done < max_chunk ? len - done : max_chunk;
        ssize_t n = fwdioi_sys_pread(fd, buf + done, (size_t)want, (off_t)(offset + done));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            if (n == 0)
                errno = 0; /* the file ended before the bytes its size promised */
            *failed_at = offset + done;
            return -1;
        }
        done += (uint64_t)n;
    }
    return 0;
}
