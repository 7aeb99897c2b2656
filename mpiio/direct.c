/* SPDX-License-Identifier: BSD-3-Clause */
/* Bytes the layer writes itself, with pwrite on a descriptor of its own: the
 * overlay's (overlay.c), independent writes past the read-back limit, and
 * MPI_File_preallocate's allocation (access.c), and the bytes kept while
 * the stream's open was pending once it failed (opening.c). */
#include "layer.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int mpiio_direct_fd(mpiio_file_t *f)
{
    if (f->direct_fd < 0)
        f->direct_fd = open(f->path, O_WRONLY | O_CLOEXEC);
    return f->direct_fd;
}

/* pwrite all of it, or the errno that stopped it. */
static int write_all_at(int fd, const char *data, int64_t len, int64_t off)
{
    while (len > 0) {
        ssize_t n = pwrite(fd, data, (size_t)len, (off_t)off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return n < 0 ? errno : EIO;
        data += n;
        len -= n;
        off += n;
    }
    return 0;
}

int mpiio_direct_write(mpiio_file_t *f, const char *data, int64_t len, int64_t off,
                       const char *call)
{
    int fd = mpiio_direct_fd(f);
    int err = fd < 0 ? errno : write_all_at(fd, data, len, off);
    if (err == 0) {
        f->bytes_direct += len;
        return MPI_SUCCESS;
    }
    char text[MPI_MAX_ERROR_STRING];
    mpiio_error_text(text, sizeof text, f->path, "%s: writing %lld bytes at %lld: %s", call,
                     (long long)len, (long long)off, strerror(err));
    return mpiio_local_error(f, FWDIO_EWRITE, err, text);
}

int mpiio_direct_write_copies(mpiio_file_t *f, const mpiio_copies_t *k, const char *call)
{
    int code = MPI_SUCCESS;
    for (size_t i = 0; i < k->n && code == MPI_SUCCESS;) {
        size_t j = i + 1;
        int64_t len = k->c[i].len;
        while (j < k->n && k->c[j].off == k->c[i].off + len &&
               k->c[j].at == k->c[i].at + (size_t)len)
            len += k->c[j++].len;
        code = mpiio_direct_write(f, k->data + k->c[i].at, len, k->c[i].off, call);
        i = j;
    }
    return code;
}
