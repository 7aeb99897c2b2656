/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_mpiio: the MPI-IO layer (libfwdio-mpiio, mpiio/) seen from an
 * ordinary MPI-IO program.
 *
 * Each scenario (--case NAME, or --all for every ordinary one in sequence)
 * creates its own files under --dir, makes MPI-IO calls on them, closes them
 * and then checks every byte of the result with plain POSIX reads on rank 0
 * against a model that every rank builds of what every rank wrote (the bytes
 * are pattern_byte(seed, offset) of apps/common/pattern.h, a different seed
 * for each generation of writes; holes are zeros), and the file's size.
 *
 * The program is built twice (tests/mpiio/CMakeLists.txt): linked with the
 * layer (MPIIO_TEST_LAYER=1), where it also asserts with MPI_File_get_info
 * that the files the layer should take were taken ("fwdio_mpiio" = "taken"),
 * handed back ("released: ...") or left alone (no key); and without it
 * (MPIIO_TEST_LAYER=0), where only the bytes are checked. --layer yes|no
 * overrides the built-in choice (for the plain program run with the layer
 * preloaded). Files meant for the layer end in ".mpiio" or ".fwd" (the tests
 * set FWDIO_MPIIO=*.mpiio,*.fwd); the others in ".plain".
 *
 * Failures are printed with the case, rank, offset and expected and actual
 * byte; the exit status is non-zero if any rank failed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <mpi.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "pattern.h"

#ifndef MPIIO_TEST_LAYER
#define MPIIO_TEST_LAYER 0
#endif

/* ------------------------------------------------------------------------- */
/* Globals, failures, the watchdog                                            */
/* ------------------------------------------------------------------------- */

static int g_rank, g_size;

/** memset, called so that the compiler cannot drop a store before free(). */
static void *(*volatile const scribble)(void *, int, size_t) = memset;
static int g_layer = MPIIO_TEST_LAYER; /* assert the layer's get_info states */
static const char *g_case = "setup";
static char g_dir[4096] = ".";
static uint64_t g_seed = 1;
static int g_failures;        /* on this rank, all cases */
static int g_case_failures;   /* on this rank, the current case */
static int g_keep_files;      /* --keep: do not remove the files of passed cases */

#define MAX_FAIL_LINES 40
static int g_fail_lines;

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void fail(const char *fmt, ...)
{
    g_failures++;
    g_case_failures++;
    if (g_fail_lines++ >= MAX_FAIL_LINES) {
        if (g_fail_lines == MAX_FAIL_LINES + 1)
            fprintf(stderr, "test_mpiio: rank %d: further failures not printed\n", g_rank);
        return;
    }
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "FAIL test_mpiio case %s rank %d: %s\n", g_case, g_rank, msg);
    fflush(stderr);
}

static void note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void note(const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stdout, "test_mpiio case %s rank %d: %s\n", g_case, g_rank, msg);
    fflush(stdout);
}

static void on_alarm(int sig)
{
    (void)sig;
    char msg[256];
    int n = snprintf(msg, sizeof msg,
                     "FAIL test_mpiio rank %d: timed out (watchdog) in case %s\n", g_rank,
                     g_case);
    if (n > 0)
        (void)!write(2, msg, (size_t)n);
    _exit(124);
}

static const char *err_text(int code)
{
    static char buf[MPI_MAX_ERROR_STRING + 64];
    char s[MPI_MAX_ERROR_STRING];
    int len = 0, cls = -1;
    s[0] = 0;
    MPI_Error_string(code, s, &len);
    MPI_Error_class(code, &cls);
    snprintf(buf, sizeof buf, "code %d class %d \"%s\"", code, cls, s);
    return buf;
}

/* Check an MPI return code; 1 if it is MPI_SUCCESS. */
static int mpi_ok(int rc, const char *what, int line)
{
    if (rc == MPI_SUCCESS)
        return 1;
    fail("%s failed: %s [line %d]", what, err_text(rc), line);
    return 0;
}
#define OK(call) mpi_ok((call), #call, __LINE__)

#define CHECK(cond, ...)                                                                   \
    do {                                                                                   \
        if (!(cond))                                                                       \
            fail(__VA_ARGS__);                                                             \
    } while (0)

/* ------------------------------------------------------------------------- */
/* Random numbers (the same sequence on every rank for the same seed)         */
/* ------------------------------------------------------------------------- */

typedef struct {
    uint64_t s;
} rng_t;

static uint64_t rng_next(rng_t *r)
{
    uint64_t z = (r->s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static uint64_t rng_below(rng_t *r, uint64_t n) { return n ? rng_next(r) % n : 0; }

/* A seed for one generation of bytes of the current case. */
static uint64_t seed_of(int generation)
{
    uint64_t h = g_seed * 1000003u;
    for (const char *p = g_case; *p; p++)
        h = h * 131u + (unsigned char)*p;
    return h * 31u + (uint64_t)generation + 1u;
}

/* ------------------------------------------------------------------------- */
/* The model of a file                                                        */
/* ------------------------------------------------------------------------- */

/*
 * The expected bytes of a file, and which of them were ever defined (written,
 * or there before the test opened the file). The others are holes: MPI-IO
 * itself does not promise what a hole reads as (its collective writes may
 * fill a hole between pieces with whatever its buffer held, and set_size
 * calls the bytes it adds undefined), so holes are checked as zeros only
 * where holes_zero is set: files written through the layer, which writes
 * just the bytes it is given (fwdio: "bytes nobody writes stay holes").
 */
typedef struct {
    uint8_t *b;
    uint8_t *def; /* 1: a defined byte, 0: a hole */
    int64_t size;
    int64_t cap;
    int holes_zero;
} model_t;

static void model_reserve(model_t *m, int64_t n)
{
    if (n <= m->cap)
        return;
    int64_t cap = m->cap ? m->cap : 4096;
    while (cap < n)
        cap *= 2;
    m->b = realloc(m->b, (size_t)cap);
    m->def = realloc(m->def, (size_t)cap);
    if (!m->b || !m->def) {
        fprintf(stderr, "test_mpiio: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    memset(m->b + m->cap, 0, (size_t)(cap - m->cap));
    memset(m->def + m->cap, 0, (size_t)(cap - m->cap));
    m->cap = cap;
}

/* Set the file size: truncate, or extend with holes. */
static void model_set_size(model_t *m, int64_t size)
{
    model_reserve(m, size);
    if (size < m->size) {
        memset(m->b + size, 0, (size_t)(m->size - size));
        memset(m->def + size, 0, (size_t)(m->size - size));
    }
    m->size = size;
}

static void model_byte(model_t *m, int64_t off, uint8_t v)
{
    if (off + 1 > m->size)
        model_set_size(m, off + 1);
    m->b[off] = v;
    m->def[off] = 1;
}

/* Bytes [off, off + len) written with the pattern of `seed`. */
static void model_put(model_t *m, int64_t off, int64_t len, uint64_t seed)
{
    if (len <= 0)
        return;
    if (off + len > m->size)
        model_set_size(m, off + len);
    for (int64_t i = 0; i < len; i++) {
        m->b[off + i] = pattern_byte(seed, (uint64_t)(off + i));
        m->def[off + i] = 1;
    }
}

/* Bytes [old size, size) added by set_size or preallocate: MPI calls their
   values undefined, so they are never compared (def 2), layer or not. */
static void model_grow_undefined(model_t *m, int64_t size)
{
    int64_t old = m->size;
    model_set_size(m, size);
    for (int64_t i = old; i < size; i++)
        m->def[i] = 2;
}

/* Is the byte at `off` to be compared? */
static int model_checked(const model_t *m, int64_t off)
{
    return off >= m->size || m->def[off] == 1 || (m->def[off] == 0 && m->holes_zero);
}

static void model_free(model_t *m)
{
    free(m->b);
    free(m->def);
    memset(m, 0, sizeof *m);
}

/* Pattern bytes of file range [off, off + len) in a new buffer. */
static uint8_t *pattern_buf(int64_t off, int64_t len, uint64_t seed)
{
    uint8_t *b = malloc(len > 0 ? (size_t)len : 1);
    for (int64_t i = 0; i < len; i++)
        b[i] = pattern_byte(seed, (uint64_t)(off + i));
    return b;
}

/* ------------------------------------------------------------------------- */
/* Paths, files, checks                                                       */
/* ------------------------------------------------------------------------- */

static void path_of(char *out, size_t n, const char *name)
{
    snprintf(out, n, "%s/%s", g_dir, name);
}

/* Rank 0 removes the file (if any); every rank waits. */
static void remove_file(const char *name)
{
    char p[4200];
    path_of(p, sizeof p, name);
    if (g_rank == 0)
        unlink(p);
    MPI_Barrier(MPI_COMM_WORLD);
}

/* Rank 0 writes the model's bytes to a fresh file with POSIX calls; every rank waits. */
static void posix_create(const char *name, const model_t *m)
{
    char p[4200];
    path_of(p, sizeof p, name);
    if (g_rank == 0) {
        unlink(p);
        int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd < 0) {
            fail("cannot create %s: %s", p, strerror(errno));
        } else {
            int64_t done = 0;
            while (done < m->size) {
                ssize_t w = pwrite(fd, m->b + done, (size_t)(m->size - done), done);
                if (w <= 0) {
                    fail("pwrite %s: %s", p, strerror(errno));
                    break;
                }
                done += w;
            }
            close(fd);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

/* Compare the bytes of `path` with the model on this rank (no barrier). */
static void check_path_local(const char *path, const model_t *m)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0) {
        fail("cannot open %s for checking: %s", path, strerror(errno));
        return;
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        fail("fstat %s: %s", path, strerror(errno));
        close(fd);
        return;
    }
    if ((int64_t)st.st_size != m->size)
        fail("%s: size %lld, expected %lld", path, (long long)st.st_size, (long long)m->size);
    int64_t n = (int64_t)st.st_size < m->size ? (int64_t)st.st_size : m->size;
    uint8_t *got = malloc(n > 0 ? (size_t)n : 1);
    int64_t done = 0;
    while (done < n) {
        ssize_t r = pread(fd, got + done, (size_t)(n - done), done);
        if (r <= 0) {
            fail("pread %s at %lld: %s", path, (long long)done, r < 0 ? strerror(errno) : "EOF");
            break;
        }
        done += r;
    }
    close(fd);
    int64_t bad = 0;
    for (int64_t i = 0; i < done; i++) {
        if (got[i] != m->b[i] && model_checked(m, i)) {
            if (bad < 8)
                fail("%s: offset %lld: expected byte 0x%02x, got 0x%02x", path, (long long)i,
                     m->b[i], got[i]);
            bad++;
        }
    }
    if (bad > 8)
        fail("%s: %lld bytes differ in all", path, (long long)bad);
    free(got);
}

/* FWDIO_MPIIO_CLOSE=async: a closed file is complete only once the next
   MPI_File_open (or delete) of its path returned (or MPI_Finalize). */
static int g_async_close;

/* After every rank closed the file: rank 0 checks it against the model. */
static void check_file(const char *name, const model_t *m)
{
    char p[4200];
    path_of(p, sizeof p, name);
    if (g_async_close) {
        MPI_File fh = MPI_FILE_NULL;
        if (OK(MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh)))
            OK(MPI_File_close(&fh));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (g_rank == 0)
        check_path_local(p, m);
    MPI_Barrier(MPI_COMM_WORLD);
}

static int file_exists(const char *name)
{
    char p[4200];
    struct stat st;
    path_of(p, sizeof p, name);
    return stat(p, &st) == 0;
}

/* The files opened in the current case (removed when it passes). */
enum { MAX_TRACK = 32 };
static char g_track[MAX_TRACK][4200];
static int g_ntrack;

static void track(const char *path)
{
    for (int i = 0; i < g_ntrack; i++)
        if (strcmp(g_track[i], path) == 0)
            return;
    if (g_ntrack < MAX_TRACK)
        snprintf(g_track[g_ntrack++], sizeof g_track[0], "%s", path);
}

/* Collective over comm. Returns MPI_FILE_NULL after a failure (reported). */
static MPI_File open_comm(MPI_Comm comm, const char *name, int amode)
{
    char p[4200];
    path_of(p, sizeof p, name);
    MPI_File fh = MPI_FILE_NULL;
    int rc = MPI_File_open(comm, p, amode, MPI_INFO_NULL, &fh);
    if (rc != MPI_SUCCESS) {
        fail("MPI_File_open(%s, amode 0x%x): %s", p, amode, err_text(rc));
        return MPI_FILE_NULL;
    }
    track(p);
    MPI_File_set_errhandler(fh, MPI_ERRORS_RETURN);
    return fh;
}

static MPI_File open_file(const char *name, int amode)
{
    return open_comm(MPI_COMM_WORLD, name, amode);
}

static void close_file(MPI_File *fh)
{
    if (*fh == MPI_FILE_NULL)
        return;
    OK(MPI_File_close(fh));
}

enum { ST_ABSENT, ST_TAKEN, ST_RELEASED };
static const char *const st_names[] = {"absent (not taken)", "\"taken\"", "\"released: ...\""};

/* With the layer: the file's "fwdio_mpiio" info key says `want`. */
static void expect_state(MPI_File fh, const char *what, int want)
{
    if (!g_layer || fh == MPI_FILE_NULL)
        return;
    MPI_Info info = MPI_INFO_NULL;
    if (!OK(MPI_File_get_info(fh, &info)))
        return;
    char val[MPI_MAX_INFO_VAL + 1];
    int flag = 0;
    val[0] = 0;
    MPI_Info_get(info, "fwdio_mpiio", MPI_MAX_INFO_VAL, val, &flag);
    MPI_Info_free(&info);
    int got;
    if (!flag)
        got = ST_ABSENT;
    else if (strcmp(val, "taken") == 0)
        got = ST_TAKEN;
    else if (strncmp(val, "released: ", 10) == 0 && val[10] != 0)
        got = ST_RELEASED;
    else {
        fail("%s: info fwdio_mpiio = \"%s\", neither \"taken\" nor \"released: <reason>\"",
             what, val);
        return;
    }
    if (got != want)
        fail("%s: info fwdio_mpiio is %s%s%s%s, expected %s", what, st_names[got],
             flag ? " (\"" : "", flag ? val : "", flag ? "\")" : "", st_names[want]);
}

/* Compare a buffer read back through MPI with the model's bytes. */
static void check_buf(const char *what, const uint8_t *got, const model_t *m, int64_t off,
                      int64_t len)
{
    int64_t bad = 0;
    for (int64_t i = 0; i < len; i++) {
        uint8_t want = off + i < m->size ? m->b[off + i] : 0;
        if (got[i] != want && model_checked(m, off + i)) {
            if (bad < 4)
                fail("%s: file offset %lld: expected byte 0x%02x, read 0x%02x", what,
                     (long long)(off + i), want, got[i]);
            bad++;
        }
    }
    if (bad > 4)
        fail("%s: %lld bytes differ in all", what, (long long)bad);
}

static void check_count(const char *what, MPI_Status *st, MPI_Datatype t, int want)
{
    if (want == 0 && !g_layer)
        return; /* ROMIO leaves the status of an empty access as it was */
    int n = -1;
    MPI_Get_count(st, t, &n);
    CHECK(n == want, "%s: MPI_Get_count %d, expected %d", what, n, want);
}

static void check_size(MPI_File fh, const char *what, int64_t want)
{
    MPI_Offset sz = -1;
    if (OK(MPI_File_get_size(fh, &sz)))
        CHECK(sz == want, "%s: MPI_File_get_size %lld, expected %lld", what, (long long)sz,
              (long long)want);
}

static void check_position(MPI_File fh, const char *what, int64_t want)
{
    MPI_Offset pos = -1;
    if (OK(MPI_File_get_position(fh, &pos)))
        CHECK(pos == want, "%s: MPI_File_get_position %lld, expected %lld", what,
              (long long)pos, (long long)want);
}

static void sync_barrier_sync(MPI_File fh)
{
    OK(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    OK(MPI_File_sync(fh));
}

/*
 * Without the layer only MPI-IO's own rules hold: other ranks' writes are
 * visible after sync-barrier-sync, not after a collective call; and Open MPI
 * 4.1's OMPIO breaks even a single handle's sequential consistency: its
 * aggregators write a collective call's bytes (and the holes between them)
 * after the other ranks have returned, over those ranks' next independent
 * writes. So the plain program settles the file where the layer promises
 * more (a no-op with the layer).
 */
static void plain_settle(MPI_File fh)
{
    if (!g_layer)
        sync_barrier_sync(fh);
}

/* ------------------------------------------------------------------------- */
/* Flattened views: the byte blocks of one tile of a file or memory type,     */
/* written down by hand from the same parameters the MPI type is made of.     */
/* ------------------------------------------------------------------------- */

typedef struct {
    int n, cap;
    int64_t *off, *len; /* bytes, from the tile's start, in typemap order */
    int64_t extent;     /* tile extent in bytes */
    int64_t bytes;      /* data bytes per tile */
} flat_t;

static void flat_add(flat_t *f, int64_t off, int64_t len)
{
    if (len <= 0)
        return;
    if (f->n == f->cap) {
        f->cap = f->cap ? 2 * f->cap : 16;
        f->off = realloc(f->off, (size_t)f->cap * sizeof *f->off);
        f->len = realloc(f->len, (size_t)f->cap * sizeof *f->len);
    }
    f->off[f->n] = off;
    f->len[f->n] = len;
    f->n++;
    f->bytes += len;
}

static void flat_free(flat_t *f)
{
    free(f->off);
    free(f->len);
    memset(f, 0, sizeof *f);
}

/* Offset (from the view's displacement) of data byte k. */
static int64_t flat_map(const flat_t *f, int64_t k)
{
    int64_t t = k / f->bytes, r = k % f->bytes;
    for (int i = 0; i < f->n; i++) {
        if (r < f->len[i])
            return t * f->extent + f->off[i] + r;
        r -= f->len[i];
    }
    return -1; /* not reached */
}

/* The model after `nbytes` data bytes written from data byte k0 of a view. */
static void model_view_put(model_t *m, int64_t disp, const flat_t *ff, int64_t k0,
                           int64_t nbytes, uint64_t seed)
{
    for (int64_t j = 0; j < nbytes; j++) {
        int64_t o = disp + flat_map(ff, k0 + j);
        model_byte(m, o, pattern_byte(seed, (uint64_t)o));
    }
}

/*
 * A memory buffer that holds, in the layout `mf` (NULL: contiguous), the
 * bytes to write at data bytes [k0, k0 + nbytes) of the view (disp, ff).
 * Bytes of the buffer outside the layout are 0xEE.
 */
static uint8_t *view_mem(int64_t disp, const flat_t *ff, int64_t k0, int64_t nbytes,
                         const flat_t *mf, uint64_t seed, int64_t *memsize)
{
    int64_t size = nbytes;
    if (mf && nbytes > 0)
        size = flat_map(mf, nbytes - 1) + 1;
    uint8_t *mem = malloc(size > 0 ? (size_t)size : 1);
    memset(mem, 0xEE, size > 0 ? (size_t)size : 1);
    for (int64_t j = 0; j < nbytes; j++) {
        int64_t o = disp + flat_map(ff, k0 + j);
        mem[mf ? flat_map(mf, j) : j] = pattern_byte(seed, (uint64_t)o);
    }
    if (memsize)
        *memsize = size;
    return mem;
}

static void check_byte_offset(MPI_File fh, const char *what, int64_t pos, int64_t esize,
                              int64_t disp, const flat_t *ff)
{
    MPI_Offset b = -1;
    if (!OK(MPI_File_get_byte_offset(fh, pos, &b)))
        return;
    int64_t want = disp + flat_map(ff, pos * esize);
    CHECK(b == want, "%s: MPI_File_get_byte_offset(%lld) = %lld, expected %lld", what,
          (long long)pos, (long long)b, (long long)want);
}

/* ------------------------------------------------------------------------- */
/* Case: contiguous write_at_all, random per-rank sizes, empty pieces, holes  */
/* ------------------------------------------------------------------------- */

static void case_contig(void)
{
    const char *name = "contig.mpiio";
    remove_file(name);
    MPI_File fh = open_file(name, MPI_MODE_WRONLY | MPI_MODE_CREATE);
    expect_state(fh, "after open", ST_TAKEN);
    model_t m = {.holes_zero = g_layer};
    rng_t rng = {seed_of(99)};
    int64_t base = 0;
    int64_t *off = calloc((size_t)g_size, sizeof *off), *len = calloc((size_t)g_size, sizeof *len);
    int *perm = calloc((size_t)g_size, sizeof *perm);
    int64_t own_off[6] = {0}, own_len[6] = {0};
    for (int round = 0; round < 6; round++) {
        /* round 2: nobody writes; round 3: in MPI_INTs; round 5: each rank
           overwrites the first half of its own piece of round 0 */
        for (int r = 0; r < g_size; r++) {
            len[r] = rng_below(&rng, 5) == 0 ? 0 : (int64_t)rng_below(&rng, 150000 / g_size + 2000);
            if (round == 2)
                len[r] = 0;
            if (round == 3)
                len[r] &= ~(int64_t)3;
            perm[r] = r;
        }
        for (int r = g_size - 1; r > 0; r--) {
            int j = (int)rng_below(&rng, (uint64_t)r + 1), t = perm[r];
            perm[r] = perm[j];
            perm[j] = t;
        }
        for (int i = 0; i < g_size; i++) {
            int r = perm[i];
            base += rng_below(&rng, 3) == 0 ? 0 : (int64_t)rng_below(&rng, 5000);
            off[r] = base;
            base += len[r];
        }
        uint64_t seed = seed_of(round);
        for (int r = 0; r < g_size; r++) {
            int64_t o = off[r], l = len[r];
            if (round == 5) {
                o = 0;
                l = 0;
            }
            model_put(&m, o, l, seed);
        }
        if (round == 0) {
            own_off[0] = off[g_rank];
            own_len[0] = len[g_rank];
        }
        int64_t myoff = off[g_rank], mylen = len[g_rank];
        MPI_Datatype t = MPI_BYTE;
        int count = (int)mylen;
        if (round == 3) {
            t = MPI_INT;
            count = (int)(mylen / 4);
        }
        if (round == 5) {
            myoff = own_off[0];
            mylen = own_len[0] / 2;
            count = (int)mylen;
        }
        uint8_t *buf = pattern_buf(myoff, mylen, seed);
        if (getenv("MPIIO_TEST_TRACE"))
            note("round %d: write_at_all [%lld, %lld)", round, (long long)myoff,
                 (long long)(myoff + mylen));
        MPI_Status st;
        char what[64];
        snprintf(what, sizeof what, "write_at_all round %d", round);
        if (OK(MPI_File_write_at_all(fh, myoff, buf, count, t, &st)))
            check_count(what, &st, t, count);
        memset(buf, 0xAB, mylen > 0 ? (size_t)mylen : 1); /* reusable at once */
        free(buf);
        if (round == 5) {
            /* the model: every rank's half of its round-0 piece */
            int64_t all[2] = {own_off[0], own_len[0]};
            int64_t *gathered = malloc((size_t)g_size * 2 * sizeof *gathered);
            MPI_Allgather(all, 2, MPI_INT64_T, gathered, 2, MPI_INT64_T, MPI_COMM_WORLD);
            for (int r = 0; r < g_size; r++)
                model_put(&m, gathered[2 * r], gathered[2 * r + 1] / 2, seed);
            free(gathered);
        }
    }
    expect_state(fh, "before close", ST_TAKEN);
    close_file(&fh);
    check_file(name, &m);
    free(off);
    free(len);
    free(perm);
    model_free(&m);
}

/* ------------------------------------------------------------------------- */
/* Case: independent write_at + sync/barrier/sync, read_at_all and read_at    */
/* ------------------------------------------------------------------------- */

static void case_independent(void)
{
    const char *name = "independent.mpiio";
    remove_file(name);
    const int K = 5;
    const int64_t B = 1237;
    const int64_t total = K * g_size * B;
    MPI_File fh = open_file(name, MPI_MODE_RDWR | MPI_MODE_CREATE);
    expect_state(fh, "after open", ST_TAKEN);
    model_t m = {.holes_zero = g_layer};
    uint64_t s1 = seed_of(1), s2 = seed_of(2), s3 = seed_of(3);
    for (int k = 0; k < K; k++)
        for (int r = 0; r < g_size; r++)
            model_put(&m, (k * g_size + r) * B, B, s1);
    for (int k = K - 1; k >= 0; k--) { /* backwards, for a change */
        int64_t o = (k * g_size + g_rank) * B;
        uint8_t *buf = pattern_buf(o, B, s1);
        MPI_Status st;
        if (OK(MPI_File_write_at(fh, o, buf, (int)B, MPI_BYTE, &st)))
            check_count("write_at", &st, MPI_BYTE, (int)B);
        free(buf);
    }
    sync_barrier_sync(fh);
    check_size(fh, "after sync/barrier/sync", total);

    uint8_t *all = malloc((size_t)total);
    MPI_Status st;
    memset(all, 0xEE, (size_t)total);
    if (OK(MPI_File_read_at_all(fh, 0, all, (int)total, MPI_BYTE, &st))) {
        check_count("read_at_all", &st, MPI_BYTE, (int)total);
        check_buf("read_at_all of the whole file", all, &m, 0, total);
    }
    uint8_t *one = malloc((size_t)B);
    int next = (g_rank + 1) % g_size, prev = (g_rank + g_size - 1) % g_size;
    for (int k = 0; k < K; k++) {
        int64_t o = (k * g_size + next) * B;
        memset(one, 0xEE, (size_t)B);
        if (OK(MPI_File_read_at(fh, o, one, (int)B, MPI_BYTE, &st)))
            check_buf("read_at of the next rank's chunk", one, &m, o, B);
        o = (k * g_size + g_rank) * B;
        memset(one, 0xEE, (size_t)B);
        if (OK(MPI_File_read_at(fh, o, one, (int)B, MPI_BYTE, &st)))
            check_buf("read_at of its own synced chunk", one, &m, o, B);
    }

    /* a second generation of chunk 0, synced, read by the previous rank */
    MPI_Barrier(MPI_COMM_WORLD); /* every rank has read the first generation */
    {
        int64_t o = g_rank * B;
        uint8_t *buf = pattern_buf(o, B, s2);
        OK(MPI_File_write_at(fh, o, buf, (int)B, MPI_BYTE, &st));
        free(buf);
        for (int r = 0; r < g_size; r++)
            model_put(&m, r * B, B, s2);
        sync_barrier_sync(fh);
        o = prev * B;
        memset(one, 0xEE, (size_t)B);
        if (OK(MPI_File_read_at(fh, o, one, (int)B, MPI_BYTE, &st)))
            check_buf("read_at of the previous rank's rewritten chunk", one, &m, o, B);
    }
    MPI_Barrier(MPI_COMM_WORLD); /* every rank has read the second generation */
    /* a third generation of chunk 1, not synced: a collective read sees it */
    {
        int64_t o = (g_size + g_rank) * B;
        uint8_t *buf = pattern_buf(o, B, s3);
        OK(MPI_File_write_at(fh, o, buf, (int)B, MPI_BYTE, &st));
        free(buf);
        for (int r = 0; r < g_size; r++)
            model_put(&m, (g_size + r) * B, B, s3);
        plain_settle(fh);
        memset(all, 0xEE, (size_t)total);
        if (OK(MPI_File_read_at_all(fh, 0, all, (int)total, MPI_BYTE, &st)))
            check_buf("read_at_all after unsynced writes", all, &m, 0, total);
        /* read_all through the individual pointer */
        OK(MPI_File_seek(fh, 0, MPI_SEEK_SET));
        memset(all, 0xEE, (size_t)total);
        if (OK(MPI_File_read_all(fh, all, (int)total, MPI_BYTE, &st))) {
            check_count("read_all", &st, MPI_BYTE, (int)total);
            check_buf("read_all", all, &m, 0, total);
        }
        check_position(fh, "after read_all", total);
        /* after that collective, independent reads see every rank's writes */
        int64_t on = (g_size + next) * B;
        memset(one, 0xEE, (size_t)B);
        if (OK(MPI_File_read_at(fh, on, one, (int)B, MPI_BYTE, &st)))
            check_buf("read_at after a collective read", one, &m, on, B);
    }
    expect_state(fh, "before close", ST_TAKEN);
    close_file(&fh);
    check_file(name, &m);
    free(all);
    free(one);
    model_free(&m);
}

/* ------------------------------------------------------------------------- */
/* Case: individual file pointers with an MPI_INT etype                       */
/* ------------------------------------------------------------------------- */

enum { BI = 7 }; /* ints per rank per tile of the cyclic view */

/* Rank rr's cyclic view: BI ints at rr*BI in tiles of P*BI ints. */
static void cyclic_view(int rr, flat_t *f, MPI_Datatype *t)
{
    memset(f, 0, sizeof *f);
    flat_add(f, (int64_t)rr * BI * 4, BI * 4);
    f->extent = (int64_t)g_size * BI * 4;
    if (t) {
        MPI_Datatype idx;
        int bl = BI, dis = rr * BI;
        MPI_Type_indexed(1, &bl, &dis, MPI_INT, &idx);
        MPI_Type_create_resized(idx, 0, f->extent, t);
        MPI_Type_commit(t);
        MPI_Type_free(&idx);
    }
}

/* Write `n` ints at the current pointer (pos) of the cyclic view; model for every rank. */
static void ptr_write(MPI_File fh, model_t *m, int64_t disp, int64_t pos, int n, uint64_t seed,
                      int collective, const char *what)
{
    flat_t ff;
    for (int r = 0; r < g_size; r++) {
        cyclic_view(r, &ff, NULL);
        model_view_put(m, disp, &ff, pos * 4, (int64_t)n * 4, seed);
        flat_free(&ff);
    }
    cyclic_view(g_rank, &ff, NULL);
    uint8_t *mem = view_mem(disp, &ff, pos * 4, (int64_t)n * 4, NULL, seed, NULL);
    MPI_Status st;
    int rc = collective ? MPI_File_write_all(fh, mem, n, MPI_INT, &st)
                        : MPI_File_write(fh, mem, n, MPI_INT, &st);
    if (mpi_ok(rc, what, __LINE__))
        check_count(what, &st, MPI_INT, n);
    /* The call has returned: the buffer is the application's again. Scribble
     * over it (through a volatile pointer: a memset right before free is a
     * dead store the optimizer removes) so that bytes the layer had not
     * copied would show in the file. */
    scribble(mem, 0xCD, (size_t)n * 4);
    free(mem);
    flat_free(&ff);
    check_position(fh, what, pos + n);
}

static void case_pointers(void)
{
    const char *name = "pointers.mpiio";
    remove_file(name);
    MPI_File fh = open_file(name, MPI_MODE_WRONLY | MPI_MODE_CREATE);
    expect_state(fh, "after open", ST_TAKEN);
    model_t m = {.holes_zero = g_layer};
    const int64_t D = 12;
    const int64_t tilebytes = (int64_t)g_size * BI * 4;
    flat_t ff;
    MPI_Datatype ft;
    cyclic_view(g_rank, &ff, &ft);
    OK(MPI_File_set_view(fh, D, MPI_INT, ft, "native", MPI_INFO_NULL));
    check_position(fh, "after set_view", 0);

    ptr_write(fh, &m, D, 0, 3 * BI, seed_of(1), 1, "write_all of 21 ints");
    plain_settle(fh);
    check_byte_offset(fh, "after write_all", 3 * BI, 4, D, &ff);
    check_byte_offset(fh, "after write_all", 5, 4, D, &ff);
    ptr_write(fh, &m, D, 3 * BI, 10, seed_of(1), 0, "write of 10 ints");
    OK(MPI_File_seek(fh, 5, MPI_SEEK_SET));
    check_position(fh, "after seek SET 5", 5);
    ptr_write(fh, &m, D, 5, 4, seed_of(2), 0, "write of 4 ints at 5");
    OK(MPI_File_seek(fh, 22, MPI_SEEK_CUR));
    check_position(fh, "after seek CUR +22", 31);
    ptr_write(fh, &m, D, 31, 11, seed_of(1), 0, "write of 11 ints at 31");
    /* every rank is at 42 = 6 whole tiles: the file ends at a tile boundary */
    ptr_write(fh, &m, D, 42, 0, seed_of(1), 1, "write_all of 0 ints");
    sync_barrier_sync(fh);
    check_size(fh, "after 6 tiles", D + 6 * tilebytes);
    if (g_layer) {
        OK(MPI_File_seek(fh, 0, MPI_SEEK_END));
        check_position(fh, "after seek END 0", 42);
        OK(MPI_File_seek(fh, -2, MPI_SEEK_END));
        check_position(fh, "after seek END -2", 40);
    } else {
        /* Open MPI 4.1's OMPIO (the default MPI-IO) gets MPI_SEEK_END wrong
           with this view (position 7, not 42: it counts filetype extents,
           not etypes), so without the layer the same place is reached with
           MPI_SEEK_SET. */
        OK(MPI_File_seek(fh, 40, MPI_SEEK_SET));
    }
    MPI_Barrier(MPI_COMM_WORLD); /* every rank has seen the end before any writes past it */
    ptr_write(fh, &m, D, 40, 5, seed_of(3), 0, "write of 5 ints at END-2");
    check_byte_offset(fh, "at the end", 45, 4, D, &ff);
    check_byte_offset(fh, "at the end", 0, 4, D, &ff);
    {
        MPI_Offset b = -1;
        OK(MPI_File_get_byte_offset(fh, 45, &b));
        CHECK(b == D + 6 * tilebytes + (int64_t)g_rank * BI * 4 + 3 * 4,
              "get_byte_offset(45) = %lld", (long long)b);
    }
    /* write_at does not move the pointer */
    {
        flat_t f2;
        for (int r = 0; r < g_size; r++) {
            cyclic_view(r, &f2, NULL);
            model_view_put(&m, D, &f2, 45 * 4, 2 * 4, seed_of(4));
            flat_free(&f2);
        }
        uint8_t *mem = view_mem(D, &ff, 45 * 4, 8, NULL, seed_of(4), NULL);
        MPI_Status st;
        OK(MPI_File_write_at_all(fh, 45, mem, 2, MPI_INT, &st));
        free(mem);
        check_position(fh, "after write_at_all", 45);
    }
    expect_state(fh, "before close", ST_TAKEN);
    close_file(&fh);
    MPI_Type_free(&ft);
    flat_free(&ff);
    check_file(name, &m);
    model_free(&m);
}

/* ------------------------------------------------------------------------- */
/* Case: file views                                                           */
/* ------------------------------------------------------------------------- */

/* A view-building function: rank rr's filetype (t may be NULL: only the flat) and displacement. */
typedef void (*view_fn)(int rr, flat_t *f, MPI_Datatype *t, int64_t *disp);

/* 2-D subarray, uneven block decomposition over MPI_Dims_create's grid. */
enum { G0 = 75, G1 = 53 };
static void subarray_block(int rr, int dims[2], int sub[2], int start[2])
{
    int d[2] = {0, 0};
    MPI_Dims_create(g_size, 2, d);
    int c0 = rr / d[1], c1 = rr % d[1];
    int G[2] = {G0, G1}, c[2] = {c0, c1};
    for (int i = 0; i < 2; i++) {
        int q = G[i] / d[i], rem = G[i] % d[i];
        sub[i] = q + (c[i] < rem);
        start[i] = c[i] * q + (c[i] < rem ? c[i] : rem);
        dims[i] = d[i];
    }
}

static void view_subarray(int rr, flat_t *f, MPI_Datatype *t, int64_t *disp)
{
    int dims[2], sub[2], start[2];
    subarray_block(rr, dims, sub, start);
    memset(f, 0, sizeof *f);
    for (int i = start[0]; i < start[0] + sub[0]; i++)
        flat_add(f, ((int64_t)i * G1 + start[1]) * 8, (int64_t)sub[1] * 8);
    f->extent = (int64_t)G0 * G1 * 8;
    *disp = 100;
    if (t) {
        int sizes[2] = {G0, G1};
        MPI_Type_create_subarray(2, sizes, sub, start, MPI_ORDER_C, MPI_DOUBLE, t);
        MPI_Type_commit(t);
    }
}

static void view_vector(int rr, flat_t *f, MPI_Datatype *t, int64_t *disp)
{
    memset(f, 0, sizeof *f);
    for (int i = 0; i < 4; i++)
        flat_add(f, (int64_t)i * 3 * g_size * 4, 12);
    f->extent = 4 * 3 * (int64_t)g_size * 4;
    *disp = 3 + (int64_t)rr * 12;
    if (t) {
        MPI_Datatype v;
        MPI_Type_vector(4, 3, 3 * g_size, MPI_INT, &v);
        MPI_Type_create_resized(v, 0, f->extent, t);
        MPI_Type_commit(t);
        MPI_Type_free(&v);
    }
}

enum { NSEG = 6 };
static const int seg_len[NSEG] = {5, 0, 17, 1, 300, 64};
static void view_hindexed(int rr, flat_t *f, MPI_Datatype *t, int64_t *disp)
{
    int bl[NSEG];
    MPI_Aint dis[NSEG];
    int64_t s = 0;
    memset(f, 0, sizeof *f);
    for (int k = 0; k < NSEG; k++) {
        bl[k] = seg_len[k];
        dis[k] = s + (int64_t)rr * seg_len[k];
        flat_add(f, dis[k], seg_len[k]);
        s += (int64_t)g_size * seg_len[k] + 3; /* 3-byte holes between segments */
    }
    f->extent = s;
    *disp = 7;
    if (t) {
        MPI_Datatype h;
        MPI_Type_create_hindexed(NSEG, bl, dis, MPI_BYTE, &h);
        MPI_Type_create_resized(h, 0, f->extent, t);
        MPI_Type_commit(t);
        MPI_Type_free(&h);
    }
}

/* A record of 36 bytes per rank: int at 0, two int pairs at 8, int at 28. */
static void view_struct(int rr, flat_t *f, MPI_Datatype *t, int64_t *disp)
{
    memset(f, 0, sizeof *f);
    flat_add(f, 0, 4);
    flat_add(f, 8, 16);
    flat_add(f, 28, 4);
    f->extent = 36 * (int64_t)g_size;
    *disp = 5 + (int64_t)rr * 36;
    if (t) {
        MPI_Datatype pair, s;
        MPI_Type_contiguous(2, MPI_INT, &pair);
        int bl[3] = {1, 2, 1};
        MPI_Aint dis[3] = {0, 8, 28};
        MPI_Datatype types[3] = {MPI_INT, pair, MPI_INT};
        MPI_Type_create_struct(3, bl, dis, types, &s);
        MPI_Type_create_resized(s, 0, f->extent, t);
        MPI_Type_commit(t);
        MPI_Type_free(&s);
        MPI_Type_free(&pair);
    }
}

/* Write `nbytes` of data from data byte k0 (a multiple of the etype size)
   through `call` with the memory layout (mt, mcount, mf); model for every rank.
   nbytes < 0: -nbytes whole tiles of each rank's view (ranks' tiles differ). */
enum { W_AT_ALL, W_AT, W_ALL, W_IND };
static void view_write(MPI_File fh, model_t *m, view_fn vf, int64_t esize, int64_t k0,
                       int64_t nbytes, MPI_Datatype mt, int mcount, const flat_t *mf,
                       uint64_t seed, int call, const char *what)
{
    flat_t ff;
    int64_t disp;
    for (int r = 0; r < g_size; r++) {
        vf(r, &ff, NULL, &disp);
        model_view_put(m, disp, &ff, k0, nbytes < 0 ? -nbytes * ff.bytes : nbytes, seed);
        flat_free(&ff);
    }
    vf(g_rank, &ff, NULL, &disp);
    if (nbytes < 0)
        nbytes = -nbytes * ff.bytes;
    uint8_t *mem = view_mem(disp, &ff, k0, nbytes, mf, seed, NULL);
    MPI_Status st;
    int rc;
    switch (call) {
    case W_AT_ALL: rc = MPI_File_write_at_all(fh, k0 / esize, mem, mcount, mt, &st); break;
    case W_AT: rc = MPI_File_write_at(fh, k0 / esize, mem, mcount, mt, &st); break;
    case W_ALL: rc = MPI_File_write_all(fh, mem, mcount, mt, &st); break;
    default: rc = MPI_File_write(fh, mem, mcount, mt, &st); break;
    }
    if (mpi_ok(rc, what, __LINE__))
        check_count(what, &st, mt, mcount);
    free(mem);
    flat_free(&ff);
}

static void set_view_of(MPI_File fh, view_fn vf, MPI_Datatype etype, flat_t *ff,
                        MPI_Datatype *ft, int64_t *disp)
{
    vf(g_rank, ff, ft, disp);
    OK(MPI_File_set_view(fh, *disp, etype, *ft, "native", MPI_INFO_NULL));
    check_position(fh, "after set_view", 0);
}

static void case_view_subarray(void)
{
    const char *name = "view_subarray.mpiio";
    remove_file(name);
    MPI_File fh = open_file(name, MPI_MODE_WRONLY | MPI_MODE_CREATE);
    expect_state(fh, "after open", ST_TAKEN);
    model_t m = {.holes_zero = g_layer};
    /* a 100-byte header by rank 0, through the default view */
    model_put(&m, 0, 100, seed_of(0));
    if (g_rank == 0) {
        uint8_t *h = pattern_buf(0, 100, seed_of(0));
        OK(MPI_File_write_at(fh, 0, h, 100, MPI_BYTE, MPI_STATUS_IGNORE));
        free(h);
    }
    flat_t ff;
    MPI_Datatype ft;
    int64_t disp;
    set_view_of(fh, view_subarray, MPI_DOUBLE, &ff, &ft, &disp);
    /* memory: the local block inside a ghost layer of 1 (a subarray too) */
    int dims[2], sub[2], start[2];
    subarray_block(g_rank, dims, sub, start);
    int msizes[2] = {sub[0] + 2, sub[1] + 2}, mstart[2] = {1, 1};
    MPI_Datatype mt;
    MPI_Type_create_subarray(2, msizes, sub, mstart, MPI_ORDER_C, MPI_DOUBLE, &mt);
    MPI_Type_commit(&mt);
    flat_t mf = {0};
    for (int i = 0; i < sub[0]; i++)
        flat_add(&mf, ((int64_t)(i + 1) * msizes[1] + 1) * 8, (int64_t)sub[1] * 8);
    mf.extent = (int64_t)msizes[0] * msizes[1] * 8;
    view_write(fh, &m, view_subarray, 8, 0, -1, mt, 1, &mf, seed_of(1), W_ALL,
               "write_all of the block (subarray view, ghost-cell memory)");
    check_position(fh, "after write_all", ff.bytes / 8);
    check_byte_offset(fh, "subarray", 0, 8, disp, &ff);
    check_byte_offset(fh, "subarray", sub[1], 8, disp, &ff); /* the second row */
    MPI_Type_free(&mt);
    flat_free(&mf);
    expect_state(fh, "before close", ST_TAKEN);
    close_file(&fh);
    MPI_Type_free(&ft);
    flat_free(&ff);
    check_file(name, &m);
    model_free(&m);
}

static void case_view_vector(void)
{
    const char *name = "view_vector.mpiio";
    remove_file(name);
    MPI_File fh = open_file(name, MPI_MODE_WRONLY | MPI_MODE_CREATE);
    expect_state(fh, "after open", ST_TAKEN);
    model_t m = {.holes_zero = g_layer};
    flat_t ff;
    MPI_Datatype ft;
    int64_t disp;
    set_view_of(fh, view_vector, MPI_INT, &ff, &ft, &disp);
    /* 19 ints from memory every other int (a vector), at view offset 0 */
    MPI_Datatype mv;
    MPI_Type_vector(19, 1, 2, MPI_INT, &mv);
    MPI_Type_commit(&mv);
    flat_t mf = {0};
    for (int i = 0; i < 19; i++)
        flat_add(&mf, (int64_t)i * 8, 4);
    mf.extent = 19 * 8;
    view_write(fh, &m, view_vector, 4, 0, 19 * 4, mv, 1, &mf, seed_of(1), W_AT_ALL,
               "write_at_all of a memory vector");
    check_position(fh, "write_at_all leaves the pointer", 0);
    MPI_Type_free(&mv);
    flat_free(&mf);
    /* 25 ints from a resized memory int (extent 8), through the pointer from 19 */
    OK(MPI_File_seek(fh, 19, MPI_SEEK_SET));
    MPI_Datatype mr;
    MPI_Type_create_resized(MPI_INT, 0, 8, &mr);
    MPI_Type_commit(&mr);
    flat_t mf2 = {0};
    flat_add(&mf2, 0, 4);
    mf2.extent = 8;
    view_write(fh, &m, view_vector, 4, 19 * 4, 25 * 4, mr, 25, &mf2, seed_of(2), W_ALL,
               "write_all of 25 resized memory ints");
    check_position(fh, "after write_all", 44);
    check_byte_offset(fh, "vector", 44, 4, disp, &ff);
    check_byte_offset(fh, "vector", 13, 4, disp, &ff);
    MPI_Type_free(&mr);
    flat_free(&mf2);
    expect_state(fh, "before close", ST_TAKEN);
    close_file(&fh);
    MPI_Type_free(&ft);
    flat_free(&ff);
    check_file(name, &m);
    model_free(&m);
}

static void case_view_hindexed(void)
{
    const char *name = "view_hindexed.mpiio";
    remove_file(name);
    MPI_File fh = open_file(name, MPI_MODE_WRONLY | MPI_MODE_CREATE);
    expect_state(fh, "after open", ST_TAKEN);
    model_t m = {.holes_zero = g_layer};
    flat_t ff;
    MPI_Datatype ft;
    int64_t disp;
    set_view_of(fh, view_hindexed, MPI_BYTE, &ff, &ft, &disp);
    int64_t n1 = 2 * ff.bytes + 10;
    view_write(fh, &m, view_hindexed, 1, 0, n1, MPI_BYTE, (int)n1, NULL, seed_of(1), W_ALL,
               "write_all (hindexed view)");
    plain_settle(fh);
    check_position(fh, "after write_all", n1);
    view_write(fh, &m, view_hindexed, 1, n1, 50, MPI_BYTE, 50, NULL, seed_of(2), W_IND,
               "write (hindexed view)");
    check_position(fh, "after write", n1 + 50);
    check_byte_offset(fh, "hindexed", n1 + 50, 1, disp, &ff);
    check_byte_offset(fh, "hindexed", 23, 1, disp, &ff);
    expect_state(fh, "before close", ST_TAKEN);
    close_file(&fh);
    MPI_Type_free(&ft);
    flat_free(&ff);
    check_file(name, &m);
    model_free(&m);
}

static void case_view_struct(void)
{
    const char *name = "view_struct.mpiio";
    remove_file(name);
    MPI_File fh = open_file(name, MPI_MODE_WRONLY | MPI_MODE_CREATE);
    expect_state(fh, "after open", ST_TAKEN);
    model_t m = {.holes_zero = g_layer};
    flat_t ff;
    MPI_Datatype ft;
    int64_t disp;
    set_view_of(fh, view_struct, MPI_INT, &ff, &ft, &disp);
    view_write(fh, &m, view_struct, 4, 0, 30 * 4, MPI_INT, 30, NULL, seed_of(1), W_AT_ALL,
               "write_at_all of 30 ints (struct view)");
    plain_settle(fh);
    view_write(fh, &m, view_struct, 4, 33 * 4, 7 * 4, MPI_INT, 7, NULL, seed_of(2), W_AT,
               "write_at of 7 ints at 33 (struct view)");
    check_byte_offset(fh, "struct", 40, 4, disp, &ff);
    check_byte_offset(fh, "struct", 5, 4, disp, &ff);
    expect_state(fh, "before close", ST_TAKEN);
    close_file(&fh);
    MPI_Type_free(&ft);
    flat_free(&ff);
    check_file(name, &m);
    model_free(&m);
}

/* Several views of one file in turn: resized, indexed, indexed_block. */
static int64_t rv_d1(void) { return 16; }
static int64_t rv_d2(void) { return rv_d1() + 200 * (int64_t)g_size + 8; }
static int64_t rv_d3(void) { return rv_d2() + 144 * (int64_t)g_size + 4; }

static void view_resized(int rr, flat_t *f, MPI_Datatype *t, int64_t *disp)
{
    memset(f, 0, sizeof *f);
    flat_add(f, 0, 4);
    f->extent = 4 * (int64_t)g_size;
    *disp = rv_d1() + (int64_t)rr * 4;
    if (t) {
        MPI_Type_create_resized(MPI_INT, 0, f->extent, t);
        MPI_Type_commit(t);
    }
}

static void view_indexed(int rr, flat_t *f, MPI_Datatype *t, int64_t *disp)
{
    int bl[3] = {2, 5, 1}, dis[3] = {0, 3, 10};
    memset(f, 0, sizeof *f);
    for (int i = 0; i < 3; i++)
        flat_add(f, (int64_t)dis[i] * 4, (int64_t)bl[i] * 4);
    f->extent = 48 * (int64_t)g_size;
    *disp = rv_d2() + (int64_t)rr * 48;
    if (t) {
        MPI_Datatype x;
        MPI_Type_indexed(3, bl, dis, MPI_INT, &x);
        MPI_Type_create_resized(x, 0, f->extent, t);
        MPI_Type_commit(t);
        MPI_Type_free(&x);
    }
}

static void view_indexed_block(int rr, flat_t *f, MPI_Datatype *t, int64_t *disp)
{
    int dis[3] = {1, 4, 7};
    memset(f, 0, sizeof *f);
    for (int i = 0; i < 3; i++)
        flat_add(f, (int64_t)dis[i] * 4, 8);
    f->extent = 40 * (int64_t)g_size;
    *disp = rv_d3() + (int64_t)rr * 40;
    if (t) {
        MPI_Datatype x;
        MPI_Type_create_indexed_block(3, 2, dis, MPI_INT, &x);
        MPI_Type_create_resized(x, 0, f->extent, t);
        MPI_Type_commit(t);
        MPI_Type_free(&x);
    }
}

static void case_view_sequence(void)
{
    const char *name = "view_sequence.mpiio";
    remove_file(name);
    MPI_File fh = open_file(name, MPI_MODE_RDWR | MPI_MODE_CREATE);
    expect_state(fh, "after open", ST_TAKEN);
    model_t m = {.holes_zero = g_layer};
    flat_t ff;
    MPI_Datatype ft;
    int64_t disp;

    set_view_of(fh, view_resized, MPI_INT, &ff, &ft, &disp);
    view_write(fh, &m, view_resized, 4, 0, 50 * 4, MPI_INT, 50, NULL, seed_of(1), W_ALL,
               "write_all of 50 ints (resized view)");
    check_position(fh, "after write_all", 50);
    check_byte_offset(fh, "resized", 50, 4, disp, &ff);
    MPI_Type_free(&ft);
    flat_free(&ff);

    set_view_of(fh, view_indexed, MPI_INT, &ff, &ft, &disp); /* resets the pointer */
    view_write(fh, &m, view_indexed, 4, 0, 20 * 4, MPI_INT, 20, NULL, seed_of(2), W_ALL,
               "write_all of 20 ints (indexed view)");
    plain_settle(fh);
    check_position(fh, "after write_all", 20);
    check_byte_offset(fh, "indexed", 19, 4, disp, &ff);
    MPI_Type_free(&ft);
    flat_free(&ff);

    set_view_of(fh, view_indexed_block, MPI_INT, &ff, &ft, &disp);
    view_write(fh, &m, view_indexed_block, 4, 0, 13 * 4, MPI_INT, 13, NULL, seed_of(3), W_IND,
               "write of 13 ints (indexed_block view)");
    check_position(fh, "after write", 13);
    view_write(fh, &m, view_indexed_block, 4, 13 * 4, 7 * 4, MPI_INT, 7, NULL, seed_of(4),
               W_AT_ALL, "write_at_all of 7 ints at 13 (indexed_block view)");
    plain_settle(fh);
    check_position(fh, "after write_at_all", 13);
    check_byte_offset(fh, "indexed_block", 20, 4, disp, &ff);
    MPI_Type_free(&ft);
    flat_free(&ff);

    /* back to bytes: a 16-byte header by rank 0 */
    OK(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    model_put(&m, 0, 16, seed_of(5));
    if (g_rank == 0) {
        uint8_t *h = pattern_buf(0, 16, seed_of(5));
        OK(MPI_File_write(fh, h, 16, MPI_BYTE, MPI_STATUS_IGNORE));
        free(h);
    }
    /* the whole file through a collective read */
    plain_settle(fh);
    {
        int64_t n = m.size;
        uint8_t *all = malloc((size_t)n);
        memset(all, 0xEE, (size_t)n);
        if (OK(MPI_File_read_at_all(fh, 0, all, (int)n, MPI_BYTE, MPI_STATUS_IGNORE)))
            check_buf("read_at_all of the whole file", all, &m, 0, n);
        free(all);
    }
    expect_state(fh, "before close", ST_TAKEN);
    close_file(&fh);
    check_file(name, &m);
    model_free(&m);
}

/* ------------------------------------------------------------------------- */
/* Case: nonblocking writes                                                   */
/* ------------------------------------------------------------------------- */

static void nb_wait(MPI_Request *req, MPI_Status *st, const char *what)
{
    int flag = 0;
    if (!OK(MPI_Test(req, &flag, st)))
        return;
    if (g_layer && !flag)
        fail("%s: MPI_Test right after the call says not complete (the layer's requests "
             "are complete at once)",
             what);
    if (!flag)
        OK(MPI_Wait(req, st));
}

static void case_nonblocking(void)
{
    const char *name = "nonblocking.mpiio";
    remove_file(name);
    MPI_File fh = open_file(name, MPI_MODE_WRONLY | MPI_MODE_CREATE);
    expect_state(fh, "after open", ST_TAKEN);
    model_t m = {.holes_zero = g_layer};
    /* four regions (one per call), rank r's piece S_r = 1000 + 12 r bytes */
    int64_t sum = 0, mine = 0;
    for (int r = 0; r < g_size; r++) {
        if (r == g_rank)
            mine = sum;
        sum += 1000 + 12 * r;
    }
    const int64_t S = 1000 + 12 * g_rank;
    int64_t region[4], o[4];
    for (int k = 0; k < 4; k++) {
        region[k] = k * (sum + 100);
        o[k] = region[k] + mine;
        int64_t p = 0;
        for (int r = 0; r < g_size; r++) {
            model_put(&m, region[k] + p, 1000 + 12 * r, seed_of(k));
            p += 1000 + 12 * r;
        }
    }
    uint8_t *b[4];
    for (int k = 0; k < 4; k++)
        b[k] = pattern_buf(o[k], S, seed_of(k));
    MPI_Request req[2];
    MPI_Status st[2];
    /* A: iwrite_at + MPI_Wait (after MPI_Test) */
    if (OK(MPI_File_iwrite_at(fh, o[0], b[0], (int)S, MPI_BYTE, &req[0]))) {
        nb_wait(&req[0], &st[0], "iwrite_at");
        check_count("iwrite_at", &st[0], MPI_BYTE, (int)S);
        memset(b[0], 0x11, (size_t)S);
    }
    /* B: iwrite_at_all in MPI_INTs */
    if (OK(MPI_File_iwrite_at_all(fh, o[1], b[1], (int)(S / 4), MPI_INT, &req[0]))) {
        nb_wait(&req[0], &st[0], "iwrite_at_all");
        check_count("iwrite_at_all", &st[0], MPI_INT, (int)(S / 4));
        memset(b[1], 0x22, (size_t)S);
    }
    /* C and D: iwrite and iwrite_all through the pointer, both outstanding */
    OK(MPI_File_seek(fh, o[2], MPI_SEEK_SET));
    int okc = OK(MPI_File_iwrite(fh, b[2], (int)S, MPI_BYTE, &req[0]));
    check_position(fh, "after iwrite", o[2] + S);
    OK(MPI_File_seek(fh, o[3], MPI_SEEK_SET));
    int okd = OK(MPI_File_iwrite_all(fh, b[3], (int)S, MPI_BYTE, &req[1]));
    check_position(fh, "after iwrite_all", o[3] + S);
    if (okc && okd) {
        if (g_layer) {
            int flag = 0;
            OK(MPI_Testall(2, req, &flag, st));
            CHECK(flag, "MPI_Testall of iwrite and iwrite_all: not complete");
            if (!flag)
                OK(MPI_Waitall(2, req, st));
        } else {
            OK(MPI_Waitall(2, req, st));
        }
        check_count("iwrite", &st[0], MPI_BYTE, (int)S);
        check_count("iwrite_all", &st[1], MPI_BYTE, (int)S);
    }
    memset(b[2], 0x33, (size_t)S);
    memset(b[3], 0x44, (size_t)S);
    for (int k = 0; k < 4; k++)
        free(b[k]);
    expect_state(fh, "before close", ST_TAKEN);
    close_file(&fh);
    check_file(name, &m);
    model_free(&m);
}

/* ------------------------------------------------------------------------- */
/* Case: set_size, preallocate, get_size                                      */
/* ------------------------------------------------------------------------- */

/* The layer's get_size includes this rank's own writes (lo: their end) and at
   most what every rank has written (hi). MPI-IO itself promises neither
   without a sync, so this is checked only with the layer. */
static void check_size_own(MPI_File fh, const char *what, int64_t lo, int64_t hi)
{
    if (!g_layer)
        return;
    MPI_Offset sz = -1;
    if (OK(MPI_File_get_size(fh, &sz)))
        CHECK(sz >= lo && sz <= hi, "%s: %lld, expected in [%lld, %lld]", what, (long long)sz,
              (long long)lo, (long long)hi);
}

static void case_sizes(void)
{
    const char *name = "sizes.mpiio";
    remove_file(name);
    MPI_File fh = open_file(name, MPI_MODE_RDWR | MPI_MODE_CREATE);
    expect_state(fh, "after open", ST_TAKEN);
    model_t m = {.holes_zero = g_layer};
    MPI_Status st;
    int P = g_size, r = g_rank;
    check_size(fh, "a new file", 0);
    /* collective writes of 1000 bytes each */
    for (int q = 0; q < P; q++)
        model_put(&m, q * 1000, 1000, seed_of(1));
    {
        uint8_t *b = pattern_buf(r * 1000, 1000, seed_of(1));
        OK(MPI_File_write_at_all(fh, r * 1000, b, 1000, MPI_BYTE, &st));
        free(b);
    }
    /* others may be writing further already (below) */
    check_size_own(fh, "get_size after write_at_all", (r + 1) * 1000, 10000 + (P - 1) * 100 + 50);
    /* an independent write past the end: get_size includes it at once */
    for (int q = 0; q < P; q++)
        model_put(&m, 10000 + q * 100, 50, seed_of(2));
    {
        uint8_t *b = pattern_buf(10000 + r * 100, 50, seed_of(2));
        OK(MPI_File_write_at(fh, 10000 + r * 100, b, 50, MPI_BYTE, &st));
        free(b);
        check_size_own(fh, "get_size after its own write_at", 10000 + r * 100 + 50, m.size);
    }
    sync_barrier_sync(fh);
    check_size(fh, "after sync/barrier/sync", m.size);
    /* (set_size is a write, get_size a read: every rank checks before any changes) */
    MPI_Barrier(MPI_COMM_WORLD);
    /* grow */
    int64_t grown = m.size + 7000;
    OK(MPI_File_set_size(fh, grown));
    model_grow_undefined(&m, grown);
    check_size(fh, "after set_size (grow)", grown);
    MPI_Barrier(MPI_COMM_WORLD);
    /* writes, then shrink below some of them */
    for (int q = 0; q < P; q++) {
        model_put(&m, 15000 + q * 100, 30, seed_of(3));
        model_put(&m, 12300 + q * 10, 10, seed_of(3));
    }
    {
        uint8_t *b = pattern_buf(15000 + r * 100, 30, seed_of(3));
        OK(MPI_File_write_at(fh, 15000 + r * 100, b, 30, MPI_BYTE, &st));
        free(b);
        b = pattern_buf(12300 + r * 10, 10, seed_of(3));
        OK(MPI_File_write_at(fh, 12300 + r * 10, b, 10, MPI_BYTE, &st));
        free(b);
    }
    OK(MPI_File_set_size(fh, 12345));
    model_set_size(&m, 12345);
    check_size(fh, "after set_size (shrink)", 12345);
    /* the bytes read back after the shrink (a collective read) */
    {
        uint8_t *all = malloc(12345);
        memset(all, 0xEE, 12345);
        if (OK(MPI_File_read_at_all(fh, 0, all, 12345, MPI_BYTE, &st)))
            check_buf("read_at_all after the shrink", all, &m, 0, 12345);
        int n = -1;
        MPI_Get_count(&st, MPI_BYTE, &n);
        CHECK(n == 12345, "read_at_all after the shrink: count %d, expected 12345", n);
        free(all);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    /* preallocate grows, never shrinks. It is a write and get_size a read
       (MPI's consistency rules): the file is settled before each check.
       Open MPI 4.1's OMPIO (the default MPI-IO here) gets preallocate wrong
       even so: its rank 0 still writes when the others return, the next
       preallocate fails with MPI_ERR_OTHER on some ranks or the job hangs
       (8 ranks). So without the layer set_size stands in for it; the layer
       must do it right. */
    if (g_layer) {
        OK(MPI_File_preallocate(fh, 20000));
        sync_barrier_sync(fh);
        check_size(fh, "after preallocate(20000)", 20000);
        MPI_Barrier(MPI_COMM_WORLD);
        OK(MPI_File_preallocate(fh, 100));
        sync_barrier_sync(fh);
        check_size(fh, "after preallocate(100)", 20000);
        MPI_Barrier(MPI_COMM_WORLD);
    } else {
        OK(MPI_File_set_size(fh, 20000));
        sync_barrier_sync(fh);
    }
    model_grow_undefined(&m, 20000);
    /* collective writes across the end */
    for (int q = 0; q < P; q++)
        model_put(&m, 19990 + q * 5, 5, seed_of(4));
    {
        uint8_t *b = pattern_buf(19990 + r * 5, 5, seed_of(4));
        OK(MPI_File_write_at_all(fh, 19990 + r * 5, b, 5, MPI_BYTE, &st));
        free(b);
    }
    check_size_own(fh, "get_size after the last writes",
                   19990 + r * 5 + 5 > 20000 ? 19990 + r * 5 + 5 : 20000, m.size);
    expect_state(fh, "before close", ST_TAKEN);
    close_file(&fh);
    check_file(name, &m);
    model_free(&m);
}

/* ------------------------------------------------------------------------- */
/* Case: an existing file, no truncation at open; MPI_MODE_APPEND; set_size 0 */
/* ------------------------------------------------------------------------- */

static void case_reopen(void)
{
    const char *name = "reopen.mpiio";
    model_t m = {.holes_zero = g_layer};
    int P = g_size, r = g_rank;
    MPI_Status st;
    model_put(&m, 0, 40000, seed_of(0));
    posix_create(name, &m);

    /* a: new bytes over parts of the old ones, and past their end */
    MPI_File fh = open_file(name, MPI_MODE_WRONLY);
    expect_state(fh, "existing file opened WRONLY", ST_TAKEN);
    check_size(fh, "the existing file", 40000);
    for (int q = 0; q < P; q++)
        model_put(&m, q * 3000 + 500, 1000, seed_of(1));
    model_put(&m, 39000, 6000, seed_of(1));
    {
        uint8_t *b = pattern_buf(r * 3000 + 500, 1000, seed_of(1));
        OK(MPI_File_write_at_all(fh, r * 3000 + 500, b, 1000, MPI_BYTE, &st));
        free(b);
        if (r == P - 1) {
            b = pattern_buf(39000, 6000, seed_of(1));
            OK(MPI_File_write_at(fh, 39000, b, 6000, MPI_BYTE, &st));
            free(b);
        }
    }
    close_file(&fh);
    check_file(name, &m);

    /* b: MPI_MODE_APPEND starts the pointer at the end of the file */
    fh = open_file(name, MPI_MODE_WRONLY | MPI_MODE_APPEND);
    expect_state(fh, "opened with APPEND", ST_TAKEN);
    int64_t end = m.size;
    check_position(fh, "after open with APPEND", end);
    OK(MPI_File_seek(fh, (MPI_Offset)r * 777, MPI_SEEK_CUR));
    for (int q = 0; q < P; q++)
        model_put(&m, end + q * 777, 700, seed_of(2));
    {
        uint8_t *b = pattern_buf(end + r * 777, 700, seed_of(2));
        if (OK(MPI_File_write_all(fh, b, 700, MPI_BYTE, &st)))
            check_count("write_all in append mode", &st, MPI_BYTE, 700);
        free(b);
    }
    check_position(fh, "after write_all in append mode", end + r * 777 + 700);
    close_file(&fh);
    check_file(name, &m);

    /* c: opened without truncation, cut to 0 with set_size, rewritten shorter */
    fh = open_file(name, MPI_MODE_WRONLY | MPI_MODE_CREATE);
    expect_state(fh, "existing file opened WRONLY|CREATE", ST_TAKEN);
    OK(MPI_File_set_size(fh, 0));
    check_size(fh, "after set_size(0)", 0);
    model_set_size(&m, 0);
    for (int q = 0; q < P; q++)
        model_put(&m, q * 500, 500, seed_of(3));
    {
        uint8_t *b = pattern_buf(r * 500, 500, seed_of(3));
        OK(MPI_File_write_at_all(fh, r * 500, b, 500, MPI_BYTE, &st));
        free(b);
    }
    close_file(&fh);
    check_file(name, &m);

    /* d: errors of MPI_File_open stay MPI's */
    {
        char p[4200];
        path_of(p, sizeof p, name);
        MPI_File f2 = MPI_FILE_NULL;
        int rc = MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_WRONLY | MPI_MODE_CREATE | MPI_MODE_EXCL,
                               MPI_INFO_NULL, &f2);
        CHECK(rc != MPI_SUCCESS, "MPI_File_open with MPI_MODE_EXCL of an existing file succeeded");
        if (rc == MPI_SUCCESS)
            MPI_File_close(&f2);
        path_of(p, sizeof p, "no/such/dir/x.mpiio");
        rc = MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_WRONLY | MPI_MODE_CREATE, MPI_INFO_NULL,
                           &f2);
        CHECK(rc != MPI_SUCCESS, "MPI_File_open in a missing directory succeeded");
        if (rc == MPI_SUCCESS)
            MPI_File_close(&f2);
    }
    check_file(name, &m); /* untouched by the failed opens */
    model_free(&m);
}

/* ------------------------------------------------------------------------- */
/* Fall-through cases: the layer hands the file back to MPI-IO                */
/* ------------------------------------------------------------------------- */

/* write_ordered and write_shared (shared file pointer) on a taken file. */
static void case_shared(void)
{
    const char *name = "shared.mpiio";
    remove_file(name);
    MPI_File fh = open_file(name, MPI_MODE_WRONLY | MPI_MODE_CREATE);
    expect_state(fh, "after open", ST_TAKEN);
    model_t m = {0};
    MPI_Status st;
    int P = g_size, r = g_rank;
    /* through the layer first */
    for (int q = 0; q < P; q++)
        model_put(&m, 10000 + q * 500, 500, seed_of(1));
    {
        uint8_t *b = pattern_buf(10000 + r * 500, 500, seed_of(1));
        OK(MPI_File_write_at_all(fh, 10000 + r * 500, b, 500, MPI_BYTE, &st));
        free(b);
    }
    /* write_ordered from shared pointer 0: rank order */
    int64_t so = 0, mine = 0;
    for (int q = 0; q < P; q++) {
        if (q == r)
            mine = so;
        model_put(&m, so, 100 + 10 * q, seed_of(2));
        so += 100 + 10 * q;
    }
    {
        uint8_t *b = pattern_buf(mine, 100 + 10 * r, seed_of(2));
        if (OK(MPI_File_write_ordered(fh, b, 100 + 10 * r, MPI_BYTE, &st)))
            check_count("write_ordered", &st, MPI_BYTE, 100 + 10 * r);
        free(b);
    }
    expect_state(fh, "after write_ordered", ST_RELEASED);
    /* write_shared: 64 bytes per rank in some order after the ordered ones */
    const int L = 64;
    {
        uint8_t b[64];
        for (int i = 0; i < L; i++)
            b[i] = pattern_byte(seed_of(10 + r), (uint64_t)i);
        if (OK(MPI_File_write_shared(fh, b, L, MPI_BYTE, &st)))
            check_count("write_shared", &st, MPI_BYTE, L);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    /* more writes, now through MPI-IO */
    for (int q = 0; q < P; q++)
        model_put(&m, 20000 + q * 100, 100, seed_of(3));
    {
        uint8_t *b = pattern_buf(20000 + r * 100, 100, seed_of(3));
        OK(MPI_File_write_at_all(fh, 20000 + r * 100, b, 100, MPI_BYTE, &st));
        free(b);
        b = pattern_buf(30000 + r * 10, 10, seed_of(4));
        OK(MPI_File_write_at(fh, 30000 + r * 10, b, 10, MPI_BYTE, &st));
        free(b);
        for (int q = 0; q < P; q++)
            model_put(&m, 30000 + q * 10, 10, seed_of(4));
    }
    expect_state(fh, "before close", ST_RELEASED);
    close_file(&fh);
    /* the shared-pointer chunks: each slot holds one rank's chunk, each rank once */
    int64_t sbase = so;
    MPI_Barrier(MPI_COMM_WORLD);
    if (r == 0) {
        char p[4200];
        path_of(p, sizeof p, name);
        int fd = open(p, O_RDONLY);
        uint8_t *slots = malloc((size_t)(P * L));
        int *seen = calloc((size_t)P, sizeof *seen);
        if (fd < 0 || pread(fd, slots, (size_t)(P * L), sbase) != (ssize_t)(P * L)) {
            fail("cannot read the write_shared region of %s", p);
        } else {
            for (int s = 0; s < P; s++) {
                int who = -1;
                for (int q = 0; q < P && who < 0; q++) {
                    int same = 1;
                    for (int i = 0; i < L && same; i++)
                        same = slots[s * L + i] == pattern_byte(seed_of(10 + q), (uint64_t)i);
                    if (same)
                        who = q;
                }
                if (who < 0)
                    fail("write_shared slot %d (offset %lld) holds no rank's chunk", s,
                         (long long)(sbase + s * L));
                else if (seen[who]++)
                    fail("write_shared: rank %d's chunk appears twice (slot %d)", who, s);
            }
        }
        if (fd >= 0)
            close(fd);
        /* put the slots' bytes into the model for the byte check */
        if (fd >= 0)
            for (int i = 0; i < P * L; i++)
                model_byte(&m, sbase + i, slots[i]);
        free(slots);
        free(seen);
    }
    check_file(name, &m);
    model_free(&m);
}

/* MPI_File_set_atomicity(fh, 1) on a taken file. */
static void case_atomic(void)
{
    const char *name = "atomic.mpiio";
    remove_file(name);
    MPI_File fh = open_file(name, MPI_MODE_RDWR | MPI_MODE_CREATE);
    expect_state(fh, "after open", ST_TAKEN);
    model_t m = {0};
    MPI_Status st;
    int P = g_size, r = g_rank;
    for (int q = 0; q < P; q++) {
        model_put(&m, q * 1000, 1000, seed_of(1));
        model_put(&m, 50000 + q * 100, 100, seed_of(2));
    }
    uint8_t *b = pattern_buf(r * 1000, 1000, seed_of(1));
    OK(MPI_File_write_at_all(fh, r * 1000, b, 1000, MPI_BYTE, &st));
    free(b);
    /* an independent write not followed by any collective call */
    b = pattern_buf(50000 + r * 100, 100, seed_of(2));
    OK(MPI_File_write_at(fh, 50000 + r * 100, b, 100, MPI_BYTE, &st));
    free(b);
    plain_settle(fh);
    OK(MPI_File_set_atomicity(fh, 1));
    int flag = 0;
    OK(MPI_File_get_atomicity(fh, &flag));
    CHECK(flag == 1, "get_atomicity after set_atomicity(1): %d", flag);
    expect_state(fh, "after set_atomicity(1)", ST_RELEASED);
    uint8_t got[1000];
    memset(got, 0xEE, sizeof got);
    if (OK(MPI_File_read_at(fh, 50000 + r * 100, got, 100, MPI_BYTE, &st)))
        check_buf("read_at of its own write after set_atomicity", got, &m, 50000 + r * 100, 100);
    /* atomic mode: another rank's completed write is visible after a barrier */
    for (int q = 0; q < P; q++)
        model_put(&m, q * 1000 + 100, 300, seed_of(3));
    b = pattern_buf(r * 1000 + 100, 300, seed_of(3));
    OK(MPI_File_write_at(fh, r * 1000 + 100, b, 300, MPI_BYTE, &st));
    free(b);
    MPI_Barrier(MPI_COMM_WORLD);
    int next = (r + 1) % P;
    memset(got, 0xEE, sizeof got);
    if (OK(MPI_File_read_at(fh, next * 1000, got, 1000, MPI_BYTE, &st)))
        check_buf("read_at of the next rank's piece in atomic mode", got, &m, next * 1000, 1000);
    expect_state(fh, "before close", ST_RELEASED);
    close_file(&fh);
    check_file(name, &m);
    model_free(&m);
}

/* A view the layer cannot flatten: MPI_Type_create_darray. */
static void darray_block(int rr, int sub[2], int start[2], int dims[2])
{
    int d[2] = {0, 0};
    MPI_Dims_create(g_size, 2, d);
    int c[2] = {rr / d[1], rr % d[1]}, G[2] = {G0, G1};
    for (int i = 0; i < 2; i++) {
        int bs = (G[i] + d[i] - 1) / d[i];
        start[i] = c[i] * bs;
        sub[i] = G[i] - start[i] < bs ? G[i] - start[i] : bs;
        if (sub[i] < 0)
            sub[i] = 0;
        dims[i] = d[i];
    }
}

static void view_darray(int rr, flat_t *f, MPI_Datatype *t, int64_t *disp)
{
    int sub[2], start[2], dims[2];
    darray_block(rr, sub, start, dims);
    memset(f, 0, sizeof *f);
    for (int i = start[0]; i < start[0] + sub[0]; i++)
        flat_add(f, ((int64_t)i * G1 + start[1]) * 8, (int64_t)sub[1] * 8);
    f->extent = (int64_t)G0 * G1 * 8;
    *disp = 64;
    if (t) {
        int gs[2] = {G0, G1};
        int distrib[2] = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_BLOCK};
        int dargs[2] = {MPI_DISTRIBUTE_DFLT_DARG, MPI_DISTRIBUTE_DFLT_DARG};
        MPI_Type_create_darray(g_size, rr, 2, gs, distrib, dargs, dims, MPI_ORDER_C, MPI_DOUBLE,
                               t);
        MPI_Type_commit(t);
    }
}

static void case_darray(void)
{
    const char *name = "darray.mpiio";
    remove_file(name);
    MPI_File fh = open_file(name, MPI_MODE_WRONLY | MPI_MODE_CREATE);
    expect_state(fh, "after open", ST_TAKEN);
    model_t m = {0};
    model_put(&m, 0, 64, seed_of(0));
    if (g_rank == 0) {
        uint8_t *h = pattern_buf(0, 64, seed_of(0));
        OK(MPI_File_write_at(fh, 0, h, 64, MPI_BYTE, MPI_STATUS_IGNORE));
        free(h);
    }
    flat_t ff;
    MPI_Datatype ft;
    int64_t disp;
    view_darray(g_rank, &ff, &ft, &disp);
    OK(MPI_File_set_view(fh, disp, MPI_DOUBLE, ft, "native", MPI_INFO_NULL));
    expect_state(fh, "after set_view with a darray", ST_RELEASED);
    view_write(fh, &m, view_darray, 8, 0, -1, MPI_DOUBLE, (int)(ff.bytes / 8), NULL,
               seed_of(1), W_ALL, "write_all (darray view)");
    close_file(&fh);
    MPI_Type_free(&ft);
    flat_free(&ff);
    check_file(name, &m);
    model_free(&m);
}

/* ------------------------------------------------------------------------- */
/* Case: files the layer must leave alone                                     */
/* ------------------------------------------------------------------------- */

static void case_not_taken(void)
{
    model_t m = {0};
    MPI_Status st;
    int P = g_size, r = g_rank;
    /* a name that does not match FWDIO_MPIIO */
    {
        const char *name = "other.plain";
        remove_file(name);
        MPI_File fh = open_file(name, MPI_MODE_WRONLY | MPI_MODE_CREATE);
        expect_state(fh, "a file FWDIO_MPIIO does not match", ST_ABSENT);
        for (int q = 0; q < P; q++)
            model_put(&m, q * 777 + 3, 700, seed_of(1));
        uint8_t *b = pattern_buf(r * 777 + 3, 700, seed_of(1));
        OK(MPI_File_write_at_all(fh, r * 777 + 3, b, 700, MPI_BYTE, &st));
        free(b);
        close_file(&fh);
        check_file(name, &m);
    }
    /* a matching name opened read-only */
    {
        const char *name = "readonly.mpiio";
        model_set_size(&m, 0);
        model_put(&m, 0, 5000, seed_of(2));
        posix_create(name, &m);
        MPI_File fh = open_file(name, MPI_MODE_RDONLY);
        expect_state(fh, "opened MPI_MODE_RDONLY", ST_ABSENT);
        uint8_t *got = malloc(5000);
        memset(got, 0xEE, 5000);
        if (OK(MPI_File_read_at_all(fh, 0, got, 5000, MPI_BYTE, &st)))
            check_buf("read_at_all of a read-only file", got, &m, 0, 5000);
        free(got);
        close_file(&fh);
        check_file(name, &m);
    }
    /* a matching name with MPI_MODE_DELETE_ON_CLOSE */
    {
        const char *name = "delete_on_close.mpiio";
        remove_file(name);
        MPI_File fh =
            open_file(name, MPI_MODE_WRONLY | MPI_MODE_CREATE | MPI_MODE_DELETE_ON_CLOSE);
        expect_state(fh, "opened with MPI_MODE_DELETE_ON_CLOSE", ST_ABSENT);
        uint8_t *b = pattern_buf(r * 100, 100, seed_of(3));
        OK(MPI_File_write_at_all(fh, r * 100, b, 100, MPI_BYTE, &st));
        free(b);
        close_file(&fh);
        MPI_Barrier(MPI_COMM_WORLD);
        if (r == 0)
            CHECK(!file_exists(name), "%s still exists after its close", name);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    model_free(&m);
}

/* ------------------------------------------------------------------------- */
/* Case: an independent read of this rank's own unsynced write                */
/* ------------------------------------------------------------------------- */

static void case_own_read(void)
{
    const char *name = "own_read.mpiio";
    remove_file(name);
    MPI_File fh = open_file(name, MPI_MODE_RDWR | MPI_MODE_CREATE);
    expect_state(fh, "after open", ST_TAKEN);
    model_t m = {.holes_zero = g_layer};
    MPI_Status st;
    int P = g_size, r = g_rank, next = (r + 1) % P;
    const int64_t R1 = 0, R2 = 2000 * (int64_t)P, R3 = 4000 * (int64_t)P + 64;
    for (int q = 0; q < P; q++) {
        model_put(&m, R1 + q * 2000, 2000, seed_of(1));
        model_put(&m, R2 + q * 2000, 2000, seed_of(2));
        model_put(&m, R3 + q * 600, 500, seed_of(3)); /* 100-byte holes between */
    }
    uint8_t *b = pattern_buf(R1 + r * 2000, 2000, seed_of(1));
    OK(MPI_File_write_at_all(fh, R1 + r * 2000, b, 2000, MPI_BYTE, &st));
    free(b);
    b = pattern_buf(R2 + r * 2000, 2000, seed_of(2));
    OK(MPI_File_write_at_all(fh, R2 + r * 2000, b, 2000, MPI_BYTE, &st));
    free(b);
    plain_settle(fh);
    /* region 1 was written before the last collective call: independent reads see it */
    uint8_t got[2000];
    memset(got, 0xEE, sizeof got);
    if (OK(MPI_File_read_at(fh, R1 + next * 2000, got, 2000, MPI_BYTE, &st)))
        check_buf("read_at of the next rank's region 1", got, &m, R1 + next * 2000, 2000);
    memset(got, 0xEE, sizeof got);
    if (OK(MPI_File_read_at(fh, R1 + r * 2000, got, 2000, MPI_BYTE, &st)))
        check_buf("read_at of its own region 1", got, &m, R1 + r * 2000, 2000);

    /* an independent write, then independent reads of it: they see it (the
     * layer lays its copy over what MPI-IO reads) */
    int64_t o3 = R3 + r * 600;
    b = pattern_buf(o3, 500, seed_of(3));
    OK(MPI_File_write_at(fh, o3, b, 500, MPI_BYTE, &st));
    free(b);
    memset(got, 0xEE, sizeof got);
    if (OK(MPI_File_read_at(fh, o3, got, 500, MPI_BYTE, &st))) {
        check_buf("read_at of its own unsynced write", got, &m, o3, 500);
        check_count("read_at of its own unsynced write", &st, MPI_BYTE, 500);
    }
    /* with the hole before it (zeros, or another rank's bytes) */
    memset(got, 0xEE, sizeof got);
    if (OK(MPI_File_read_at(fh, o3 - 10, got, 20, MPI_BYTE, &st)))
        check_buf("read_at overlapping its own unsynced write", got, &m, o3 - 10, 20);
    OK(MPI_File_seek(fh, o3 + 100, MPI_SEEK_SET));
    memset(got, 0xEE, sizeof got);
    if (OK(MPI_File_read(fh, got, 100, MPI_BYTE, &st))) {
        check_buf("read (individual pointer) of its own unsynced write", got, &m, o3 + 100, 100);
        MPI_Offset at = -1;
        OK(MPI_File_get_position(fh, &at));
        CHECK(at == o3 + 200, "the pointer is at %lld after the read; expected %lld",
              (long long)at, (long long)(o3 + 200));
    }
    {
        MPI_Request req;
        memset(got, 0xEE, sizeof got);
        if (OK(MPI_File_iread_at(fh, o3 + 200, got, 100, MPI_BYTE, &req)) &&
            OK(MPI_Wait(&req, &st))) {
            check_buf("iread_at (+ MPI_Wait) of its own unsynced write", got, &m, o3 + 200, 100);
            check_count("iread_at of its own unsynced write", &st, MPI_BYTE, 100);
        }
    }
    /* the last rank's bytes end the file: a read past them counts only them */
    if (r == P - 1) {
        memset(got, 0xEE, sizeof got);
        if (OK(MPI_File_read_at(fh, o3 + 400, got, 300, MPI_BYTE, &st))) {
            check_buf("read_at past the end of its own unsynced write", got, &m, o3 + 400, 100);
            check_count("read_at past the end of the file", &st, MPI_BYTE, 100);
        }
    }
    /* into a memory type with gaps: the gaps are left alone */
    {
        MPI_Datatype gaps;
        MPI_Type_vector(50, 2, 3, MPI_BYTE, &gaps);
        MPI_Type_commit(&gaps);
        uint8_t mem[150], want[150];
        memset(mem, 0xEE, sizeof mem);
        memset(want, 0xEE, sizeof want);
        for (int i = 0; i < 100; i++)
            want[(i / 2) * 3 + i % 2] = pattern_byte(seed_of(3), (uint64_t)(o3 + 300 + i));
        if (OK(MPI_File_read_at(fh, o3 + 300, mem, 1, gaps, &st)))
            CHECK(memcmp(mem, want, sizeof mem) == 0,
                  "read_at of its own unsynced write into a vector memory type: wrong bytes");
        MPI_Type_free(&gaps);
    }
    /* the same bytes written again in the step: the later write is read */
    b = pattern_buf(o3 + 50, 100, seed_of(6));
    OK(MPI_File_write_at(fh, o3 + 50, b, 100, MPI_BYTE, &st));
    free(b);
    model_put(&m, o3 + 50, 100, seed_of(6));
    for (int q = 0; q < P; q++)
        if (q != r)
            model_put(&m, R3 + q * 600 + 50, 100, seed_of(6));
    memset(got, 0xEE, sizeof got);
    if (OK(MPI_File_read_at(fh, o3, got, 500, MPI_BYTE, &st)))
        check_buf("read_at of its own write written twice", got, &m, o3, 500);
    /* other bytes remain readable meanwhile */
    memset(got, 0xEE, sizeof got);
    if (OK(MPI_File_read_at(fh, R2 + next * 2000, got, 2000, MPI_BYTE, &st)))
        check_buf("read_at of the next rank's region 2 beside an unsynced write", got, &m,
                  R2 + next * 2000, 2000);
    /* a collective read sees it; after that collective, so does an independent read */
    memset(got, 0xEE, sizeof got);
    if (OK(MPI_File_read_at_all(fh, o3, got, 500, MPI_BYTE, &st)))
        check_buf("read_at_all of its own write", got, &m, o3, 500);
    memset(got, 0xEE, sizeof got);
    if (OK(MPI_File_read_at(fh, o3, got, 500, MPI_BYTE, &st)))
        check_buf("read_at of its own write after read_at_all", got, &m, o3, 500);
    /* through a view of 8-byte blocks, one in P for each rank: the read's data
     * positions meet the kept bytes block by block */
    {
        const int64_t R4 = R3 + 600 * (int64_t)P + 64;
        MPI_Datatype block, ft;
        MPI_Type_contiguous(8, MPI_BYTE, &block);
        MPI_Type_create_resized(block, 0, 8 * P, &ft);
        MPI_Type_commit(&ft);
        OK(MPI_File_set_view(fh, R4 + 8 * r, MPI_BYTE, ft, "native", MPI_INFO_NULL));
        uint8_t mine[200];
        for (int q = 0; q < P; q++)
            for (int i = 0; i < 200; i++) {
                int64_t off = R4 + 8 * q + (i / 8) * 8 * (int64_t)P + i % 8;
                uint8_t v = pattern_byte(seed_of(7), (uint64_t)off);
                model_byte(&m, off, v);
                if (q == r)
                    mine[i] = v;
            }
        OK(MPI_File_write_at(fh, 0, mine, 200, MPI_BYTE, &st));
        memset(got, 0xEE, sizeof got);
        if (OK(MPI_File_read_at(fh, 0, got, 200, MPI_BYTE, &st)))
            CHECK(memcmp(got, mine, 200) == 0, "read_at through a view of blocks: wrong bytes");
        memset(got, 0xEE, sizeof got);
        if (OK(MPI_File_read_at(fh, 4, got, 17, MPI_BYTE, &st)))
            CHECK(memcmp(got, mine + 4, 17) == 0,
                  "read_at through a view of blocks, across blocks: wrong bytes");
        OK(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
        MPI_Type_free(&ft);
        MPI_Type_free(&block);
    }
    expect_state(fh, "before close", ST_TAKEN);
    close_file(&fh);
    check_file(name, &m);
    model_free(&m);
}

/* With FWDIO_MPIIO_READBACK=1000 (the layer keeps at most 1000 bytes of a
 * rank's writes of one step for its reads, and writes the step's independent
 * writes past them at once): reads of the step's bytes, kept or not, see
 * them, before and after a collective call. */
static void case_own_read_limit(void)
{
    const char *name = "own_read_limit.mpiio";
    remove_file(name);
    MPI_File fh = open_file(name, MPI_MODE_RDWR | MPI_MODE_CREATE);
    expect_state(fh, "after open", ST_TAKEN);
    model_t m = {.holes_zero = g_layer};
    MPI_Status st;
    int P = g_size, r = g_rank;
    const int64_t A = 0, B = 600 * (int64_t)P, C = 1200 * (int64_t)P;
    for (int q = 0; q < P; q++)
        for (int k = 0; k < 3; k++)
            model_put(&m, k * 600 * (int64_t)P + q * 600, 600, seed_of(k));
    uint8_t got[600];
    uint8_t *b = pattern_buf(A + r * 600, 600, seed_of(0));
    OK(MPI_File_write_at(fh, A + r * 600, b, 600, MPI_BYTE, &st));
    free(b);
    memset(got, 0xEE, sizeof got);
    if (OK(MPI_File_read_at(fh, A + r * 600, got, 600, MPI_BYTE, &st)))
        check_buf("read_at of 600 bytes kept", got, &m, A + r * 600, 600);
    b = pattern_buf(B + r * 600, 600, seed_of(1));
    OK(MPI_File_write_at(fh, B + r * 600, b, 600, MPI_BYTE, &st));
    free(b);
    memset(got, 0xEE, sizeof got);
    if (OK(MPI_File_read_at(fh, A + r * 600, got, 600, MPI_BYTE, &st)))
        check_buf("read_at of kept bytes after the step wrote past FWDIO_MPIIO_READBACK", got,
                  &m, A + r * 600, 600);
    memset(got, 0xEE, sizeof got);
    if (OK(MPI_File_read_at(fh, B + r * 600, got, 600, MPI_BYTE, &st)))
        check_buf("read_at of bytes past FWDIO_MPIIO_READBACK", got, &m, B + r * 600, 600);
    /* one read over both */
    uint8_t both[600 * 2];
    memset(both, 0xEE, sizeof both);
    MPI_Datatype two;
    int lens[2] = {600, 600};
    MPI_Aint disps[2] = {0, 600};
    OK(MPI_Type_create_hindexed(2, lens, disps, MPI_BYTE, &two));
    OK(MPI_Type_commit(&two));
    MPI_Datatype pair;
    int blens[2] = {1, 1};
    MPI_Aint fdisps[2] = {A + r * 600, B + r * 600};
    MPI_Datatype bytes600;
    OK(MPI_Type_contiguous(600, MPI_BYTE, &bytes600));
    MPI_Datatype ts[2] = {bytes600, bytes600};
    OK(MPI_Type_create_struct(2, blens, fdisps, ts, &pair));
    OK(MPI_Type_commit(&pair));
    OK(MPI_File_set_view(fh, 0, MPI_BYTE, pair, "native", MPI_INFO_NULL));
    if (OK(MPI_File_read_at(fh, 0, both, 1, two, &st))) {
        check_buf("one read of kept and written bytes (kept part)", both, &m, A + r * 600, 600);
        check_buf("one read of kept and written bytes (written part)", both + 600, &m,
                  B + r * 600, 600);
    }
    OK(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    MPI_Type_free(&two);
    MPI_Type_free(&pair);
    MPI_Type_free(&bytes600);
    OK(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    OK(MPI_File_sync(fh));
    memset(got, 0xEE, sizeof got);
    if (OK(MPI_File_read_at(fh, B + r * 600, got, 600, MPI_BYTE, &st)))
        check_buf("read_at after MPI_File_sync", got, &m, B + r * 600, 600);
    /* a new step keeps bytes again */
    b = pattern_buf(C + r * 600, 600, seed_of(2));
    OK(MPI_File_write_at(fh, C + r * 600, b, 600, MPI_BYTE, &st));
    free(b);
    memset(got, 0xEE, sizeof got);
    if (OK(MPI_File_read_at(fh, C + r * 600, got, 600, MPI_BYTE, &st)))
        check_buf("read_at of the next step's 600 bytes", got, &m, C + r * 600, 600);
    close_file(&fh);
    check_file(name, &m);
    model_free(&m);

    /* One rank writes much more than is kept, in writes at its individual
     * pointer, seeks back and reads all of it (the others write nothing). */
    const char *name2 = "own_read_limit_all.mpiio";
    remove_file(name2);
    enum { PIECE = 256 << 10, PIECES = 24 };
    fh = open_file(name2, MPI_MODE_RDWR | MPI_MODE_CREATE);
    m = (model_t){.holes_zero = g_layer};
    for (int k = 0; k < PIECES; k++)
        model_put(&m, (int64_t)k * PIECE, PIECE, seed_of(3));
    if (r == 0) {
        for (int k = 0; k < PIECES; k++) {
            b = pattern_buf((int64_t)k * PIECE, PIECE, seed_of(3));
            OK(MPI_File_write(fh, b, PIECE, MPI_BYTE, &st));
            free(b);
        }
        OK(MPI_File_seek(fh, 0, MPI_SEEK_SET));
        uint8_t *all = malloc((size_t)PIECE * PIECES);
        memset(all, 0xEE, (size_t)PIECE * PIECES);
        if (OK(MPI_File_read(fh, all, PIECE * PIECES, MPI_BYTE, &st)))
            check_buf("read of everything one rank wrote in the step", all, &m, 0,
                      (int64_t)PIECE * PIECES);
        free(all);
    }
    close_file(&fh);
    check_file(name2, &m);
    model_free(&m);
}

/* ------------------------------------------------------------------------- */
/* Cases: other communicators, two files at once                              */
/* ------------------------------------------------------------------------- */

static void case_comm_self(void)
{
    char name[64];
    snprintf(name, sizeof name, "self_%d.mpiio", g_rank);
    char p[4200];
    path_of(p, sizeof p, name);
    unlink(p);
    MPI_File fh = open_comm(MPI_COMM_SELF, name, MPI_MODE_WRONLY | MPI_MODE_CREATE);
    expect_state(fh, "opened on MPI_COMM_SELF", ST_TAKEN);
    model_t m = {.holes_zero = g_layer};
    MPI_Status st;
    for (int k = 0; k < 4; k++) {
        int64_t o = k * 10000 + g_rank * 13, n = 3000 + k * 1111;
        model_put(&m, o, n, seed_of(k));
        uint8_t *b = pattern_buf(o, n, seed_of(k));
        if (k % 2)
            OK(MPI_File_write_at(fh, o, b, (int)n, MPI_BYTE, &st));
        else
            OK(MPI_File_write_at_all(fh, o, b, (int)n, MPI_BYTE, &st));
        free(b);
    }
    close_file(&fh);
    check_path_local(p, &m);
    model_free(&m);
    MPI_Barrier(MPI_COMM_WORLD);
}

static void case_split(void)
{
    MPI_Comm half;
    int color = g_rank % 2;
    MPI_Comm_split(MPI_COMM_WORLD, color, g_rank, &half);
    int hr, hs;
    MPI_Comm_rank(half, &hr);
    MPI_Comm_size(half, &hs);
    char name[64];
    snprintf(name, sizeof name, "split_%d.mpiio", color);
    char p[4200];
    path_of(p, sizeof p, name);
    if (hr == 0)
        unlink(p);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_File fh = open_comm(half, name, MPI_MODE_WRONLY | MPI_MODE_CREATE);
    expect_state(fh, "opened on half of the ranks", ST_TAKEN);
    model_t m = {.holes_zero = g_layer};
    MPI_Status st;
    uint64_t seed = seed_of(color);
    for (int q = 0; q < hs; q++)
        model_put(&m, q * 4099, 4000 + color, seed);
    uint8_t *b = pattern_buf(hr * 4099, 4000 + color, seed);
    OK(MPI_File_write_at_all(fh, hr * 4099, b, 4000 + color, MPI_BYTE, &st));
    free(b);
    close_file(&fh);
    MPI_Barrier(half);
    if (hr == 0)
        check_path_local(p, &m);
    MPI_Comm_free(&half);
    model_free(&m);
    MPI_Barrier(MPI_COMM_WORLD);
}

static void case_two_files(void)
{
    const char *na = "two_a.mpiio", *nb = "two_b.fwd";
    remove_file(na);
    remove_file(nb);
    MPI_File fa = open_file(na, MPI_MODE_WRONLY | MPI_MODE_CREATE);
    MPI_File fb = open_file(nb, MPI_MODE_RDWR | MPI_MODE_CREATE);
    expect_state(fa, "file a", ST_TAKEN);
    expect_state(fb, "file b (the second FWDIO_MPIIO pattern)", ST_TAKEN);
    model_t ma = {.holes_zero = g_layer}, mb = {.holes_zero = g_layer};
    MPI_Status st;
    int P = g_size, r = g_rank;
    for (int k = 0; k < 3; k++) {
        int64_t la = 20000 + k * 100, lb = 333 * (k + 1);
        for (int q = 0; q < P; q++) {
            model_put(&ma, (k * P + q) * la, la, seed_of(k));
            model_put(&mb, (q * 3 + k) * 1000, lb, seed_of(10 + k));
        }
        uint8_t *b = pattern_buf((k * P + r) * la, la, seed_of(k));
        OK(MPI_File_write_at_all(fa, (k * P + r) * la, b, (int)la, MPI_BYTE, &st));
        free(b);
        b = pattern_buf((r * 3 + k) * 1000, lb, seed_of(10 + k));
        OK(MPI_File_write_at(fb, (r * 3 + k) * 1000, b, (int)lb, MPI_BYTE, &st));
        free(b);
        OK(MPI_File_sync(fa));
    }
    close_file(&fb);
    close_file(&fa);
    check_file(na, &ma);
    check_file(nb, &mb);
    model_free(&ma);
    model_free(&mb);
}

/* ------------------------------------------------------------------------- */
/* Case: FWDIO_MPIIO_CLOSE=async (also right with a synchronous close)        */
/* ------------------------------------------------------------------------- */

static model_t g_after_finalize; /* the file checked after MPI_Finalize */
static int g_check_after_finalize;
static const char *const AFTER_FINALIZE_NAME = "async_3.mpiio";
static const char *const DELETED_NAME = "async_2.mpiio";

static void write_rounds(MPI_File fh, model_t *m, int rounds, int64_t piece, int gen)
{
    int P = g_size, r = g_rank;
    for (int k = 0; k < rounds; k++) {
        int64_t base = (int64_t)k * P * piece;
        for (int q = 0; q < P; q++)
            model_put(m, base + q * piece, piece, seed_of(gen + k));
        uint8_t *b = pattern_buf(base + r * piece, piece, seed_of(gen + k));
        OK(MPI_File_write_at_all(fh, base + r * piece, b, (int)piece, MPI_BYTE,
                                 MPI_STATUS_IGNORE));
        free(b);
    }
}

static void case_async_close(void)
{
    MPI_Status st;
    /* 1: closed, then opened read-only at once: every byte is there */
    {
        const char *name = "async_1.mpiio";
        remove_file(name);
        MPI_File fh = open_file(name, MPI_MODE_WRONLY | MPI_MODE_CREATE);
        expect_state(fh, "after open", ST_TAKEN);
        model_t m = {.holes_zero = g_layer};
        write_rounds(fh, &m, 3, 300000 / g_size + 17, 0);
        close_file(&fh);
        fh = open_file(name, MPI_MODE_RDONLY);
        expect_state(fh, "reopened read-only", ST_ABSENT);
        uint8_t *all = malloc((size_t)m.size);
        memset(all, 0xEE, (size_t)m.size);
        if (OK(MPI_File_read_at_all(fh, 0, all, (int)m.size, MPI_BYTE, &st)))
            check_buf("read_at_all after reopening read-only", all, &m, 0, m.size);
        check_size(fh, "reopened read-only", m.size);
        free(all);
        check_file(name, &m); /* POSIX, while the read-only handle is open */
        close_file(&fh);
        check_file(name, &m);
        model_free(&m);
    }
    /* 2: closed, then deleted: the file is gone and stays gone */
    {
        remove_file(DELETED_NAME);
        MPI_File fh = open_file(DELETED_NAME, MPI_MODE_WRONLY | MPI_MODE_CREATE);
        model_t m = {.holes_zero = g_layer};
        write_rounds(fh, &m, 2, 200000 / g_size + 5, 10);
        close_file(&fh);
        if (g_rank == 0) {
            char p[4200];
            path_of(p, sizeof p, DELETED_NAME);
            OK(MPI_File_delete(p, MPI_INFO_NULL));
            CHECK(!file_exists(DELETED_NAME), "%s exists after MPI_File_delete", DELETED_NAME);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        model_free(&m);
    }
    /* 3: closed and left until MPI_Finalize (checked after it) */
    {
        remove_file(AFTER_FINALIZE_NAME);
        MPI_File fh = open_file(AFTER_FINALIZE_NAME, MPI_MODE_WRONLY | MPI_MODE_CREATE);
        model_free(&g_after_finalize);
        g_after_finalize.holes_zero = g_layer;
        write_rounds(fh, &g_after_finalize, 3, 250000 / g_size + 3, 20);
        close_file(&fh);
        g_check_after_finalize = 1;
    }
    /* 4: closed, opened again for writing: the new bytes after the old ones */
    {
        const char *name = "async_4.mpiio";
        remove_file(name);
        MPI_File fh = open_file(name, MPI_MODE_WRONLY | MPI_MODE_CREATE);
        model_t m = {.holes_zero = g_layer};
        write_rounds(fh, &m, 2, 100000, 30);
        close_file(&fh);
        fh = open_file(name, MPI_MODE_WRONLY);
        expect_state(fh, "reopened for writing", ST_TAKEN);
        /* overwrite the middle of every rank's first piece */
        for (int q = 0; q < g_size; q++)
            model_put(&m, q * 100000 + 40000, 20000, seed_of(40));
        uint8_t *b = pattern_buf(g_rank * 100000 + 40000, 20000, seed_of(40));
        OK(MPI_File_write_at_all(fh, g_rank * 100000 + 40000, b, 20000, MPI_BYTE, &st));
        free(b);
        close_file(&fh);
        fh = open_file(name, MPI_MODE_RDONLY);
        close_file(&fh);
        check_file(name, &m);
        model_free(&m);
    }
}

/* ------------------------------------------------------------------------- */
/* Case: a file closed inside MPI_Finalize (parallel HDF5 does it so)          */
/* ------------------------------------------------------------------------- */

static model_t g_self_closed; /* the file checked after MPI_Finalize */
static int g_check_self_closed;
static const char *const SELF_CLOSED_NAME = "finalize_close.mpiio";
static MPI_File g_self_closed_fh = MPI_FILE_NULL;
static uint8_t *g_self_closed_last; /* the callback's piece (made by the case) */

/* The delete callback of an attribute on MPI_COMM_SELF: MPI_Finalize runs it
 * first. It writes one more piece per rank, collectively, and closes. */
static int close_at_finalize(MPI_Comm comm, int keyval, void *value, void *extra)
{
    (void)comm;
    (void)value;
    (void)extra;
    int64_t piece = 3000;
    int rc = MPI_File_write_at_all(g_self_closed_fh, ((int64_t)g_size + g_rank) * piece,
                                   g_self_closed_last, (int)piece, MPI_BYTE, MPI_STATUS_IGNORE);
    free(g_self_closed_last);
    if (rc == MPI_SUCCESS)
        rc = MPI_File_close(&g_self_closed_fh);
    if (rc != MPI_SUCCESS)
        fail("the close inside MPI_Finalize: %s", err_text(rc));
    MPI_Comm_free_keyval(&keyval);
    return MPI_SUCCESS;
}

static void case_finalize_close(void)
{
    char p[4200];
    path_of(p, sizeof p, SELF_CLOSED_NAME);
    remove_file(SELF_CLOSED_NAME);
    /* not through open_comm: the file outlives the case (no removal at its end) */
    OK(MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_WRONLY | MPI_MODE_CREATE, MPI_INFO_NULL,
                     &g_self_closed_fh));
    expect_state(g_self_closed_fh, "after open", ST_TAKEN);
    int64_t piece = 3000;
    model_free(&g_self_closed);
    g_self_closed.holes_zero = g_layer;
    for (int q = 0; q < g_size; q++) {
        model_put(&g_self_closed, q * piece, piece, seed_of(1));
        model_put(&g_self_closed, ((int64_t)g_size + q) * piece, piece, seed_of(2));
    }
    uint8_t *b = pattern_buf(g_rank * piece, piece, seed_of(1));
    OK(MPI_File_write_at(g_self_closed_fh, g_rank * piece, b, (int)piece, MPI_BYTE,
                         MPI_STATUS_IGNORE));
    free(b);
    g_self_closed_last = pattern_buf(((int64_t)g_size + g_rank) * piece, piece, seed_of(2));
    int keyval;
    OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, close_at_finalize, &keyval, NULL));
    OK(MPI_Comm_set_attr(MPI_COMM_SELF, keyval, NULL));
    g_check_self_closed = 1;
}

/* ------------------------------------------------------------------------- */
/* Case: injected pwrite faults (FWDIO_FAULT, see tests/mpiio/CMakeLists.txt)  */
/* ------------------------------------------------------------------------- */

static void fault_file(const char *name, int want_class, const char *class_name)
{
    remove_file(name);
    MPI_File fh = open_file(name, MPI_MODE_WRONLY | MPI_MODE_CREATE);
    expect_state(fh, "after open", ST_TAKEN);
    if (fh == MPI_FILE_NULL)
        return;
    OK(MPI_File_set_errhandler(fh, MPI_ERRORS_RETURN));
    int64_t piece = 65536;
    uint8_t *b = pattern_buf(g_rank * piece, piece, seed_of(1));
    int first = MPI_SUCCESS;
    const char *where = "";
    int rc = MPI_File_write_at_all(fh, g_rank * piece, b, (int)piece, MPI_BYTE, MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS) {
        fail("the first write_at_all failed already: %s", err_text(rc));
        first = rc;
        where = "the first write";
    }
    /* Independent writes while the failure becomes known, sooner on some
     * ranks than on others: none returns it (it comes from a call that
     * waits for the steps, the same one on every rank). */
    for (int k = 0; k < 20 && first == MPI_SUCCESS; k++) {
        int64_t ok = (int64_t)(2 + k) * g_size * piece + g_rank * 64;
        rc = MPI_File_write_at(fh, ok, b, 64, MPI_BYTE, MPI_STATUS_IGNORE);
        CHECK(rc == MPI_SUCCESS, "independent write %d after the failing step returned %s", k,
              err_text(rc));
        usleep(10000);
    }
    /* the error of the first write may come with this second write */
    int64_t o2 = (int64_t)g_size * piece + g_rank * piece;
    rc = MPI_File_write_at_all(fh, o2, b, (int)piece, MPI_BYTE, MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS && first == MPI_SUCCESS) {
        first = rc;
        where = "the second write_at_all";
    }
    rc = MPI_File_sync(fh);
    if (rc != MPI_SUCCESS && first == MPI_SUCCESS) {
        first = rc;
        where = "MPI_File_sync";
    }
    /* With FWDIO_MPIIO_SYNC=async the sync returns before the bytes are
       written: the error comes by the close at the latest. */
    const char *sync_mode = getenv("FWDIO_MPIIO_SYNC");
    int sync_async = sync_mode && strcmp(sync_mode, "async") == 0;
    if (first == MPI_SUCCESS && !sync_async)
        fail("%s: no error from the writes or MPI_File_sync, though every pwrite fails", name);
    rc = MPI_File_close(&fh);
    if (first == MPI_SUCCESS && rc != MPI_SUCCESS) {
        first = rc;
        where = "MPI_File_close";
    }
    if (first == MPI_SUCCESS && sync_async)
        fail("%s: no error from the writes, MPI_File_sync or MPI_File_close, though every "
             "pwrite fails", name);
    /* the failure comes back from the same call on every rank */
    int at = !strcmp(where, "the first write")           ? 0
             : !strcmp(where, "the second write_at_all") ? 1
             : !strcmp(where, "MPI_File_sync")           ? 2
             : !strcmp(where, "MPI_File_close")          ? 3
                                                         : 4;
    int lo = at, hi = at;
    MPI_Allreduce(&at, &lo, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(&at, &hi, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    CHECK(lo == hi, "%s: the failure came back from different calls on different ranks "
                    "(this rank: %s)", name, where[0] ? where : "none");
    free(b);
    if (first != MPI_SUCCESS) {
        int cls = -1, len = 0;
        char s[MPI_MAX_ERROR_STRING];
        s[0] = 0;
        MPI_Error_class(first, &cls);
        MPI_Error_string(first, s, &len);
        CHECK(cls == want_class, "%s: error from %s has class %d (%s), expected %s (%d)", name,
              where, cls, s, class_name, want_class);
        CHECK(strstr(s, "fwdio") != NULL, "%s: the error string from %s (\"%s\") lacks \"fwdio\"",
              name, where, s);
        if (g_rank == 0)
            note("%s: %s returned %s", name, where, err_text(first));
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

/* fault_eio: every pwrite of fault_eio.mpiio fails with EIO (FWDIO_FAULT=
   pwrite:eio:path=fault_eio.mpiio); fault_nospc: with ENOSPC. Then a file without
   faults comes out right. */
static void fault_case(const char *name, int want_class, const char *class_name)
{
    if (!g_layer) {
        if (g_rank == 0)
            note("skipped: without the layer FWDIO_FAULT has no effect");
        return;
    }
    fault_file(name, want_class, class_name);
    const char *after = "fault_after.mpiio";
    remove_file(after);
    MPI_File fh = open_file(after, MPI_MODE_WRONLY | MPI_MODE_CREATE);
    expect_state(fh, "after open", ST_TAKEN);
    model_t m = {.holes_zero = g_layer};
    write_rounds(fh, &m, 2, 50000, 50);
    close_file(&fh);
    check_file(after, &m);
    model_free(&m);
}

static void case_fault_eio(void) { fault_case("fault_eio.mpiio", MPI_ERR_IO, "MPI_ERR_IO"); }

static void case_fault_nospc(void)
{
    fault_case("fault_nospc.mpiio", MPI_ERR_NO_SPACE, "MPI_ERR_NO_SPACE");
}

/* ------------------------------------------------------------------------- */
/* Case: an open on an intercommunicator                                      */
/* ------------------------------------------------------------------------- */

/* MPI-IO opens files on intracommunicators only: the layer leaves such an
   open to MPI (its error, or its file, never taken), without a hang. */
static void case_intercomm(void)
{
    if (g_size < 2) {
        if (g_rank == 0)
            note("skipped: an intercommunicator needs 2 ranks or more");
        return;
    }
    const char *name = "intercomm.mpiio";
    remove_file(name);
    int color = g_rank % 2;
    MPI_Comm half, inter;
    OK(MPI_Comm_split(MPI_COMM_WORLD, color, g_rank, &half));
    /* the leaders: world rank 0 (even half) and 1 (odd half) */
    OK(MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, color == 0 ? 1 : 0, 77, &inter));
    /* Open MPI reports this open's error through the communicator's handler */
    OK(MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN));
    char p[4200];
    path_of(p, sizeof p, name);
    MPI_File fh = MPI_FILE_NULL;
    int rc = MPI_File_open(inter, p, MPI_MODE_WRONLY | MPI_MODE_CREATE, MPI_INFO_NULL, &fh);
    if (rc == MPI_SUCCESS) {
        expect_state(fh, "opened on an intercommunicator", ST_ABSENT);
        MPI_File_close(&fh);
    } else {
        CHECK(fh == MPI_FILE_NULL, "a failed open on an intercommunicator returned a handle");
        if (g_rank == 0)
            note("MPI_File_open on an intercommunicator: %s", err_text(rc));
    }
    MPI_Comm_free(&inter);
    MPI_Comm_free(&half);
    MPI_Barrier(MPI_COMM_WORLD);
    remove_file(name);
}

/* ------------------------------------------------------------------------- */
/* Case: the layer's own writes failing (not in --all: it lowers RLIMIT_FSIZE) */
/* ------------------------------------------------------------------------- */

static void set_file_limit(rlim_t bytes)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_FSIZE, &rl) != 0)
        return;
    rl.rlim_cur = bytes; /* the soft limit only: it can be raised again */
    if (setrlimit(RLIMIT_FSIZE, &rl) != 0)
        fail("setrlimit(RLIMIT_FSIZE): %s", strerror(errno));
}

static void expect_error(int rc, const char *what, int want_class, const char *want_text)
{
    if (rc == MPI_SUCCESS) {
        fail("%s: succeeded, expected an error of class %d", what, want_class);
        return;
    }
    int cls = -1, len = 0;
    char s[MPI_MAX_ERROR_STRING] = "";
    MPI_Error_class(rc, &cls);
    MPI_Error_string(rc, s, &len);
    CHECK(cls == want_class, "%s: error class %d (%s), expected %d", what, cls, s, want_class);
    CHECK(strstr(s, want_text) != NULL, "%s: \"%s\" does not say \"%s\"", what, s, want_text);
}

/* The writes the layer makes itself are the second copy of bytes a rank
   writes twice in one step, and MPI_File_preallocate's allocation. A file
   size limit (RLIMIT_FSIZE) makes them fail with EFBIG on one rank: the last
   rank's limit is below the bytes it writes twice, rank 0's (which
   allocates) below the size preallocated. The collective call in which it
   fails, every rank's MPI_File_close and every rank's preallocate must
   return that failure, not success. */
static void case_own_failures(void)
{
    if (!g_layer || g_size < 2) {
        if (g_rank == 0)
            note("skipped: needs the layer and 2 ranks or more");
        return;
    }
    const int last = g_size - 1;
    const int64_t at = 512 << 10, len = 4096;
    const char *too_large = strerror(EFBIG);
    signal(SIGXFSZ, SIG_IGN); /* a write past the limit fails with EFBIG instead */
    if (g_rank == last)
        set_file_limit(256 << 10);
    else if (g_rank == 0)
        set_file_limit(1 << 20);
    /* 1: the second copy of bytes written twice in one step */
    {
        const char *name = "own_overlay.mpiio";
        remove_file(name);
        MPI_File fh = open_file(name, MPI_MODE_WRONLY | MPI_MODE_CREATE);
        expect_state(fh, "after open", ST_TAKEN);
        if (fh != MPI_FILE_NULL) {
            if (g_rank == last) {
                uint8_t *a = pattern_buf(at, len, seed_of(1));
                uint8_t *b = pattern_buf(at, len, seed_of(2));
                OK(MPI_File_write_at(fh, at, a, (int)len, MPI_BYTE, MPI_STATUS_IGNORE));
                OK(MPI_File_write_at(fh, at, b, (int)len, MPI_BYTE, MPI_STATUS_IGNORE));
                free(a);
                free(b);
            }
            /* the collective call ends the step; the layer then writes b, and
             * the call returns the failure on every rank */
            int rc = MPI_File_write_at_all(fh, 0, NULL, 0, MPI_BYTE, MPI_STATUS_IGNORE);
            expect_error(rc, "write_at_all after bytes written twice (on every rank)",
                         MPI_ERR_IO, too_large);
            expect_error(MPI_File_close(&fh), "MPI_File_close after the layer's write failed",
                         MPI_ERR_IO, too_large);
        }
    }
    /* 2: MPI_File_preallocate past rank 0's limit: every rank's call fails */
    {
        const char *name = "own_prealloc.mpiio";
        remove_file(name);
        MPI_File fh = open_file(name, MPI_MODE_WRONLY | MPI_MODE_CREATE);
        expect_state(fh, "after open", ST_TAKEN);
        if (fh != MPI_FILE_NULL) {
            expect_error(MPI_File_preallocate(fh, 2 << 20), "MPI_File_preallocate past the limit",
                         MPI_ERR_IO, too_large);
            close_file(&fh);
        }
    }
    if (g_rank == last || g_rank == 0)
        set_file_limit(RLIM_INFINITY);
    signal(SIGXFSZ, SIG_DFL);
    MPI_Barrier(MPI_COMM_WORLD);
}

/* ------------------------------------------------------------------------- */
/* Case: an asynchronous close that fails (not in --all: FWDIO_FAULT and       */
/* FWDIO_MPIIO_CLOSE=async, tests/mpiio/CMakeLists.txt)                        */
/* ------------------------------------------------------------------------- */

/* Every pwrite of async_fault.mpiio fails. With FWDIO_MPIIO_CLOSE=async the
   close may return before the failure is known: then the next MPI_File_open
   of the path returns it, on every rank alike, and the open after that
   works. A second such file is left to MPI_Finalize, which returns the
   failure (checked by the driver). */
static int g_expect_finalize_error;

static void case_async_close_fault(void)
{
    if (!g_layer) {
        if (g_rank == 0)
            note("skipped: without the layer FWDIO_FAULT has no effect");
        return;
    }
    const char *name = "async_fault.mpiio";
    const int64_t piece = 65536;
    uint8_t *b = pattern_buf(g_rank * piece, piece, seed_of(1));
    remove_file(name);
    MPI_File fh = open_file(name, MPI_MODE_WRONLY | MPI_MODE_CREATE);
    expect_state(fh, "after open", ST_TAKEN);
    if (fh == MPI_FILE_NULL) {
        free(b);
        return;
    }
    int rc = MPI_File_write_at_all(fh, g_rank * piece, b, (int)piece, MPI_BYTE,
                                   MPI_STATUS_IGNORE);
    int close_rc = MPI_File_close(&fh);
    int failed_by_close = rc != MPI_SUCCESS || close_rc != MPI_SUCCESS, all = 0;
    MPI_Allreduce(&failed_by_close, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    CHECK(all == 0 || all == g_size, "the close reported the failure on %d of %d ranks", all,
          g_size);
    if (!failed_by_close) { /* the next open of the path reports it */
        char p[4200];
        path_of(p, sizeof p, name);
        fh = MPI_FILE_NULL;
        rc = MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_WRONLY, MPI_INFO_NULL, &fh);
        expect_error(rc, "MPI_File_open after a failed asynchronous close", MPI_ERR_IO,
                     "asynchronous close failed");
        CHECK(fh == MPI_FILE_NULL, "a failed open returned a file handle");
        if (rc == MPI_SUCCESS && fh != MPI_FILE_NULL)
            MPI_File_close(&fh);
    } else if (g_rank == 0) {
        note("the failure came by the write or the close already");
    }
    fh = open_file(name, MPI_MODE_WRONLY); /* reported once: this one works */
    close_file(&fh);
    /* a second file, closed and left to MPI_Finalize */
    const char *name2 = "async_fault_final.mpiio";
    remove_file(name2);
    fh = open_file(name2, MPI_MODE_WRONLY | MPI_MODE_CREATE);
    if (fh != MPI_FILE_NULL) {
        rc = MPI_File_write_at_all(fh, g_rank * piece, b, (int)piece, MPI_BYTE,
                                   MPI_STATUS_IGNORE);
        close_rc = MPI_File_close(&fh);
        g_expect_finalize_error = rc == MPI_SUCCESS && close_rc == MPI_SUCCESS;
    }
    free(b);
}

/*
 * Memory datatypes whose bytes cover one range of the buffer but are listed
 * out of address order: MPI writes them in typemap order (as MPI_Pack packs
 * them). A struct of two halves listed high half first written
 * independently, a permuted hindexed_block written collectively, and
 * MPI_INTs (used in place) beside them; each rank's three regions must hold
 * its bytes packed, read back with POSIX calls after the close.
 */
static void case_memtype_order(void)
{
    enum { N = 96, PIECE = N * 4, REGION = 3 * PIECE };
    const char *name = "memtype_order.mpiio";
    remove_file(name);
    MPI_File fh = open_file(name, MPI_MODE_WRONLY | MPI_MODE_CREATE);
    expect_state(fh, "after open", ST_TAKEN);
    int buf[N];
    MPI_Aint rev[N];
    for (int i = 0; i < N; i++) {
        buf[i] = g_rank * 1000 + i;
        rev[i] = (MPI_Aint)(N - 1 - i) * 4;
    }
    MPI_Datatype perm, halves;
    OK(MPI_Type_create_hindexed_block(N, 4, rev, MPI_BYTE, &perm));
    OK(MPI_Type_commit(&perm));
    int hl[2] = {PIECE / 2, PIECE / 2};
    MPI_Aint hd[2] = {PIECE / 2, 0};
    MPI_Datatype ht[2] = {MPI_BYTE, MPI_BYTE};
    OK(MPI_Type_create_struct(2, hl, hd, ht, &halves));
    OK(MPI_Type_commit(&halves));
    MPI_Offset base = (MPI_Offset)g_rank * REGION;
    MPI_Status st;
    /* The independent write first, made visible (sync, barrier, sync)
     * before the collective ones: a collective write may read and write
     * back the gaps between its pieces (ompio does), which would race with
     * another rank's independent write there. */
    OK(MPI_File_write_at(fh, base + PIECE, buf, 1, halves, &st));
    OK(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    OK(MPI_File_sync(fh));
    OK(MPI_File_write_at_all(fh, base, buf, 1, perm, &st));
    OK(MPI_File_write_at_all(fh, base + 2 * PIECE, buf, N, MPI_INT, &st));
    expect_state(fh, "before close", ST_TAKEN);
    close_file(&fh);

    uint8_t want[REGION], got[REGION];
    int pos = 0;
    OK(MPI_Pack(buf, 1, perm, want, REGION, &pos, MPI_COMM_SELF));
    OK(MPI_Pack(buf, 1, halves, want, REGION, &pos, MPI_COMM_SELF));
    OK(MPI_Pack(buf, N, MPI_INT, want, REGION, &pos, MPI_COMM_SELF));
    CHECK(pos == REGION, "memtype_order: packed %d bytes, expected %d", pos, (int)REGION);
    char p[4200];
    path_of(p, sizeof p, name);
    int fd = open(p, O_RDONLY);
    ssize_t n = fd < 0 ? -1 : pread(fd, got, REGION, (off_t)base);
    if (fd >= 0)
        close(fd);
    CHECK(n == REGION, "memtype_order: read %zd of my %d bytes of %s", n, (int)REGION, p);
    for (int i = 0; n == REGION && i < REGION; i++)
        if (got[i] != want[i]) {
            fail("memtype_order: byte %d of %s region %d is %u, typemap order says %u (%s)",
                 i % PIECE, i < PIECE ? "the permuted" : i < 2 * PIECE ? "the struct" : "the int",
                 g_rank, got[i], want[i], "written in address order instead?");
            break;
        }
    MPI_Type_free(&perm);
    MPI_Type_free(&halves);
}

/* --- two handles of one file --------------------------------------------------- */

/* write_at of pattern bytes of `seed`, modelled (by every rank, for the
 * writing rank `who`). */
static void put_at(MPI_File fh, model_t *m, int who, int64_t off, int64_t len, uint64_t seed)
{
    if (g_rank == who) {
        uint8_t *b = pattern_buf(off, len, seed);
        MPI_Status st;
        OK(MPI_File_write_at(fh, off, b, (int)len, MPI_BYTE, &st));
        free(b);
    }
    model_put(m, off, len, seed);
}

/*
 * One process writes the same bytes through two handles of one file, and the
 * later write is what the file holds, as in every MPI-IO. File 1, PnetCDF's
 * independent data mode: rank 0 writes the header through the collective
 * handle, every rank opens the path again on MPI_COMM_SELF and writes its data
 * there, rank 0 writes the record count into the header through that second
 * handle, then both are closed (the second first), with and without a sync
 * of the second before. File 2: independent writes through the collective
 * handle whose step a write_at_all ends (it may still be on its way), then
 * each rank writes part of its bytes again through its own handle; and the
 * other way round, a write through the MPI_COMM_SELF handle written again
 * through the collective one. File 3: the second handle is one the layer
 * does not take. (Bytes of a collective write written again
 * through another handle without a sync are not ordered by ompio.) On one
 * rank, where both handles belong to the same ranks, the layer hands both to
 * MPI-IO.
 */
static void case_two_handles(void)
{
    const char *names[3] = {"two_handles.mpiio", "two_handles_sync.mpiio",
                            "two_handles_ended.mpiio"};
    for (int v = 0; v < 2; v++) {
        remove_file(names[v]);
        model_t m = {.holes_zero = g_layer};
        MPI_File fc = open_file(names[v], MPI_MODE_RDWR | MPI_MODE_CREATE);
        expect_state(fc, "the collective handle", ST_TAKEN);
        put_at(fc, &m, 0, 0, 232, seed_of(1)); /* the header */
        MPI_File fs = open_comm(MPI_COMM_SELF, names[v], MPI_MODE_RDWR);
        /* On one rank both handles belong to the same ranks: MPI-IO has both. */
        expect_state(fs, "the MPI_COMM_SELF handle", g_size > 1 ? ST_TAKEN : ST_ABSENT);
        expect_state(fc, "the collective handle after the second open",
                     g_size > 1 ? ST_TAKEN : ST_RELEASED);
        for (int q = 0; q < g_size; q++)
            put_at(fs, &m, q, 1000 + 500 * q, 500, seed_of(2));
        if (v == 1)
            OK(MPI_File_sync(fs));
        put_at(fs, &m, 0, 4, 8, seed_of(3)); /* the record count */
        close_file(&fs);
        close_file(&fc);
        check_file(names[v], &m);
        model_free(&m);
    }
    remove_file(names[2]);
    model_t m = {.holes_zero = g_layer};
    MPI_File fc = open_file(names[2], MPI_MODE_RDWR | MPI_MODE_CREATE);
    MPI_File fs = open_comm(MPI_COMM_SELF, names[2], MPI_MODE_RDWR);
    for (int q = 0; q < g_size; q++)
        put_at(fc, &m, q, 100 * q, 100, seed_of(4));
    /* a collective write ends the step of those (it may still be on its way) */
    uint8_t *b = pattern_buf(3000 + 10 * g_rank, 10, seed_of(8));
    MPI_Status st;
    OK(MPI_File_write_at_all(fc, 3000 + 10 * g_rank, b, 10, MPI_BYTE, &st));
    free(b);
    for (int q = 0; q < g_size; q++)
        model_put(&m, 3000 + 10 * q, 10, seed_of(8));
    for (int q = 0; q < g_size; q++)
        put_at(fs, &m, q, 100 * q + 10, 20, seed_of(5)); /* over the step just ended */
    for (int q = 0; q < g_size; q++)
        put_at(fs, &m, q, 5000 + 50 * q, 50, seed_of(6));
    for (int q = 0; q < g_size; q++)
        put_at(fc, &m, q, 5000 + 50 * q + 5, 10, seed_of(7)); /* over the other handle's */
    close_file(&fc);
    close_file(&fs);
    check_file(names[2], &m);
    model_free(&m);

    /* File 3: a second handle the layer does not take (MPI_MODE_DELETE_ON_CLOSE)
     * writes over bytes of the taken one's current step; the bytes are
     * checked before that handle's close deletes the file. */
    const char *name3 = "two_handles_untaken.mpiio";
    remove_file(name3);
    m = (model_t){.holes_zero = g_layer};
    fc = open_file(name3, MPI_MODE_RDWR | MPI_MODE_CREATE);
    for (int q = 0; q < g_size; q++)
        put_at(fc, &m, q, 100 * q, 100, seed_of(9));
    fs = open_comm(MPI_COMM_SELF, name3, MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE);
    expect_state(fs, "a MPI_MODE_DELETE_ON_CLOSE handle", ST_ABSENT);
    for (int q = 0; q < g_size; q++)
        put_at(fs, &m, q, 100 * q + 30, 40, seed_of(10));
    close_file(&fc);
    check_file(name3, &m);
    MPI_Barrier(MPI_COMM_WORLD);
    close_file(&fs);
    model_free(&m);
}

/* --- a memory type of 2^31 bytes ------------------------------------------------ */

/*
 * A memory type whose size is 2^31 bytes (MPI_Type_size says MPI_UNDEFINED,
 * MPI_Type_size_x the size) over a 4 KiB buffer: 2^19 blocks of 4096 bytes,
 * all at displacement 0 (a type that repeats bytes is legal to write). Rank 0
 * writes it with write_at_all at offset 0 (the status counts 2^31 bytes),
 * every rank calls iwrite_at_all with it (count 0), and the last rank writes
 * 4096 bytes after it. Rank 0 checks the file: the block 2^19 + 1 times.
 */
static void case_large_memtype(void)
{
    enum { BLOCK = 4096, NBLOCKS = 1 << 19 };
    const int64_t big = (int64_t)BLOCK * NBLOCKS;
    const char *name = "large_memtype.mpiio";
    remove_file(name);
    uint8_t *block = pattern_buf(0, BLOCK, seed_of(1));
    MPI_Aint *zeros = calloc(NBLOCKS, sizeof *zeros);
    MPI_Datatype t;
    OK(MPI_Type_create_hindexed_block(NBLOCKS, BLOCK, zeros, MPI_BYTE, &t));
    OK(MPI_Type_commit(&t));
    free(zeros);
    int size = 0;
    MPI_Count size_x = 0;
    MPI_Type_size(t, &size);
    MPI_Type_size_x(t, &size_x);
    CHECK(size == MPI_UNDEFINED && size_x == big,
          "large_memtype: MPI_Type_size %d, MPI_Type_size_x %lld", size, (long long)size_x);
    MPI_File fh = open_file(name, MPI_MODE_WRONLY | MPI_MODE_CREATE);
    MPI_Status st;
    OK(MPI_File_write_at_all(fh, 0, block, g_rank == 0 ? 1 : 0, t, &st));
    if (g_rank == 0) {
        MPI_Count got = 0;
        MPI_Get_elements_x(&st, MPI_BYTE, &got);
        CHECK(got == big, "large_memtype: write_at_all's status counts %lld bytes",
              (long long)got);
    }
    /* the nonblocking collective form, then a plain piece after the big one */
    MPI_Request req;
    OK(MPI_File_iwrite_at_all(fh, 0, block, 0, t, &req));
    OK(MPI_Wait(&req, &st));
    int last = g_size - 1;
    if (g_rank == last)
        OK(MPI_File_write_at(fh, big, block, BLOCK, MPI_BYTE, &st));
    close_file(&fh);
    MPI_Type_free(&t);
    MPI_Barrier(MPI_COMM_WORLD);
    if (g_rank == 0) {
        char p[4200];
        path_of(p, sizeof p, name);
        struct stat sb;
        CHECK(stat(p, &sb) == 0 && sb.st_size == big + BLOCK,
              "large_memtype: %s has %lld bytes, expected %lld", p, (long long)sb.st_size,
              (long long)(big + BLOCK));
        int fd = open(p, O_RDONLY);
        enum { CHUNK = 4 << 20 };
        uint8_t *got = malloc(CHUNK);
        for (int64_t at = 0; fd >= 0 && at < big + BLOCK; at += CHUNK) {
            ssize_t n = pread(fd, got, CHUNK, (off_t)at);
            int64_t want = big + BLOCK - at < CHUNK ? big + BLOCK - at : CHUNK;
            int bad = n != want;
            for (int64_t i = 0; !bad && i < n; i += BLOCK)
                bad = memcmp(got + i, block, BLOCK) != 0;
            if (bad) {
                fail("large_memtype: the 4 MiB at %lld are not the block repeated", (long long)at);
                break;
            }
        }
        free(got);
        if (fd >= 0)
            close(fd);
    }
    free(block);
}

/* --- an error's text under a long path ----------------------------------------- */

/* A refusal on a file whose path is long (225 bytes: longer ones crash Open
 * MPI 4.1's own open, whose shared-pointer component has a fixed buffer):
 * MPI_Error_string still gives the message whole (it comes first; the path
 * gives way, keeping its end). */
static void case_long_path(void)
{
    char sub[200];
    long sublen = 225 - (long)strlen(g_dir) - 1 - (long)strlen("/long_path.mpiio");
    sublen = sublen < 1 ? 1 : sublen > 199 ? 199 : sublen;
    memset(sub, 'd', (size_t)sublen);
    sub[sublen] = '\0';
    char dir[4400], p[4500];
    snprintf(dir, sizeof dir, "%s/%s", g_dir, sub);
    snprintf(p, sizeof p, "%s/long_path.mpiio", dir);
    if (g_rank == 0 && mkdir(dir, 0755) != 0 && errno != EEXIST)
        fail("long_path: mkdir %s: %s", dir, strerror(errno));
    if (g_rank == 0)
        unlink(p);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_File fh = MPI_FILE_NULL;
    if (!OK(MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_WRONLY | MPI_MODE_CREATE, MPI_INFO_NULL,
                          &fh)))
        return;
    MPI_File_set_errhandler(fh, MPI_ERRORS_RETURN);
    expect_state(fh, "after open", ST_TAKEN);
    uint8_t b[16] = {0};
    MPI_Status st;
    if (g_layer) {
        int rc = MPI_File_write_at(fh, -5, b, 16, MPI_BYTE, &st);
        char s[MPI_MAX_ERROR_STRING];
        int len = 0;
        s[0] = '\0';
        if (rc != MPI_SUCCESS)
            MPI_Error_string(rc, s, &len);
        CHECK(rc != MPI_SUCCESS && strstr(s, "MPI_File_write_at: a negative offset") &&
                  strstr(s, "long_path.mpiio)"),
              "long_path: a negative offset gave %s", err_text(rc));
    }
    OK(MPI_File_write_at(fh, 16 * g_rank, b, 16, MPI_BYTE, &st));
    close_file(&fh);
    MPI_Barrier(MPI_COMM_WORLD);
    if (g_rank == 0 && !g_keep_files) {
        unlink(p);
        rmdir(dir);
    }
}

/* --- same-step overlaps ------------------------------------------------------ */

enum { OV_HEAD = 4096, OV_INTS = 20, OV_STRIDE = 40, OV_TAIL = 8192, OV_ORDERED = 100 };

/* Rank q's byte at `off` of the overlap cases (generation g). */
static uint8_t ov_byte(int q, int g, int64_t off)
{
    return pattern_byte(seed_of(10 * g + q), (uint64_t)off);
}

/*
 * Writes MPI allows without a sync between, though several ranks write the
 * same bytes: every rank writes OV_HEAD bytes at offset 0 with its
 * individual pointer and syncs; then every rank writes one int at offset 0
 * with write_at_all (the "every rank writes the header" pattern) and OV_INTS
 * ints at OV_HEAD + OV_STRIDE r independently (each overlapping the next
 * rank's), and syncs. Every call succeeds.
 */
static void overlap_writes(MPI_File fh)
{
    MPI_Status st;
    uint8_t *b = malloc(OV_HEAD);
    for (int64_t i = 0; i < OV_HEAD; i++)
        b[i] = ov_byte(g_rank, 1, i);
    OK(MPI_File_write(fh, b, OV_HEAD, MPI_BYTE, &st));
    OK(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    OK(MPI_File_sync(fh));
    for (int64_t i = 0; i < 4; i++)
        b[i] = ov_byte(g_rank, 2, i);
    OK(MPI_File_write_at_all(fh, 0, b, 1, MPI_INT, &st));
    int64_t at = OV_HEAD + OV_STRIDE * g_rank;
    for (int64_t i = 0; i < 4 * OV_INTS; i++)
        b[i] = ov_byte(g_rank, 3, at + i);
    OK(MPI_File_write_at(fh, at, b, OV_INTS, MPI_INT, &st));
    OK(MPI_File_sync(fh));
    free(b);
}

/* Rank 0 reads the file: each byte of overlap_writes' range holds the byte
 * of one of the ranks that wrote it last; [OV_TAIL, end) is `tail` (may be
 * NULL); the size is `size`. */
static void overlap_check(const char *name, const uint8_t *tail, int64_t size)
{
    MPI_Barrier(MPI_COMM_WORLD);
    if (g_rank != 0)
        return;
    char p[4200];
    path_of(p, sizeof p, name);
    struct stat sb;
    CHECK(stat(p, &sb) == 0 && sb.st_size == size, "overlaps: %s has %lld bytes, expected %lld",
          p, (long long)(stat(p, &sb) == 0 ? sb.st_size : -1), (long long)size);
    uint8_t *got = calloc((size_t)size, 1);
    int fd = open(p, O_RDONLY);
    ssize_t n = fd < 0 ? -1 : pread(fd, got, (size_t)size, 0);
    if (fd >= 0)
        close(fd);
    CHECK(n == size, "overlaps: read %zd of %lld bytes of %s", n, (long long)size, p);
    for (int64_t i = 0; n == size && i < OV_TAIL; i++) {
        int one_of = 0, writers = 0;
        for (int q = 0; q < g_size; q++) {
            int64_t lo = OV_HEAD + OV_STRIDE * q, hi = lo + 4 * OV_INTS;
            int g = i < 4 ? 2 : i < OV_HEAD ? 1 : (i >= lo && i < hi) ? 3 : 0;
            if (g) {
                writers++;
                one_of |= got[i] == ov_byte(q, g, i);
            }
        }
        if (writers ? !one_of : got[i] != 0) {
            fail("overlaps: byte %lld of %s is %u: no rank that wrote it wrote that (%d wrote "
                 "it)", (long long)i, p, got[i], writers);
            break;
        }
    }
    for (int64_t i = OV_TAIL; tail && n == size && i < size; i++)
        if (got[i] != tail[i - OV_TAIL]) {
            fail("overlaps: byte %lld of %s is %u, expected %u", (long long)i, p, got[i],
                 tail[i - OV_TAIL]);
            break;
        }
    free(got);
}

/*
 * Same-step overlaps are legal MPI: afterwards the shared pointer moves and
 * an ordered write lands there, after the header (file 1); atomic mode can be
 * set and holds (file 2).
 */
static void case_overlaps(void)
{
    const char *name = "overlaps.mpiio", *name2 = "overlaps_atomic.mpiio";
    remove_file(name);
    remove_file(name2);
    MPI_File fh = open_file(name, MPI_MODE_WRONLY | MPI_MODE_CREATE);
    expect_state(fh, "after open", ST_TAKEN);
    overlap_writes(fh);
    expect_state(fh, "after the overlapping writes", ST_TAKEN);
    OK(MPI_File_seek_shared(fh, OV_TAIL, MPI_SEEK_SET));
    MPI_Offset shared = -1;
    OK(MPI_File_get_position_shared(fh, &shared));
    CHECK(shared == OV_TAIL, "overlaps: the shared pointer is at %lld after seek_shared(%d)",
          (long long)shared, OV_TAIL);
    MPI_Barrier(MPI_COMM_WORLD); /* no rank's ordered write moves it before all have looked */
    uint8_t mine[OV_ORDERED];
    for (int i = 0; i < OV_ORDERED; i++)
        mine[i] = ov_byte(g_rank, 4, i);
    MPI_Status st;
    OK(MPI_File_write_ordered(fh, mine, OV_ORDERED, MPI_BYTE, &st));
    close_file(&fh);
    uint8_t *tail = malloc((size_t)OV_ORDERED * (size_t)g_size);
    for (int q = 0; q < g_size; q++)
        for (int i = 0; i < OV_ORDERED; i++)
            tail[q * OV_ORDERED + i] = ov_byte(q, 4, i);
    overlap_check(name, tail, OV_TAIL + (int64_t)OV_ORDERED * g_size);

    fh = open_file(name2, MPI_MODE_RDWR | MPI_MODE_CREATE);
    overlap_writes(fh);
    OK(MPI_File_set_atomicity(fh, 1));
    int flag = 0;
    OK(MPI_File_get_atomicity(fh, &flag));
    CHECK(flag == 1, "overlaps: get_atomicity after set_atomicity(1) is %d", flag);
    /* atomic mode: the next rank's write is there after a barrier */
    int64_t at = OV_TAIL + OV_ORDERED * g_rank;
    OK(MPI_File_write_at(fh, at, mine, OV_ORDERED, MPI_BYTE, &st));
    MPI_Barrier(MPI_COMM_WORLD);
    int next = (g_rank + 1) % g_size;
    uint8_t got[OV_ORDERED];
    OK(MPI_File_read_at(fh, OV_TAIL + OV_ORDERED * next, got, OV_ORDERED, MPI_BYTE, &st));
    for (int i = 0; i < OV_ORDERED; i++)
        if (got[i] != ov_byte(next, 4, i)) {
            fail("overlaps: atomic mode: rank %d's byte %d read as %u, written %u", next, i,
                 got[i], ov_byte(next, 4, i));
            break;
        }
    close_file(&fh);
    overlap_check(name2, tail, OV_TAIL + (int64_t)OV_ORDERED * g_size);
    free(tail);
}

/* Write `len` pattern bytes of `seed` at `off`, independently, and model them on every rank. */
static void info_case_write(MPI_File fh, model_t *m, int64_t len, uint64_t seed)
{
    uint8_t *b = malloc((size_t)len);
    int64_t off = (int64_t)g_rank * len;
    for (int64_t i = 0; i < len; i++)
        b[i] = pattern_byte(seed, (uint64_t)(off + i));
    MPI_Status st;
    OK(MPI_File_write_at(fh, off, b, (int)len, MPI_BYTE, &st));
    free(b);
    for (int r = 0; r < g_size; r++)
        model_put(m, (int64_t)r * len, len, seed);
}

/*
 * Hints MPI-IO ignores do not keep the layer from taking a file: the info
 * MPI_File_get_info returns for a taken file (which holds the layer's own
 * key), passed on to the next open as PnetCDF does, with ROMIO's default
 * cb_config_list "*:*", and then with a cb_config_list of host names.
 */
static void case_info_reuse(void)
{
    const char *name = "info_reuse.mpiio";
    char p[4200];
    path_of(p, sizeof p, name);
    remove_file(name);
    model_t m = {.holes_zero = g_layer};
    MPI_File fh = open_file(name, MPI_MODE_WRONLY | MPI_MODE_CREATE);
    expect_state(fh, "after open", ST_TAKEN);
    info_case_write(fh, &m, 1000, seed_of(1));
    MPI_Info used = MPI_INFO_NULL;
    OK(MPI_File_get_info(fh, &used));
    close_file(&fh);
    const char *lists[] = {"*:*", "localhost:1,otherhost:2"};
    for (int i = 0; i < 2; i++) {
        MPI_Info_set(used, "cb_config_list", lists[i]);
        fh = MPI_FILE_NULL;
        int rc = MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_WRONLY, used, &fh);
        if (rc != MPI_SUCCESS) {
            fail("MPI_File_open(%s) with the info of the first open: %s", p, err_text(rc));
            break;
        }
        MPI_File_set_errhandler(fh, MPI_ERRORS_RETURN);
        char what[96];
        snprintf(what, sizeof what, "reopened with that info and cb_config_list \"%s\"", lists[i]);
        expect_state(fh, what, ST_TAKEN);
        info_case_write(fh, &m, 1000 + 300 * (int64_t)i, seed_of(2 + i));
        close_file(&fh);
    }
    MPI_Info_free(&used);
    check_file(name, &m);
    model_free(&m);
}

/* ------------------------------------------------------------------------- */
/* Driver                                                                     */
/* ------------------------------------------------------------------------- */

typedef struct {
    const char *name;
    void (*fn)(void);
    int in_all; /* run by --all */
} case_t;

static const case_t cases[] = {
    {"contig", case_contig, 1},
    {"independent", case_independent, 1},
    {"pointers", case_pointers, 1},
    {"view_subarray", case_view_subarray, 1},
    {"view_vector", case_view_vector, 1},
    {"view_hindexed", case_view_hindexed, 1},
    {"view_struct", case_view_struct, 1},
    {"view_sequence", case_view_sequence, 1},
    {"nonblocking", case_nonblocking, 1},
    {"sizes", case_sizes, 1},
    {"reopen", case_reopen, 1},
    {"shared", case_shared, 1},
    {"atomic", case_atomic, 1},
    {"darray", case_darray, 1},
    {"not_taken", case_not_taken, 1},
    {"own_read", case_own_read, 1},
    {"comm_self", case_comm_self, 1},
    {"split", case_split, 1},
    {"two_files", case_two_files, 1},
    {"async_close", case_async_close, 1},
    {"intercomm", case_intercomm, 1},
    {"memtype_order", case_memtype_order, 1},
    {"info_reuse", case_info_reuse, 1},
    {"overlaps", case_overlaps, 1},
    {"two_handles", case_two_handles, 1},
    {"finalize_close", case_finalize_close, 1},
    {"large_memtype", case_large_memtype, 0},
    {"long_path", case_long_path, 1},
    {"fault_eio", case_fault_eio, 0},
    {"fault_nospc", case_fault_nospc, 0},
    {"own_failures", case_own_failures, 0},
    {"own_read_limit", case_own_read_limit, 0},
    {"async_close_fault", case_async_close_fault, 0},
};
enum { NCASES = sizeof cases / sizeof cases[0] };

static void usage(void)
{
    fprintf(stderr,
            "usage: test_mpiio (--case NAME ... | --all) [--dir DIR] [--seed N] [--timeout S]\n"
            "                  [--layer yes|no] [--init plain|thread-single|thread-multiple]\n"
            "                  [--keep]\ncases:");
    for (int i = 0; i < NCASES; i++)
        fprintf(stderr, " %s%s", cases[i].name, cases[i].in_all ? "" : "(not in --all)");
    fprintf(stderr, "\n");
}

/* Every rank removes the files it opened in a case that passed. */
static void remove_case_files(void)
{
    if (!g_keep_files)
        for (int i = 0; i < g_ntrack; i++)
            if (!strstr(g_track[i], AFTER_FINALIZE_NAME))
                unlink(g_track[i]);
    g_ntrack = 0;
}

int main(int argc, char **argv)
{
    const char *selected[NCASES + 1];
    int nsel = 0, all = 0;
    unsigned timeout = 0;
    const char *init = "plain";
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--all") == 0) {
            all = 1;
        } else if (strcmp(a, "--keep") == 0) {
            g_keep_files = 1;
        } else if (v && strcmp(a, "--case") == 0) {
            if (nsel < NCASES)
                selected[nsel++] = v;
            i++;
        } else if (v && strcmp(a, "--dir") == 0) {
            snprintf(g_dir, sizeof g_dir, "%s", v);
            i++;
        } else if (v && strcmp(a, "--seed") == 0) {
            g_seed = strtoull(v, NULL, 10);
            i++;
        } else if (v && strcmp(a, "--timeout") == 0) {
            timeout = (unsigned)strtoul(v, NULL, 10);
            i++;
        } else if (v && strcmp(a, "--layer") == 0) {
            g_layer = strcmp(v, "yes") == 0;
            i++;
        } else if (v && strcmp(a, "--init") == 0) {
            init = v;
            i++;
        } else {
            usage();
            return 2;
        }
    }
    if (!all && nsel == 0) {
        usage();
        return 2;
    }
    for (int s = 0; s < nsel; s++) {
        int found = 0;
        for (int i = 0; i < NCASES; i++)
            found |= strcmp(cases[i].name, selected[s]) == 0;
        if (!found) {
            fprintf(stderr, "test_mpiio: unknown case %s\n", selected[s]);
            usage();
            return 2;
        }
    }
    {
        const char *c = getenv("FWDIO_MPIIO_CLOSE");
        g_async_close = c && strcmp(c, "async") == 0;
    }
    if (timeout) {
        signal(SIGALRM, on_alarm);
        alarm(timeout);
    }

    int provided = -1;
    if (strcmp(init, "thread-single") == 0)
        MPI_Init_thread(&argc, &argv, MPI_THREAD_SINGLE, &provided);
    else if (strcmp(init, "thread-multiple") == 0)
        MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    else
        MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_size);
    if (g_layer) {
        /* the layer asks MPI for MPI_THREAD_MULTIPLE when FWDIO_MPIIO is set */
        int level = -1;
        MPI_Query_thread(&level);
        CHECK(level == MPI_THREAD_MULTIPLE,
              "MPI_Query_thread after MPI_Init%s with the layer: %d, expected "
              "MPI_THREAD_MULTIPLE (%d)",
              strcmp(init, "plain") == 0 ? "" : "_thread", level, MPI_THREAD_MULTIPLE);
    }
    if (g_rank == 0) {
        if (mkdir(g_dir, 0755) != 0 && errno != EEXIST)
            fail("cannot create --dir %s: %s", g_dir, strerror(errno));
    }
    MPI_Barrier(MPI_COMM_WORLD);

    int case_failed = 0, ran = 0;
    for (int i = 0; i < NCASES; i++) {
        int run = all && cases[i].in_all;
        for (int s = 0; s < nsel; s++)
            run |= strcmp(cases[i].name, selected[s]) == 0;
        if (!run)
            continue;
        g_case = cases[i].name;
        g_case_failures = 0;
        if (g_rank == 0) {
            printf("test_mpiio: case %s on %d rank%s (%s)\n", g_case, g_size,
                   g_size > 1 ? "s" : "", g_layer ? "layer asserted" : "bytes only");
            fflush(stdout);
        }
        cases[i].fn();
        int mine = g_case_failures, sum = 0;
        MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        ran++;
        if (sum) {
            case_failed++;
            if (g_rank == 0)
                printf("test_mpiio: case %s FAILED (%d failures over all ranks; files kept in %s)\n",
                       g_case, sum, g_dir);
        } else {
            remove_case_files();
            if (g_rank == 0)
                printf("test_mpiio: case %s passed\n", g_case);
        }
        fflush(stdout);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    g_case = "finalize";
    int mine = g_failures, total = 0;
    MPI_Allreduce(&mine, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    int finalize_rc = MPI_Finalize();
    int before_checks = g_failures;
    /* a failed asynchronous close left to MPI_Finalize is its error */
    if (g_expect_finalize_error) {
        g_case = "async_close_fault (MPI_Finalize)";
        CHECK(finalize_rc != MPI_SUCCESS,
              "MPI_Finalize returned success after an asynchronous close that failed");
    }

    /* after MPI_Finalize: a file closed asynchronously is complete */
    if (g_check_after_finalize && g_rank == 0) {
        g_case = "async_close (after MPI_Finalize)";
        char p[4200];
        path_of(p, sizeof p, AFTER_FINALIZE_NAME);
        check_path_local(p, &g_after_finalize);
        CHECK(!file_exists(DELETED_NAME), "%s came back after MPI_Finalize", DELETED_NAME);
        if (!g_failures && !g_keep_files)
            unlink(p);
    }
    /* after MPI_Finalize: the file closed inside it is complete */
    if (g_check_self_closed && g_rank == 0) {
        g_case = "finalize_close (after MPI_Finalize)";
        char p[4200];
        path_of(p, sizeof p, SELF_CLOSED_NAME);
        check_path_local(p, &g_self_closed);
        if (!g_failures && !g_keep_files)
            unlink(p);
    }
    total += g_failures - before_checks;
    model_free(&g_after_finalize);
    model_free(&g_self_closed);
    if (g_rank == 0)
        printf("test_mpiio: %d case%s run, %d failed; %s\n", ran, ran == 1 ? "" : "s",
               case_failed, total ? "FAILED" : "all passed");
    return total ? 1 : 0;
}
