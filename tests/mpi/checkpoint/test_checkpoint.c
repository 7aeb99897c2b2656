/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Checkpoint sets (include/fwdio.h, "Checkpoint sets") on real ranks, each
 * case checking the bytes in the files:
 *   keep      three versions with keep = 2 (one of them with lent writes and
 *             a commit record): two remain, each byte right;
 *   damaged   the newest version's data flipped, its manifest damaged or
 *             missing, an older one truncated: fwdio_ckpt_latest falls back
 *             (to nothing at last), the same on every rank;
 *   disagree  ranks passing different versions, names or keep: the same
 *             FWDIO_EINVAL everywhere, no file made, no hang;
 *   fault     a pwrite failing (FWDIO_FAULT) in a version's data, and the
 *             rename of its manifest failing: the same error everywhere and
 *             no complete-looking version.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ckpt_files.h"
#include "test_common.h"

static fwdio_callback_mode_t g_mode = FWDIO_CALLBACKS_ON_POLL;

/* The byte at `offset` of version `version`. */
static unsigned char byte_of(uint64_t version, uint64_t offset)
{
    return (unsigned char)((offset * 131u + version * 7u + (offset >> 9)) & 0xff);
}

static void lent_back(fwdio_file_t *file, const void *buf, int status, void *arg)
{
    (void)file;
    (void)buf;
    if (status != FWDIO_OK)
        tc_fail("a lent write ended with %d", status);
    (void)arg;
}

/* Rank r writes its share of the version in pieces of uneven sizes, the
 * last rank the rest; with `lent`, every other piece is lent
 * (fwdio_ckpt_write_lent) and the file's last 16 bytes are rank 0's commit
 * record (fwdio_ckpt_set_commit). Returns the wait's status. */
static int write_version_with(fwdio_runtime_t *rt, const char *name, uint64_t version,
                              uint64_t size, const fwdio_ckpt_options_t *o, int lent)
{
    fwdio_ckpt_t *ck = NULL;
    int rc = fwdio_ckpt_open(rt, name, version, size, o, &ck);
    if (rc != FWDIO_OK)
        return rc;
    uint64_t share = size / (uint64_t)tc_size;
    uint64_t from = share * (uint64_t)tc_rank;
    uint64_t to = tc_rank == tc_size - 1 ? size : from + share;
    const uint64_t commit = lent && size >= 16 ? 16 : 0;
    if (to > size - commit)
        to = size - commit > from ? size - commit : from;
    unsigned char *buf = malloc(to > from ? to - from : 1);
    for (uint64_t o2 = from; o2 < to; o2++)
        buf[o2 - from] = byte_of(version, o2);
    int k = 0;
    for (uint64_t off = from, piece = 1000; off < to; piece = piece * 3 % 70001 + 17, k++) {
        uint64_t len = to - off < piece ? to - off : piece;
        if (lent && k % 2)
            TC_EXPECT(fwdio_ckpt_write_lent(ck, buf + (off - from), (size_t)len, off, lent_back,
                                            NULL),
                      FWDIO_OK, "fwdio_ckpt_write_lent");
        else
            TC_EXPECT(fwdio_ckpt_write(ck, buf + (off - from), (size_t)len, off), FWDIO_OK,
                      "fwdio_ckpt_write");
        off += len;
    }
    if (commit && tc_rank == 0) {
        unsigned char rec[16];
        for (uint64_t i = 0; i < commit; i++)
            rec[i] = byte_of(version, size - commit + i);
        TC_EXPECT(fwdio_ckpt_set_commit(ck, rec, sizeof rec, size - commit), FWDIO_OK,
                  "fwdio_ckpt_set_commit");
    }
    TC_EXPECT(fwdio_ckpt_close(ck), FWDIO_OK, "fwdio_ckpt_close");
    rc = fwdio_ckpt_wait(ck); /* the lent buffer is back once the file is complete */
    fwdio_ckpt_free(ck);
    free(buf);
    return rc;
}

static int write_version(fwdio_runtime_t *rt, const char *name, uint64_t version, uint64_t size,
                         const fwdio_ckpt_options_t *o)
{
    return write_version_with(rt, name, version, size, o, 0);
}

static int exists(const char *dir, const char *name, uint64_t version, const char *suffix)
{
    return ckpt_exists(dir, name, version, suffix);
}

/* Rank 0 checks every byte of a version's data file. */
static void check_bytes(const char *dir, const char *name, uint64_t version, uint64_t size)
{
    ckpt_check_bytes(dir, name, version, size, byte_of);
}

/* The answer of fwdio_ckpt_latest, checked to be the same on every rank. */
static int latest(fwdio_runtime_t *rt, const char *name, const fwdio_ckpt_options_t *o,
                  uint64_t *version)
{
    *version = UINT64_MAX;
    int rc = fwdio_ckpt_latest(rt, name, o, version);
    TC_CHECK(tc_all_same(MPI_COMM_WORLD, rc) && tc_all_same(MPI_COMM_WORLD, (long)*version),
             "fwdio_ckpt_latest: ranks got different answers");
    return rc;
}

/* Rank 0 flips one byte of a file at `offset`, or cuts it to `cut` bytes. */
static void damage(const char *dir, const char *file, long offset, long cut)
{
    if (tc_rank == 0) {
        char p[4096];
        snprintf(p, sizeof p, "%s/%s", dir, file);
        int fd = open(p, O_RDWR);
        TC_CHECK(fd >= 0, "open %s: %s", p, strerror(errno));
        if (fd >= 0) {
            if (cut >= 0)
                TC_CHECK(ftruncate(fd, cut) == 0, "ftruncate %s", p);
            else {
                unsigned char b = 0;
                TC_CHECK(pread(fd, &b, 1, offset) == 1, "pread %s", p);
                b ^= 0x40;
                TC_CHECK(pwrite(fd, &b, 1, offset) == 1, "pwrite %s", p);
            }
            close(fd);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

/* Read version `version` back through fwdio_ckpt_open_read: every rank
 * reads the whole file and checks it. */
static void read_back(fwdio_runtime_t *rt, const char *name, uint64_t version, uint64_t size,
                      const fwdio_ckpt_options_t *o)
{
    fwdio_file_t *f = NULL;
    int rc = fwdio_ckpt_open_read(rt, name, version, o, NULL, &f);
    TC_EXPECT(rc, FWDIO_OK, "fwdio_ckpt_open_read");
    if (rc != FWDIO_OK)
        return;
    unsigned char *buf = malloc(size ? size : 1);
    TC_EXPECT(fwdio_read(f, buf, size, 0, NULL, NULL), FWDIO_OK, "fwdio_read");
    TC_EXPECT(fwdio_close(f), FWDIO_OK, "fwdio_close (read)");
    TC_EXPECT(fwdio_wait(f), FWDIO_OK, "fwdio_wait (read)");
    fwdio_file_free(f);
    uint64_t bad = 0;
    for (uint64_t i = 0; i < size; i++)
        bad += buf[i] != byte_of(version, i);
    TC_CHECK(bad == 0, "read back of version %llu: %llu bytes wrong", (unsigned long long)version,
             (unsigned long long)bad);
    free(buf);
}

static void case_keep_and_damage(fwdio_runtime_t *rt, const char *dir)
{
    fwdio_ckpt_options_t o;
    fwdio_ckpt_options_init(&o);
    o.dir = dir;
    o.keep = 2;
    const uint64_t size = 300007;
    tc_phase("keep: three versions");
    for (uint64_t v = 1; v <= 3; v++) /* version 2 lent, with a commit record */
        TC_EXPECT(write_version_with(rt, "ck", v, size + v, &o, v == 2), FWDIO_OK,
                  "fwdio_ckpt_wait");
    MPI_Barrier(MPI_COMM_WORLD);
    TC_CHECK(!exists(dir, "ck", 1, "ckpt") && !exists(dir, "ck", 1, "manifest"),
             "version 1 not removed with keep = 2");
    for (uint64_t v = 2; v <= 3; v++) {
        TC_CHECK(exists(dir, "ck", v, "manifest"), "version %llu has no manifest",
                 (unsigned long long)v);
        check_bytes(dir, "ck", v, size + v);
    }
    uint64_t v;
    TC_EXPECT(latest(rt, "ck", &o, &v), FWDIO_OK, "latest");
    TC_CHECK(v == 3, "latest is %llu, want 3", (unsigned long long)v);
    read_back(rt, "ck", 3, size + 3, &o);

    tc_phase("damaged: a flipped byte of the newest data");
    damage(dir, "ck.v3.ckpt", 123457, -1);
    TC_EXPECT(fwdio_ckpt_verify(rt, "ck", 3, &o), FWDIO_ECHECKSUM, "verify of flipped data");
    TC_EXPECT(latest(rt, "ck", &o, &v), FWDIO_OK, "latest");
    TC_CHECK(v == 2, "latest over damaged data is %llu, want 2", (unsigned long long)v);

    tc_phase("damaged: rewrite of the version, then its manifest damaged");
    TC_EXPECT(write_version(rt, "ck", 3, size + 3, &o), FWDIO_OK, "rewrite of version 3");
    TC_EXPECT(latest(rt, "ck", &o, &v), FWDIO_OK, "latest");
    TC_CHECK(v == 3, "latest after the rewrite is %llu, want 3", (unsigned long long)v);
    check_bytes(dir, "ck", 3, size + 3);
    damage(dir, "ck.v3.manifest", 30, -1);
    TC_EXPECT(latest(rt, "ck", &o, &v), FWDIO_OK, "latest");
    TC_CHECK(v == 2, "latest over a damaged manifest is %llu, want 2", (unsigned long long)v);
    TC_EXPECT(fwdio_ckpt_verify(rt, "ck", 3, &o), FWDIO_ENOCKPT, "verify of a bad manifest");

    tc_phase("damaged: the manifest missing, then the older data truncated");
    if (tc_rank == 0) {
        char p[4096];
        snprintf(p, sizeof p, "%s/ck.v3.manifest", dir);
        TC_CHECK(unlink(p) == 0, "unlink %s", p);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    TC_EXPECT(latest(rt, "ck", &o, &v), FWDIO_OK, "latest");
    TC_CHECK(v == 2, "latest without the newest manifest is %llu, want 2", (unsigned long long)v);
    fwdio_file_t *f = NULL;
    TC_EXPECT(fwdio_ckpt_open_read(rt, "ck", 3, &o, NULL, &f), FWDIO_ENOCKPT,
              "open_read of a version without manifest");
    damage(dir, "ck.v2.ckpt", 0, 1000);
    TC_EXPECT(latest(rt, "ck", &o, &v), FWDIO_ENOCKPT, "latest with nothing intact");
    TC_EXPECT(latest(rt, "nothing", &o, &v), FWDIO_ENOCKPT, "latest of an empty set");
}

static void case_disagree(fwdio_runtime_t *rt, const char *dir)
{
    fwdio_ckpt_options_t o;
    fwdio_ckpt_options_init(&o);
    o.dir = dir;
    fwdio_ckpt_t *ck = (fwdio_ckpt_t *)&o; /* must be set to NULL on refusal */
    tc_phase("disagree: versions");
    TC_EXPECT(fwdio_ckpt_open(rt, "dis", tc_rank == 1 ? 8 : 7, 4096, &o, &ck), FWDIO_EINVAL,
              "ranks passing different versions");
    TC_CHECK(ck == NULL, "a refused open left a handle");
    tc_phase("disagree: names, one of them invalid");
    TC_EXPECT(fwdio_ckpt_open(rt, tc_rank == 0 ? "dis" : "d/s", 7, 4096, &o, &ck), FWDIO_EINVAL,
              "ranks passing different names");
    tc_phase("disagree: keep");
    fwdio_ckpt_options_t o2 = o;
    o2.keep = tc_rank == 0 ? 3 : 2;
    TC_EXPECT(fwdio_ckpt_open(rt, "dis", 7, 4096, &o2, &ck), FWDIO_EINVAL,
              "ranks passing different keep");
    tc_phase("disagree: sizes");
    TC_EXPECT(fwdio_ckpt_open(rt, "dis", 7, tc_rank == 0 ? 4096 : 4097, &o, &ck), FWDIO_EINVAL,
              "ranks passing different sizes");
    tc_phase("disagree: the data file's options refused on one rank only");
    {
        fwdio_options_t bad;
        fwdio_options_init(&bad);
        bad.writers = -1; /* refused at fwdio_open */
        fwdio_ckpt_options_t o4 = o;
        o4.file = tc_rank == tc_size - 1 ? &bad : NULL;
        int rc = fwdio_ckpt_open(rt, "dis", 7, 4096, &o4, &ck);
        TC_CHECK(rc != FWDIO_OK && ck == NULL, "an open refused on rank %d only: %s here",
                 tc_size - 1, fwdio_strerror(rc));
        TC_CHECK(tc_all_same(MPI_COMM_WORLD, rc != FWDIO_OK), "ranks disagree on the refusal");
    }
    tc_phase("disagree: latest of different sets");
    uint64_t v;
    TC_EXPECT(latest(rt, tc_rank == 0 ? "dis" : "other", &o, &v), FWDIO_EINVAL,
              "latest of different names");
    tc_phase("refused everywhere: a directory too long for a path");
    static char longdir[5000];
    memset(longdir, 'd', sizeof longdir - 1);
    fwdio_ckpt_options_t o3 = o;
    o3.dir = longdir;
    TC_EXPECT(latest(rt, "dis", &o3, &v), FWDIO_EINVAL, "latest in a directory too long");
    TC_EXPECT(fwdio_ckpt_verify(rt, "dis", 1, &o3), FWDIO_EINVAL, "verify in a directory too long");
    TC_EXPECT(fwdio_ckpt_open(rt, "dis", 7, 4096, &o3, &ck), FWDIO_EINVAL,
              "open in a directory too long");
    MPI_Barrier(MPI_COMM_WORLD);
    TC_CHECK(!exists(dir, "dis", 7, "ckpt") && !exists(dir, "dis", 8, "ckpt") &&
                 !exists(dir, "dis", 7, "manifest"),
             "a refused version left files");
    /* And the runtime goes on. */
    TC_EXPECT(write_version(rt, "dis", 9, 5000, &o), FWDIO_OK, "a version after the refusals");
    check_bytes(dir, "dis", 9, 5000);
}

/* Run with FWDIO_FAULT naming "bad.v5.ckpt" (pwrite) and "bad.v6.manifest"
 * (rename): versions 5 and 6 fail, version 4 stays the newest. */
static void case_fault(fwdio_runtime_t *rt, const char *dir)
{
    fwdio_ckpt_options_t o;
    fwdio_ckpt_options_init(&o);
    o.dir = dir;
    o.keep = 1;
    tc_phase("fault: a good version");
    TC_EXPECT(write_version(rt, "bad", 4, 200000, &o), FWDIO_OK, "version 4");
    tc_phase("fault: a failing pwrite");
    int rc = write_version(rt, "bad", 5, 200000, &o);
    TC_EXPECT(rc, FWDIO_EWRITE, "version 5 with a failing pwrite");
    TC_CHECK(tc_all_same(MPI_COMM_WORLD, rc), "ranks disagree on version 5's status");
    tc_phase("fault: a failing rename of the manifest");
    rc = write_version(rt, "bad", 6, 200000, &o);
    TC_EXPECT(rc, FWDIO_ECOMMIT, "version 6 whose manifest cannot be renamed");
    TC_CHECK(tc_all_same(MPI_COMM_WORLD, rc), "ranks disagree on version 6's status");
    MPI_Barrier(MPI_COMM_WORLD);
    TC_CHECK(!exists(dir, "bad", 5, "manifest") && !exists(dir, "bad", 6, "manifest"),
             "a failed version has a manifest");
    TC_CHECK(!exists(dir, "bad", 5, "ckpt"), "a failed atomic data file is in place");
    TC_CHECK(exists(dir, "bad", 4, "manifest"), "version 4 was removed by a failed version");
    uint64_t v;
    TC_EXPECT(latest(rt, "bad", &o, &v), FWDIO_OK, "latest after failures");
    TC_CHECK(v == 4, "latest after failures is %llu, want 4", (unsigned long long)v);
    check_bytes(dir, "bad", 4, 200000);
}

int main(int argc, char **argv)
{
    unsigned timeout = 100;
    const char *which = "all";
    for (int i = 1; i < argc; i++) {
        if (tc_common_option(argc, argv, &i, &timeout, &g_mode))
            continue;
        if (!strcmp(argv[i], "--case") && i + 1 < argc)
            which = argv[++i];
        else {
            fprintf(stderr, "usage: %s [--case keep|disagree|fault] [--callback-mode poll|progress]"
                            " [--timeout SEC]\n", argv[0]);
            return 2;
        }
    }
    tc_mpi_init(&argc, &argv, timeout);
    const char *dir = tc_tmpdir();
    if (!strcmp(which, "fault")) {
        char rules[8192];
        /* the data goes to its temporary, ".bad.v5.ckpt.fwdio-tmp" */
        snprintf(rules, sizeof rules, "pwrite:eio:path=%s/.bad.v5.ckpt;rename:eio:path=bad.v6.manifest",
                 dir);
        setenv("FWDIO_FAULT", rules, 1);
    }
    fwdio_runtime_t *rt = tc_start_runtime(MPI_COMM_WORLD, g_mode);
    if (!strcmp(which, "keep") || !strcmp(which, "all"))
        case_keep_and_damage(rt, dir);
    if (!strcmp(which, "disagree") || !strcmp(which, "all"))
        case_disagree(rt, dir);
    if (!strcmp(which, "fault"))
        case_fault(rt, dir);
    TC_EXPECT(fwdio_finalize(rt), FWDIO_OK, "fwdio_finalize");
    return tc_finish("test_checkpoint");
}
