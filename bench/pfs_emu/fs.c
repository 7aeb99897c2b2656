/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The FUSE file system of the emulator (see fs.h): libfuse 3's low-level API
 * over a backing directory, in the manner of libfuse's passthrough_ll
 * example: each inode the kernel knows is an O_PATH descriptor of the backing
 * object, found by (device, inode) and counted by lookups.
 *
 * Why the low-level API: every open is answered with FOPEN_DIRECT_IO |
 * FOPEN_PARALLEL_DIRECT_WRITES. Direct I/O keeps the kernel's page cache out
 * of the data path, so every read() and write() reaches the model (split
 * into requests of at most 1 MiB). Without the parallel flag the kernel
 * holds the inode lock of a file across each write request, so writers of
 * one shared file would queue in the kernel instead of at the targets;
 * libfuse 3.14 has no field for that flag, and only the low-level API lets
 * us send the open reply ourselves. Files are made with mknod, not create,
 * for the same reason (a create reply carries the open flags too): without a
 * create method the kernel sends MKNOD and then OPEN.
 *
 * The kernel still takes the inode lock exclusively for a write that ends
 * beyond the file's size, so writes that extend a file are serialised; the
 * statistics count them (extending_writes).
 */
#define _GNU_SOURCE
/* 3.12: the loop configuration that can raise the worker limit
 * (fuse_loop_cfg_set_max_threads); with the 3.5 one libfuse's default of
 * 10 workers stays. */
#define FUSE_USE_VERSION 312
#include "fs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fuse_lowlevel.h>
#include <inttypes.h>
#include <linux/fuse.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "model.h"
#include "report.h"

#ifndef FOPEN_PARALLEL_DIRECT_WRITES
#define FOPEN_PARALLEL_DIRECT_WRITES (1 << 6) /* kernel ABI 7.36 (Linux 6.2) */
#endif

_Static_assert(sizeof(fuse_ino_t) >= sizeof(uintptr_t), "inode pointers are FUSE node ids");

/* How long the kernel may cache names and attributes. Every change passes
 * through this one kernel, so its caches stay right; the backing directory
 * must not be changed behind the mount's back. */
#define CACHE_TIMEOUT_S 1.0
#define INODE_BUCKETS 4096
#define LAYOUT_XATTR "user.pfs.layout"

/* Node ids of the virtual files in the root (real inodes are pointers). */
enum { VIRT_STATS = 2, VIRT_JSON = 3, VIRT_RESET = 4 };

static const struct virtual_file {
    const char *name;
    fuse_ino_t ino;
    mode_t mode;
} virtual_files[] = {
    {".pfs-stats", VIRT_STATS, S_IFREG | 0444},
    {".pfs-stats.json", VIRT_JSON, S_IFREG | 0444},
    {".pfs-reset", VIRT_RESET, S_IFREG | 0200},
};
#define N_VIRTUAL (sizeof virtual_files / sizeof virtual_files[0])

typedef struct inode {
    struct inode *next; /* hash chain, fs->lock */
    int fd;             /* O_PATH descriptor of the backing object */
    uint64_t dev, ino;
    uint64_t nlookup; /* fs->lock */
} inode_t;

/* One open file. */
typedef struct handle {
    int fd; /* backing file; -1 for a virtual file */
    pfs_file_t *file;
    fuse_ino_t virt; /* 0, or VIRT_* */
    char *text;      /* statistics rendered at open */
    size_t len;
    struct handle *next_released; /* virtual handles kept until unmount */
} handle_t;

typedef struct dirp {
    DIR *dp;
    struct dirent *entry;
    off_t offset;
} dirp_t;

struct pfs_fs {
    pfs_config_t cfg;
    pfs_model_t *model;
    struct fuse_session *se;
    int mounted;
    struct timespec mount_time;
    inode_t root;
    pthread_mutex_t lock;
    inode_t *buckets[INODE_BUCKETS];
    /* Released handles of the statistics files, freed at unmount: a read of
     * one interrupted by a signal can still be replying from its text on one
     * FUSE thread when the release arrives on another (seen under TSan). */
    handle_t *released;
};

static pfs_fs_t *fs_of(fuse_req_t req) { return fuse_req_userdata(req); }

static inode_t *inode_of(fuse_req_t req, fuse_ino_t ino)
{
    if (ino == FUSE_ROOT_ID)
        return &fs_of(req)->root;
    return (inode_t *)(uintptr_t)ino;
}

static int is_virtual(fuse_ino_t ino) { return ino >= VIRT_STATS && ino <= VIRT_RESET; }

static const struct virtual_file *virtual_by_name(fuse_ino_t parent, const char *name)
{
    if (parent != FUSE_ROOT_ID)
        return NULL;
    for (size_t i = 0; i < N_VIRTUAL; i++)
        if (!strcmp(virtual_files[i].name, name))
            return &virtual_files[i];
    return NULL;
}

static const struct virtual_file *virtual_by_ino(fuse_ino_t ino)
{
    for (size_t i = 0; i < N_VIRTUAL; i++)
        if (virtual_files[i].ino == ino)
            return &virtual_files[i];
    return NULL;
}

static uint64_t client_of(fuse_req_t req)
{
    return pfs_model_client(fs_of(req)->model, fuse_req_ctx(req)->pid);
}

static void proc_path(char *buf, size_t cap, int fd)
{
    snprintf(buf, cap, "/proc/self/fd/%d", fd);
}

/* ---- inodes ------------------------------------------------------------- */

static size_t bucket_of(uint64_t dev, uint64_t ino)
{
    return (size_t)(((ino ^ (dev << 32)) * 0x9E3779B97F4A7C15ULL) >> 40) % INODE_BUCKETS;
}

/* The inode of (st_dev, st_ino) with one more lookup, taking over `fd` if it
 * is new (else closing it). NULL if out of memory (fd closed). */
static inode_t *inode_get(pfs_fs_t *fs, const struct stat *st, int fd)
{
    if (st->st_dev == fs->root.dev && st->st_ino == fs->root.ino) {
        close(fd); /* ".." of a top-level directory is the root */
        pthread_mutex_lock(&fs->lock);
        fs->root.nlookup++;
        pthread_mutex_unlock(&fs->lock);
        return &fs->root;
    }
    size_t b = bucket_of(st->st_dev, st->st_ino);
    pthread_mutex_lock(&fs->lock);
    inode_t *in = fs->buckets[b];
    while (in && !(in->dev == st->st_dev && in->ino == st->st_ino))
        in = in->next;
    if (in) {
        in->nlookup++;
        pthread_mutex_unlock(&fs->lock);
        close(fd);
        return in;
    }
    in = calloc(1, sizeof *in);
    if (!in) {
        pthread_mutex_unlock(&fs->lock);
        close(fd);
        return NULL;
    }
    in->fd = fd;
    in->dev = st->st_dev;
    in->ino = st->st_ino;
    in->nlookup = 1;
    in->next = fs->buckets[b];
    fs->buckets[b] = in;
    pthread_mutex_unlock(&fs->lock);
    return in;
}

static void inode_unref(pfs_fs_t *fs, inode_t *in, uint64_t n)
{
    if (in == &fs->root)
        return; /* the root lives as long as the mount */
    pthread_mutex_lock(&fs->lock);
    in->nlookup = in->nlookup > n ? in->nlookup - n : 0;
    if (in->nlookup > 0) {
        pthread_mutex_unlock(&fs->lock);
        return;
    }
    inode_t **pp = &fs->buckets[bucket_of(in->dev, in->ino)];
    while (*pp && *pp != in)
        pp = &(*pp)->next;
    if (*pp)
        *pp = in->next;
    pthread_mutex_unlock(&fs->lock);
    close(in->fd);
    free(in);
}

static void fill_virtual_attr(pfs_fs_t *fs, const struct virtual_file *v, struct stat *st)
{
    memset(st, 0, sizeof *st);
    st->st_ino = v->ino;
    st->st_mode = v->mode;
    st->st_nlink = 1;
    st->st_uid = geteuid();
    st->st_gid = getegid();
    st->st_blksize = 4096;
    st->st_atim = st->st_mtim = st->st_ctim = fs->mount_time;
}

/* Look `name` up in `parent` and fill `e`; returns 0 or an errno. */
static int do_lookup(fuse_req_t req, fuse_ino_t parent, const char *name,
                     struct fuse_entry_param *e)
{
    pfs_fs_t *fs = fs_of(req);
    memset(e, 0, sizeof *e);
    e->attr_timeout = CACHE_TIMEOUT_S;
    e->entry_timeout = CACHE_TIMEOUT_S;
    const struct virtual_file *v = virtual_by_name(parent, name);
    if (v) {
        fill_virtual_attr(fs, v, &e->attr);
        e->ino = v->ino;
        return 0;
    }
    int fd = openat(inode_of(req, parent)->fd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return errno;
    if (fstatat(fd, "", &e->attr, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) != 0) {
        int err = errno;
        close(fd);
        return err;
    }
    inode_t *in = inode_get(fs, &e->attr, fd);
    if (!in)
        return ENOMEM;
    e->ino = (uintptr_t)in;
    if (in == &fs->root)
        e->ino = FUSE_ROOT_ID;
    return 0;
}

/* Reply with `e`; if the kernel did not take it, drop the lookup it held. */
static void reply_entry(fuse_req_t req, const struct fuse_entry_param *e)
{
    if (fuse_reply_entry(req, e) != 0 && !is_virtual(e->ino))
        inode_unref(fs_of(req), inode_of(req, e->ino), 1);
}

static void op_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
    struct fuse_entry_param e;
    int err = do_lookup(req, parent, name, &e);
    if (err)
        fuse_reply_err(req, err);
    else
        reply_entry(req, &e);
}

static void op_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup)
{
    if (!is_virtual(ino))
        inode_unref(fs_of(req), inode_of(req, ino), nlookup);
    fuse_reply_none(req);
}

static void op_forget_multi(fuse_req_t req, size_t count, struct fuse_forget_data *forgets)
{
    for (size_t i = 0; i < count; i++)
        if (!is_virtual(forgets[i].ino))
            inode_unref(fs_of(req), inode_of(req, forgets[i].ino), forgets[i].nlookup);
    fuse_reply_none(req);
}

/* ---- attributes ----------------------------------------------------------- */

static void op_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
    (void)fi;
    struct stat st;
    const struct virtual_file *v = virtual_by_ino(ino);
    if (v) {
        fill_virtual_attr(fs_of(req), v, &st);
    } else if (fstatat(inode_of(req, ino)->fd, "", &st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) !=
               0) {
        fuse_reply_err(req, errno);
        return;
    }
    fuse_reply_attr(req, &st, CACHE_TIMEOUT_S);
}

/* The model state of the regular file behind O_PATH descriptor `fd`. */
static pfs_file_t *model_file_of(pfs_fs_t *fs, int fd, int created)
{
    struct stat st;
    if (fstatat(fd, "", &st, AT_EMPTY_PATH) != 0 || !S_ISREG(st.st_mode))
        return NULL;
    return pfs_model_file(fs->model, st.st_dev, st.st_ino, (uint64_t)st.st_size, created);
}

static int set_times(int fd, const char *path, const struct stat *attr, int valid)
{
    struct timespec tv[2] = {{.tv_nsec = UTIME_OMIT}, {.tv_nsec = UTIME_OMIT}};
    if (valid & FUSE_SET_ATTR_ATIME_NOW)
        tv[0].tv_nsec = UTIME_NOW;
    else if (valid & FUSE_SET_ATTR_ATIME)
        tv[0] = attr->st_atim;
    if (valid & FUSE_SET_ATTR_MTIME_NOW)
        tv[1].tv_nsec = UTIME_NOW;
    else if (valid & FUSE_SET_ATTR_MTIME)
        tv[1] = attr->st_mtim;
    return fd >= 0 ? futimens(fd, tv) : utimensat(AT_FDCWD, path, tv, 0);
}

/* Apply the changes of a setattr to the backing object; 0 or an errno.
 * `fd` is an open descriptor (or -1), `path` the /proc path of the inode. */
static int apply_setattr(pfs_fs_t *fs, inode_t *in, int fd, const char *path,
                         const struct stat *attr, int valid)
{
    if ((valid & FUSE_SET_ATTR_MODE) &&
        (fd >= 0 ? fchmod(fd, attr->st_mode) : chmod(path, attr->st_mode)) != 0)
        return errno;
    if (valid & (FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID)) {
        uid_t uid = (valid & FUSE_SET_ATTR_UID) ? attr->st_uid : (uid_t)-1;
        gid_t gid = (valid & FUSE_SET_ATTR_GID) ? attr->st_gid : (gid_t)-1;
        if (fchownat(in->fd, "", uid, gid, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) != 0)
            return errno;
    }
    if (valid & FUSE_SET_ATTR_SIZE) {
        if ((fd >= 0 ? ftruncate(fd, attr->st_size) : truncate(path, attr->st_size)) != 0)
            return errno;
        pfs_file_t *f = model_file_of(fs, in->fd, 0);
        if (f)
            pfs_file_set_size(f, (uint64_t)attr->st_size);
    }
    if ((valid & (FUSE_SET_ATTR_ATIME | FUSE_SET_ATTR_MTIME)) &&
        set_times(fd, path, attr, valid) != 0)
        return errno;
    return 0;
}

static void op_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int valid,
                       struct fuse_file_info *fi)
{
    if (!is_virtual(ino)) {
        inode_t *in = inode_of(req, ino);
        const handle_t *h = fi ? (const handle_t *)(uintptr_t)fi->fh : NULL;
        char path[64];
        proc_path(path, sizeof path, in->fd);
        int err = apply_setattr(fs_of(req), in, h ? h->fd : -1, path, attr, valid);
        if (err) {
            fuse_reply_err(req, err);
            return;
        }
    } /* virtual files: truncating .pfs-reset before writing is fine */
    op_getattr(req, ino, NULL);
}

/* ---- names ---------------------------------------------------------------- */

static void reply_new_entry(fuse_req_t req, fuse_ino_t parent, const char *name, int regular)
{
    struct fuse_entry_param e;
    int err = do_lookup(req, parent, name, &e);
    if (err) {
        fuse_reply_err(req, err);
        return;
    }
    if (regular && !pfs_model_file(fs_of(req)->model, e.attr.st_dev, e.attr.st_ino,
                                   (uint64_t)e.attr.st_size, 1)) {
        inode_unref(fs_of(req), inode_of(req, e.ino), 1);
        fuse_reply_err(req, ENOMEM);
        return;
    }
    reply_entry(req, &e);
}

static void op_mknod(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
                     dev_t rdev)
{
    if (virtual_by_name(parent, name)) {
        fuse_reply_err(req, EEXIST);
        return;
    }
    if (mknodat(inode_of(req, parent)->fd, name, mode, rdev) != 0) {
        fuse_reply_err(req, errno);
        return;
    }
    reply_new_entry(req, parent, name, S_ISREG(mode));
}

static void op_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode)
{
    if (virtual_by_name(parent, name)) {
        fuse_reply_err(req, EEXIST);
        return;
    }
    if (mkdirat(inode_of(req, parent)->fd, name, mode) != 0) {
        fuse_reply_err(req, errno);
        return;
    }
    reply_new_entry(req, parent, name, 0);
}

static void op_unlink(fuse_req_t req, fuse_ino_t parent, const char *name)
{
    if (virtual_by_name(parent, name)) {
        fuse_reply_err(req, EPERM);
        return;
    }
    int rc = unlinkat(inode_of(req, parent)->fd, name, 0);
    fuse_reply_err(req, rc != 0 ? errno : 0);
}

static void op_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name)
{
    int rc = unlinkat(inode_of(req, parent)->fd, name, AT_REMOVEDIR);
    fuse_reply_err(req, rc != 0 ? errno : 0);
}

static void op_rename(fuse_req_t req, fuse_ino_t parent, const char *name, fuse_ino_t newparent,
                      const char *newname, unsigned int flags)
{
    if (virtual_by_name(parent, name) || virtual_by_name(newparent, newname)) {
        fuse_reply_err(req, EPERM);
        return;
    }
    int rc = renameat2(inode_of(req, parent)->fd, name, inode_of(req, newparent)->fd, newname,
                       flags);
    fuse_reply_err(req, rc != 0 ? errno : 0);
}

/* ---- open files --------------------------------------------------------------- */

/* The open reply libfuse 3.14 cannot send: see the comment at the top. */
static int reply_open(fuse_req_t req, handle_t *h)
{
    struct fuse_open_out out = {
        .fh = (uint64_t)(uintptr_t)h,
        .open_flags = FOPEN_DIRECT_IO | FOPEN_PARALLEL_DIRECT_WRITES,
    };
    struct iovec iov = {.iov_base = &out, .iov_len = sizeof out};
    return fuse_reply_iov(req, &iov, 1);
}

static void handle_free(handle_t *h)
{
    if (h->fd >= 0)
        close(h->fd);
    free(h->text);
    free(h);
}

static int open_virtual(pfs_fs_t *fs, fuse_ino_t ino, int flags, handle_t *h)
{
    int acc = flags & O_ACCMODE;
    h->virt = ino;
    if (ino == VIRT_RESET)
        return acc == O_WRONLY ? 0 : EACCES;
    if (acc != O_RDONLY)
        return EACCES;
    pfs_snapshot_t snap;
    if (pfs_model_snapshot(fs->model, &snap) != 0)
        return ENOMEM;
    h->text = pfs_report(&snap, (long)getpid(), ino == VIRT_JSON, &h->len);
    pfs_snapshot_free(&snap);
    return h->text ? 0 : ENOMEM;
}

static int open_backing(pfs_fs_t *fs, inode_t *in, int flags, handle_t *h)
{
    char path[64];
    proc_path(path, sizeof path, in->fd);
    /* O_APPEND: the kernel already turned appends into offsets. O_DIRECT:
     * the page cache is bypassed at the mount; the backing may be tmpfs. */
    flags &= ~(O_NOFOLLOW | O_DIRECT | O_APPEND | O_CREAT | O_EXCL | O_NOCTTY);
    h->fd = open(path, flags | O_CLOEXEC);
    if (h->fd < 0)
        return errno;
    struct stat st;
    if (fstat(h->fd, &st) != 0)
        return errno;
    if (S_ISREG(st.st_mode)) {
        h->file = pfs_model_file(fs->model, st.st_dev, st.st_ino, (uint64_t)st.st_size, 0);
        if (!h->file)
            return ENOMEM;
    }
    return 0;
}

static void op_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
    handle_t *h = calloc(1, sizeof *h);
    if (!h) {
        fuse_reply_err(req, ENOMEM);
        return;
    }
    h->fd = -1;
    int err = is_virtual(ino) ? open_virtual(fs_of(req), ino, fi->flags, h)
                              : open_backing(fs_of(req), inode_of(req, ino), fi->flags, h);
    if (err) {
        handle_free(h);
        fuse_reply_err(req, err);
        return;
    }
    if (reply_open(req, h) != 0)
        handle_free(h); /* interrupted: no release will come */
}

static ssize_t pread_full(int fd, char *buf, size_t len, off_t off)
{
    size_t done = 0;
    while (done < len) {
        ssize_t n = pread(fd, buf + done, len - done, off + (off_t)done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return done ? (ssize_t)done : -1;
        if (n == 0)
            break;
        done += (size_t)n;
    }
    return (ssize_t)done;
}

static ssize_t pwrite_full(int fd, const char *buf, size_t len, off_t off)
{
    size_t done = 0;
    while (done < len) {
        ssize_t n = pwrite(fd, buf + done, len - done, off + (off_t)done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return done ? (ssize_t)done : -1;
        done += (size_t)n;
    }
    return (ssize_t)done;
}

static void read_virtual(fuse_req_t req, const handle_t *h, size_t size, off_t off)
{
    if (!h->text || (uint64_t)off >= h->len) {
        fuse_reply_buf(req, NULL, 0);
        return;
    }
    size_t n = h->len - (size_t)off;
    fuse_reply_buf(req, h->text + off, n < size ? n : size);
}

static void op_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
                    struct fuse_file_info *fi)
{
    (void)ino;
    handle_t *h = (handle_t *)(uintptr_t)fi->fh;
    if (h->virt) {
        read_virtual(req, h, size, off);
        return;
    }
    char *buf = malloc(size ? size : 1);
    if (!buf) {
        fuse_reply_err(req, ENOMEM);
        return;
    }
    ssize_t n = pread_full(h->fd, buf, size, off);
    int err = n < 0 ? errno : 0;
    if (!err && h->file)
        err = pfs_model_io(fs_of(req)->model, h->file, client_of(req), (uint64_t)off,
                           (uint64_t)n, 0);
    if (err)
        fuse_reply_err(req, err);
    else
        fuse_reply_buf(req, buf, (size_t)n);
    free(buf);
}

static void op_write(fuse_req_t req, fuse_ino_t ino, const char *buf, size_t size, off_t off,
                     struct fuse_file_info *fi)
{
    (void)ino;
    handle_t *h = (handle_t *)(uintptr_t)fi->fh;
    if (h->virt) { /* only .pfs-reset opens for writing */
        pfs_model_reset(fs_of(req)->model);
        fuse_reply_write(req, size);
        return;
    }
    ssize_t n = pwrite_full(h->fd, buf, size, off);
    if (n < 0) {
        fuse_reply_err(req, errno);
        return;
    }
    int err = h->file ? pfs_model_io(fs_of(req)->model, h->file, client_of(req), (uint64_t)off,
                                     (uint64_t)n, 1)
                      : 0;
    if (err)
        fuse_reply_err(req, err);
    else
        fuse_reply_write(req, (size_t)n);
}

static void op_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
    (void)ino;
    (void)fi; /* close() on a parallel file system does not wait for the targets */
    fuse_reply_err(req, 0);
}

static void op_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
    (void)ino;
    handle_t *h = (handle_t *)(uintptr_t)fi->fh;
    if (h->virt) {
        pfs_fs_t *fs = fs_of(req);
        pthread_mutex_lock(&fs->lock);
        h->next_released = fs->released;
        fs->released = h;
        pthread_mutex_unlock(&fs->lock);
    } else {
        handle_free(h);
    }
    fuse_reply_err(req, 0);
}

/* The backing file is never synced: durability is what the model says. */
static void op_fsync(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi)
{
    (void)ino;
    (void)datasync;
    handle_t *h = (handle_t *)(uintptr_t)fi->fh;
    int err = 0;
    if (!h->virt && h->file)
        err = pfs_model_fsync(fs_of(req)->model, h->file, client_of(req));
    fuse_reply_err(req, err);
}

static void op_fallocate(fuse_req_t req, fuse_ino_t ino, int mode, off_t off, off_t len,
                         struct fuse_file_info *fi)
{
    (void)ino;
    handle_t *h = (handle_t *)(uintptr_t)fi->fh;
    if (h->virt) {
        fuse_reply_err(req, EOPNOTSUPP);
        return;
    }
    if (fallocate(h->fd, mode, off, len) != 0) {
        fuse_reply_err(req, errno);
        return;
    }
    struct stat st;
    if (h->file && fstat(h->fd, &st) == 0)
        pfs_file_set_size(h->file, (uint64_t)st.st_size);
    fuse_reply_err(req, 0);
}

/* ---- directories ------------------------------------------------------------ */

static void op_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
    dirp_t *d = calloc(1, sizeof *d);
    if (!d) {
        fuse_reply_err(req, ENOMEM);
        return;
    }
    int fd = openat(inode_of(req, ino)->fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0 || !(d->dp = fdopendir(fd))) {
        int err = errno;
        if (fd >= 0)
            close(fd);
        free(d);
        fuse_reply_err(req, err);
        return;
    }
    fi->fh = (uintptr_t)d;
    if (fuse_reply_open(req, fi) != 0) {
        closedir(d->dp);
        free(d);
    }
}

static void op_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t offset,
                       struct fuse_file_info *fi)
{
    (void)ino;
    dirp_t *d = (dirp_t *)(uintptr_t)fi->fh;
    char *buf = malloc(size ? size : 1);
    if (!buf) {
        fuse_reply_err(req, ENOMEM);
        return;
    }
    if (offset != d->offset) {
        seekdir(d->dp, offset);
        d->entry = NULL;
        d->offset = offset;
    }
    size_t used = 0;
    int err = 0;
    for (;;) {
        if (!d->entry) {
            errno = 0;
            d->entry = readdir(d->dp);
            if (!d->entry) {
                err = errno;
                break;
            }
        }
        struct stat st = {.st_ino = d->entry->d_ino, .st_mode = (mode_t)d->entry->d_type << 12};
        size_t n = fuse_add_direntry(req, buf + used, size - used, d->entry->d_name, &st,
                                     d->entry->d_off);
        if (n > size - used)
            break; /* full: this entry goes first in the next call */
        used += n;
        d->offset = d->entry->d_off;
        d->entry = NULL;
    }
    /* An error after some entries: return those; the next call reports it. */
    if (err && used == 0)
        fuse_reply_err(req, err);
    else
        fuse_reply_buf(req, buf, used);
    free(buf);
}

static void op_releasedir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
    (void)ino;
    dirp_t *d = (dirp_t *)(uintptr_t)fi->fh;
    closedir(d->dp);
    free(d);
    fuse_reply_err(req, 0);
}

static void op_fsyncdir(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi)
{
    (void)ino;
    (void)datasync;
    (void)fi; /* names live on the metadata server, which the model leaves out */
    fuse_reply_err(req, 0);
}

static void op_statfs(fuse_req_t req, fuse_ino_t ino)
{
    (void)ino;
    struct statvfs sv;
    if (fstatvfs(fs_of(req)->root.fd, &sv) != 0)
        fuse_reply_err(req, errno);
    else
        fuse_reply_statfs(req, &sv);
}

/* ---- the layout attribute (what `lfs getstripe` tells on Lustre) ---------------- */

static void op_getxattr(fuse_req_t req, fuse_ino_t ino, const char *name, size_t size)
{
    pfs_fs_t *fs = fs_of(req);
    pfs_file_t *f = NULL;
    if (!is_virtual(ino) && !strcmp(name, LAYOUT_XATTR))
        f = model_file_of(fs, inode_of(req, ino)->fd, 0);
    if (!f) {
        fuse_reply_err(req, ENODATA);
        return;
    }
    char text[128];
    int n = snprintf(text, sizeof text, "stripe_size=%" PRIu64 " stripe_count=%u stripe_offset=%u",
                     fs->cfg.stripe, fs->cfg.targets, pfs_file_start(f));
    if (size == 0)
        fuse_reply_xattr(req, (size_t)n);
    else if (size < (size_t)n)
        fuse_reply_err(req, ERANGE);
    else
        fuse_reply_buf(req, text, (size_t)n);
}

static void op_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size)
{
    struct stat st;
    int regular = !is_virtual(ino) &&
                  fstatat(inode_of(req, ino)->fd, "", &st, AT_EMPTY_PATH) == 0 &&
                  S_ISREG(st.st_mode);
    size_t n = regular ? sizeof LAYOUT_XATTR : 0; /* the name and its NUL */
    if (size == 0)
        fuse_reply_xattr(req, n);
    else if (size < n)
        fuse_reply_err(req, ERANGE);
    else
        fuse_reply_buf(req, LAYOUT_XATTR, n);
}

/* ---- session -------------------------------------------------------------------- */

static void op_init(void *userdata, struct fuse_conn_info *conn)
{
    (void)userdata;
    /* 1 MiB: the most libfuse's request buffer holds. Splice and the
     * writeback cache stay off: bytes arrive in memory, one request per
     * write() piece. */
    conn->max_write = (unsigned)PFS_MAX_REQUEST;
    conn->max_read = (unsigned)PFS_MAX_REQUEST; /* must equal the max_read mount option */
    conn->want &= ~(FUSE_CAP_WRITEBACK_CACHE | FUSE_CAP_SPLICE_READ | FUSE_CAP_SPLICE_WRITE |
                    FUSE_CAP_SPLICE_MOVE);
}

static const struct fuse_lowlevel_ops pfs_ops = {
    .init = op_init,
    .lookup = op_lookup,
    .forget = op_forget,
    .forget_multi = op_forget_multi,
    .getattr = op_getattr,
    .setattr = op_setattr,
    .mknod = op_mknod,
    .mkdir = op_mkdir,
    .unlink = op_unlink,
    .rmdir = op_rmdir,
    .rename = op_rename,
    .open = op_open,
    .read = op_read,
    .write = op_write,
    .flush = op_flush,
    .release = op_release,
    .fsync = op_fsync,
    .fallocate = op_fallocate,
    .opendir = op_opendir,
    .readdir = op_readdir,
    .releasedir = op_releasedir,
    .fsyncdir = op_fsyncdir,
    .statfs = op_statfs,
    .getxattr = op_getxattr,
    .listxattr = op_listxattr,
};

int pfs_fs_mount(const pfs_config_t *cfg, pfs_fs_t **out)
{
    *out = NULL;
    pfs_fs_t *fs = calloc(1, sizeof *fs);
    if (!fs) {
        fprintf(stderr, "pfs: out of memory\n");
        return -1;
    }
    fs->cfg = *cfg;
    fs->root.fd = -1;
    clock_gettime(CLOCK_REALTIME, &fs->mount_time);
    if (pthread_mutex_init(&fs->lock, NULL) != 0) {
        free(fs);
        fprintf(stderr, "pfs: pthread_mutex_init failed\n");
        return -1;
    }
    *out = fs;
    struct stat st;
    fs->root.fd = open(cfg->backing, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (fs->root.fd < 0 || fstat(fs->root.fd, &st) != 0) {
        fprintf(stderr, "pfs: backing directory %s: %s\n", cfg->backing, strerror(errno));
        return -1;
    }
    fs->root.dev = st.st_dev;
    fs->root.ino = st.st_ino;
    fs->root.nlookup = 1;

    char opts[256];
    snprintf(opts, sizeof opts,
             "fsname=fwdio-pfs,subtype=fwdio-pfs,default_permissions,max_read=%" PRIu64,
             PFS_MAX_REQUEST);
    char *argv[] = {"fwdio-pfs", "-o", opts, NULL};
    struct fuse_args args = FUSE_ARGS_INIT(3, argv);
    fs->se = fuse_session_new(&args, &pfs_ops, sizeof pfs_ops, fs);
    fuse_opt_free_args(&args); /* libfuse may have copied them */
    if (!fs->se) {
        fprintf(stderr, "pfs: fuse_session_new failed\n");
        return -1;
    }
    if (fuse_session_mount(fs->se, cfg->mountpoint) != 0) {
        fprintf(stderr, "pfs: mounting %s failed (libfuse says why above)\n", cfg->mountpoint);
        return -1;
    }
    fs->mounted = 1;
    int rc = pfs_model_create(&fs->cfg, &fs->model);
    if (rc != 0) {
        fprintf(stderr, "pfs: starting the targets failed: %s\n", strerror(rc));
        return -1;
    }
    return 0;
}

static void print_final_stats(pfs_fs_t *fs)
{
    pfs_snapshot_t snap;
    if (pfs_model_snapshot(fs->model, &snap) != 0) {
        fprintf(stderr, "pfs: out of memory for the final statistics\n");
        return;
    }
    size_t len;
    char *text = pfs_report(&snap, (long)getpid(), 0, &len);
    pfs_snapshot_free(&snap);
    if (text) {
        fprintf(stderr, "pfs: final statistics of %s\n%s", fs->cfg.mountpoint, text);
        free(text);
    }
}

int pfs_fs_serve(pfs_fs_t *fs)
{
    if (fuse_set_signal_handlers(fs->se) != 0) {
        fprintf(stderr, "pfs: fuse_set_signal_handlers failed\n");
        return -1;
    }
    struct fuse_loop_config *lc = fuse_loop_cfg_create();
    if (!lc) {
        fprintf(stderr, "pfs: out of memory\n");
        fuse_remove_signal_handlers(fs->se);
        return -1;
    }
    /* Every request waiting at a target holds a worker, so the workers must
     * outnumber the requests that can wait at once (libfuse's default: 10). */
    fuse_loop_cfg_set_max_threads(lc, fs->cfg.threads);
    int loop_rc = fuse_session_loop_mt(fs->se, lc);
    fuse_loop_cfg_destroy(lc);
    fuse_remove_signal_handlers(fs->se);
    fuse_session_unmount(fs->se);
    fs->mounted = 0;
    pfs_model_stop(fs->model); /* serve what write-behind left queued */
    print_final_stats(fs);
    if (loop_rc < 0) {
        fprintf(stderr, "pfs: the request loop failed: %s\n", strerror(-loop_rc));
        return -1;
    }
    return 0;
}

void pfs_fs_free(pfs_fs_t *fs)
{
    if (!fs)
        return;
    if (fs->se) {
        if (fs->mounted)
            fuse_session_unmount(fs->se);
        fuse_session_destroy(fs->se);
    }
    pfs_model_destroy(fs->model);
    for (size_t b = 0; b < INODE_BUCKETS; b++) {
        inode_t *in = fs->buckets[b];
        while (in) {
            inode_t *next = in->next;
            close(in->fd);
            free(in);
            in = next;
        }
    }
    if (fs->root.fd >= 0)
        close(fs->root.fd);
    while (fs->released) {
        handle_t *h = fs->released;
        fs->released = h->next_released;
        handle_free(h);
    }
    pthread_mutex_destroy(&fs->lock);
    free(fs);
}
