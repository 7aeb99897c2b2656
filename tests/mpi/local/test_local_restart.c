/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Restart from the nearest copy (node-local tier, local_restart.h):
 * fwdio_open_read with local_dir reads the newest complete version from the
 * local stores when every reader can reach it, else the target. To tell
 * where the bytes came from, the tests overwrite the data of the kept local
 * copies (not their indexes) with TAMPER bytes once the target holds the
 * pattern: a read that returns TAMPER read the local copies, one that
 * returns the pattern read the target. Cases (--case NAME, default all but
 * those that need a fault rule or fake hosts):
 *   restart    written on every rank (2 writers), drained: read back from
 *              the local copies by every rank, and by a runtime of fewer
 *              ranks with another reader count (any rank count);
 *   newer      then a later version written straight to the target (no
 *              tier): the read takes the target, the stale copies ignored;
 *   truncated  a local copy cut by one byte (its index gone): the target;
 *   missing    a local copy removed: the target;
 *   undrained  (FWDIO_FAULT: the last writer's pwrites to the target's
 *              temporary fail, with atomic_replace) v2 complete in the
 *              local stores, its drain failed, the target still v1: the
 *              read returns v2 from the local copies, never v1;
 *              With a checkpoint set (same fault): v2's fwdio_ckpt_wait
 *              fails in its drain, its ".local" manifest stays;
 *              fwdio_ckpt_latest with local_dir finds v2 (read from the
 *              local copies, checksum verified), without local_dir v1; v2's
 *              copies tampered: v1 (the checksum refuses them);
 *   evict      local_capacity for two files' copies (1 writer): drained
 *              copies are kept and the oldest evicted when a new file
 *              needs room (A, B, C: A's copy goes; D: B's), a restart of D
 *              reads its copy, of A the target; two files still draining
 *              (a drain cap) hold the room and are never evicted: a third
 *              is written straight to the target (local_wait off), all
 *              bytes right;
 *   hosts      (under local_hosts.sh: every rank on a fake host of its
 *              own, "h<rank % 2>", so local_dir "%h" is a directory per
 *              host): 2 writers on h0 and h1; readers on h0 and h1 reach
 *              their parts: local; two readers both on h0 cannot reach
 *              h1's copy: the target; a lone reader on h1: the target.
 */
#define _GNU_SOURCE
#include "test_common.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../apps/common/pattern.h"

enum { FILE_SIZE = 1 << 20, STRIPE = 64 << 10, TAMPER = 0x5a };

static fwdio_options_t tier_opts(const char *dir, int writers, int stride)
{
    fwdio_options_t o;
    fwdio_options_init(&o);
    o.stripe_size = STRIPE;
    o.write_size = STRIPE;
    o.layout = FWDIO_LAYOUT_CYCLIC;
    o.placement = FWDIO_PLACEMENT_STRIDE;
    o.writers = writers;
    o.first_writer = 0;
    o.writer_stride = stride;
    o.atomic_replace = 1;
    o.local_dir = dir;
    return o;
}

/* Write `path` (seed) on the runtime's ranks of `comm`, each its block,
 * with the tier in `dir` (NULL: straight to the target); wait for the
 * completion and the drain, whose status is `drained`. */
static void write_version(fwdio_runtime_t *rt, MPI_Comm comm, const char *path, const char *dir,
                          uint64_t seed, int drained)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    fwdio_options_t o = tier_opts(dir, size > 1 ? 2 : 1, 1);
    fwdio_file_t *f = NULL;
    TC_EXPECT(fwdio_open(rt, path, FILE_SIZE, &o, NULL, &f), FWDIO_OK, "fwdio_open");
    uint64_t share = FILE_SIZE / (uint64_t)size;
    uint64_t at = share * (uint64_t)rank;
    uint64_t len = rank == size - 1 ? FILE_SIZE - at : share;
    TC_EXPECT(tc_write_pattern(f, at, len, seed, 0), FWDIO_OK, "write");
    TC_EXPECT(fwdio_close(f), FWDIO_OK, "fwdio_close");
    TC_EXPECT(fwdio_wait(f), FWDIO_OK, "fwdio_wait");
    TC_EXPECT(fwdio_drain_wait(f), drained, "fwdio_drain_wait");
    fwdio_file_free(f);
    MPI_Barrier(comm);
}

/* Read `path` on the runtime's ranks of `comm` (readers: `readers`, every
 * `stride`-th rank) with the tier in `dir`, each rank the whole file; 1 if
 * every byte is TAMPER (the local copies), 0 if every byte is the pattern
 * of `seed` (the target), -1 else (a failure is recorded). */
static int read_source(fwdio_runtime_t *rt, MPI_Comm comm, const char *path, const char *dir,
                       int readers, int stride, uint64_t seed)
{
    fwdio_options_t o = tier_opts(dir, readers, stride);
    o.atomic_replace = 0;
    fwdio_file_t *f = NULL;
    unsigned char *buf = malloc(FILE_SIZE);
    TC_EXPECT(fwdio_open_read(rt, path, &o, NULL, &f), FWDIO_OK, "fwdio_open_read");
    TC_EXPECT(fwdio_read(f, buf, FILE_SIZE, 0, NULL, NULL), FWDIO_OK, "fwdio_read");
    TC_EXPECT(fwdio_close(f), FWDIO_OK, "fwdio_close (read)");
    TC_EXPECT(fwdio_wait(f), FWDIO_OK, "fwdio_wait (read)");
    fwdio_file_free(f);
    uint64_t tampered = 0, pattern = 0;
    for (uint64_t i = 0; i < FILE_SIZE; i++) {
        tampered += buf[i] == TAMPER;
        pattern += buf[i] == pattern_byte(seed, i);
    }
    free(buf);
    int got = tampered == FILE_SIZE ? 1 : pattern == FILE_SIZE ? 0 : -1;
    TC_CHECK(got >= 0, "read of %s: %llu bytes the local copies' TAMPER, %llu the target's "
             "pattern, of %d: neither source whole", path, (unsigned long long)tampered,
             (unsigned long long)pattern, FILE_SIZE);
    TC_CHECK(tc_all_same(comm, got), "ranks read %s from different sources", path);
    return got;
}

/* This host's local_dir for `pattern` ("%h" at its end expanded). */
static void host_dir(const char *pattern, char *out, size_t len)
{
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    size_t n = strlen(pattern);
    if (n >= 2 && !strcmp(pattern + n - 2, "%h"))
        snprintf(out, len, "%.*s%s", (int)(n - 2), pattern, host);
    else
        snprintf(out, len, "%s", pattern);
}

/* Apply `what` to every local file of `path` in this host's store: 't'
 * overwrite its data [0, FILE_SIZE) with TAMPER (the index after it stays),
 * 'c' cut its last byte, 'r' remove it (only the first file for 'c' and
 * 'r'). Returns the files found. */
static int local_files_do(const char *pattern, const char *path_of, char what)
{
    const char *base = strrchr(path_of, '/') ? strrchr(path_of, '/') + 1 : path_of;
    size_t blen = strlen(base);
    char dir[PATH_MAX];
    host_dir(pattern, dir, sizeof dir);
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    int n = 0;
    struct dirent *e;
    static unsigned char junk[FILE_SIZE];
    memset(junk, TAMPER, sizeof junk);
    while ((e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        if (len < 12 || strcmp(e->d_name + len - 12, ".fwdio-local") ||
            strncmp(e->d_name, base, blen) || e->d_name[blen] != '.')
            continue;
        char path[PATH_MAX + 300];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        n++;
        if (what == 't') {
            int fd = open(path, O_WRONLY);
            TC_CHECK(fd >= 0 && pwrite(fd, junk, sizeof junk, 0) == (ssize_t)sizeof junk,
                     "tamper %s", path);
            if (fd >= 0)
                close(fd);
        } else if (what == '-') {
            /* count only */
        } else if (what == 'c' && n == 1) {
            struct stat st;
            TC_CHECK(stat(path, &st) == 0 && truncate(path, st.st_size - 1) == 0, "cut %s", path);
        } else if (what == 'r' && n == 1) {
            TC_CHECK(unlink(path) == 0, "remove %s", path);
        }
    }
    closedir(d);
    return n;
}

/* ---- restart, newer, truncated, missing (one host) ---- */

static void case_restart(fwdio_runtime_t *rt, const char *path, const char *dir)
{
    tc_phase("restart: write");
    write_version(rt, MPI_COMM_WORLD, path, dir, 11, FWDIO_OK);
    TC_CHECK(tc_verify_full(MPI_COMM_WORLD, path, FILE_SIZE, 11) == 0, "drained bytes");
    if (tc_rank == 0)
        TC_CHECK(local_files_do(dir, path, 't') == (tc_size > 1 ? 2 : 1), "local copies kept");
    MPI_Barrier(MPI_COMM_WORLD);
    tc_phase("restart: read, every rank");
    TC_CHECK(read_source(rt, MPI_COMM_WORLD, path, dir, tc_size > 1 ? 2 : 1, 1, 11) == 1,
             "the restart read the target, not the local copies");
    /* another rank count: the first ranks but one, with their own runtime
     * and one reader fewer or more */
    int sub = tc_size > 1 ? tc_size - 1 : 1;
    MPI_Comm comm;
    MPI_Comm_split(MPI_COMM_WORLD, tc_rank < sub ? 0 : MPI_UNDEFINED, tc_rank, &comm);
    if (comm != MPI_COMM_NULL) {
        tc_phase("restart: read on %d ranks", sub);
        fwdio_runtime_t *rt2 = tc_start_runtime(comm, FWDIO_CALLBACKS_ON_PROGRESS);
        TC_CHECK(read_source(rt2, comm, path, dir, sub, 1, 11) == 1,
                 "the restart on %d ranks (%d readers) read the target", sub, sub);
        TC_CHECK(read_source(rt2, comm, path, dir, 1, 1, 11) == 1,
                 "the restart with 1 reader read the target");
        TC_EXPECT(fwdio_finalize(rt2), FWDIO_OK, "fwdio_finalize (sub)");
        MPI_Comm_free(&comm);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

static void case_newer(fwdio_runtime_t *rt, const char *path, const char *dir)
{
    tc_phase("newer: write without the tier");
    write_version(rt, MPI_COMM_WORLD, path, NULL, 22, FWDIO_OK);
    tc_phase("newer: read");
    TC_CHECK(read_source(rt, MPI_COMM_WORLD, path, dir, tc_size > 1 ? 2 : 1, 1, 22) == 0,
             "a stale local copy was read over a newer target");
}

/* Write with the tier (seed), tamper the kept copies, break one with
 * `what`, read: the target. */
static void case_broken(fwdio_runtime_t *rt, const char *path, const char *dir, char what,
                        uint64_t seed)
{
    tc_phase("%s: write", what == 'c' ? "truncated" : "missing");
    write_version(rt, MPI_COMM_WORLD, path, dir, seed, FWDIO_OK);
    if (tc_rank == 0) {
        local_files_do(dir, path, 't');
        local_files_do(dir, path, what);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    tc_phase("%s: read", what == 'c' ? "truncated" : "missing");
    TC_CHECK(read_source(rt, MPI_COMM_WORLD, path, dir, tc_size > 1 ? 2 : 1, 1, seed) == 0,
             "local copies read though one is %s", what == 'c' ? "cut short" : "missing");
}

/* ---- evict: bounded local space ---- */

enum { EVICT_SIZE = 256 << 10 };

/* Open, write (rank 0 alone: one writer), close and complete `path` with
 * local_capacity `cap` and a drain cap `bw`; the handle, not drained yet. */
static fwdio_file_t *write_small(fwdio_runtime_t *rt, const char *path, const char *dir,
                                 uint64_t cap, uint64_t bw, uint64_t seed)
{
    fwdio_options_t o = tier_opts(dir, 1, 1);
    o.local_capacity = cap;
    o.drain_bandwidth = bw;
    fwdio_file_t *f = NULL;
    TC_EXPECT(fwdio_open(rt, path, EVICT_SIZE, &o, NULL, &f), FWDIO_OK, "fwdio_open");
    if (tc_rank == 0)
        TC_EXPECT(tc_write_pattern(f, 0, EVICT_SIZE, seed, 0), FWDIO_OK, "write");
    TC_EXPECT(fwdio_close(f), FWDIO_OK, "fwdio_close");
    TC_EXPECT(fwdio_wait(f), FWDIO_OK, "fwdio_wait");
    return f;
}

static void drained(fwdio_file_t *f)
{
    TC_EXPECT(fwdio_drain_wait(f), FWDIO_OK, "fwdio_drain_wait");
    fwdio_file_free(f);
}

/* Which of the files named in `names` (n of them) have a local copy here,
 * as a bit mask (rank 0's view, sent to all). */
static int copies_of(const char *dir, char names[][PATH_MAX], int n)
{
    int mask = 0;
    if (tc_rank == 0)
        for (int i = 0; i < n; i++)
            mask |= local_files_do(dir, names[i], '-') > 0 ? 1 << i : 0;
    MPI_Bcast(&mask, 1, MPI_INT, 0, MPI_COMM_WORLD);
    return mask;
}

static void case_evict(fwdio_runtime_t *rt, const char *dir)
{
    char p[7][PATH_MAX];
    const char *names[7] = {"ev-a", "ev-b", "ev-c", "ev-d", "ev-e", "ev-f", "ev-g"};
    for (int i = 0; i < 7; i++)
        tc_path(p[i], sizeof p[i], names[i]);
    /* a copy takes the file and its index block: room for two */
    const uint64_t cap = 2 * (EVICT_SIZE + 4096) + 1024;
    tc_phase("evict: A, B");
    drained(write_small(rt, p[0], dir, cap, 0, 70));
    drained(write_small(rt, p[1], dir, cap, 0, 71));
    TC_CHECK(copies_of(dir, p, 4) == 0x3, "copies after A, B: mask %#x, expected A, B",
             copies_of(dir, p, 4));
    tc_phase("evict: C");
    drained(write_small(rt, p[2], dir, cap, 0, 72));
    TC_CHECK(copies_of(dir, p, 4) == 0x6, "copies after C: mask %#x, expected B, C (A the oldest "
             "evicted)", copies_of(dir, p, 4));
    tc_phase("evict: D");
    drained(write_small(rt, p[3], dir, cap, 0, 73));
    TC_CHECK(copies_of(dir, p, 4) == 0xc, "copies after D: mask %#x, expected C, D",
             copies_of(dir, p, 4));
    for (int i = 0; i < 4; i++)
        TC_CHECK(tc_verify_full(MPI_COMM_WORLD, p[i], EVICT_SIZE, 70 + (uint64_t)i) == 0,
                 "bytes of %s", names[i]);
    tc_phase("evict: E, F draining, G");
    /* E and F evict C and D; their drains, capped, still run when G opens:
     * nothing of theirs may go, so G is written straight to the target */
    fwdio_file_t *e = write_small(rt, p[4], dir, cap, 96 << 10, 74);
    fwdio_file_t *f = write_small(rt, p[5], dir, cap, 96 << 10, 75);
    int draining = 0, done = 0;
    fwdio_drain_test(e, &done);
    draining += !done;
    fwdio_drain_test(f, &done);
    draining += !done;
    fwdio_file_t *g = write_small(rt, p[6], dir, cap, 0, 76);
    int mask = copies_of(dir, p, 7);
    TC_CHECK(tc_all_same(MPI_COMM_WORLD, draining), "drain tests differ");
    if (draining == 2)
        TC_CHECK(mask == 0x30, "copies with E, F draining and G: mask %#x, expected E, F only "
                 "(G straight to the target)", mask);
    else
        tc_note("E and F drained before G opened (a slow machine): the check of undrained "
                "copies skipped");
    drained(e);
    drained(f);
    drained(g);
    for (int i = 4; i < 7; i++)
        TC_CHECK(tc_verify_full(MPI_COMM_WORLD, p[i], EVICT_SIZE, 70 + (uint64_t)i) == 0,
                 "bytes of %s", names[i]);
}

/* ---- undrained: the local copy newer than the target ---- */

static uint8_t ckpt_byte(uint64_t version, uint64_t i)
{
    return (uint8_t)(i * 131 + version * 17 + (i >> 9));
}

/* Write version `version` of set "set" in dir `cdir` through the tier in
 * `ldir`; fwdio_ckpt_wait's status. */
static int ckpt_version(fwdio_runtime_t *rt, const char *cdir, const char *ldir, uint64_t version)
{
    fwdio_options_t fo = tier_opts(ldir, tc_size > 1 ? 2 : 1, 1);
    fwdio_ckpt_options_t o;
    fwdio_ckpt_options_init(&o);
    o.dir = cdir;
    o.keep = 4;
    o.file = &fo;
    fwdio_ckpt_t *ck = NULL;
    TC_EXPECT(fwdio_ckpt_open(rt, "set", version, FILE_SIZE, &o, &ck), FWDIO_OK,
              "fwdio_ckpt_open");
    uint64_t share = FILE_SIZE / (uint64_t)tc_size, at = share * (uint64_t)tc_rank;
    uint64_t len = tc_rank == tc_size - 1 ? FILE_SIZE - at : share;
    unsigned char *buf = malloc(len);
    for (uint64_t i = 0; i < len; i++)
        buf[i] = ckpt_byte(version, at + i);
    TC_EXPECT(fwdio_ckpt_write(ck, buf, len, at), FWDIO_OK, "fwdio_ckpt_write");
    free(buf);
    TC_EXPECT(fwdio_ckpt_close(ck), FWDIO_OK, "fwdio_ckpt_close");
    int rc = fwdio_ckpt_wait(ck);
    fwdio_ckpt_free(ck);
    return rc;
}

/* fwdio_ckpt_latest of "set" (local_dir `ldir`, NULL: none); with `read`,
 * its bytes read back through fwdio_ckpt_open_read and checked. */
static uint64_t ckpt_latest(fwdio_runtime_t *rt, const char *cdir, const char *ldir, int read)
{
    fwdio_options_t fo = tier_opts(ldir, tc_size > 1 ? 2 : 1, 1);
    fo.atomic_replace = 0;
    fwdio_ckpt_options_t o;
    fwdio_ckpt_options_init(&o);
    o.dir = cdir;
    o.file = &fo;
    uint64_t v = 0;
    TC_EXPECT(fwdio_ckpt_latest(rt, "set", &o, &v), FWDIO_OK, "fwdio_ckpt_latest");
    if (!read)
        return v;
    fwdio_file_t *f = NULL;
    TC_EXPECT(fwdio_ckpt_open_read(rt, "set", v, &o, NULL, &f), FWDIO_OK, "fwdio_ckpt_open_read");
    unsigned char *buf = malloc(FILE_SIZE);
    TC_EXPECT(fwdio_read(f, buf, FILE_SIZE, 0, NULL, NULL), FWDIO_OK, "fwdio_read");
    TC_EXPECT(fwdio_close(f), FWDIO_OK, "fwdio_close (read)");
    TC_EXPECT(fwdio_wait(f), FWDIO_OK, "fwdio_wait (read)");
    fwdio_file_free(f);
    uint64_t bad = 0;
    for (uint64_t i = 0; i < FILE_SIZE; i++)
        bad += buf[i] != ckpt_byte(v, i);
    TC_CHECK(bad == 0, "version %llu read back: %llu bytes wrong", (unsigned long long)v,
             (unsigned long long)bad);
    free(buf);
    return v;
}

static void case_ckpt(const char *cdir, const char *ldir, const char *fault)
{
    tc_phase("ckpt: v1");
    fwdio_runtime_t *rt = tc_start_runtime(MPI_COMM_WORLD, FWDIO_CALLBACKS_ON_PROGRESS);
    TC_EXPECT(ckpt_version(rt, cdir, ldir, 1), FWDIO_OK, "fwdio_ckpt_wait (v1)");
    TC_EXPECT(fwdio_finalize(rt), FWDIO_OK, "fwdio_finalize");
    setenv("FWDIO_FAULT", fault, 1);
    rt = tc_start_runtime(MPI_COMM_WORLD, FWDIO_CALLBACKS_ON_PROGRESS);
    unsetenv("FWDIO_FAULT");
    tc_phase("ckpt: v2, its drain fails");
    TC_EXPECT(ckpt_version(rt, cdir, ldir, 2), FWDIO_EWRITE, "fwdio_ckpt_wait (v2)");
    TC_EXPECT(fwdio_finalize(rt), FWDIO_OK, "fwdio_finalize");
    tc_phase("ckpt: restart");
    rt = tc_start_runtime(MPI_COMM_WORLD, FWDIO_CALLBACKS_ON_PROGRESS);
    TC_CHECK(ckpt_latest(rt, cdir, ldir, 1) == 2, "fwdio_ckpt_latest did not find v2 in the "
                                                  "local stores");
    TC_CHECK(ckpt_latest(rt, cdir, NULL, 0) == 1, "without local_dir, not v1");
    char data[PATH_MAX + 32];
    snprintf(data, sizeof data, "%s/set.v2.ckpt", cdir);
    if (tc_rank == 0)
        TC_CHECK(local_files_do(ldir, data, 't') == (tc_size > 1 ? 2 : 1), "v2's local copies");
    MPI_Barrier(MPI_COMM_WORLD);
    TC_CHECK(ckpt_latest(rt, cdir, ldir, 1) == 1, "damaged local copies of v2 taken");
    TC_EXPECT(fwdio_finalize(rt), FWDIO_OK, "fwdio_finalize");
}

static int undrained_main(const char *path, const char *dir)
{
    tc_phase("undrained: v1");
    fwdio_runtime_t *rt = tc_start_runtime(MPI_COMM_WORLD, FWDIO_CALLBACKS_ON_PROGRESS);
    write_version(rt, MPI_COMM_WORLD, path, dir, 44, FWDIO_OK);
    TC_EXPECT(fwdio_finalize(rt), FWDIO_OK, "fwdio_finalize");
    char spec[128];
    /* the last writer: rank 1 of 2 (write_version) */
    snprintf(spec, sizeof spec, "pwrite:eio:path=fwdio-tmp:rank=%d", tc_size > 1 ? 1 : 0);
    setenv("FWDIO_FAULT", spec, 1);
    rt = tc_start_runtime(MPI_COMM_WORLD, FWDIO_CALLBACKS_ON_PROGRESS);
    unsetenv("FWDIO_FAULT");
    tc_phase("undrained: v2, its drain fails");
    write_version(rt, MPI_COMM_WORLD, path, dir, 55, FWDIO_EWRITE);
    TC_EXPECT(fwdio_finalize(rt), FWDIO_OK, "fwdio_finalize");
    TC_CHECK(tc_verify_full(MPI_COMM_WORLD, path, FILE_SIZE, 44) == 0, "the target keeps v1");
    tc_phase("undrained: restart");
    rt = tc_start_runtime(MPI_COMM_WORLD, FWDIO_CALLBACKS_ON_PROGRESS);
    TC_CHECK(read_source(rt, MPI_COMM_WORLD, path, dir, tc_size > 1 ? 2 : 1, 1, 55) == 0,
             "the restart did not read v2 from the local copies");
    /* and the bytes were the local copies': tampered, they read as such */
    if (tc_rank == 0)
        local_files_do(dir, path, 't');
    MPI_Barrier(MPI_COMM_WORLD);
    TC_CHECK(read_source(rt, MPI_COMM_WORLD, path, dir, tc_size > 1 ? 2 : 1, 1, 55) == 1,
             "the tampered local v2 was not what the restart read");
    TC_EXPECT(fwdio_finalize(rt), FWDIO_OK, "fwdio_finalize");
    char cdir[PATH_MAX], ldir[PATH_MAX];
    tc_path(cdir, sizeof cdir, "sets");
    tc_path(ldir, sizeof ldir, "local-sets");
    if (tc_rank == 0)
        mkdir(cdir, 0777);
    MPI_Barrier(MPI_COMM_WORLD);
    case_ckpt(cdir, ldir, spec);
    return tc_finish("test_local_restart");
}

/* ---- hosts: what a reader can reach ---- */

/* A runtime on the world ranks in `ranks`, reading with all of them as
 * readers; the source (1 local, 0 target) agreed, or -2 off the group. */
static int read_on(const int *ranks, int n, const char *path, const char *dir, uint64_t seed)
{
    int in = 0;
    for (int i = 0; i < n; i++)
        in |= ranks[i] == tc_rank;
    MPI_Comm comm;
    MPI_Comm_split(MPI_COMM_WORLD, in ? 0 : MPI_UNDEFINED, tc_rank, &comm);
    int got = -2;
    if (comm != MPI_COMM_NULL) {
        fwdio_runtime_t *rt = tc_start_runtime(comm, FWDIO_CALLBACKS_ON_PROGRESS);
        got = read_source(rt, comm, path, dir, n, 1, seed);
        TC_EXPECT(fwdio_finalize(rt), FWDIO_OK, "fwdio_finalize");
        MPI_Comm_free(&comm);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    return got;
}

static int hosts_main(const char *path, const char *base)
{
    if (tc_size < 4)
        return tc_skip("test_local_restart", "hosts needs 4 ranks");
    char host[256] = "", want[16];
    gethostname(host, sizeof host - 1);
    snprintf(want, sizeof want, "h%d", tc_rank % 2);
    if (strcmp(host, want)) /* not under local_hosts.sh */
        return tc_skip("test_local_restart", "hosts needs local_hosts.sh (fake host names)");
    char dir[PATH_MAX + 8];
    snprintf(dir, sizeof dir, "%s/%%h", base);
    tc_phase("hosts: write, writers on h0 and h1");
    fwdio_runtime_t *rt = tc_start_runtime(MPI_COMM_WORLD, FWDIO_CALLBACKS_ON_PROGRESS);
    write_version(rt, MPI_COMM_WORLD, path, dir, 66, FWDIO_OK);
    TC_EXPECT(fwdio_finalize(rt), FWDIO_OK, "fwdio_finalize");
    /* writer 0 is rank 0 (h0), writer 1 rank 1 (h1): one copy per host */
    if (tc_rank < 2)
        TC_CHECK(local_files_do(dir, path, 't') == 1, "%s: expected one local copy", host);
    MPI_Barrier(MPI_COMM_WORLD);
    const int both[2] = {0, 1}, h0[2] = {0, 2}, h1[1] = {1};
    tc_phase("hosts: readers on h0 and h1");
    int got = read_on(both, 2, path, dir, 66);
    TC_CHECK(got == -2 || got == 1, "readers on both hosts did not read the local copies");
    tc_phase("hosts: two readers on h0");
    got = read_on(h0, 2, path, dir, 66);
    TC_CHECK(got == -2 || got == 0, "readers on h0 read local copies they cannot reach");
    tc_phase("hosts: one reader on h1");
    got = read_on(h1, 1, path, dir, 66);
    TC_CHECK(got == -2 || got == 0, "a reader on h1 read local copies it cannot reach");
    return tc_finish("test_local_restart");
}

int main(int argc, char **argv)
{
    tc_mpi_init(&argc, &argv, 120);
    const char *only = NULL;
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--case") && i + 1 < argc)
            only = argv[++i];
    char dir[PATH_MAX], path[PATH_MAX];
    tc_path(dir, sizeof dir, "local");
    tc_path(path, sizeof path, "ckpt.dat");
    if (only && !strcmp(only, "undrained"))
        return undrained_main(path, dir);
    if (only && !strcmp(only, "hosts"))
        return hosts_main(path, dir);
    fwdio_runtime_t *rt = tc_start_runtime(MPI_COMM_WORLD, FWDIO_CALLBACKS_ON_PROGRESS);
    if (!only || !strcmp(only, "restart")) {
        case_restart(rt, path, dir);
        case_newer(rt, path, dir);
    }
    if (!only || !strcmp(only, "truncated")) {
        char p2[PATH_MAX];
        tc_path(p2, sizeof p2, "cut.dat");
        case_broken(rt, p2, dir, 'c', 33);
    }
    if (!only || !strcmp(only, "evict")) {
        /* local_wait off: a file that does not fit goes to the target at
         * once, so G shows that draining copies are never evicted for it
         * (waiting for them is test_local_tier's case "wait") */
        TC_EXPECT(fwdio_finalize(rt), FWDIO_OK, "fwdio_finalize");
        fwdio_config_t cfg;
        fwdio_config_init(&cfg);
        cfg.callback_mode = FWDIO_CALLBACKS_ON_PROGRESS;
        cfg.local_wait_ms = FWDIO_LOCAL_WAIT_OFF;
        rt = tc_start_runtime_with(MPI_COMM_WORLD, &cfg);
        char edir[PATH_MAX];
        tc_path(edir, sizeof edir, "local-evict");
        case_evict(rt, edir);
    }
    if (!only || !strcmp(only, "missing")) {
        char p3[PATH_MAX];
        tc_path(p3, sizeof p3, "gone.dat");
        case_broken(rt, p3, dir, 'r', 34);
    }
    TC_EXPECT(fwdio_finalize(rt), FWDIO_OK, "fwdio_finalize");
    return tc_finish("test_local_restart");
}
