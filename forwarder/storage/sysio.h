/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The file-system calls writers (and readers) make, in one place: storage jobs and the
 * commit step call these instead of the system directly, so that the fault
 * injection of FWDIO_FAULT (fault.h) can stand in for any of them. Each
 * behaves as the system call of the same name: -1 with errno on failure.
 * Any thread.
 */
#ifndef FWDIOI_SYSIO_H
#define FWDIOI_SYSIO_H

#include "storage/syscall.h"

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/types.h>

int fwdioi_sys_open(const char *path, int flags, mode_t mode);
int fwdioi_sys_ftruncate(int fd, off_t length);
/** pwrite; returning 0 for len > 0 (no progress) counts as a failure below. */
ssize_t fwdioi_sys_pwrite(int fd, const void *buf, size_t len, off_t offset);
/** pread; the fault rules' short and stall effects apply (stall returns 0,
 *  as at the end of the file). */
ssize_t fwdioi_sys_pread(int fd, void *buf, size_t len, off_t offset);
/** fstat (no fault rules: it is how a reader learns the size). */
int fwdioi_sys_fstat(int fd, struct stat *st);
int fwdioi_sys_fdatasync(int fd);
/** close; the descriptor is released even when it fails, as Linux does. */
int fwdioi_sys_close(int fd);
int fwdioi_sys_rename(const char *from, const char *to);
int fwdioi_sys_unlink(const char *path);
int fwdioi_sys_mkdir(const char *path, mode_t mode);
/** statvfs; a fault rule's error makes it report a full file system (no
 *  free blocks) instead of failing, as a full local store looks. */
int fwdioi_sys_statvfs(const char *path, struct statvfs *st);
/** open(dir) + fsync + close: makes a rename in `dir` durable. */
int fwdioi_sys_fsync_dir(const char *dir);

/**
 * When the first of these calls failed in this process (returned -1 other
 * than EINTR, or a pwrite that wrote nothing), as CLOCK_MONOTONIC seconds;
 * 0 if none failed since fwdioi_sys_failure_reset(). What counts as a
 * failure, process-wide (test_fault checks it); a file's own first failure
 * reaches the application as fwdio_file_stats_t.time_to_failure (a storage
 * job's fail_time).
 */
double fwdioi_sys_first_failure(void);
void fwdioi_sys_failure_reset(void);

/** Read all of [offset, offset + len) of fd into buf, retrying EINTR and
 *  short reads. Returns 0, or -1 with errno set and *failed_at the offset
 *  that could not be read; errno is 0 when the file ended first. */
int fwdioi_pread_all(int fd, uint8_t *buf, uint64_t len, uint64_t offset, uint64_t *failed_at);
/** Write all of buf to fd at offset, retrying EINTR and short writes. Returns 0,
 *  or -1 with errno set and *failed_at the offset that could not be written;
 *  errno is 0 when pwrite wrote nothing without an error (no progress: it is
 *  not retried, so a stalled file system cannot make the I/O thread spin). */
int fwdioi_pwrite_all(int fd, const uint8_t *buf, uint64_t len, uint64_t offset,
                      uint64_t *failed_at);

#endif
