/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libfwdio-iocount.so: counts read system calls on one file (see io_count.h).
 *
 *   LD_PRELOAD=build/bench/libfwdio-iocount.so FWDIO_IOCOUNT_PATH=ckpt prog ...
 *   mpirun -x LD_PRELOAD=$PWD/build/bench/libfwdio-iocount.so ... fwdio-restart ...
 *
 * Each interposed call forwards to the next definition (dlsym RTLD_NEXT,
 * resolved on first use) and, on a descriptor opened from a matching path,
 * adds to atomic counters. Nothing else changes: errno and results are the
 * real call's.
 */
#define _GNU_SOURCE
#undef _FORTIFY_SOURCE

#include "io_count.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

#define IOC_API __attribute__((visibility("default")))

/* Descriptors below this are followed; higher ones are never counted. */
#define IOC_MAX_FD 65536

static atomic_uchar ioc_tracked[IOC_MAX_FD];
static _Atomic uint64_t ioc_counts[FWDIO_IOCOUNT_N];
static _Atomic(char *) ioc_pattern;   /* the file name; NULL: none yet */
static atomic_int ioc_env_checked;    /* FWDIO_IOCOUNT_PATH consulted */

/* real: the next definition of `ret name params` (libc's), looked up once. */
#define IOC_NEXT(ret, params, name)                                                                \
    typedef ret(*ioc_fn_t) params;                                                                 \
    static _Atomic(ioc_fn_t) next_##name;                                                          \
    ioc_fn_t real = atomic_load_explicit(&next_##name, memory_order_acquire);                      \
    if (!real) {                                                                                   \
        real = (ioc_fn_t)dlsym(RTLD_NEXT, #name);                                                  \
        atomic_store_explicit(&next_##name, real, memory_order_release);                           \
    }

static const char *ioc_current_pattern(void)
{
    char *p = atomic_load(&ioc_pattern);
    if (p || atomic_load(&ioc_env_checked))
        return p;
    if (!atomic_exchange(&ioc_env_checked, 1)) {
        const char *env = getenv("FWDIO_IOCOUNT_PATH");
        if (env && *env) {
            char *copy = strdup(env);
            char *expected = NULL;
            if (copy && !atomic_compare_exchange_strong(&ioc_pattern, &expected, copy))
                free(copy); /* set by fwdio_iocount_set_path meanwhile */
        }
    }
    return atomic_load(&ioc_pattern);
}

/* Does `path` name the counted file: the pattern itself, or the pattern
 * after a '/' at the end of the path? ("ckpt" matches "ckpt", "/x/ckpt" and
 * "./ckpt", not "ckpt.locktest.0" or "sem.OMPIO_ckpt", the side files ompio
 * makes beside the file it opens.) */
static int ioc_path_matches(const char *path)
{
    const char *p = ioc_current_pattern();
    if (!p || !*p || !path)
        return 0;
    size_t lp = strlen(p), l = strlen(path);
    if (l < lp || strcmp(path + (l - lp), p) != 0)
        return 0;
    return l == lp || path[l - lp - 1] == '/' || p[0] == '/';
}

/* After an open of `path` returned fd: follow it or not. */
static int ioc_opened(int fd, const char *path)
{
    if (fd < 0 || fd >= IOC_MAX_FD)
        return fd;
    int match = ioc_path_matches(path);
    atomic_store(&ioc_tracked[fd], (unsigned char)match);
    if (match)
        atomic_fetch_add(&ioc_counts[FWDIO_IOCOUNT_OPENS], 1);
    return fd;
}

static int ioc_is_tracked(int fd)
{
    return fd >= 0 && fd < IOC_MAX_FD && atomic_load_explicit(&ioc_tracked[fd], memory_order_relaxed);
}

/* After a read call of kind `kind` on fd returned n. */
static void ioc_count(int fd, int kind, ssize_t n)
{
    if (!ioc_is_tracked(fd))
        return;
    if (n < 0) {
        atomic_fetch_add(&ioc_counts[FWDIO_IOCOUNT_ERRORS], 1);
        return;
    }
    atomic_fetch_add(&ioc_counts[FWDIO_IOCOUNT_CALLS], 1);
    atomic_fetch_add(&ioc_counts[kind], 1);
    atomic_fetch_add(&ioc_counts[FWDIO_IOCOUNT_BYTES], (uint64_t)n);
}

/* A call forwarded with errno kept as the real call left it. */
#define IOC_KEEP_ERRNO(stmt)                                                                       \
    do {                                                                                           \
        int saved_ = errno;                                                                        \
        stmt;                                                                                      \
        errno = saved_;                                                                            \
    } while (0)

IOC_API int fwdio_iocount_get(uint64_t *out, int n)
{
    for (int i = 0; i < n && i < FWDIO_IOCOUNT_N; i++)
        out[i] = atomic_load(&ioc_counts[i]);
    return FWDIO_IOCOUNT_N;
}

IOC_API void fwdio_iocount_set_path(const char *name)
{
    char *copy = name && *name ? strdup(name) : NULL;
    atomic_store(&ioc_env_checked, 1);
    /* The old string is not freed: another thread may be reading it. */
    (void)atomic_exchange(&ioc_pattern, copy);
}

/* ---- opens ---- */

static mode_t ioc_mode(int flags, va_list ap)
{
    if ((flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE)
        return (mode_t)va_arg(ap, int);
    return 0;
}

IOC_API int open(const char *path, int flags, ...)
{
    va_list ap;
    va_start(ap, flags);
    mode_t mode = ioc_mode(flags, ap);
    va_end(ap);
    IOC_NEXT(int, (const char *, int, ...), open);
    int fd = real(path, flags, mode);
    IOC_KEEP_ERRNO(ioc_opened(fd, path));
    return fd;
}

IOC_API int open64(const char *path, int flags, ...)
{
    va_list ap;
    va_start(ap, flags);
    mode_t mode = ioc_mode(flags, ap);
    va_end(ap);
    IOC_NEXT(int, (const char *, int, ...), open64);
    int fd = real(path, flags, mode);
    IOC_KEEP_ERRNO(ioc_opened(fd, path));
    return fd;
}

IOC_API int openat(int dirfd, const char *path, int flags, ...)
{
    va_list ap;
    va_start(ap, flags);
    mode_t mode = ioc_mode(flags, ap);
    va_end(ap);
    IOC_NEXT(int, (int, const char *, int, ...), openat);
    int fd = real(dirfd, path, flags, mode);
    IOC_KEEP_ERRNO(ioc_opened(fd, path));
    return fd;
}

IOC_API int openat64(int dirfd, const char *path, int flags, ...)
{
    va_list ap;
    va_start(ap, flags);
    mode_t mode = ioc_mode(flags, ap);
    va_end(ap);
    IOC_NEXT(int, (int, const char *, int, ...), openat64);
    int fd = real(dirfd, path, flags, mode);
    IOC_KEEP_ERRNO(ioc_opened(fd, path));
    return fd;
}

IOC_API int creat(const char *path, mode_t mode)
{
    IOC_NEXT(int, (const char *, mode_t), creat);
    int fd = real(path, mode);
    IOC_KEEP_ERRNO(ioc_opened(fd, path));
    return fd;
}

IOC_API int creat64(const char *path, mode_t mode)
{
    IOC_NEXT(int, (const char *, mode_t), creat64);
    int fd = real(path, mode);
    IOC_KEEP_ERRNO(ioc_opened(fd, path));
    return fd;
}

/* The fortified forms (_FORTIFY_SOURCE callers with no mode argument). */
int __open_2(const char *path, int flags);
int __open64_2(const char *path, int flags);
int __openat_2(int dirfd, const char *path, int flags);
int __openat64_2(int dirfd, const char *path, int flags);

IOC_API int __open_2(const char *path, int flags)
{
    IOC_NEXT(int, (const char *, int), __open_2);
    int fd = real(path, flags);
    IOC_KEEP_ERRNO(ioc_opened(fd, path));
    return fd;
}

IOC_API int __open64_2(const char *path, int flags)
{
    IOC_NEXT(int, (const char *, int), __open64_2);
    int fd = real(path, flags);
    IOC_KEEP_ERRNO(ioc_opened(fd, path));
    return fd;
}

IOC_API int __openat_2(int dirfd, const char *path, int flags)
{
    IOC_NEXT(int, (int, const char *, int), __openat_2);
    int fd = real(dirfd, path, flags);
    IOC_KEEP_ERRNO(ioc_opened(fd, path));
    return fd;
}

IOC_API int __openat64_2(int dirfd, const char *path, int flags)
{
    IOC_NEXT(int, (int, const char *, int), __openat64_2);
    int fd = real(dirfd, path, flags);
    IOC_KEEP_ERRNO(ioc_opened(fd, path));
    return fd;
}

IOC_API int close(int fd)
{
    IOC_NEXT(int, (int), close);
    if (fd >= 0 && fd < IOC_MAX_FD)
        atomic_store(&ioc_tracked[fd], 0);
    return real(fd);
}

/* ---- reads ---- */

#define IOC_READ_BODY(kind, call)                                                                  \
    ssize_t n = call;                                                                              \
    IOC_KEEP_ERRNO(ioc_count(fd, kind, n));                                                        \
    return n

IOC_API ssize_t read(int fd, void *buf, size_t len)
{
    IOC_NEXT(ssize_t, (int, void *, size_t), read);
    IOC_READ_BODY(FWDIO_IOCOUNT_READ, real(fd, buf, len));
}

IOC_API ssize_t readv(int fd, const struct iovec *iov, int cnt)
{
    IOC_NEXT(ssize_t, (int, const struct iovec *, int), readv);
    IOC_READ_BODY(FWDIO_IOCOUNT_READ, real(fd, iov, cnt));
}

IOC_API ssize_t pread(int fd, void *buf, size_t len, off_t off)
{
    IOC_NEXT(ssize_t, (int, void *, size_t, off_t), pread);
    IOC_READ_BODY(FWDIO_IOCOUNT_PREAD, real(fd, buf, len, off));
}

IOC_API ssize_t pread64(int fd, void *buf, size_t len, off64_t off)
{
    IOC_NEXT(ssize_t, (int, void *, size_t, off64_t), pread64);
    IOC_READ_BODY(FWDIO_IOCOUNT_PREAD, real(fd, buf, len, off));
}

IOC_API ssize_t preadv(int fd, const struct iovec *iov, int cnt, off_t off)
{
    IOC_NEXT(ssize_t, (int, const struct iovec *, int, off_t), preadv);
    IOC_READ_BODY(FWDIO_IOCOUNT_PREADV, real(fd, iov, cnt, off));
}

IOC_API ssize_t preadv64(int fd, const struct iovec *iov, int cnt, off64_t off)
{
    IOC_NEXT(ssize_t, (int, const struct iovec *, int, off64_t), preadv64);
    IOC_READ_BODY(FWDIO_IOCOUNT_PREADV, real(fd, iov, cnt, off));
}

IOC_API ssize_t preadv2(int fd, const struct iovec *iov, int cnt, off_t off, int flags)
{
    IOC_NEXT(ssize_t, (int, const struct iovec *, int, off_t, int), preadv2);
    IOC_READ_BODY(FWDIO_IOCOUNT_PREADV, real(fd, iov, cnt, off, flags));
}

IOC_API ssize_t preadv64v2(int fd, const struct iovec *iov, int cnt, off64_t off, int flags)
{
    IOC_NEXT(ssize_t, (int, const struct iovec *, int, off64_t, int), preadv64v2);
    IOC_READ_BODY(FWDIO_IOCOUNT_PREADV, real(fd, iov, cnt, off, flags));
}

ssize_t __read_chk(int fd, void *buf, size_t len, size_t buflen);
ssize_t __pread_chk(int fd, void *buf, size_t len, off_t off, size_t buflen);
ssize_t __pread64_chk(int fd, void *buf, size_t len, off64_t off, size_t buflen);

IOC_API ssize_t __read_chk(int fd, void *buf, size_t len, size_t buflen)
{
    IOC_NEXT(ssize_t, (int, void *, size_t, size_t), __read_chk);
    IOC_READ_BODY(FWDIO_IOCOUNT_READ, real(fd, buf, len, buflen));
}

IOC_API ssize_t __pread_chk(int fd, void *buf, size_t len, off_t off, size_t buflen)
{
    IOC_NEXT(ssize_t, (int, void *, size_t, off_t, size_t), __pread_chk);
    IOC_READ_BODY(FWDIO_IOCOUNT_PREAD, real(fd, buf, len, off, buflen));
}

IOC_API ssize_t __pread64_chk(int fd, void *buf, size_t len, off64_t off, size_t buflen)
{
    IOC_NEXT(ssize_t, (int, void *, size_t, off64_t, size_t), __pread64_chk);
    IOC_READ_BODY(FWDIO_IOCOUNT_PREAD, real(fd, buf, len, off, buflen));
}
