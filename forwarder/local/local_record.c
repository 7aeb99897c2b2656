/* SPDX-License-Identifier: BSD-3-Clause */
/* The version record beside a writer's local file, its I/O (local_record.h). */
#include "local/local_record.h"

#include "storage/storage.h"
#include "storage/sysio.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void fwdioi_target_id_of(const char *path, fwdioi_target_id_t *id)
{
    struct stat st;
    memset(id, 0, sizeof *id);
    if (stat(path, &st) != 0)
        return;
    id->exists = 1;
    id->size = (uint64_t)st.st_size;
    id->mtime_ns = (uint64_t)st.st_mtim.tv_sec * 1000000000u + (uint64_t)st.st_mtim.tv_nsec;
    id->ctime_ns = (uint64_t)st.st_ctim.tv_sec * 1000000000u + (uint64_t)st.st_ctim.tv_nsec;
    id->ino = (uint64_t)st.st_ino;
}

int fwdioi_local_record_path(const char *local_path, char *out, size_t len)
{
    return (size_t)snprintf(out, len, "%s.ver", local_path) >= len ? -1 : 0;
}

static int record_put(const char *path, const fwdioi_local_version_t *v, int create)
{
    uint8_t buf[FWDIOI_LOCAL_VERSION_LEN];
    uint64_t failed;
    fwdioi_local_version_encode(v, buf);
    int fd = fwdioi_sys_open(path, O_WRONLY | O_CLOEXEC | (create ? O_CREAT | O_TRUNC : 0), 0666);
    if (fd < 0)
        return -1;
    int rc = fwdioi_pwrite_all(fd, buf, sizeof buf, 0, &failed) == 0 &&
                     fwdioi_sys_fdatasync(fd) == 0
                 ? 0
                 : -1;
    if (fwdioi_sys_close(fd) != 0)
        rc = -1;
    return rc;
}

int fwdioi_local_record_seal(const char *local_path, const char *target, uint64_t version,
                             uint32_t writer)
{
    char path[PATH_MAX];
    if (fwdioi_local_record_path(local_path, path, sizeof path) != 0)
        return -1;
    fwdioi_local_version_t v = {.version = version, .writer = writer};
    fwdioi_target_id_of(target, &v.before);
    return record_put(path, &v, 1);
}

int fwdioi_local_record_drained(const char *local_path, const char *target)
{
    char path[PATH_MAX];
    uint8_t buf[FWDIOI_LOCAL_VERSION_LEN];
    fwdioi_local_version_t v;
    if (fwdioi_local_record_path(local_path, path, sizeof path) != 0)
        return -1;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, buf, sizeof buf);
    close(fd);
    if (n != (ssize_t)sizeof buf || fwdioi_local_version_decode(buf, sizeof buf, &v) != 0)
        return -1;
    v.drained = 1;
    fwdioi_target_id_of(target, &v.after);
    return record_put(path, &v, 0);
}

int fwdioi_local_record_remove(const char *local_path)
{
    char path[PATH_MAX];
    if (fwdioi_local_record_path(local_path, path, sizeof path) != 0)
        return -1;
    return unlink(path) == 0 || errno == ENOENT ? 0 : -1;
}
