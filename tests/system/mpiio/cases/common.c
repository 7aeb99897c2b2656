/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_mpiio: what its cases share (test_mpiio.h): failures, seeds, the model
 * of a file and the checks against it, opening and closing, flattened views.
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

#include "test_mpiio.h"

/* ------------------------------------------------------------------------- */
/* Globals, failures, the watchdog                                            */
/* ------------------------------------------------------------------------- */

int g_rank, g_size;
int g_layer = MPIIO_TEST_LAYER; /* assert the layer's get_info states */
const char *g_case = "setup";
char g_dir[4096] = ".";
uint64_t g_seed = 1;
int g_failures;      /* on this rank, all cases */
int g_case_failures; /* on this rank, the current case */
int g_keep_files;    /* --keep: do not remove the files of passed cases */
int g_code_text = 1; /* see test_mpiio.h */

#define MAX_FAIL_LINES 40
static int g_fail_lines;

void fail(const char *fmt, ...)
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

void note(const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stdout, "test_mpiio case %s rank %d: %s\n", g_case, g_rank, msg);
    fflush(stdout);
}

void on_alarm(int sig)
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

int mpi_keeps_code_text(void)
{
    const char *probe = "test_mpiio: a code's own text";
    char s[MPI_MAX_ERROR_STRING] = "";
    int code, len = 0;
    if (MPI_Add_error_code(MPI_ERR_IO, &code) != MPI_SUCCESS ||
        MPI_Add_error_string(code, probe) != MPI_SUCCESS)
        return 0;
    MPI_Error_string(code, s, &len);
    return strcmp(s, probe) == 0;
}

const char *err_text(int code)
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
int mpi_ok(int rc, const char *what, int line)
{
    if (rc == MPI_SUCCESS)
        return 1;
    fail("%s failed: %s [line %d]", what, err_text(rc), line);
    return 0;
}

/* ------------------------------------------------------------------------- */
/* Random numbers (the same sequence on every rank for the same seed)         */
/* ------------------------------------------------------------------------- */

static uint64_t rng_next(rng_t *r)
{
    uint64_t z = (r->s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

uint64_t rng_below(rng_t *r, uint64_t n) { return n ? rng_next(r) % n : 0; }

/* A seed for one generation of bytes of the current case. */
uint64_t seed_of(int generation)
{
    uint64_t h = g_seed * 1000003u;
    for (const char *p = g_case; *p; p++)
        h = h * 131u + (unsigned char)*p;
    return h * 31u + (uint64_t)generation + 1u;
}

/* ------------------------------------------------------------------------- */
/* The model of a file                                                        */
/* ------------------------------------------------------------------------- */

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
void model_set_size(model_t *m, int64_t size)
{
    model_reserve(m, size);
    if (size < m->size) {
        memset(m->b + size, 0, (size_t)(m->size - size));
        memset(m->def + size, 0, (size_t)(m->size - size));
    }
    m->size = size;
}

void model_byte(model_t *m, int64_t off, uint8_t v)
{
    if (off + 1 > m->size)
        model_set_size(m, off + 1);
    m->b[off] = v;
    m->def[off] = 1;
}

/* Bytes [off, off + len) written with the pattern of `seed`. */
void model_put(model_t *m, int64_t off, int64_t len, uint64_t seed)
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
void model_grow_undefined(model_t *m, int64_t size)
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

void model_free(model_t *m)
{
    free(m->b);
    free(m->def);
    memset(m, 0, sizeof *m);
}

/* Pattern bytes of file range [off, off + len) in a new buffer. */
uint8_t *pattern_buf(int64_t off, int64_t len, uint64_t seed)
{
    uint8_t *b = malloc(len > 0 ? (size_t)len : 1);
    for (int64_t i = 0; i < len; i++)
        b[i] = pattern_byte(seed, (uint64_t)(off + i));
    return b;
}

/* ------------------------------------------------------------------------- */
/* Paths, files, checks                                                       */
/* ------------------------------------------------------------------------- */

void path_of(char *out, size_t n, const char *name)
{
    snprintf(out, n, "%s/%s", g_dir, name);
}

/* Rank 0 removes the file (if any); every rank waits. */
void remove_file(const char *name)
{
    char p[4200];
    path_of(p, sizeof p, name);
    if (g_rank == 0)
        unlink(p);
    MPI_Barrier(MPI_COMM_WORLD);
}

/* Rank 0 writes the model's bytes to a fresh file with POSIX calls; every rank waits. */
void posix_create(const char *name, const model_t *m)
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
void check_path_local(const char *path, const model_t *m)
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

/* FWDIO_MPIIO_CLOSE=async, or FWDIO_LOCAL_DIR: a closed file is complete (at
   its path) only once the next MPI_File_open (or delete) of its path
   returned (or MPI_Finalize). */
int g_async_close;

void settle_path(MPI_Comm comm, const char *p)
{
    if (!g_async_close)
        return;
    MPI_File fh = MPI_FILE_NULL;
    if (OK(MPI_File_open(comm, p, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh)))
        OK(MPI_File_close(&fh));
}

/* After every rank closed the file: rank 0 checks it against the model. */
void check_file(const char *name, const model_t *m)
{
    char p[4200];
    path_of(p, sizeof p, name);
    settle_path(MPI_COMM_WORLD, p);
    MPI_Barrier(MPI_COMM_WORLD);
    if (g_rank == 0)
        check_path_local(p, m);
    MPI_Barrier(MPI_COMM_WORLD);
}

int file_exists(const char *name)
{
    char p[4200];
    struct stat st;
    path_of(p, sizeof p, name);
    return stat(p, &st) == 0;
}

char g_track[MAX_TRACK][4200];
int g_ntrack;

static void track(const char *path)
{
    for (int i = 0; i < g_ntrack; i++)
        if (strcmp(g_track[i], path) == 0)
            return;
    if (g_ntrack < MAX_TRACK)
        snprintf(g_track[g_ntrack++], sizeof g_track[0], "%s", path);
}

char g_left[MAX_LEFT][4200];
int g_nleft;

void leave_to_finalize(const char *name)
{
    char p[4200];
    path_of(p, sizeof p, name);
    for (int i = 0; i < g_ntrack; i++)
        if (strcmp(g_track[i], p) == 0) {
            memmove(g_track[i], g_track[i + 1], (size_t)(g_ntrack - i - 1) * sizeof g_track[0]);
            g_ntrack--;
            break;
        }
    if (g_nleft < MAX_LEFT)
        snprintf(g_left[g_nleft++], sizeof g_left[0], "%s", p);
}

/* Collective over comm. Returns MPI_FILE_NULL after a failure (reported). */
MPI_File open_comm(MPI_Comm comm, const char *name, int amode)
{
    return open_comm_info(comm, name, amode, MPI_INFO_NULL);
}

MPI_File open_comm_info(MPI_Comm comm, const char *name, int amode, MPI_Info info)
{
    char p[4200];
    path_of(p, sizeof p, name);
    MPI_File fh = MPI_FILE_NULL;
    int rc = MPI_File_open(comm, p, amode, info, &fh);
    if (rc != MPI_SUCCESS) {
        fail("MPI_File_open(%s, amode 0x%x): %s", p, amode, err_text(rc));
        return MPI_FILE_NULL;
    }
    track(p);
    MPI_File_set_errhandler(fh, MPI_ERRORS_RETURN);
    return fh;
}

MPI_File open_file(const char *name, int amode)
{
    return open_comm(MPI_COMM_WORLD, name, amode);
}

void close_file(MPI_File *fh)
{
    if (*fh == MPI_FILE_NULL)
        return;
    OK(MPI_File_close(fh));
}

static const char *const st_names[] = {"absent (not taken)", "\"taken\"", "\"released: ...\""};

/* With the layer: the file's "fwdio_mpiio" info key says `want`. */
void expect_state(MPI_File fh, const char *what, int want)
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
void check_buf(const char *what, const uint8_t *got, const model_t *m, int64_t off,
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

void check_count(const char *what, MPI_Status *st, MPI_Datatype t, int want)
{
    if (want == 0 && !g_layer)
        return; /* ROMIO leaves the status of an empty access as it was */
    int n = -1;
    MPI_Get_count(st, t, &n);
    CHECK(n == want, "%s: MPI_Get_count %d, expected %d", what, n, want);
}

void check_size(MPI_File fh, const char *what, int64_t want)
{
    MPI_Offset sz = -1;
    if (OK(MPI_File_get_size(fh, &sz)))
        CHECK(sz == want, "%s: MPI_File_get_size %lld, expected %lld", what, (long long)sz,
              (long long)want);
}

void check_position(MPI_File fh, const char *what, int64_t want)
{
    MPI_Offset pos = -1;
    if (OK(MPI_File_get_position(fh, &pos)))
        CHECK(pos == want, "%s: MPI_File_get_position %lld, expected %lld", what,
              (long long)pos, (long long)want);
}

void sync_barrier_sync(MPI_File fh)
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
void plain_settle(MPI_File fh)
{
    if (!g_layer)
        sync_barrier_sync(fh);
}

/* ------------------------------------------------------------------------- */
/* Flattened views: the byte blocks of one tile of a file or memory type,     */
/* written down by hand from the same parameters the MPI type is made of.     */
/* ------------------------------------------------------------------------- */

void flat_add(flat_t *f, int64_t off, int64_t len)
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

void flat_free(flat_t *f)
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
void model_view_put(model_t *m, int64_t disp, const flat_t *ff, int64_t k0,
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
uint8_t *view_mem(int64_t disp, const flat_t *ff, int64_t k0, int64_t nbytes,
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

void check_byte_offset(MPI_File fh, const char *what, int64_t pos, int64_t esize,
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
/* Helpers of several cases                                                   */
/* ------------------------------------------------------------------------- */

void write_rounds(MPI_File fh, model_t *m, int rounds, int64_t piece, int gen)
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

void expect_error(int rc, const char *what, int want_class, const char *want_text)
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
    CHECK(!g_code_text || strstr(s, want_text) != NULL, "%s: \"%s\" does not say \"%s\"", what, s,
          want_text);
}
