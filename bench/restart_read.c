/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fwdio-restart: reading a checkpoint back on restart (results in
 * docs/results/restart-reads.md). Every rank reads its pieces of one existing file through
 * fwdio (fwdio_open_read + one fwdio_read per piece + fwdio_close +
 * fwdio_wait), through MPI-IO (MPI_File_read_at_all, the pieces as one
 * hindexed file view) and with plain pread() of its own pieces, side by side
 * in one run: the methods rotate their order every repetition.
 *
 * The checkpoint: a header of --header bytes (every rank reads it, as a
 * restart does to learn the step and the box) and --record-size byte records
 * (atoms) after it. The records are cut into P x --pieces runs of
 * consecutive records: with --pieces 1 rank r owns the r-th even share by
 * record (the restart of a contiguous checkpoint: boundaries fall on records,
 * not on stripes); with --pieces K > 1 the runs have uneven lengths (+-25 %)
 * and each round of P runs goes to the ranks in a freshly shuffled order (a
 * fixed seed), so a rank's atoms are scattered over the whole file, as after
 * MD migration. Every byte of the file is pattern_byte(seed, offset): the
 * file does not depend on the rank count or the layout, so one checkpoint
 * serves every run (it is reused when its size and a sample of its bytes
 * match, else written by the ranks, each its own runs, with pwrite).
 *
 * Per run and rank: time blocked (fwdio: fwdio_open_read + the fwdio_read
 * calls + fwdio_close, not the wait; MPI-IO: open + view + read_at_all +
 * close; pread: open + preads + close), time to all data (from the barrier
 * before the reads to the last byte in this rank's buffer: fwdio's last read
 * callback, run on the progress thread; the end of the last read_at_all or
 * pread), max over ranks; every byte of the buffers checked against the
 * pattern afterwards (untimed). Storage requests: read calls on the file and
 * their bytes, summed over ranks, from the LD_PRELOAD shim
 * libfwdio-iocount.so when it is loaded (bench/io_count/), fwdio's own stats
 * (units pread, bytes from storage) for fwdio, and the parallel file system
 * emulator's counters (FUSE read requests, per-target pieces) when the file
 * is on its mount.
 */
#define _GNU_SOURCE /* RTLD_DEFAULT, mincore, posix_fadvise */

#include "app_util.h"
#include "cli.h"
#include "dirty_pages.h"
#include "fwdio.h"
#include "io_count.h"
#include "pattern.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

enum method { M_FWDIO, M_MPIIO, M_PREAD, M_COUNT };
static const char *const method_names[M_COUNT] = {"fwdio", "mpiio", "pread"};

enum cold_mode { COLD_OFF, COLD_FADVISE, COLD_DROP };
static const char *const cold_names[] = {"off", "fadvise", "drop"};

struct opts {
    uint64_t size;        /* file bytes */
    const char *path;
    int pieces;           /* runs per rank */
    uint64_t record;      /* bytes per record */
    uint64_t header;      /* bytes of header, read by every rank */
    uint64_t seed;
    int reps, warmup;
    int methods[M_COUNT], nmethods;
    int cold;
    int settle;
    int rewrite, remove;
    /* fwdio */
    int readers;
    uint64_t write_size, stripe_size, writer_buffer;
    const char *layout;
    int targets;
    /* MPI-IO */
    const char *hints;
    const char *csv, *summary;
};

struct piece {
    uint64_t off, len;
};

struct ctx {
    const struct opts *o;
    int rank, nranks;
    struct piece *pieces; /* this rank's, sorted by offset, disjoint */
    int npieces, max_npieces;
    uint64_t nbytes;      /* sum of this rank's piece lengths */
    uint64_t max_nbytes;
    unsigned char *buf;   /* the pieces back to back */
    MPI_Datatype view;    /* hindexed of the pieces (MPI_DATATYPE_NULL: one piece each) */
    const char *io;       /* OMPI_MCA_io or "default" */
    fwdio_iocount_get_fn iocount;
    char pfs_stats[4200]; /* <dir>/.pfs-stats, "" when not on the emulator */
    char fs_type[32];
};

/* What one rank measured in one run. */
struct local {
    int status;           /* 0, or a negative fwdio status / -1 */
    double blocked, data, complete, fwdio_blocked, fwdio_pread;
    uint64_t io0[FWDIO_IOCOUNT_N], io1[FWDIO_IOCOUNT_N];
    uint64_t units, storage_bytes; /* fwdio_file_stats of a reader */
    char err[256];
};

/* One run as rank 0 reports it (sums and maxima over ranks). */
struct result {
    int rep;              /* -1: warm-up */
    int order;            /* position in its rep */
    enum method m;
    int status, verified;
    uint64_t bad_offset;
    double blocked, data, complete, fwdio_blocked, fwdio_pread;
    double resident;      /* fraction of the file's pages resident at the start; -1 n/a */
    int64_t io[FWDIO_IOCOUNT_N]; /* summed deltas; -1: no shim */
    int64_t units, storage_bytes; /* fwdio only; -1 elsewhere */
    int64_t pfs_requests, pfs_bytes, pfs_rpcs; /* -1: not on the emulator */
    double load1;
};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double load_average(void)
{
    double l = -1;
    FILE *f = fopen("/proc/loadavg", "r");
    if (f) {
        if (fscanf(f, "%lf", &l) != 1)
            l = -1;
        fclose(f);
    }
    return l;
}

/* ---------------------------------------------------------------- pattern */

/* The 8 pattern bytes of the aligned group at offset g * 8 (pattern_byte's
 * formula), least significant byte first. */
static inline uint64_t pattern_word(uint64_t seed, uint64_t g)
{
    uint64_t x = g * 0x9E3779B97F4A7C15ull ^ seed * 0xD1B54A32D192ED03ull;
    x ^= x >> 29;
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 32;
    return x;
}

static inline void store_le64(unsigned char *p, uint64_t x)
{
    for (int i = 0; i < 8; i++)
        p[i] = (unsigned char)(x >> (8 * i));
}

/* buf[0 .. len) = the file bytes [off, off + len), complemented when `flip`
 * (a poison that differs from the pattern in every byte). */
static void fill(unsigned char *buf, uint64_t len, uint64_t off, uint64_t seed, int flip)
{
    unsigned char x = flip ? 0xff : 0;
    uint64_t i = 0;
    for (; i < len && ((off + i) & 7); i++)
        buf[i] = pattern_byte(seed, off + i) ^ x;
    uint64_t mask = flip ? ~(uint64_t)0 : 0;
    for (; i + 8 <= len; i += 8)
        store_le64(buf + i, pattern_word(seed, (off + i) >> 3) ^ mask);
    for (; i < len; i++)
        buf[i] = pattern_byte(seed, off + i) ^ x;
}

/* First offset in [off, off + len) whose byte in buf is not the pattern's;
 * UINT64_MAX when all match. */
static uint64_t check(const unsigned char *buf, uint64_t len, uint64_t off, uint64_t seed)
{
    unsigned char w[8];
    uint64_t i = 0;
    for (; i < len && ((off + i) & 7); i++)
        if (buf[i] != pattern_byte(seed, off + i))
            return off + i;
    for (; i + 8 <= len; i += 8) {
        store_le64(w, pattern_word(seed, (off + i) >> 3));
        if (memcmp(w, buf + i, 8) != 0) {
            for (int k = 0; k < 8; k++)
                if (w[k] != buf[i + (uint64_t)k])
                    return off + i + (uint64_t)k;
        }
    }
    for (; i < len; i++)
        if (buf[i] != pattern_byte(seed, off + i))
            return off + i;
    return UINT64_MAX;
}

/* The word-wise fill must be pattern_byte exactly: checked once at start. */
static int pattern_self_test(uint64_t seed)
{
    unsigned char b[203];
    for (uint64_t off = 0; off < 24; off += 5) {
        fill(b, sizeof b, off, seed, 0);
        for (uint64_t i = 0; i < sizeof b; i++)
            if (b[i] != pattern_byte(seed, off + i))
                return -1;
        if (check(b, sizeof b, off, seed) != UINT64_MAX)
            return -1;
        b[100] ^= 1;
        if (check(b, sizeof b, off, seed) != off + 100)
            return -1;
    }
    return 0;
}

/* ----------------------------------------------------------------- layout */

static uint64_t splitmix(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* This rank's pieces (see the top of the file). Returns 0, or -1 with a
 * message when the file has fewer records than runs. */
static int make_layout(struct ctx *c)
{
    const struct opts *o = c->o;
    int P = c->nranks, K = o->pieces;
    uint64_t runs = (uint64_t)P * (uint64_t)K;
    if (o->size <= o->header || (o->size - o->header) / o->record < runs) {
        if (c->rank == 0)
            fprintf(stderr, "fwdio-restart: %" PRIu64 " bytes hold fewer than %" PRIu64
                            " records of %" PRIu64 " bytes after the header\n",
                    o->size, runs, o->record);
        return -1;
    }
    uint64_t N = (o->size - o->header) / o->record;
    uint64_t *b = malloc((size_t)(runs + 1) * sizeof *b);
    int *owner = malloc((size_t)runs * sizeof *owner);
    int *perm = malloc((size_t)P * sizeof *perm);
    c->pieces = malloc((size_t)(runs + 1) * sizeof *c->pieces);
    if (!b || !owner || !perm || !c->pieces) {
        free(b), free(owner), free(perm);
        return -1;
    }
    uint64_t rng = o->seed ^ 0xC0FFEEull;
    uint64_t len = N / runs;
    for (uint64_t j = 0; j <= runs; j++) {
        b[j] = N * j / runs;
        if (K > 1 && j > 0 && j < runs && len >= 4) {
            uint64_t span = len / 4; /* jitter in [-span, +span] */
            b[j] = b[j] - span + splitmix(&rng) % (2 * span + 1);
        }
    }
    for (int q = 0; q < K; q++) {
        for (int i = 0; i < P; i++)
            perm[i] = i;
        if (K > 1)
            for (int i = P - 1; i > 0; i--) {
                int k = (int)(splitmix(&rng) % (uint64_t)(i + 1));
                int t = perm[i];
                perm[i] = perm[k], perm[k] = t;
            }
        for (int i = 0; i < P; i++)
            owner[(uint64_t)q * (uint64_t)P + (uint64_t)i] = perm[i];
    }
    int n = 0;
    if (o->header > 0)
        c->pieces[n++] = (struct piece){0, o->header};
    for (uint64_t j = 0; j < runs; j++) {
        if (owner[j] != c->rank)
            continue;
        uint64_t off = o->header + b[j] * o->record;
        uint64_t end = j + 1 == runs ? o->size : o->header + b[j + 1] * o->record;
        if (n > 0 && c->pieces[n - 1].off + c->pieces[n - 1].len == off)
            c->pieces[n - 1].len += end - off; /* adjacent: one piece */
        else
            c->pieces[n++] = (struct piece){off, end - off};
    }
    c->npieces = n;
    c->nbytes = 0;
    for (int i = 0; i < n; i++)
        c->nbytes += c->pieces[i].len;
    free(b), free(owner), free(perm);
    MPI_Allreduce(&c->npieces, &c->max_npieces, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    MPI_Allreduce(&c->nbytes, &c->max_nbytes, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
    return 0;
}

/* The MPI-IO view: one hindexed element per piece (split at 1 GiB, as block
 * lengths are ints), when some rank has more than one piece. */
static int make_view(struct ctx *c)
{
    c->view = MPI_DATATYPE_NULL;
    if (c->max_npieces <= 1)
        return 0;
    const uint64_t lim = (uint64_t)1 << 30;
    int n = 0;
    for (int i = 0; i < c->npieces; i++)
        n += (int)((c->pieces[i].len + lim - 1) / lim);
    int *lens = malloc((size_t)(n ? n : 1) * sizeof *lens);
    MPI_Aint *displs = malloc((size_t)(n ? n : 1) * sizeof *displs);
    if (!lens || !displs) {
        free(lens), free(displs);
        return -1;
    }
    int k = 0;
    for (int i = 0; i < c->npieces; i++)
        for (uint64_t d = 0; d < c->pieces[i].len; d += lim) {
            uint64_t l = c->pieces[i].len - d < lim ? c->pieces[i].len - d : lim;
            lens[k] = (int)l;
            displs[k++] = (MPI_Aint)(c->pieces[i].off + d);
        }
    MPI_Type_create_hindexed(n, lens, displs, MPI_BYTE, &c->view);
    MPI_Type_commit(&c->view);
    free(lens), free(displs);
    return 0;
}

/* ------------------------------------------------------------- the file */

static int pread_all(int fd, unsigned char *p, uint64_t len, uint64_t off)
{
    while (len > 0) {
        ssize_t n = pread(fd, p, len, (off_t)off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            if (n == 0)
                errno = EIO;
            return -1;
        }
        p += n, len -= (uint64_t)n, off += (uint64_t)n;
    }
    return 0;
}

static int pwrite_all(int fd, const unsigned char *p, uint64_t len, uint64_t off)
{
    while (len > 0) {
        ssize_t n = pwrite(fd, p, len, (off_t)off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            if (n == 0)
                errno = EIO;
            return -1;
        }
        p += n, len -= (uint64_t)n, off += (uint64_t)n;
    }
    return 0;
}

/* Rank 0: does the file at path have the right size and, at 64 places, the
 * pattern's bytes? */
static int file_matches(const struct opts *o)
{
    int fd = open(o->path, O_RDONLY);
    if (fd < 0)
        return 0;
    struct stat st;
    int ok = fstat(fd, &st) == 0 && (uint64_t)st.st_size == o->size;
    unsigned char b[4096];
    uint64_t rng = 12345;
    for (int i = 0; ok && i < 64; i++) {
        uint64_t len = o->size < sizeof b ? o->size : sizeof b;
        uint64_t off = i == 0 ? 0 : i == 1 ? o->size - len : splitmix(&rng) % (o->size - len + 1);
        ok = pread_all(fd, b, len, off) == 0 && check(b, len, off, o->seed) == UINT64_MAX;
    }
    close(fd);
    return ok;
}

/* Write the checkpoint (unless it is there already): rank 0 sizes it and
 * writes the header, every rank pwrites its runs and fdatasyncs. Collective;
 * returns 0 or -1 on every rank. */
static int prepare_file(struct ctx *c)
{
    const struct opts *o = c->o;
    int reuse = 0, err = 0;
    char msg[512] = "";
    if (c->rank == 0) {
        reuse = !o->rewrite && file_matches(o);
        if (!reuse) {
            int fd = open(o->path, O_CREAT | O_WRONLY | O_TRUNC, 0644);
            if (fd < 0 || ftruncate(fd, (off_t)o->size) != 0) {
                snprintf(msg, sizeof msg, "cannot create %s: %s", o->path, strerror(errno));
                err = 1;
            }
            if (fd >= 0)
                close(fd);
        }
    }
    int flags[2] = {reuse, err};
    MPI_Bcast(flags, 2, MPI_INT, 0, MPI_COMM_WORLD);
    if (flags[1]) {
        if (c->rank == 0)
            fprintf(stderr, "fwdio-restart: %s\n", msg);
        return -1;
    }
    if (flags[0]) {
        if (c->rank == 0)
            printf("# checkpoint: reusing %s (%" PRIu64 " bytes, pattern seed %" PRIu64 ")\n",
                   o->path, o->size, o->seed);
        return 0;
    }
    double t0 = now_s();
    int fd = open(o->path, O_WRONLY);
    err = fd < 0;
    unsigned char *p = c->buf;
    for (int i = 0; !err && i < c->npieces; i++) {
        const struct piece *pc = &c->pieces[i];
        fill(p, pc->len, pc->off, o->seed, 0);
        /* the header is rank 0's to write (a piece may start with it) */
        uint64_t skip = c->rank != 0 && pc->off < o->header ? o->header - pc->off : 0;
        if (skip > pc->len)
            skip = pc->len;
        if (pwrite_all(fd, p + skip, pc->len - skip, pc->off + skip) != 0)
            err = 1;
        p += pc->len;
    }
    if (!err && fdatasync(fd) != 0 && errno != EINVAL)
        err = 1;
    if (err)
        fprintf(stderr, "fwdio-restart: rank %d: writing %s failed: %s\n", c->rank, o->path,
                strerror(errno));
    if (fd >= 0)
        close(fd);
    MPI_Allreduce(MPI_IN_PLACE, &err, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (c->rank == 0 && !err)
        printf("# checkpoint: wrote %s (%" PRIu64 " bytes, pattern seed %" PRIu64
               ") in %.2f s, every rank its own runs\n",
               o->path, o->size, o->seed, now_s() - t0);
    return err ? -1 : 0;
}

/* Fraction of the file's pages in the page cache (mincore), or -1 when it
 * cannot be told (mmap refused, as on a FUSE mount with direct I/O). */
static double resident_fraction(const char *path, uint64_t size)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return -1;
    double frac = -1;
    long pg = sysconf(_SC_PAGESIZE);
    void *m = size ? mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0) : MAP_FAILED;
    if (m != MAP_FAILED) {
        size_t npg = (size_t)((size + (uint64_t)pg - 1) / (uint64_t)pg);
        unsigned char *vec = malloc(npg);
        if (vec && mincore(m, size, vec) == 0) {
            size_t in = 0;
            for (size_t i = 0; i < npg; i++)
                in += vec[i] & 1;
            frac = (double)in / (double)npg;
        }
        free(vec);
        munmap(m, size);
    }
    close(fd);
    return frac;
}

/* Rank 0: drop the file's pages from the page cache. Says what worked the
 * first time (or when it changes). */
static void drop_cache(const struct opts *o)
{
    static int said = -1;
    int fd = open(o->path, O_RDONLY);
    int fadv = -1, drop = -2; /* -2: not tried */
    if (fd >= 0) {
        if (fsync(fd) != 0 && errno != EINVAL)
            perror("fwdio-restart: fsync");
        fadv = posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
        close(fd);
    } else {
        fadv = errno;
    }
    int drop_errno = 0;
    if (o->cold == COLD_DROP) {
        sync();
        int d = open("/proc/sys/vm/drop_caches", O_WRONLY);
        drop = d >= 0 && write(d, "1\n", 2) == 2 ? 0 : -1;
        drop_errno = drop ? errno : 0;
        if (d >= 0)
            close(d);
    }
    int state = (fadv == 0) | (drop == 0) << 1;
    if (state != said) {
        double r = resident_fraction(o->path, o->size);
        printf("# cold cache: posix_fadvise(DONTNEED) %s%s%s%s; file pages resident after: ",
               fadv == 0 ? "ok" : "failed: ", fadv == 0 ? "" : strerror(fadv),
               drop == -2 ? "; drop_caches not tried (--cold drop tries it)"
                          : drop == 0 ? "; echo 1 > /proc/sys/vm/drop_caches ok"
                                      : "; echo 1 > /proc/sys/vm/drop_caches failed: ",
               drop == -1 ? strerror(drop_errno) : "");
        if (r < 0)
            printf("n/a (no mmap here)\n");
        else
            printf("%.1f %%%s\n", 100 * r, r > 0.5 ? " (tmpfs, or the drop did not work: not cold)" : "");
        said = state;
    }
}

/* <dir of path>/.pfs-stats when it exists (the emulator's mount). */
static void find_pfs_stats(struct ctx *c)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", c->o->path);
    char *slash = strrchr(dir, '/');
    if (slash)
        *slash = '\0';
    else
        snprintf(dir, sizeof dir, ".");
    snprintf(c->pfs_stats, sizeof c->pfs_stats, "%s/.pfs-stats", dir[0] ? dir : "/");
    struct stat st;
    if (stat(c->pfs_stats, &st) != 0)
        c->pfs_stats[0] = '\0';
    struct statfs sf;
    const char *t = "?";
    if (statfs(dir[0] ? dir : "/", &sf) == 0) {
        switch ((unsigned long)sf.f_type) {
        case 0x01021994ul: t = "tmpfs"; break;
        case 0xEF53ul: t = "ext4"; break;
        case 0x65735546ul: t = "fuse"; break;
        case 0x58465342ul: t = "xfs"; break;
        case 0x9123683Eul: t = "btrfs"; break;
        case 0x6969ul: t = "nfs"; break;
        case 0x0BD00BD0ul: t = "lustre"; break;
        default: t = "other"; break;
        }
    }
    snprintf(c->fs_type, sizeof c->fs_type, "%s", t);
}

/* The emulator's read counters: FUSE read requests and bytes, pieces served
 * by the targets. 0, or -1 when not on the emulator. */
static int pfs_read_counters(const struct ctx *c, int64_t out[3])
{
    if (!c->pfs_stats[0])
        return -1;
    FILE *f = fopen(c->pfs_stats, "r");
    if (!f)
        return -1;
    char line[1024];
    int64_t req = -1, bytes = -1, rpcs = 0;
    while (fgets(line, sizeof line, f)) {
        const char *p;
        if (!strncmp(line, "total ", 6)) {
            if ((p = strstr(line, " read_requests=")))
                req = strtoll(p + 15, NULL, 10);
            if ((p = strstr(line, " read_bytes=")))
                bytes = strtoll(p + 12, NULL, 10);
        } else if (!strncmp(line, "target ", 7) && (p = strstr(line, " read_rpcs="))) {
            rpcs += strtoll(p + 11, NULL, 10);
        }
    }
    fclose(f);
    out[0] = req, out[1] = bytes, out[2] = rpcs;
    return req < 0 ? -1 : 0;
}

/* ------------------------------------------------------------ the methods */

struct fw_reads {
    atomic_int left;
    atomic_int status;
    _Atomic double t_last;
};

static void on_read(fwdio_file_t *f, void *buf, int status, void *arg)
{
    (void)f, (void)buf;
    struct fw_reads *r = arg;
    if (status != FWDIO_OK) {
        int ok = FWDIO_OK;
        atomic_compare_exchange_strong(&r->status, &ok, status);
    }
    double t = now_s();
    if (atomic_fetch_sub(&r->left, 1) == 1)
        atomic_store(&r->t_last, t);
}

static void set_err(struct local *l, int status, const char *fmt, const char *what)
{
    if (l->status == 0) {
        l->status = status ? status : -1;
        snprintf(l->err, sizeof l->err, fmt, what); /* fmt: one %s */
    }
}

static void run_fwdio(struct ctx *c, struct local *l)
{
    const struct opts *o = c->o;
    fwdio_runtime_t *rt = NULL;
    fwdio_config_t cfg;
    fwdio_config_init(&cfg);
    cfg.callback_mode = FWDIO_CALLBACKS_ON_PROGRESS;
    cfg.writer_buffer = o->writer_buffer;
    /* the runtime is started before the clock (fwdio_init is collective) */
    int rc = fwdio_init(MPI_COMM_WORLD, &cfg, &rt);
    if (rc != FWDIO_OK) {
        set_err(l, rc, "fwdio_init: %s", fwdio_strerror(rc));
        return;
    }
    fwdio_options_t opts;
    fwdio_options_init(&opts);
    opts.writers = o->readers;
    opts.write_size = o->write_size;
    opts.stripe_size = o->stripe_size;
    opts.targets = o->targets;
    if (o->layout) {
        opts.layout = !strcmp(o->layout, "cyclic")    ? FWDIO_LAYOUT_CYCLIC
                      : !strcmp(o->layout, "targets") ? FWDIO_LAYOUT_TARGETS
                                                      : FWDIO_LAYOUT_BLOCK;
        opts.pinned |= FWDIO_PIN_LAYOUT;
    }
    struct fw_reads r;
    atomic_init(&r.left, c->npieces);
    atomic_init(&r.status, FWDIO_OK);
    atomic_init(&r.t_last, 0.0);
    fwdio_file_t *f = NULL;

    app_quiet_barrier(MPI_COMM_WORLD);
    double start = now_s();
    rc = fwdio_open_read(rt, o->path, &opts, NULL, &f);
    if (rc != FWDIO_OK) {
        set_err(l, rc, "fwdio_open_read: %s", fwdio_strerror(rc));
        fwdio_finalize(rt);
        return;
    }
    unsigned char *p = c->buf;
    int issued = 0;
    for (int i = 0; i < c->npieces; i++) {
        rc = fwdio_read(f, p, c->pieces[i].len, c->pieces[i].off, on_read, &r);
        if (rc != FWDIO_OK) {
            set_err(l, rc, "fwdio_read: %s", fwdio_strerror(rc));
            break;
        }
        issued++;
        p += c->pieces[i].len;
    }
    /* reads never issued: their callbacks will not come */
    if (issued < c->npieces && atomic_fetch_sub(&r.left, c->npieces - issued) == c->npieces - issued)
        atomic_store(&r.t_last, now_s());
    if (c->npieces == 0)
        atomic_store(&r.t_last, now_s());
    rc = fwdio_close(f);
    double t_blocked = now_s();
    if (rc != FWDIO_OK)
        set_err(l, rc, "fwdio_close: %s", fwdio_strerror(rc));
    rc = fwdio_wait(f);
    double t_complete = now_s();
    if (rc != FWDIO_OK)
        set_err(l, rc, "file: %s", fwdio_file_error(f));
    if (atomic_load(&r.left) != 0)
        set_err(l, -1, "%s", "fwdio_wait returned before every read callback");
    if (atomic_load(&r.status) != FWDIO_OK)
        set_err(l, atomic_load(&r.status), "a read ended with: %s",
                fwdio_strerror(atomic_load(&r.status)));
    l->blocked = t_blocked - start;
    l->data = atomic_load(&r.t_last) - start;
    l->complete = t_complete - start;
    uint64_t size = 0;
    rc = fwdio_file_size(f, &size);
    if (l->status == 0 && (rc != FWDIO_OK || size != o->size)) {
        l->status = rc != FWDIO_OK ? rc : -1;
        snprintf(l->err, sizeof l->err, "fwdio_file_size: %s, %" PRIu64 " bytes (the file has %" PRIu64 ")",
                 fwdio_strerror(rc), size, o->size);
    }
    fwdio_file_stats_t st;
    if (fwdio_file_stats(f, &st) == FWDIO_OK) {
        l->units = st.pwrite_calls;
        l->storage_bytes = st.bytes_from_storage;
        l->fwdio_blocked = st.time_blocked;
        l->fwdio_pread = st.pwrite_time;
    }
    fwdio_file_free(f);
    fwdio_finalize(rt);
}

static MPI_Info make_hints(const char *hints)
{
    MPI_Info info = MPI_INFO_NULL;
    if (!hints || !*hints)
        return info;
    MPI_Info_create(&info);
    char *copy = strdup(hints), *save = NULL;
    for (char *kv = strtok_r(copy, ",", &save); kv; kv = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(kv, '=');
        if (!eq)
            continue;
        *eq = '\0';
        MPI_Info_set(info, kv, eq + 1);
    }
    free(copy);
    return info;
}

static void mpi_err(struct local *l, const char *call, int err)
{
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(err, text, &len);
    if (l->status == 0) {
        l->status = -1;
        snprintf(l->err, sizeof l->err, "%.60s: %.180s", call, text);
    }
}

static void run_mpiio(struct ctx *c, struct local *l)
{
    const uint64_t lim = (uint64_t)1 << 30;
    int calls = (int)((c->max_nbytes + lim - 1) / lim);
    MPI_Info info = make_hints(c->o->hints);
    MPI_File fh;
    app_quiet_barrier(MPI_COMM_WORLD);
    double start = now_s();
    int err = MPI_File_open(MPI_COMM_WORLD, c->o->path, MPI_MODE_RDONLY, info, &fh);
    double t_data = start;
    if (err != MPI_SUCCESS) {
        mpi_err(l, "MPI_File_open", err);
    } else {
        int viewed = c->view == MPI_DATATYPE_NULL;
        if (!viewed) {
            err = MPI_File_set_view(fh, 0, MPI_BYTE, c->view, "native", MPI_INFO_NULL);
            viewed = err == MPI_SUCCESS;
            if (!viewed)
                mpi_err(l, "MPI_File_set_view", err);
        }
        /* Every rank makes the same number of calls (at most 1 GiB each). */
        uint64_t base = c->view == MPI_DATATYPE_NULL && c->npieces ? c->pieces[0].off : 0;
        for (int k = 0; viewed && k < calls; k++) {
            uint64_t d = (uint64_t)k * lim;
            uint64_t n = d < c->nbytes ? (c->nbytes - d < lim ? c->nbytes - d : lim) : 0;
            err = MPI_File_read_at_all(fh, (MPI_Offset)(base + d), c->buf + (n ? d : 0), (int)n,
                                       MPI_BYTE, MPI_STATUS_IGNORE);
            if (err != MPI_SUCCESS)
                mpi_err(l, "MPI_File_read_at_all", err);
        }
        t_data = now_s();
        err = MPI_File_close(&fh);
        if (err != MPI_SUCCESS)
            mpi_err(l, "MPI_File_close", err);
    }
    double end = now_s();
    l->blocked = end - start;
    l->data = t_data - start;
    l->complete = end - start;
    if (info != MPI_INFO_NULL)
        MPI_Info_free(&info);
}

static void run_pread(struct ctx *c, struct local *l)
{
    app_quiet_barrier(MPI_COMM_WORLD);
    double start = now_s();
    int fd = open(c->o->path, O_RDONLY);
    double t_data = start;
    if (fd < 0) {
        set_err(l, -1, "open: %s", strerror(errno));
    } else {
        unsigned char *p = c->buf;
        for (int i = 0; i < c->npieces; i++) {
            if (pread_all(fd, p, c->pieces[i].len, c->pieces[i].off) != 0) {
                set_err(l, -1, "pread: %s", strerror(errno));
                break;
            }
            p += c->pieces[i].len;
        }
        t_data = now_s();
        close(fd);
    }
    double end = now_s();
    l->blocked = end - start;
    l->data = t_data - start;
    l->complete = end - start;
}

/* ---------------------------------------------------------------- one run */

static void iocount_now(const struct ctx *c, uint64_t *out)
{
    memset(out, 0, FWDIO_IOCOUNT_N * sizeof *out);
    if (c->iocount)
        c->iocount(out, FWDIO_IOCOUNT_N);
}

static void run_one(struct ctx *c, enum method m, int rep, int order, struct result *res)
{
    const struct opts *o = c->o;
    struct local l;
    memset(&l, 0, sizeof l);
    /* untimed: poison the buffer (every byte must be overwritten by the read) */
    unsigned char *p = c->buf;
    for (int i = 0; i < c->npieces; i++) {
        fill(p, c->pieces[i].len, c->pieces[i].off, o->seed, 1);
        p += c->pieces[i].len;
    }
    app_quiet_barrier(MPI_COMM_WORLD);
    if (c->rank == 0 && o->settle) {
        struct dirty_wait w;
        if (dirty_pages_wait(DIRTY_DEFAULT_LIMIT_KIB, DIRTY_DEFAULT_TIMEOUT_S, &w) == 0 && w.timed_out)
            fprintf(stderr, "fwdio-restart: dirty pages still %" PRIu64 " KiB after %.0f s\n",
                    w.after_kib, w.waited_s);
    }
    if (c->rank == 0 && o->cold != COLD_OFF)
        drop_cache(o);
    double resident = c->rank == 0 ? resident_fraction(o->path, o->size) : -1;
    double load1 = c->rank == 0 ? load_average() : -1;
    int64_t pfs0[3] = {-1, -1, -1}, pfs1[3] = {-1, -1, -1};
    int have_pfs = c->rank == 0 && pfs_read_counters(c, pfs0) == 0;
    app_quiet_barrier(MPI_COMM_WORLD);

    iocount_now(c, l.io0);
    switch (m) {
    case M_FWDIO: run_fwdio(c, &l); break;
    case M_MPIIO: run_mpiio(c, &l); break;
    case M_PREAD: run_pread(c, &l); break;
    default: break;
    }
    iocount_now(c, l.io1);
    app_quiet_barrier(MPI_COMM_WORLD);
    if (have_pfs && pfs_read_counters(c, pfs1) != 0)
        have_pfs = 0;

    /* untimed: check every byte */
    uint64_t bad = UINT64_MAX;
    p = c->buf;
    for (int i = 0; i < c->npieces && bad == UINT64_MAX; i++) {
        bad = check(p, c->pieces[i].len, c->pieces[i].off, o->seed);
        p += c->pieces[i].len;
    }
    if (l.status != 0)
        fprintf(stderr, "fwdio-restart: rank %d, %s: %s\n", c->rank, method_names[m], l.err);

    double tmax[5] = {l.blocked, l.data, l.complete, l.fwdio_blocked, l.fwdio_pread};
    MPI_Allreduce(MPI_IN_PLACE, tmax, 5, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    uint64_t sums[FWDIO_IOCOUNT_N + 2];
    for (int i = 0; i < FWDIO_IOCOUNT_N; i++)
        sums[i] = l.io1[i] - l.io0[i];
    sums[FWDIO_IOCOUNT_N] = l.units;
    sums[FWDIO_IOCOUNT_N + 1] = l.storage_bytes;
    MPI_Allreduce(MPI_IN_PLACE, sums, FWDIO_IOCOUNT_N + 2, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    int status = l.status;
    MPI_Allreduce(MPI_IN_PLACE, &status, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_UINT64_T, MPI_MIN, MPI_COMM_WORLD);

    memset(res, 0, sizeof *res);
    res->rep = rep;
    res->order = order;
    res->m = m;
    res->status = status;
    res->verified = bad == UINT64_MAX;
    res->bad_offset = bad;
    res->blocked = tmax[0], res->data = tmax[1], res->complete = tmax[2];
    res->fwdio_blocked = m == M_FWDIO ? tmax[3] : -1;
    res->fwdio_pread = m == M_FWDIO ? tmax[4] : -1;
    res->resident = resident;
    for (int i = 0; i < FWDIO_IOCOUNT_N; i++)
        res->io[i] = c->iocount ? (int64_t)sums[i] : -1;
    res->units = m == M_FWDIO ? (int64_t)sums[FWDIO_IOCOUNT_N] : -1;
    res->storage_bytes = m == M_FWDIO ? (int64_t)sums[FWDIO_IOCOUNT_N + 1] : -1;
    res->pfs_requests = have_pfs ? pfs1[0] - pfs0[0] : -1;
    res->pfs_bytes = have_pfs ? pfs1[1] - pfs0[1] : -1;
    res->pfs_rpcs = have_pfs ? pfs1[2] - pfs0[2] : -1;
    res->load1 = load1;
}

/* ------------------------------------------------------------- reporting */

static double mib(uint64_t b)
{
    return (double)b / (1024.0 * 1024.0);
}

/* Storage requests of a run as the summary counts them: the shim's read
 * calls when it is loaded, else fwdio's units (fwdio), else -1. */
static int64_t requests_of(const struct result *r)
{
    if (r->io[FWDIO_IOCOUNT_CALLS] >= 0)
        return r->io[FWDIO_IOCOUNT_CALLS];
    return r->units;
}

static int64_t storage_bytes_of(const struct result *r)
{
    if (r->io[FWDIO_IOCOUNT_BYTES] >= 0)
        return r->io[FWDIO_IOCOUNT_BYTES];
    return r->storage_bytes;
}

static void fmt_i64(char *out, size_t cap, int64_t v)
{
    if (v < 0)
        snprintf(out, cap, "n/a");
    else
        snprintf(out, cap, "%" PRId64, v);
}

static void print_run(const struct ctx *c, const struct result *r)
{
    char req[32], pfs[64] = "", units[64] = "";
    fmt_i64(req, sizeof req, requests_of(r));
    if (r->pfs_requests >= 0)
        snprintf(pfs, sizeof pfs, "  pfs %" PRId64 " req %" PRId64 " rpcs", r->pfs_requests,
                 r->pfs_rpcs);
    if (r->m == M_FWDIO)
        snprintf(units, sizeof units, "  units %" PRId64 " (%.2fx file)", r->units,
                 (double)r->storage_bytes / (double)c->o->size);
    char res[32] = "n/a";
    if (r->resident >= 0)
        snprintf(res, sizeof res, "%.0f%%", 100 * r->resident);
    int64_t sb = storage_bytes_of(r);
    char amp[32] = "n/a";
    if (sb >= 0)
        snprintf(amp, sizeof amp, "%.2fx", (double)sb / (double)c->o->size);
    char rep[16];
    if (r->rep < 0)
        snprintf(rep, sizeof rep, "warm-up");
    else
        snprintf(rep, sizeof rep, "rep %d", r->rep + 1);
    printf("%-8s %-6s data %9.2f ms  blocked %9.2f ms  complete %9.2f ms  reads %s (%s of file)%s%s"
           "  resident %s  load %.2f  %s\n",
           rep, method_names[r->m], 1e3 * r->data, 1e3 * r->blocked, 1e3 * r->complete, req, amp,
           units, pfs, res, r->load1,
           r->status ? "FAILED" : r->verified ? "verified" : "BAD BYTES");
    if (!r->verified && r->status == 0)
        printf("         first bad byte at offset %" PRIu64 "\n", r->bad_offset);
    fflush(stdout);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* "median [min, max]" of n values (sorted in place); "n/a" when n is 0. */
static void spread(char *out, size_t cap, double *v, int n, double scale, const char *fmt)
{
    if (n == 0) {
        snprintf(out, cap, "n/a");
        return;
    }
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    double med = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
    char a[32], b[32], m[32];
    snprintf(m, sizeof m, fmt, med * scale);
    snprintf(a, sizeof a, fmt, v[0] * scale);
    snprintf(b, sizeof b, fmt, v[n - 1] * scale);
    snprintf(out, cap, "%s [%s, %s]", m, a, b);
}

static double median_of(double *v, int n)
{
    if (n == 0)
        return -1;
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* The measured runs of method m, and the values of one field. */
enum field { F_DATA, F_BLOCKED, F_COMPLETE, F_REQ_PER_MIB, F_AMP, F_KIB_PER_REQ, F_PFS_REQ,
             F_PFS_RPC, F_RESIDENT };

static int collect(const struct ctx *c, const struct result *rs, int nres, enum method m,
                   enum field f, double *v)
{
    int n = 0;
    double size_mib = mib(c->o->size);
    for (int i = 0; i < nres; i++) {
        const struct result *r = &rs[i];
        if (r->rep < 0 || r->m != m || r->status != 0 || !r->verified)
            continue;
        int64_t req = requests_of(r), sb = storage_bytes_of(r);
        double x;
        switch (f) {
        case F_DATA: x = r->data; break;
        case F_BLOCKED: x = r->blocked; break;
        case F_COMPLETE: x = r->complete; break;
        case F_REQ_PER_MIB: x = req < 0 ? -1 : (double)req / size_mib; break;
        case F_AMP: x = sb < 0 ? -1 : (double)sb / (double)c->o->size; break;
        case F_KIB_PER_REQ: x = req <= 0 || sb < 0 ? -1 : (double)sb / 1024.0 / (double)req; break;
        case F_PFS_REQ: x = r->pfs_requests < 0 ? -1 : (double)r->pfs_requests / size_mib; break;
        case F_PFS_RPC: x = r->pfs_rpcs < 0 ? -1 : (double)r->pfs_rpcs / size_mib; break;
        case F_RESIDENT: x = r->resident; break;
        default: x = -1; break;
        }
        if (x >= 0)
            v[n++] = x;
    }
    return n;
}

/* Per rep: value of method a over value of method b (data or blocked). */
static int paired(const struct result *rs, int nres, enum method a, enum method b, enum field f,
                  double *v)
{
    int n = 0;
    for (int i = 0; i < nres; i++) {
        const struct result *x = &rs[i];
        if (x->rep < 0 || x->m != a || x->status || !x->verified)
            continue;
        for (int j = 0; j < nres; j++) {
            const struct result *y = &rs[j];
            if (y->rep != x->rep || y->m != b || y->status || !y->verified)
                continue;
            double num = f == F_DATA ? x->data : x->blocked;
            double den = f == F_DATA ? y->data : y->blocked;
            if (den > 0)
                v[n++] = num / den;
        }
    }
    return n;
}

static void print_summary(const struct ctx *c, const struct result *rs, int nres, FILE *csv)
{
    const struct opts *o = c->o;
    double *v = malloc((size_t)(nres ? nres : 1) * sizeof *v);
    if (!v)
        return;
    printf("\n# summary: %d ranks, %" PRIu64 " bytes (%.1f MiB), %d piece(s) per rank (+ header), "
           "io component %s, %s, cold %s; median [min, max] over the reps\n",
           c->nranks, o->size, mib(o->size), o->pieces, c->io, c->fs_type, cold_names[o->cold]);
    printf("| method | verified | data ms | blocked ms | complete ms | read calls / MiB | "
           "bytes read / file | KiB per call | pfs requests / MiB | pfs target pieces / MiB | "
           "resident at start |\n|---|---|---|---|---|---|---|---|---|---|---|\n");
    if (csv)
        fprintf(csv, "method,io_component,nranks,size,pieces,fs,cold,runs_ok,reps,data_s_median,"
                     "data_s_min,data_s_max,blocked_s_median,blocked_s_min,blocked_s_max,"
                     "complete_s_median,calls_per_mib,bytes_read_over_size,kib_per_call,"
                     "pfs_requests_per_mib,pfs_rpcs_per_mib,resident_median,"
                     "data_over_fwdio_median,blocked_over_fwdio_median\n");
    for (int k = 0; k < o->nmethods; k++) {
        enum method m = (enum method)o->methods[k];
        int runs = 0, ok = 0;
        for (int i = 0; i < nres; i++)
            if (rs[i].rep >= 0 && rs[i].m == m) {
                runs++;
                ok += rs[i].status == 0 && rs[i].verified;
            }
        char cell[9][128];
        double med[9] = {0};
        static const enum field fields[9] = {F_DATA, F_BLOCKED, F_COMPLETE, F_REQ_PER_MIB, F_AMP,
                                             F_KIB_PER_REQ, F_PFS_REQ, F_PFS_RPC, F_RESIDENT};
        static const double scale[9] = {1e3, 1e3, 1e3, 1, 1, 1, 1, 1, 100};
        static const char *const fmts[9] = {"%.1f", "%.2f", "%.1f", "%.3g", "%.3f", "%.0f",
                                            "%.3g", "%.3g", "%.0f%%"};
        double mins[2] = {0}, maxs[2] = {0};
        for (int f = 0; f < 9; f++) {
            int n = collect(c, rs, nres, m, fields[f], v);
            med[f] = median_of(v, n);
            if (f < 2 && n) {
                mins[f] = v[0];
                maxs[f] = v[n - 1];
            }
            spread(cell[f], sizeof cell[f], v, n, scale[f], fmts[f]);
        }
        printf("| %s | %d/%d | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", method_names[m], ok,
               runs, cell[0], cell[1], cell[2], cell[3], cell[4], cell[5], cell[6], cell[7], cell[8]);
        double rd = -1, rb = -1;
        if (m != M_FWDIO) {
            rd = median_of(v, paired(rs, nres, m, M_FWDIO, F_DATA, v));
            rb = median_of(v, paired(rs, nres, m, M_FWDIO, F_BLOCKED, v));
        }
        if (csv)
            fprintf(csv, "%s,%s,%d,%" PRIu64 ",%d,%s,%s,%d,%d,%.6f,%.6f,%.6f,%.6f,%.6f,%.6f,%.6f,"
                         "%.6g,%.6g,%.6g,%.6g,%.6g,%.4f,%.4f,%.4f\n",
                    method_names[m], c->io, c->nranks, o->size, o->pieces, c->fs_type,
                    cold_names[o->cold], ok,
                    runs, med[0], mins[0], maxs[0], med[1], mins[1], maxs[1], med[2], med[3], med[4],
                    med[5], med[6], med[7], med[8], rd, rb);
    }
    /* paired ratios, rep by rep, against fwdio */
    int have_fwdio = 0;
    for (int k = 0; k < o->nmethods; k++)
        have_fwdio |= o->methods[k] == M_FWDIO;
    if (have_fwdio) {
        printf("\n# paired per rep (same rep, same machine state): method / fwdio\n");
        printf("| ratio | data (time to all data) | blocked |\n|---|---|---|\n");
        for (int k = 0; k < o->nmethods; k++) {
            enum method m = (enum method)o->methods[k];
            if (m == M_FWDIO)
                continue;
            char a[128], b[128];
            spread(a, sizeof a, v, paired(rs, nres, m, M_FWDIO, F_DATA, v), 1, "%.2f");
            spread(b, sizeof b, v, paired(rs, nres, m, M_FWDIO, F_BLOCKED, v), 1, "%.2f");
            printf("| %s / fwdio | %s | %s |\n", method_names[m], a, b);
        }
    }
    printf("\n# data: barrier -> last byte in the rank's buffer, max over ranks. blocked: fwdio "
           "open_read + reads + close (not the wait); mpiio open + view + read_at_all + close; "
           "pread open + preads + close. complete: fwdio until fwdio_wait returned.\n"
           "# read calls: %s; bytes read / file: the same calls' bytes over the file size. "
           "pfs: the emulator's FUSE read requests (at most 1 MiB each) and the pieces its "
           "targets served.\n",
           c->iocount ? "read system calls on the file summed over ranks (libfwdio-iocount.so)"
                      : "no libfwdio-iocount.so loaded: fwdio's units pread only, n/a for the others");
    free(v);
}

static void csv_header(FILE *f)
{
    fprintf(f, "run,rep,order,method,io_component,nranks,size,pieces,record_size,header,fs,cold,"
               "resident,load1,status,verified,bad_offset,data_s,blocked_s,complete_s,"
               "fwdio_time_blocked_s,fwdio_pread_s,read_calls,read_bytes,read_opens,pread_calls,"
               "preadv_calls,read_plain_calls,read_errors,fwdio_units,fwdio_storage_bytes,"
               "pfs_requests,pfs_bytes,pfs_rpcs,readers,write_size,stripe_size,layout,hints\n");
}

static void csv_row(FILE *f, const struct ctx *c, int run, const struct result *r)
{
    const struct opts *o = c->o;
    fprintf(f, "%d,%d,%d,%s,%s,%d,%" PRIu64 ",%d,%" PRIu64 ",%" PRIu64 ",%s,%s,%.4f,%.2f,%d,%d,%"
               PRId64 ",%.6f,%.6f,%.6f,%.6f,%.6f",
            run, r->rep, r->order, method_names[r->m], c->io, c->nranks, o->size, o->pieces,
            o->record, o->header, c->fs_type, cold_names[o->cold], r->resident, r->load1, r->status,
            r->verified, r->verified ? (int64_t)-1 : (int64_t)r->bad_offset, r->data, r->blocked,
            r->complete, r->fwdio_blocked, r->fwdio_pread);
    static const int order[] = {FWDIO_IOCOUNT_CALLS, FWDIO_IOCOUNT_BYTES, FWDIO_IOCOUNT_OPENS,
                                FWDIO_IOCOUNT_PREAD, FWDIO_IOCOUNT_PREADV, FWDIO_IOCOUNT_READ,
                                FWDIO_IOCOUNT_ERRORS};
    for (size_t i = 0; i < sizeof order / sizeof order[0]; i++)
        fprintf(f, ",%" PRId64, r->io[order[i]]);
    fprintf(f, ",%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64 ",%d,%" PRIu64
               ",%" PRIu64 ",%s,\"%s\"\n",
            r->units, r->storage_bytes, r->pfs_requests, r->pfs_bytes, r->pfs_rpcs, o->readers,
            o->write_size, o->stripe_size, o->layout ? o->layout : "", o->hints ? o->hints : "");
}

/* ------------------------------------------------------------------ main */

static void usage(FILE *f)
{
    fprintf(f,
            "usage: mpirun -np P fwdio-restart [options]\n"
            "  --size BYTES        checkpoint size (default 256M)\n"
            "  --path FILE         checkpoint (default ./fwdio-restart.ckpt); reused when its size\n"
            "                      and sampled bytes match, else written first by the ranks\n"
            "  --pieces K          runs of records per rank (default 1: contiguous shares;\n"
            "                      K > 1: uneven runs dealt in shuffled rounds, mdlj-like)\n"
            "  --record-size BYTES bytes per record (default 48: an mdlj atom)\n"
            "  --header BYTES      header every rank reads (default 128; 0: none)\n"
            "  --seed N            pattern seed of the file (default 1)\n"
            "  --methods LIST      of fwdio,mpiio,pread (default all three)\n"
            "  --reps N            measured repetitions, method order rotated per rep (default 3)\n"
            "  --warmup N          unreported rounds of every method first (default 1)\n"
            "  --cold [MODE]       before every run drop the file's pages: fadvise (default:\n"
            "                      fsync + posix_fadvise DONTNEED by rank 0) or drop (also\n"
            "                      echo 1 > /proc/sys/vm/drop_caches, needs root)\n"
            "  --settle            rank 0 waits for the kernel's dirty pages before every run\n"
            "  --rewrite           write the checkpoint even if it matches\n"
            "  --remove            remove the checkpoint at the end\n"
            "  --readers W         fwdio options.writers (the readers; default fwdio's)\n"
            "  --write-size BYTES  fwdio write unit (default fwdio's, 4 MiB)\n"
            "  --stripe-size BYTES fwdio stripe (default fwdio's)\n"
            "  --layout NAME       fwdio layout block|cyclic|targets (default fwdio's)\n"
            "  --targets T         fwdio targets (layout targets)\n"
            "  --writer-buffer BYTES  fwdio_config_t.writer_buffer (the readers' budget)\n"
            "  --hints K=V,...     MPI_Info hints of the MPI-IO open (e.g. cb_nodes=2,\n"
            "                      striping_unit=1048576, romio_cb_read=enable)\n"
            "  --csv FILE          one row per run (warm-ups too, rep -1)\n"
            "  --summary FILE      one row per method: medians and ratios\n"
            "  --help              this text\n"
            CLI_SIZE_GRAMMAR
            "The MPI-IO component: mpirun --mca io ompio|romio321. Storage read calls of every\n"
            "method: mpirun -x LD_PRELOAD=<build>/bench/libfwdio-iocount.so (else fwdio's own).\n");
}

enum {
    OPT_SIZE = 256, OPT_PATH, OPT_PIECES, OPT_RECORD_SIZE, OPT_HEADER, OPT_SEED, OPT_METHODS,
    OPT_REPS, OPT_WARMUP, OPT_COLD, OPT_SETTLE, OPT_REWRITE, OPT_REMOVE, OPT_READERS,
    OPT_WRITE_SIZE, OPT_STRIPE_SIZE, OPT_LAYOUT, OPT_TARGETS, OPT_WRITER_BUFFER, OPT_HINTS,
    OPT_CSV, OPT_SUMMARY
};

static const struct option restart_options[] = {
    {"size", required_argument, NULL, OPT_SIZE},
    {"path", required_argument, NULL, OPT_PATH},
    {"pieces", required_argument, NULL, OPT_PIECES},
    {"record-size", required_argument, NULL, OPT_RECORD_SIZE},
    {"header", required_argument, NULL, OPT_HEADER},
    {"seed", required_argument, NULL, OPT_SEED},
    {"methods", required_argument, NULL, OPT_METHODS},
    {"reps", required_argument, NULL, OPT_REPS},
    {"warmup", required_argument, NULL, OPT_WARMUP},
    {"cold", optional_argument, NULL, OPT_COLD},
    {"settle", no_argument, NULL, OPT_SETTLE},
    {"rewrite", no_argument, NULL, OPT_REWRITE},
    {"remove", no_argument, NULL, OPT_REMOVE},
    {"readers", required_argument, NULL, OPT_READERS},
    {"write-size", required_argument, NULL, OPT_WRITE_SIZE},
    {"stripe-size", required_argument, NULL, OPT_STRIPE_SIZE},
    {"layout", required_argument, NULL, OPT_LAYOUT},
    {"targets", required_argument, NULL, OPT_TARGETS},
    {"writer-buffer", required_argument, NULL, OPT_WRITER_BUFFER},
    {"hints", required_argument, NULL, OPT_HINTS},
    {"csv", required_argument, NULL, OPT_CSV},
    {"summary", required_argument, NULL, OPT_SUMMARY},
    CLI_HELP_OPTION,
    {0}};

/* "fwdio,pread" into o->methods; 0 or -1. */
static int parse_methods(const char *v, struct opts *o)
{
    int bad = 0;
    o->nmethods = 0;
    char *copy = strdup(v), *save = NULL;
    for (char *t = strtok_r(copy, ",", &save); t && !bad; t = strtok_r(NULL, ",", &save)) {
        int m = -1;
        for (int k = 0; k < M_COUNT; k++)
            if (!strcmp(t, method_names[k]))
                m = k;
        for (int k = 0; k < o->nmethods; k++)
            bad |= o->methods[k] == m;
        if (m < 0 || bad || o->nmethods == M_COUNT)
            bad = 1;
        else
            o->methods[o->nmethods++] = m;
    }
    free(copy);
    return bad || o->nmethods == 0 ? -1 : 0;
}

/* One option; 0, or CLI_BAD after the message. */
static int parse_option(cli_t *c, int key, void *ctx)
{
    struct opts *o = ctx;
    static const char *const cold_modes[] = {"fadvise", "drop"};
    static const char *const layouts[] = {"block", "cyclic", "targets"};
    int i;
    switch (key) {
    case OPT_SIZE: return cli_size(c, 1, UINT64_MAX, &o->size);
    case OPT_PATH: o->path = c->arg; return 0;
    case OPT_PIECES: return cli_int(c, 1, INT32_MAX, &o->pieces);
    case OPT_RECORD_SIZE: return cli_size(c, 1, UINT64_MAX, &o->record);
    case OPT_HEADER: return cli_size(c, 0, UINT64_MAX, &o->header);
    case OPT_SEED: return cli_u64(c, 0, UINT64_MAX, &o->seed);
    case OPT_METHODS:
        return parse_methods(c->arg, o) ? cli_bad_value(c, "of fwdio,mpiio,pread") : 0;
    case OPT_REPS: return cli_int(c, 1, INT32_MAX, &o->reps);
    case OPT_WARMUP: return cli_int(c, 0, INT32_MAX, &o->warmup);
    case OPT_COLD:
        o->cold = COLD_FADVISE;
        if (!cli_optional_word(c, cold_modes, 2))
            return 0;
        if (cli_choice(c, cold_modes, 2, &i))
            return CLI_BAD;
        o->cold = i == 1 ? COLD_DROP : COLD_FADVISE;
        return 0;
    case OPT_SETTLE: o->settle = 1; return 0;
    case OPT_REWRITE: o->rewrite = 1; return 0;
    case OPT_REMOVE: o->remove = 1; return 0;
    case OPT_READERS: return cli_int(c, 0, INT32_MAX, &o->readers);
    case OPT_WRITE_SIZE: return cli_size(c, 0, UINT64_MAX, &o->write_size);
    case OPT_STRIPE_SIZE: return cli_size(c, 0, UINT64_MAX, &o->stripe_size);
    case OPT_WRITER_BUFFER: return cli_size(c, 0, UINT64_MAX, &o->writer_buffer);
    case OPT_LAYOUT:
        o->layout = c->arg;
        return cli_choice(c, layouts, 3, &i);
    case OPT_TARGETS: return cli_int(c, 0, INT32_MAX, &o->targets);
    case OPT_HINTS: o->hints = c->arg; return 0;
    case OPT_CSV: o->csv = c->arg; return 0;
    case OPT_SUMMARY: o->summary = c->arg; return 0;
    default: return CLI_BAD; /* cli_next printed why */
    }
}

int main(int argc, char **argv)
{
    int provided, rank, nranks;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    struct opts o = {.size = (uint64_t)256 << 20, .path = "fwdio-restart.ckpt", .pieces = 1,
                     .record = 48, .header = 128, .seed = 1, .reps = 3, .warmup = 1,
                     .methods = {M_FWDIO, M_MPIIO, M_PREAD}, .nmethods = 3};
    cli_t cl;
    cli_begin(&cl, "fwdio-restart", argc, argv, restart_options, rank != 0);
    int parsed = cli_parse(&cl, parse_option, &o, usage, 0);
    if (parsed != 0) {
        MPI_Finalize();
        return cli_status(parsed);
    }
    if (provided < MPI_THREAD_MULTIPLE) {
        if (rank == 0)
            fprintf(stderr, "fwdio-restart: MPI_THREAD_MULTIPLE not provided\n");
        MPI_Finalize();
        return 1;
    }
    struct ctx c = {.o = &o, .rank = rank, .nranks = nranks, .view = MPI_DATATYPE_NULL};
    const char *io = getenv("OMPI_MCA_io");
    c.io = io && *io ? io : "default";
    /* the shim, when LD_PRELOADed: count the checkpoint's basename */
    c.iocount = (fwdio_iocount_get_fn)dlsym(RTLD_DEFAULT, FWDIO_IOCOUNT_GET);
    fwdio_iocount_set_path_fn set_path =
        (fwdio_iocount_set_path_fn)dlsym(RTLD_DEFAULT, FWDIO_IOCOUNT_SET_PATH);
    const char *base = strrchr(o.path, '/');
    base = base ? base + 1 : o.path;
    if (set_path)
        set_path(base);

    int failed = pattern_self_test(o.seed) != 0;
    if (failed && rank == 0)
        fprintf(stderr, "fwdio-restart: the word-wise pattern differs from pattern_byte\n");
    if (!failed)
        failed = make_layout(&c) != 0;
    MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (!failed) {
        c.buf = malloc(c.nbytes ? c.nbytes : 1);
        failed = !c.buf || make_view(&c) != 0;
        MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    }
    if (!failed)
        failed = prepare_file(&c) != 0;
    if (failed) {
        if (rank == 0)
            fprintf(stderr, "fwdio-restart: set-up failed\n");
        MPI_Finalize();
        return 1;
    }
    find_pfs_stats(&c);
    if (rank == 0) {
        printf("# fwdio-restart: %d ranks, checkpoint %s (%s), %" PRIu64 " bytes = %" PRIu64
               " header + records of %" PRIu64 " bytes, %d run(s) per rank, at most %d piece(s) "
               "and %.1f MiB per rank\n",
               nranks, o.path, c.fs_type, o.size, o.header, o.record, o.pieces, c.max_npieces,
               mib(c.max_nbytes));
        printf("# io component %s; read-call counting %s; emulator counters %s; cold %s; "
               "settle %s; load average %.2f; fwdio %s\n",
               c.io, c.iocount ? "libfwdio-iocount.so" : "n/a (no shim)",
               c.pfs_stats[0] ? c.pfs_stats : "n/a",
               cold_names[o.cold],
               o.settle ? "on" : "off", load_average(), fwdio_version());
        printf("# rank 0 pieces:");
        for (int i = 0; i < c.npieces && i < 8; i++)
            printf(" [%" PRIu64 ", +%" PRIu64 ")", c.pieces[i].off, c.pieces[i].len);
        printf("%s\n", c.npieces > 8 ? " ..." : "");
        fflush(stdout);
    }

    int nres = (o.warmup + o.reps) * o.nmethods;
    struct result *rs = calloc((size_t)nres, sizeof *rs);
    FILE *csv = NULL;
    if (rank == 0 && o.csv) {
        csv = fopen(o.csv, "w");
        if (!csv)
            fprintf(stderr, "fwdio-restart: cannot write %s: %s\n", o.csv, strerror(errno));
        else
            csv_header(csv);
    }
    int bad_runs = 0, n = 0;
    for (int rep = -o.warmup; rs && rep < o.reps; rep++) {
        int rot = rep < 0 ? 0 : rep;
        for (int k = 0; k < o.nmethods; k++) {
            enum method m = (enum method)o.methods[(k + rot) % o.nmethods];
            struct result *r = &rs[n];
            run_one(&c, m, rep < 0 ? -1 : rep, k, r);
            bad_runs += r->status != 0 || !r->verified;
            if (rank == 0) {
                print_run(&c, r);
                if (csv)
                    csv_row(csv, &c, n, r);
            }
            n++;
        }
    }
    if (rank == 0 && rs) {
        FILE *sum = NULL;
        if (o.summary && !(sum = fopen(o.summary, "w")))
            fprintf(stderr, "fwdio-restart: cannot write %s: %s\n", o.summary, strerror(errno));
        print_summary(&c, rs, n, sum);
        if (sum)
            fclose(sum);
    }
    if (csv)
        fclose(csv);
    if (o.remove && rank == 0)
        unlink(o.path);
    if (c.view != MPI_DATATYPE_NULL)
        MPI_Type_free(&c.view);
    free(rs);
    free(c.buf);
    free(c.pieces);
    MPI_Allreduce(MPI_IN_PLACE, &bad_runs, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    MPI_Finalize();
    return bad_runs || !rs ? 1 : 0;
}
