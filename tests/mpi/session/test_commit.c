/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Commit blocks (fwdio_set_commit) and atomic replace (options.atomic_replace).
 *
 * Every case writes a file whose bytes are the pattern, shared out in
 * stripes-sized pieces round robin over the ranks, except the commit block
 * (the last --commit bytes), which one rank hands to fwdio_set_commit. Cases:
 *   commit        the block lands and the file verifies whole;
 *   commit_fail   the data fails (two ranks write the same bytes): every rank
 *                 sees FWDIO_EOVERLAP and the block's bytes stay zero;
 *   commit_twice  two ranks set a block: FWDIO_EINVAL on every rank;
 *   commit_args   bad calls of fwdio_set_commit are refused at the call;
 *   atomic        an old file at the target is replaced only at completion:
 *                 while data flows the target still holds the old bytes, and
 *                 no temporary is left (a stale one from a "killed job" is
 *                 reused);
 *   atomic_fail   the data fails: the old file is intact, no temporary left;
 *   atomic_rename the target is a non-empty directory: rename fails, every
 *                 rank sees FWDIO_ECOMMIT with the committer's rank and
 *                 errno, and the temporary is removed.
 * After each failing case the next case's file must complete, on the same
 * runtime.
 *
 * With --dir DIR the program plays one side of a killed job instead (driven by
 * tests/mpi/session/commit_kill.cmake): `--kill` puts "previous checkpoint" at DIR/ckpt,
 * starts replacing it atomically, and every rank dies (_exit) after its
 * writes, before closing; `--after-kill` then checks that DIR/ckpt is the old
 * file, replaces it, verifies it, and checks that DIR holds nothing else.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fwdio.h"
#include "pattern.h"
#include "test_common.h"

enum { STRIPE = 64 << 10, WRITE_UNIT = 16 << 10 };

static const uint64_t FILE_SIZE = (3 << 20) + 12345;
static const size_t COMMIT_LEN = 100;

typedef struct case_file {
    char path[4096];
    uint64_t seed;
    fwdio_options_t opts;
    tc_cbstate_t cb;
    fwdio_file_t *f;
} case_file_t;

static fwdio_callback_mode_t g_mode = FWDIO_CALLBACKS_ON_POLL;

static void open_case(fwdio_runtime_t *rt, case_file_t *c, const char *name, uint64_t seed,
                      int atomic)
{
    tc_path(c->path, sizeof c->path, name);
    c->seed = seed;
    fwdio_options_init(&c->opts);
    c->opts.writers = tc_size > 1 ? 2 : 1;
    c->opts.stripe_size = STRIPE;
    c->opts.write_size = WRITE_UNIT;
    c->opts.atomic_replace = atomic;
    tc_cb_init(&c->cb);
    fwdio_callbacks_t cbs = tc_cb_callbacks(&c->cb);
    tc_phase("open %s", name);
    TC_EXPECT(fwdio_open(rt, c->path, FILE_SIZE, &c->opts, &cbs, &c->f), FWDIO_OK, "fwdio_open");
}

/* This rank's share of the data bytes [0, FILE_SIZE - COMMIT_LEN); with
 * `overlap`, rank 1 also writes rank 0's first piece. */
static void write_data(case_file_t *c, int overlap)
{
    const uint64_t data_end = FILE_SIZE - COMMIT_LEN;
    int piece = 0;
    for (uint64_t off = 0; off < data_end; off += STRIPE / 2, piece++) {
        uint64_t len = data_end - off < STRIPE / 2 ? data_end - off : STRIPE / 2;
        int mine = piece % tc_size == tc_rank || (overlap && piece == 0 && tc_rank == 1);
        if (mine)
            TC_EXPECT(tc_write_pattern(c->f, off, len, c->seed, 0), FWDIO_OK, "fwdio_write");
    }
}

static void set_commit(case_file_t *c)
{
    uint8_t block[128];
    pattern_fill(block, COMMIT_LEN, FILE_SIZE - COMMIT_LEN, c->seed);
    TC_EXPECT(fwdio_set_commit(c->f, block, COMMIT_LEN, FILE_SIZE - COMMIT_LEN), FWDIO_OK,
              "fwdio_set_commit");
}

/* Close, wait, check callbacks and the agreed status; return the status. */
static int finish_case(case_file_t *c, int want, const char *what)
{
    tc_phase("%s: close and wait", what);
    TC_EXPECT(fwdio_close(c->f), FWDIO_OK, "fwdio_close");
    int rc = fwdio_wait(c->f);
    TC_EXPECT(rc, want, what);
    tc_cb_check(MPI_COMM_WORLD, &c->cb, what, FWDIO_OK, want, g_mode, c->f);
    return rc;
}

/* The bytes [off, off + len) of path are all zero. */
static int all_zero(const char *path, uint64_t off, uint64_t len)
{
    uint64_t bad;
    return pattern_check_file(path, FILE_SIZE, off, len, 0, 1, &bad) == 0;
}

static int exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

static void temporary_of(const char *path, char *out, size_t len)
{
    const char *slash = strrchr(path, '/');
    snprintf(out, len, "%.*s/.%s.fwdio-tmp", (int)(slash - path), path, slash + 1);
}

/* Rank 0 puts `text` at path (the "previous checkpoint"). */
static void write_old_file(const char *path, const char *text)
{
    if (tc_rank == 0) {
        FILE *fp = fopen(path, "w");
        if (!fp || fputs(text, fp) < 0 || fclose(fp) != 0)
            tc_fail("cannot write %s: %s", path, strerror(errno));
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

static int file_is(const char *path, const char *text)
{
    char buf[256] = {0};
    FILE *fp = fopen(path, "r");
    if (!fp)
        return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, fp);
    fclose(fp);
    return n == strlen(text) && memcmp(buf, text, n) == 0;
}

static void case_commit(fwdio_runtime_t *rt)
{
    case_file_t c;
    open_case(rt, &c, "commit", 101, 0);
    write_data(&c, 0);
    if (tc_rank == tc_size - 1) /* a rank that is not a writer when size > 2 */
        set_commit(&c);
    if (finish_case(&c, FWDIO_OK, "commit") == FWDIO_OK)
        tc_verify_full(MPI_COMM_WORLD, c.path, FILE_SIZE, c.seed);
    fwdio_file_free(c.f);
}

static void case_commit_fail(fwdio_runtime_t *rt)
{
    if (tc_size < 2)
        return;
    case_file_t c;
    open_case(rt, &c, "commit_fail", 102, 0);
    write_data(&c, 1);
    if (tc_rank == 0)
        set_commit(&c);
    finish_case(&c, FWDIO_EOVERLAP, "commit_fail");
    if (tc_rank == 0)
        TC_CHECK(all_zero(c.path, FILE_SIZE - COMMIT_LEN, COMMIT_LEN),
                 "commit_fail: the commit block was written although the data failed");
    fwdio_file_free(c.f);
}

static void case_commit_twice(fwdio_runtime_t *rt)
{
    if (tc_size < 2)
        return;
    case_file_t c;
    open_case(rt, &c, "commit_twice", 103, 0);
    write_data(&c, 0);
    if (tc_rank == 0 || tc_rank == 1)
        set_commit(&c);
    finish_case(&c, FWDIO_EINVAL, "commit_twice");
    fwdio_error_info_t info;
    fwdio_file_error_info(c.f, &info);
    TC_CHECK(info.rank == 0, "commit_twice: error names rank %d, expected 0", info.rank);
    fwdio_file_free(c.f);
}

static void case_commit_args(fwdio_runtime_t *rt)
{
    case_file_t c;
    open_case(rt, &c, "commit_args", 104, 0);
    uint8_t b[8] = {0};
    TC_EXPECT(fwdio_set_commit(NULL, b, 8, 0), FWDIO_EINVAL, "set_commit(NULL file)");
    TC_EXPECT(fwdio_set_commit(c.f, NULL, 8, 0), FWDIO_EINVAL, "set_commit(NULL buf)");
    TC_EXPECT(fwdio_set_commit(c.f, b, 0, 0), FWDIO_EINVAL, "set_commit(len 0)");
    TC_EXPECT(fwdio_set_commit(c.f, b, 8, FILE_SIZE - 7), FWDIO_ERANGE, "set_commit(past end)");
    TC_EXPECT(fwdio_set_commit(c.f, b, 8, UINT64_MAX - 2), FWDIO_ERANGE, "set_commit(wrap)");
    write_data(&c, 0);
    if (tc_rank == 0) {
        set_commit(&c);
        TC_EXPECT(fwdio_set_commit(c.f, b, 8, 0), FWDIO_EINVAL, "set_commit twice on a rank");
    }
    finish_case(&c, FWDIO_OK, "commit_args");
    TC_EXPECT(fwdio_set_commit(c.f, b, 8, 0), FWDIO_ECLOSED, "set_commit after close");
    tc_verify_full(MPI_COMM_WORLD, c.path, FILE_SIZE, c.seed);
    fwdio_file_free(c.f);
}

static void case_atomic(fwdio_runtime_t *rt, int with_commit)
{
    const char *name = with_commit ? "atomic_commit" : "atomic";
    char path[4096], tmp[4096];
    tc_path(path, sizeof path, name);
    temporary_of(path, tmp, sizeof tmp);
    write_old_file(path, "previous checkpoint\n");
    write_old_file(tmp, "debris of a killed job\n");
    case_file_t c;
    open_case(rt, &c, name, 105 + (uint64_t)with_commit, 1);
    write_data(&c, 0);
    if (with_commit && tc_rank == 0)
        set_commit(&c);
    else if (!with_commit && tc_rank == 0) { /* plain data there instead */
        TC_EXPECT(tc_write_pattern(c.f, FILE_SIZE - COMMIT_LEN, COMMIT_LEN, c.seed, 0), FWDIO_OK,
                  "fwdio_write");
    }
    /* Nobody has closed yet: the target must still be the old file. */
    tc_poll_until_count(rt, &c.cb.ready_count, 1);
    MPI_Barrier(MPI_COMM_WORLD);
    if (tc_rank == 0)
        TC_CHECK(file_is(path, "previous checkpoint\n"),
                 "%s: target changed before the file was complete", name);
    MPI_Barrier(MPI_COMM_WORLD);
    if (finish_case(&c, FWDIO_OK, name) == FWDIO_OK)
        tc_verify_full(MPI_COMM_WORLD, path, FILE_SIZE, c.seed);
    if (tc_rank == 0)
        TC_CHECK(!exists(tmp), "%s: temporary %s left behind", name, tmp);
    fwdio_file_free(c.f);
}

static void case_atomic_fail(fwdio_runtime_t *rt)
{
    if (tc_size < 2)
        return;
    char path[4096], tmp[4096];
    tc_path(path, sizeof path, "atomic_fail");
    temporary_of(path, tmp, sizeof tmp);
    write_old_file(path, "previous checkpoint\n");
    case_file_t c;
    open_case(rt, &c, "atomic_fail", 107, 1);
    write_data(&c, 1);
    if (tc_rank == 0)
        set_commit(&c);
    finish_case(&c, FWDIO_EOVERLAP, "atomic_fail");
    if (tc_rank == 0) {
        TC_CHECK(file_is(path, "previous checkpoint\n"), "atomic_fail: the old file was changed");
        TC_CHECK(!exists(tmp), "atomic_fail: temporary %s left behind", tmp);
    }
    fwdio_file_free(c.f);
}

static void case_atomic_rename(fwdio_runtime_t *rt)
{
    char path[4096], tmp[4096], inside[4200];
    tc_path(path, sizeof path, "atomic_rename");
    temporary_of(path, tmp, sizeof tmp);
    snprintf(inside, sizeof inside, "%s/keep", path);
    if (tc_rank == 0 && mkdir(path, 0755) != 0)
        tc_fail("cannot make directory %s: %s", path, strerror(errno));
    write_old_file(inside, "kept\n");
    case_file_t c;
    open_case(rt, &c, "atomic_rename", 108, 1);
    write_data(&c, 0);
    if (tc_rank == 0)
        TC_EXPECT(tc_write_pattern(c.f, FILE_SIZE - COMMIT_LEN, COMMIT_LEN, c.seed, 0), FWDIO_OK,
                  "fwdio_write");
    finish_case(&c, FWDIO_ECOMMIT, "atomic_rename");
    int writers[2];
    fwdio_file_writers(c.f, writers, 2);
    fwdio_error_info_t info;
    fwdio_file_error_info(c.f, &info);
    TC_CHECK(info.rank == writers[0], "atomic_rename: error names rank %d, expected writer %d",
             info.rank, writers[0]);
    TC_CHECK(info.sys_errno == EISDIR || info.sys_errno == ENOTEMPTY,
             "atomic_rename: errno %d (%s), expected EISDIR or ENOTEMPTY", info.sys_errno,
             strerror(info.sys_errno));
    if (tc_rank == 0) {
        tc_note("atomic_rename: %s", fwdio_file_error(c.f));
        TC_CHECK(exists(inside), "atomic_rename: the directory's content is gone");
        TC_CHECK(!exists(tmp), "atomic_rename: temporary %s left behind", tmp);
    }
    fwdio_file_free(c.f);
}

/* Entries of dir other than "." and ".."; the first one's name in `first`. */
static int count_entries(const char *dir, char *first, size_t len)
{
    DIR *d = opendir(dir);
    int n = 0;
    if (!d)
        return -1;
    for (struct dirent *e; (e = readdir(d));) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        if (n++ == 0)
            snprintf(first, len, "%s", e->d_name);
    }
    closedir(d);
    return n;
}

static void killed_job(fwdio_runtime_t *rt, const char *dir, int kill)
{
    case_file_t c;
    char path[4096];
    snprintf(path, sizeof path, "%s/ckpt", dir);
    if (kill)
        write_old_file(path, "previous checkpoint\n");
    else if (tc_rank == 0)
        TC_CHECK(file_is(path, "previous checkpoint\n"), "after the kill: %s is not the old file",
                 path);
    tc_cb_init(&c.cb);
    fwdio_callbacks_t cbs = tc_cb_callbacks(&c.cb);
    fwdio_options_init(&c.opts);
    c.opts.writers = tc_size > 1 ? 2 : 1;
    c.opts.stripe_size = STRIPE;
    c.opts.write_size = WRITE_UNIT;
    c.opts.atomic_replace = 1;
    c.seed = 109;
    TC_EXPECT(fwdio_open(rt, path, FILE_SIZE, &c.opts, &cbs, &c.f), FWDIO_OK, "fwdio_open");
    write_data(&c, 0);
    if (tc_rank == 0)
        set_commit(&c);
    if (kill) {
        /* Let the data reach the temporary, then die without closing. */
        tc_poll_until_count(rt, &c.cb.ready_count, 1);
        MPI_Barrier(MPI_COMM_WORLD);
        fflush(NULL);
        _exit(3);
    }
    if (finish_case(&c, FWDIO_OK, "after the kill") == FWDIO_OK)
        tc_verify_full(MPI_COMM_WORLD, path, FILE_SIZE, c.seed);
    fwdio_file_free(c.f);
    if (tc_rank == 0) {
        char first[256] = "";
        int n = count_entries(dir, first, sizeof first);
        TC_CHECK(n == 1 && !strcmp(first, "ckpt"), "after the kill: %s holds %d entries (%s...)",
                 dir, n, first);
    }
}

int main(int argc, char **argv)
{
    unsigned timeout = 100;
    const char *dir = NULL;
    int kill = 0;
    for (int i = 1; i < argc; i++) {
        if (tc_common_option(argc, argv, &i, &timeout, &g_mode))
            continue;
        if (!strcmp(argv[i], "--dir") && i + 1 < argc)
            dir = argv[++i];
        else if (!strcmp(argv[i], "--kill"))
            kill = 1;
        else if (!strcmp(argv[i], "--after-kill"))
            kill = 0;
        else {
            fprintf(stderr, "usage: %s [--dir DIR --kill|--after-kill] "
                            "[--callback-mode poll|progress] [--timeout SEC]\n", argv[0]);
            return 2;
        }
    }
    tc_mpi_init(&argc, &argv, timeout);
    if (dir) {
        fwdio_runtime_t *rt = tc_start_runtime(MPI_COMM_WORLD, g_mode);
        killed_job(rt, dir, kill);
        TC_EXPECT(fwdio_finalize(rt), FWDIO_OK, "fwdio_finalize");
        return tc_finish("test_commit (after a killed job)");
    }
    (void)tc_tmpdir();
    fwdio_runtime_t *rt = tc_start_runtime(MPI_COMM_WORLD, g_mode);

    case_commit(rt);
    case_commit_fail(rt);
    case_commit_twice(rt);
    case_commit_args(rt);
    case_atomic(rt, 0);
    case_atomic_fail(rt);
    case_atomic(rt, 1);
    case_atomic_rename(rt);
    case_commit(rt); /* after all the failures, still fine */

    tc_phase("fwdio_finalize");
    TC_EXPECT(fwdio_finalize(rt), FWDIO_OK, "fwdio_finalize");
    return tc_finish("test_commit");
}
