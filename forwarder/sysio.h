/*
 * The file-system calls writers make, in one place: storage jobs and the
 * commit step call these instead of the system directly, so that the fault
 * injection of the test builds (FWDIO_FAULT) can stand in for any of them.
 * Each behaves as the system call of the same name: -1 with errno on failure.
 */
#ifndef FWDIOI_SYSIO_H
#define FWDIOI_SYSIO_H

#include <stddef.h>
#include <sys/types.h>

int fwdioi_sys_open(const char *path, int flags, mode_t mode);
int fwdioi_sys_ftruncate(int fd, off_t length);
ssize_t fwdioi_sys_pwrite(int fd, const void *buf, size_t len, off_t offset);
int fwdioi_sys_fdatasync(int fd);
int fwdioi_sys_close(int fd);
int fwdioi_sys_rename(const char *from, const char *to);
int fwdioi_sys_unlink(const char *path);
/** open(dir) + fsync + close: makes a rename in `dir` durable. */
int fwdioi_sys_fsync_dir(const char *dir);

#endif
