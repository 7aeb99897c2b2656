#include "sysio.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h> /* rename */
#include <unistd.h>

int fwdioi_sys_open(const char *path, int flags, mode_t mode) { return open(path, flags, mode); }

int fwdioi_sys_ftruncate(int fd, off_t length) { return ftruncate(fd, length); }

ssize_t fwdioi_sys_pwrite(int fd, const void *buf, size_t len, off_t offset)
{
    return pwrite(fd, buf, len, offset);
}

int fwdioi_sys_fdatasync(int fd) { return fdatasync(fd); }

int fwdioi_sys_close(int fd) { return close(fd); }

int fwdioi_sys_rename(const char *from, const char *to) { return rename(from, to); }

int fwdioi_sys_unlink(const char *path) { return unlink(path); }

int fwdioi_sys_fsync_dir(const char *dir)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    int rc = fsync(fd);
    int saved = errno;
    close(fd);
    errno = saved;
    return rc;
}
