/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The node-local tier (options.local_dir): a file completes in the local
 * stores and drains to its target in the background. Cases, on 2 writers
 * (1 on one rank):
 *   drain      the file is complete before it is drained (callback order;
 *              at completion each writer's local file is there, ending in
 *              its index, and with a drain cap the drain is not over yet);
 *              fwdio_drain_wait gives OK on every rank, the target holds
 *              every byte, the local files are kept for a restart, their
 *              version records saying drained; a second version of
 *              the path opened during the drain waits for it and lands
 *              whole after it;
 *   host       "%h" in local_dir (given as the hint fwdio_local_dir) is the
 *              host name: the directory made is named with it;
 *   mismatch   ranks pass different local_dir: FWDIO_EINVAL on every rank
 *              naming local_dir;
 *   baddir     a local_dir under a regular file cannot be made: the file
 *              fails on every rank (FWDIO_EOPEN, mkdir named), no hang,
 *              nothing at the target, the drained status is the same;
 *   drainfail  (own runtime, FWDIO_FAULT: the second writer's pwrites to
 *              the target's temporary fail) with atomic_replace: complete
 *              is OK, the drain's status is FWDIO_EWRITE with the same text
 *              on every rank, the target keeps the old version, the
 *              temporary is removed and the local files are kept;
 *   localfail  (own runtimes) a version drained and kept locally, then
 *              the next one whose last writer's third local pwrite fails
 *              (FWDIO_FAULT enospc) with atomic_replace: that writer's file
 *              moves to the target (the units it wrote locally copied
 *              there), complete and drained are OK, its local file is gone
 *              at completion, every byte is right at the target, no
 *              temporary is left, the kept copies are marked drained, and a
 *              restart read (fwdio_open_read) gives the new version;
 *   targetfail (own runtime, FWDIO_FAULT: the last writer's local pwrite
 *              fails, then its pwrites to the target's temporary) with
 *              atomic_replace: complete and drained are FWDIO_EWRITE with
 *              the same text on every rank, naming the temporary's pwrite
 *              (EIO on that writer); the target keeps the old version and
 *              the temporary is removed;
 *   tmpfsfull  (own runtime; only with --case and --store DIR, a 2 MiB
 *              tmpfs mounted there, local_tmpfs.sh) both writers' files
 *              pass the open's free-space check but do not both fit: the
 *              writer whose pwrite meets ENOSPC moves to the target;
 *              complete and drained OK, the bytes right, a restart reads
 *              them;
 *   agreefault (own runtime; only with --case, under MPI_FAULTS_RULE, which
 *              fails one rank's MPI_Iallreduce of the drain's status or its
 *              commit's, tests/util/mpi_faults.h) with atomic_replace:
 *              complete is OK, fwdio_drain_wait and drained give FWDIO_EMPI
 *              on every rank with the same text naming the drain's
 *              agreement, nobody hangs (the watchdog); the target holds the
 *              old version whole (--expect-target old) or one of the two
 *              whole (either: the commit may have renamed); the local
 *              files are kept; with --free-early the handles are freed
 *              right after completion and fwdio_finalize returns after the
 *              drained callback gave FWDIO_EMPI;
 *   capacity   local_capacity, the node's count: a capacity below one
 *              file's writer share sends each writer straight to the
 *              target (no local file at completion); with room for one
 *              file, a second file opened while the first drains (capped)
 *              goes straight to the target (local_wait off: the case
 *              runs on a runtime of its own), and a third, after that drain,
 *              is local again (the drained copy, kept, evicted for it:
 *              the still draining first file was not); every file's bytes
 *              right at the target; ranks that pass different capacities
 *              fail with FWDIO_EINVAL naming local_capacity;
 *   wait       (own runtimes; only with --case) local_capacity with room
 *              for one file, the default local_wait (10 s): a second file
 *              opened while the first drains (capped, ~0.75 s) waits for
 *              that drain and completes in the local store (the first's
 *              copies evicted for it, its drain over by then), every byte
 *              right; a file larger than local_capacity opened meanwhile
 *              goes to the target at once (complete while that drain
 *              still runs); with local_wait 0.2 s and a drain of ~1.5 s
 *              the second file goes to the target after waiting 0.2 s
 *              (no local file, the first drain still running), bytes right;
 *              fwdio_finalize right after closing and freeing a file whose
 *              writers wait: it returns once that file waited, completed
 *              locally and drained, bytes right;
 *   waitabort  (own runtime; only with --case, under MPI_FAULTS_RULE failing
 *              the non-writer rank's open agreement of the second file)
 *              local_capacity with room for one file: the second file,
 *              whose writers wait for the first's drain, aborts with
 *              FWDIO_EMPI on every rank (one text), well before local_wait,
 *              no local file of it; the first drains OK and a third file
 *              fits locally (nothing of the aborted one stays counted);
 *              bytes right;
 *   nodeevict  (own runtime; only with --case, the ranks on one node) local_capacity
 *              with room for two files, two files written by rank 0 alone
 *              and drained (their copies kept), then a file written by the
 *              last rank alone, which has no copy of its own to evict: it
 *              waits while rank 0 evicts the node's oldest copy for it
 *              (the first file's, not the second's), and completes locally
 *              in well under local_wait; every file's bytes right;
 *   fullstore  (own runtime) a local store without room for the last
 *              writer's file (FWDIO_FAULT statvfs, or with --store DIR a
 *              small tmpfs mounted there, tests/mpi/local/local_tmpfs.sh): that
 *              writer writes to the target, the other locally; complete and
 *              drained OK, the bytes right, one local file at completion;
 *   finalize   (local_dir and the cap from FWDIO_LOCAL_DIR and
 *              FWDIO_DRAIN_BANDWIDTH) a slow drain of a file whose handle was freed right
 *              after completion: fwdio_finalize waits for it, the drained
 *              callback ran, and the target holds every byte once finalize
 *              returns.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fwdio.h"
#include "mpi_faults.h"
#include "pattern.h"
#include "test_common.h"

enum { STRIPE = 64 << 10, WRITE_UNIT = 16 << 10 };
static const uint64_t FILE_SIZE = (3 << 20) + 4321;

static fwdio_callback_mode_t g_mode = FWDIO_CALLBACKS_ON_POLL;

/* What the callbacks of one file saw: counts, statuses, and the order. */
typedef struct cbs {
    atomic_int seq, complete_count, drained_count, complete_seq, drained_seq;
    atomic_int complete_status, drained_status;
} cbs_t;

static void on_complete(fwdio_file_t *f, int status, void *user)
{
    (void)f;
    cbs_t *c = user;
    atomic_store(&c->complete_status, status);
    atomic_store(&c->complete_seq, atomic_fetch_add(&c->seq, 1) + 1);
    atomic_fetch_add(&c->complete_count, 1);
}

static void on_drained(fwdio_file_t *f, int status, void *user)
{
    (void)f;
    cbs_t *c = user;
    atomic_store(&c->drained_status, status);
    atomic_store(&c->drained_seq, atomic_fetch_add(&c->seq, 1) + 1);
    atomic_fetch_add(&c->drained_count, 1);
}

static fwdio_callbacks_t callbacks(cbs_t *c)
{
    memset(c, 0, sizeof *c);
    fwdio_callbacks_t cb;
    memset(&cb, 0, sizeof cb);
    cb.complete = on_complete;
    cb.drained = on_drained;
    cb.user = c;
    return cb;
}

/* The writers: ranks 0 and P-1 (the fault rule of drainfail names P-1). */
static int g_writers[2];

static void tier_options(fwdio_options_t *o, const char *local_dir)
{
    fwdio_options_init(o);
    g_writers[0] = 0;
    g_writers[1] = tc_size - 1;
    o->writer_list = g_writers;
    o->writer_list_len = tc_size > 1 ? 2 : 1;
    o->stripe_size = STRIPE;
    o->write_size = WRITE_UNIT;
    o->layout = FWDIO_LAYOUT_CYCLIC;
    o->local_dir = local_dir;
}

/* This rank's share: stripe-sized pieces round robin over the ranks; with
 * `may_fail`, writes refused because the file failed are fine. */
static void write_share_(fwdio_file_t *f, uint64_t seed, int may_fail)
{
    int piece = 0;
    for (uint64_t off = 0; off < FILE_SIZE; off += STRIPE, piece++) {
        if (piece % tc_size != tc_rank)
            continue;
        uint64_t len = FILE_SIZE - off < STRIPE ? FILE_SIZE - off : STRIPE;
        int rc = tc_write_pattern(f, off, len, seed, 10000);
        if (!(may_fail && rc == FWDIO_EFAILED))
            TC_EXPECT(rc, FWDIO_OK, "write");
    }
}

static void write_share(fwdio_file_t *f, uint64_t seed)
{
    write_share_(f, seed, 0);
}

/* Local files in dir that a restart could not take as drained: each local
 * file is kept after its drain (for a restart from the nearest copy), with
 * its index and a version record ("<local file>.ver", FWDIOLV1) that says
 * drained (flags bit 0 at byte 20). */
static int undrained_files(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        if (len < 12 || strcmp(e->d_name + len - 12, ".fwdio-local"))
            continue;
        char path[PATH_MAX + 300];
        unsigned char rec[128];
        snprintf(path, sizeof path, "%s/%s.ver", dir, e->d_name);
        int fd = open(path, O_RDONLY);
        if (fd < 0 || read(fd, rec, sizeof rec) != (ssize_t)sizeof rec ||
            memcmp(rec, "FWDIOLV1", 8) || !(rec[20] & 1)) {
            tc_note("%s: no drained version record", path);
            n++;
        }
        if (fd >= 0)
            close(fd);
    }
    closedir(d);
    return n;
}

/* Local files ("*.fwdio-local") in dir; with `need_index`, each must end in
 * its index's footer magic. */
static int local_files(const char *dir, int need_index)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        if (len < 12 || strcmp(e->d_name + len - 12, ".fwdio-local"))
            continue;
        n++;
        if (!need_index)
            continue;
        char path[PATH_MAX + 300], tail[8] = "";
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        int fd = open(path, O_RDONLY);
        struct stat st;
        if (fd < 0 || fstat(fd, &st) != 0 || st.st_size < 8 ||
            pread(fd, tail, 8, st.st_size - 8) != 8 || memcmp(tail, "FWDIOLXE", 8))
            tc_fail("%s: no index at its end", path);
        else if ((uint64_t)st.st_size <= FILE_SIZE)
            tc_fail("%s: %lld bytes, the index belongs after the file's %llu", path,
                    (long long)st.st_size, (unsigned long long)FILE_SIZE);
        if (fd >= 0)
            close(fd);
    }
    closedir(d);
    return n;
}

/* ---- drain: two completions, in order; bytes; local files kept, drained ---- */

static void case_drain(fwdio_runtime_t *rt)
{
    char dir[4096], path[4096];
    tc_path(dir, sizeof dir, "local-drain");
    tc_path(path, sizeof path, "drained.dat");
    fwdio_options_t o;
    tier_options(&o, dir);
    o.drain_bandwidth = 2 << 20; /* each writer drains ~1.5 MiB: ~0.75 s */
    cbs_t c, c2;
    fwdio_callbacks_t cb = callbacks(&c);
    fwdio_file_t *f = NULL;
    tc_phase("drain: open");
    TC_EXPECT(fwdio_open(rt, path, FILE_SIZE, &o, &cb, &f), FWDIO_OK, "fwdio_open");
    write_share(f, 101);
    TC_EXPECT(fwdio_close(f), FWDIO_OK, "fwdio_close");
    TC_EXPECT(fwdio_wait(f), FWDIO_OK, "fwdio_wait (durable in the local stores)");
    int done = -1;
    TC_EXPECT(fwdio_drain_test(f, &done), FWDIO_OK, "fwdio_drain_test");
    TC_CHECK(done == 0, "the capped drain was over at completion");
    if (tc_rank == 0) /* every writer's file is complete, with its index */
        TC_CHECK(local_files(dir, 1) == 2, "%d local files at completion, expected 2",
                 local_files(dir, 0));
    MPI_Barrier(MPI_COMM_WORLD);

    /* The next version of the path, opened during the drain: its writers
     * open only once the drain is over. */
    fwdio_callbacks_t cb2 = callbacks(&c2);
    fwdio_file_t *f2 = NULL;
    char dir2[4096];
    tc_path(dir2, sizeof dir2, "local-drain2"); /* v2's copies apart from v1's */
    tier_options(&o, dir2);
    TC_EXPECT(fwdio_open(rt, path, FILE_SIZE, &o, &cb2, &f2), FWDIO_OK, "fwdio_open (v2)");

    tc_phase("drain: wait");
    TC_EXPECT(fwdio_drain_wait(f), FWDIO_OK, "fwdio_drain_wait");
    TC_CHECK(atomic_load(&c.complete_count) == 1 && atomic_load(&c.drained_count) == 1,
             "complete ran %d times, drained %d", atomic_load(&c.complete_count),
             atomic_load(&c.drained_count));
    TC_CHECK(atomic_load(&c.complete_seq) == 1 && atomic_load(&c.drained_seq) == 2,
             "drained (%d) did not come after complete (%d)", atomic_load(&c.drained_seq),
             atomic_load(&c.complete_seq));
    TC_CHECK(atomic_load(&c.drained_status) == FWDIO_OK, "drained callback: %s",
             fwdio_strerror(atomic_load(&c.drained_status)));
    TC_EXPECT(fwdio_drain_test(f, &done), FWDIO_OK, "fwdio_drain_test after the drain");
    TC_CHECK(done == 1, "fwdio_drain_test: not done after fwdio_drain_wait");
    MPI_Barrier(MPI_COMM_WORLD);
    TC_CHECK(tc_verify_full(MPI_COMM_WORLD, path, FILE_SIZE, 101) == 0, "drained bytes");
    TC_CHECK(tc_rank != 0 || (local_files(dir, 1) > 0 && undrained_files(dir) == 0),
             "the local copies kept after the drain, marked drained");
    MPI_Barrier(MPI_COMM_WORLD); /* everyone read v1 before v2 lands */
    fwdio_file_free(f);

    tc_phase("drain: second version");
    write_share(f2, 202);
    TC_EXPECT(fwdio_close(f2), FWDIO_OK, "fwdio_close (v2)");
    TC_EXPECT(fwdio_drain_wait(f2), FWDIO_OK, "fwdio_drain_wait (v2)");
    TC_EXPECT(fwdio_wait(f2), FWDIO_OK, "fwdio_wait (v2)");
    MPI_Barrier(MPI_COMM_WORLD);
    TC_CHECK(tc_verify_full(MPI_COMM_WORLD, path, FILE_SIZE, 202) == 0, "second version");
    TC_CHECK(tc_rank != 0 || (local_files(dir2, 1) > 0 && undrained_files(dir2) == 0),
             "the local copies of v2 kept, marked drained");
    MPI_Barrier(MPI_COMM_WORLD);
    fwdio_file_free(f2);
}

/* ---- host: %h ---- */

static void case_host(fwdio_runtime_t *rt)
{
    char pattern[4096], expanded[4096 + 300], path[4096], host[256] = "";
    tc_path(pattern, sizeof pattern, "local-%h");
    tc_path(path, sizeof path, "host.dat");
    gethostname(host, sizeof host - 1);
    snprintf(expanded, sizeof expanded, "%.*s%s", (int)(strlen(pattern) - 2), pattern, host);
    fwdio_options_t o;
    tier_options(&o, NULL);
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "fwdio_local_dir", pattern);
    TC_EXPECT(fwdio_options_set_info(&o, info), FWDIO_OK, "fwdio_options_set_info");
    MPI_Info_free(&info); /* fwdio keeps the hint's string */
    TC_CHECK(o.local_dir && !strcmp(o.local_dir, pattern), "the hint did not set local_dir");
    cbs_t c;
    fwdio_callbacks_t cb = callbacks(&c);
    fwdio_file_t *f = NULL;
    tc_phase("host: open");
    TC_EXPECT(fwdio_open(rt, path, FILE_SIZE, &o, &cb, &f), FWDIO_OK, "fwdio_open");
    write_share(f, 303);
    TC_EXPECT(fwdio_close(f), FWDIO_OK, "fwdio_close");
    TC_EXPECT(fwdio_drain_wait(f), FWDIO_OK, "fwdio_drain_wait");
    struct stat st;
    TC_CHECK(stat(expanded, &st) == 0 && S_ISDIR(st.st_mode), "%s: not made (%s)", expanded,
             strerror(errno));
    MPI_Barrier(MPI_COMM_WORLD);
    TC_CHECK(tc_verify_full(MPI_COMM_WORLD, path, FILE_SIZE, 303) == 0, "bytes with %%h");
    fwdio_file_free(f);
}

/* ---- mismatch: the contract names local_dir ---- */

static void case_mismatch(fwdio_runtime_t *rt)
{
    char dir[4096], path[4096];
    tc_path(dir, sizeof dir, tc_rank == 0 ? "local-a" : "local-b");
    tc_path(path, sizeof path, "mismatch.dat");
    fwdio_options_t o;
    tier_options(&o, dir);
    tc_phase("mismatch");
    tc_expect_disagreement(rt, path, FILE_SIZE, &o, "local_dir");
    /* one rank with the tier, the others without */
    tier_options(&o, tc_rank == 0 ? dir : NULL);
    tc_expect_disagreement(rt, path, FILE_SIZE, &o, "local_dir");
    struct stat st;
    TC_CHECK(stat(path, &st) != 0, "%s exists after a refused open", path);
}

/* ---- baddir: an agreed failure, no hang ---- */

static void case_baddir(fwdio_runtime_t *rt)
{
    char plain[4096], dir[4096 + 16], path[4096];
    tc_path(plain, sizeof plain, "plain-file");
    tc_path(path, sizeof path, "baddir.dat");
    if (tc_rank == 0) {
        FILE *p = fopen(plain, "w");
        TC_CHECK(p != NULL, "cannot make %s", plain);
        if (p)
            fclose(p);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    snprintf(dir, sizeof dir, "%s/sub", plain);
    fwdio_options_t o;
    tier_options(&o, dir);
    cbs_t c;
    fwdio_callbacks_t cb = callbacks(&c);
    fwdio_file_t *f = NULL;
    tc_phase("baddir");
    TC_EXPECT(fwdio_open(rt, path, FILE_SIZE, &o, &cb, &f), FWDIO_OK, "fwdio_open");
    write_share_(f, 404, 1); /* refused or dropped once the open failed */
    TC_EXPECT(fwdio_close(f), FWDIO_OK, "fwdio_close");
    TC_EXPECT(fwdio_wait(f), FWDIO_EOPEN, "fwdio_wait: the local store cannot be made");
    TC_EXPECT(fwdio_drain_wait(f), FWDIO_EOPEN, "fwdio_drain_wait: the same status");
    TC_CHECK(strstr(fwdio_file_error(f), "mkdir") != NULL, "the error does not name mkdir: %s",
             fwdio_file_error(f));
    TC_CHECK(atomic_load(&c.drained_count) == 1, "drained ran %d times",
             atomic_load(&c.drained_count));
    char text[256];
    snprintf(text, sizeof text, "%s", fwdio_file_error(f));
    char first[256];
    memcpy(first, text, sizeof text);
    MPI_Bcast(first, sizeof first, MPI_CHAR, 0, MPI_COMM_WORLD);
    TC_CHECK(!strcmp(first, text), "error texts differ: \"%s\" on rank 0, \"%s\" here", first,
             text);
    struct stat st;
    TC_CHECK(stat(path, &st) != 0, "%s was created although the file failed", path);
    MPI_Barrier(MPI_COMM_WORLD);
    fwdio_file_free(f);
}

/* The old version of `path` for the cases with atomic_replace: 1000 'o's. */
static void write_old_version(const char *path)
{
    if (tc_rank == 0) {
        FILE *p = fopen(path, "w");
        for (int i = 0; p && i < 1000; i++)
            fputc('o', p);
        if (p)
            fclose(p);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

/* A runtime of its own whose last rank breaks `call` as FWDIO_FAULT's rule
 * `fmt` (with %d for that rank) says; NULL: no rule. */
static fwdio_runtime_t *fault_runtime(const char *fmt)
{
    char spec[256];
    if (fmt) {
        snprintf(spec, sizeof spec, fmt, tc_size - 1);
        setenv("FWDIO_FAULT", spec, 1);
    }
    fwdio_runtime_t *rt = tc_start_runtime(MPI_COMM_WORLD, g_mode);
    unsetenv("FWDIO_FAULT");
    return rt;
}

/* Open `path` in the tier (local_dir `dir`) with atomic_replace. */
static fwdio_file_t *open_atomic(fwdio_runtime_t *rt, const char *path, const char *dir, cbs_t *c)
{
    fwdio_options_t o;
    tier_options(&o, dir);
    o.atomic_replace = 1;
    fwdio_callbacks_t cb = callbacks(c);
    fwdio_file_t *f = NULL;
    TC_EXPECT(fwdio_open(rt, path, FILE_SIZE, &o, &cb, &f), FWDIO_OK, "fwdio_open");
    return f;
}

/* ---- drainfail: an agreed drain failure; the old version stays ---- */

static int drain_fail_main(void)
{
    char dir[4096], path[4096], tmp[4096 + 32];
    tc_path(dir, sizeof dir, "local-fail");
    tc_path(path, sizeof path, "kept.dat");
    snprintf(tmp, sizeof tmp, "%.*s.kept.dat.fwdio-tmp", (int)(strlen(path) - 8), path);
    write_old_version(path);
    /* The last writer's pwrites to the target's temporary fail. */
    fwdio_runtime_t *rt = fault_runtime("pwrite:eio:path=fwdio-tmp:rank=%d");
    cbs_t c;
    tc_phase("drainfail");
    fwdio_file_t *f = open_atomic(rt, path, dir, &c);
    int ranks[2] = {-1, -1};
    int nw = fwdio_file_writers(f, ranks, 2);
    TC_CHECK(nw == (tc_size > 1 ? 2 : 1) && ranks[nw - 1] == tc_size - 1,
             "writers %d, %d: the fault rule names the wrong rank", ranks[0], ranks[1]);
    write_share(f, 505);
    TC_EXPECT(fwdio_close(f), FWDIO_OK, "fwdio_close");
    TC_EXPECT(fwdio_wait(f), FWDIO_OK, "fwdio_wait: complete in the local stores");
    TC_EXPECT(fwdio_drain_wait(f), FWDIO_EWRITE, "fwdio_drain_wait");
    TC_CHECK(atomic_load(&c.drained_status) == FWDIO_EWRITE, "drained callback: %s",
             fwdio_strerror(atomic_load(&c.drained_status)));
    char text[256], first[256];
    snprintf(text, sizeof text, "%s", fwdio_file_error(f));
    memcpy(first, text, sizeof text);
    MPI_Bcast(first, sizeof first, MPI_CHAR, 0, MPI_COMM_WORLD);
    TC_CHECK(!strcmp(first, text), "drain error texts differ: \"%s\" on rank 0, \"%s\" here",
             first, text);
    TC_CHECK(strstr(text, "pwrite") && strstr(text, "fwdio-tmp"),
             "the drain error does not name the pwrite of the temporary: %s", text);
    fwdio_error_info_t info;
    TC_EXPECT(fwdio_file_error_info(f, &info), FWDIO_OK, "fwdio_file_error_info");
    TC_CHECK(info.status == FWDIO_EWRITE && info.rank == tc_size - 1 && info.sys_errno == EIO,
             "error info: status %d, rank %d, errno %d", info.status, info.rank, info.sys_errno);
    MPI_Barrier(MPI_COMM_WORLD);
    if (tc_rank == 0) {
        struct stat st;
        TC_CHECK(stat(path, &st) == 0 && st.st_size == 1000, "%s: the old version is gone",
                 path);
        TC_CHECK(stat(tmp, &st) != 0, "%s left behind", tmp);
        TC_CHECK(local_files(dir, 1) == nw, "the local copies of a failed drain are gone (%d)",
                 local_files(dir, 0));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    fwdio_file_free(f);
    TC_EXPECT(fwdio_finalize(rt), FWDIO_OK, "fwdio_finalize");
    return 0;
}

/* Whether `path` is the old version (collective: rank 0 looks). */
static int is_old_version(const char *path)
{
    int old = 0;
    if (tc_rank == 0) {
        char buf[1001];
        FILE *p = fopen(path, "r");
        size_t n = p ? fread(buf, 1, sizeof buf, p) : 0;
        if (p)
            fclose(p);
        old = n == 1000;
        for (size_t i = 0; old && i < n; i++)
            old = buf[i] == 'o';
    }
    MPI_Bcast(&old, 1, MPI_INT, 0, MPI_COMM_WORLD);
    return old;
}

/* The file's error (its drain's, once drained) is `status` on every rank
 * with one text holding `fragment`, and one rank in its detail. */
static void expect_agreed_error(fwdio_file_t *f, int status, const char *fragment)
{
    char text[256], first[256];
    snprintf(text, sizeof text, "%s", fwdio_file_error(f));
    memcpy(first, text, sizeof text);
    MPI_Bcast(first, sizeof first, MPI_CHAR, 0, MPI_COMM_WORLD);
    TC_CHECK(!strcmp(first, text), "error texts differ: \"%s\" on rank 0, \"%s\" here", first,
             text);
    TC_CHECK(strstr(text, fragment) != NULL, "the error does not name %s: %s", fragment, text);
    fwdio_error_info_t info;
    TC_EXPECT(fwdio_file_error_info(f, &info), FWDIO_OK, "fwdio_file_error_info");
    int rank0 = info.rank;
    MPI_Bcast(&rank0, 1, MPI_INT, 0, MPI_COMM_WORLD);
    TC_CHECK(info.status == status && info.rank == rank0 && info.rank >= 0,
             "error info: status %d (expected %d), rank %d (rank 0 has %d)", info.status, status,
             info.rank, rank0);
}

/* ---- localfail: a writer's local store fails mid-file: the file moves ---- */

/* complete and drained ran with `status`, drained once. */
static void expect_callbacks(cbs_t *c, int status)
{
    TC_CHECK(atomic_load(&c->complete_status) == status &&
                 atomic_load(&c->drained_status) == status && atomic_load(&c->drained_count) == 1,
             "callbacks: complete %s, drained %s (%d times), expected %s",
             fwdio_strerror(atomic_load(&c->complete_status)),
             fwdio_strerror(atomic_load(&c->drained_status)), atomic_load(&c->drained_count),
             fwdio_strerror(status));
}

/* Read all of `path` back through the tier in `dir` (fwdio_open_read: the
 * local copies if every reader finds the newest version there, else the
 * target); whether every byte is the pattern of `seed`. */
static int restart_reads(fwdio_runtime_t *rt, const char *path, const char *dir, uint64_t seed)
{
    fwdio_options_t o;
    tier_options(&o, dir);
    fwdio_file_t *f = NULL;
    unsigned char *buf = malloc(FILE_SIZE);
    uint64_t bad = FILE_SIZE;
    TC_EXPECT(fwdio_open_read(rt, path, &o, NULL, &f), FWDIO_OK, "fwdio_open_read");
    if (f && buf) {
        TC_EXPECT(fwdio_read(f, buf, FILE_SIZE, 0, NULL, NULL), FWDIO_OK, "fwdio_read");
        TC_EXPECT(fwdio_close(f), FWDIO_OK, "fwdio_close (read)");
        TC_EXPECT(fwdio_wait(f), FWDIO_OK, "fwdio_wait (read)");
        bad = 0;
        for (uint64_t i = 0; i < FILE_SIZE; i++)
            bad += buf[i] != pattern_byte(seed, i);
    }
    TC_CHECK(bad == 0, "restart read of %s: %llu bytes are not those of the version written "
             "last", path, (unsigned long long)bad);
    if (f)
        fwdio_file_free(f);
    free(buf);
    return bad == 0;
}

/* Version `seed` of `path` through the tier in `dir`, complete and drained
 * OK (a runtime of its own, no faults). */
static void write_version(const char *path, const char *dir, uint64_t seed)
{
    fwdio_runtime_t *rt = tc_start_runtime(MPI_COMM_WORLD, g_mode);
    cbs_t c;
    fwdio_file_t *f = open_atomic(rt, path, dir, &c);
    write_share(f, seed);
    TC_EXPECT(fwdio_close(f), FWDIO_OK, "fwdio_close");
    TC_EXPECT(fwdio_wait(f), FWDIO_OK, "fwdio_wait");
    TC_EXPECT(fwdio_drain_wait(f), FWDIO_OK, "fwdio_drain_wait");
    fwdio_file_free(f);
    TC_EXPECT(fwdio_finalize(rt), FWDIO_OK, "fwdio_finalize");
}

/* The drained file holds `seed` at the target, no temporary is left, the
 * kept local copies (at most `most` of them) are all marked drained, and a
 * restart reads `seed` (collective). */
static void check_moved_file(fwdio_runtime_t *rt, const char *path, const char *tmp,
                             const char *dir, uint64_t seed, int most)
{
    MPI_Barrier(MPI_COMM_WORLD);
    TC_CHECK(tc_verify_full(MPI_COMM_WORLD, path, FILE_SIZE, seed) == 0, "bytes at the target");
    if (tc_rank == 0) {
        struct stat st;
        int n = local_files(dir, 1);
        TC_CHECK(stat(tmp, &st) != 0, "%s left behind", tmp);
        TC_CHECK(n <= most, "%d local files: the moved writer's (partial) one should be gone", n);
        TC_CHECK(undrained_files(dir) == 0, "a local copy not marked drained after the drain");
    }
    MPI_Barrier(MPI_COMM_WORLD);
    restart_reads(rt, path, dir, seed);
}

static int local_fail_main(void)
{
    char dir[4096], path[4096], tmp[4096 + 32];
    tc_path(dir, sizeof dir, "local-lfail");
    tc_path(path, sizeof path, "lfail.dat");
    snprintf(tmp, sizeof tmp, "%.*s.lfail.dat.fwdio-tmp", (int)(strlen(path) - 9), path);
    int nw = tc_size > 1 ? 2 : 1;
    tc_phase("localfail");
    write_version(path, dir, 807); /* drained, its local copies kept */
    /* The last writer's third local pwrite finds its store full: two units
     * are in the local file by then, the rest not yet. */
    fwdio_runtime_t *rt = fault_runtime("pwrite:enospc:path=fwdio-local:nth=3:rank=%d");
    cbs_t c;
    fwdio_file_t *f = open_atomic(rt, path, dir, &c);
    write_share(f, 808);
    TC_EXPECT(fwdio_close(f), FWDIO_OK, "fwdio_close");
    TC_EXPECT(fwdio_wait(f), FWDIO_OK, "fwdio_wait: the file moved to the target, not lost");
    int n = tc_rank == 0 ? local_files(dir, 1) : 0;
    MPI_Bcast(&n, 1, MPI_INT, 0, MPI_COMM_WORLD);
    TC_CHECK(n == nw - 1, "%d local files at completion: the moved writer's should be gone", n);
    TC_EXPECT(fwdio_drain_wait(f), FWDIO_OK, "fwdio_drain_wait");
    expect_callbacks(&c, FWDIO_OK);
    check_moved_file(rt, path, tmp, dir, 808, nw - 1);
    fwdio_file_free(f);
    TC_EXPECT(fwdio_finalize(rt), FWDIO_OK, "fwdio_finalize");
    return 0;
}

/* ---- targetfail: the local store fails, then the target too ---- */

static int target_fail_main(void)
{
    char dir[4096], path[4096], tmp[4096 + 32], spec[256];
    tc_path(dir, sizeof dir, "local-tfail");
    tc_path(path, sizeof path, "tfail.dat");
    snprintf(tmp, sizeof tmp, "%.*s.tfail.dat.fwdio-tmp", (int)(strlen(path) - 9), path);
    write_old_version(path);
    snprintf(spec, sizeof spec, "pwrite:enospc:path=fwdio-local:rank=%d;"
             "pwrite:eio:path=fwdio-tmp:rank=%d", tc_size - 1, tc_size - 1);
    setenv("FWDIO_FAULT", spec, 1);
    fwdio_runtime_t *rt = tc_start_runtime(MPI_COMM_WORLD, g_mode);
    unsetenv("FWDIO_FAULT");
    cbs_t c;
    tc_phase("targetfail");
    fwdio_file_t *f = open_atomic(rt, path, dir, &c);
    write_share_(f, 818, 1);
    TC_EXPECT(fwdio_close(f), FWDIO_OK, "fwdio_close");
    TC_EXPECT(fwdio_wait(f), FWDIO_EWRITE, "fwdio_wait: the local store and the target failed");
    TC_EXPECT(fwdio_drain_wait(f), FWDIO_EWRITE, "fwdio_drain_wait: the same status");
    expect_callbacks(&c, FWDIO_EWRITE);
    /* the error is the target's pwrite, on the moved writer */
    expect_agreed_error(f, FWDIO_EWRITE, "fwdio-tmp");
    fwdio_error_info_t info;
    TC_EXPECT(fwdio_file_error_info(f, &info), FWDIO_OK, "fwdio_file_error_info");
    TC_CHECK(info.rank == tc_size - 1 && info.sys_errno == EIO, "error info: rank %d, errno %d",
             info.rank, info.sys_errno);
    MPI_Barrier(MPI_COMM_WORLD);
    TC_CHECK(is_old_version(path), "%s: the old version is gone after a failed file", path);
    if (tc_rank == 0) {
        struct stat st;
        TC_CHECK(stat(tmp, &st) != 0, "%s: the failed file's temporary left behind", tmp);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    fwdio_file_free(f);
    TC_EXPECT(fwdio_finalize(rt), FWDIO_OK, "fwdio_finalize");
    return 0;
}

/* ---- agreefault: an MPI failure in the drain's agreements ---- */

static const char *g_expect_target = "old";
static const char *g_text = "MPI_Iallreduce (drain";
static int g_free_early;

static int agree_fault_main(void)
{
    char dir[4096], path[4096];
    tc_path(dir, sizeof dir, "local-afault");
    tc_path(path, sizeof path, "afault.dat");
    write_old_version(path);
    fwdio_runtime_t *rt = fault_runtime(NULL);
    static cbs_t c; /* with --free-early, the callbacks run after the free */
    tc_phase("agreefault");
    fwdio_file_t *f = open_atomic(rt, path, dir, &c);
    write_share(f, 707);
    TC_EXPECT(fwdio_close(f), FWDIO_OK, "fwdio_close");
    TC_EXPECT(fwdio_wait(f), FWDIO_OK, "fwdio_wait: complete in the local stores");
    if (g_free_early) {
        fwdio_file_free(f); /* the drain, and its failure, go on without the handle */
        TC_EXPECT(fwdio_finalize(rt), FWDIO_OK, "fwdio_finalize");
        TC_CHECK(atomic_load(&c.drained_count) == 1 &&
                     atomic_load(&c.drained_status) == FWDIO_EMPI,
                 "finalize returned with drained run %d times, %s", atomic_load(&c.drained_count),
                 fwdio_strerror(atomic_load(&c.drained_status)));
    } else {
        TC_EXPECT(fwdio_drain_wait(f), FWDIO_EMPI, "fwdio_drain_wait");
        TC_CHECK(atomic_load(&c.drained_count) == 1 &&
                     atomic_load(&c.drained_status) == FWDIO_EMPI,
                 "drained ran %d times, %s", atomic_load(&c.drained_count),
                 fwdio_strerror(atomic_load(&c.drained_status)));
        expect_agreed_error(f, FWDIO_EMPI, g_text);
    }
    TC_CHECK(tc_sum(MPI_COMM_WORLD, mpi_faults_fired()) == 1,
             "MPI_FAULTS_RULE fired %ld times, expected once", tc_sum(MPI_COMM_WORLD, mpi_faults_fired()));
    MPI_Barrier(MPI_COMM_WORLD);
    int old = is_old_version(path);
    if (!strcmp(g_expect_target, "old"))
        TC_CHECK(old, "%s: the old version is gone after a failed drain", path);
    else if (!old)
        TC_CHECK(tc_verify_full(MPI_COMM_WORLD, path, FILE_SIZE, 707) == 0,
                 "%s: neither the old version nor the new one whole", path);
    TC_CHECK(tc_rank != 0 || local_files(dir, 1) == (tc_size > 1 ? 2 : 1),
             "the local copies of a failed drain are gone (%d)", local_files(dir, 0));
    MPI_Barrier(MPI_COMM_WORLD);
    if (!g_free_early) {
        fwdio_file_free(f);
        TC_EXPECT(fwdio_finalize(rt), FWDIO_OK, "fwdio_finalize");
    }
    return 0;
}

/* ---- capacity: local_capacity, counted per node ---- */

/* Open, write, close and wait for one file of the tier; the number of
 * local files in `dir` at its completion (rank 0's count, to all). */
static fwdio_file_t *tier_file_with(fwdio_runtime_t *rt, const char *path, const char *dir,
                                    const fwdio_options_t *opts, uint64_t seed, cbs_t *c,
                                    int *local_at_complete)
{
    fwdio_options_t o = *opts;
    fwdio_callbacks_t cb = callbacks(c);
    fwdio_file_t *f = NULL;
    TC_EXPECT(fwdio_open(rt, path, FILE_SIZE, &o, &cb, &f), FWDIO_OK, "fwdio_open");
    write_share(f, seed);
    TC_EXPECT(fwdio_close(f), FWDIO_OK, "fwdio_close");
    TC_EXPECT(fwdio_wait(f), FWDIO_OK, "fwdio_wait");
    int n = tc_rank == 0 ? local_files(dir, 1) : 0;
    MPI_Bcast(&n, 1, MPI_INT, 0, MPI_COMM_WORLD);
    *local_at_complete = n;
    return f;
}

static fwdio_file_t *tier_file(fwdio_runtime_t *rt, const char *path, const char *dir,
                               uint64_t capacity, uint64_t cap_bw, uint64_t seed, cbs_t *c,
                               int *local_at_complete)
{
    fwdio_options_t o;
    tier_options(&o, dir);
    o.local_capacity = capacity;
    o.drain_bandwidth = cap_bw;
    return tier_file_with(rt, path, dir, &o, seed, c, local_at_complete);
}

static void case_capacity(fwdio_runtime_t *rt)
{
    char dir[4096], path[4096];
    cbs_t c1, c2, c3;
    int n = -1;
    int writers = tc_size > 1 ? 2 : 1;
    /* A capacity below one writer's share (~1.5 MiB): straight to the target. */
    tc_phase("capacity: below one file");
    tc_path(dir, sizeof dir, "local-cap-small");
    tc_path(path, sizeof path, "cap-small.dat");
    fwdio_file_t *f = tier_file(rt, path, dir, 64 << 10, 0, 111, &c1, &n);
    TC_CHECK(n == 0, "%d local files with a capacity below one file", n);
    TC_EXPECT(fwdio_drain_wait(f), FWDIO_OK, "fwdio_drain_wait");
    MPI_Barrier(MPI_COMM_WORLD);
    TC_CHECK(tc_verify_full(MPI_COMM_WORLD, path, FILE_SIZE, 111) == 0, "bytes written directly");
    fwdio_file_free(f);

    /* Room for one file (~3 MiB of writers' files) but not two. */
    const uint64_t room = 4 << 20;
    char dir2[4096], path2[4096], dir3[4096], path3[4096];
    tc_path(dir, sizeof dir, "local-cap-1");
    tc_path(dir2, sizeof dir2, "local-cap-2");
    tc_path(dir3, sizeof dir3, "local-cap-3");
    tc_path(path, sizeof path, "cap-1.dat");
    tc_path(path2, sizeof path2, "cap-2.dat");
    tc_path(path3, sizeof path3, "cap-3.dat");
    tc_phase("capacity: one file fits");
    f = tier_file(rt, path, dir, room, 2 << 20, 121, &c1, &n); /* drains ~0.75 s */
    TC_CHECK(n == writers, "%d local files of the first file, expected %d", n, writers);
    int done = -1;
    TC_EXPECT(fwdio_drain_test(f, &done), FWDIO_OK, "fwdio_drain_test");
    TC_CHECK(done == 0, "the capped drain was over at completion");
    tc_phase("capacity: the second file while the first drains");
    fwdio_file_t *f2 = tier_file(rt, path2, dir2, room, 0, 122, &c2, &n);
    TC_CHECK(n == 0, "%d local files of a file that does not fit", n);
    TC_EXPECT(fwdio_drain_wait(f), FWDIO_OK, "fwdio_drain_wait (first)");
    TC_EXPECT(fwdio_drain_wait(f2), FWDIO_OK, "fwdio_drain_wait (second)");
    MPI_Barrier(MPI_COMM_WORLD);
    tc_phase("capacity: the third file after the drain");
    fwdio_file_t *f3 = tier_file(rt, path3, dir3, room, 0, 123, &c3, &n);
    TC_CHECK(n == writers, "%d local files of the third file, expected %d: the drained "
             "file's kept copy was not evicted for it", n, writers);
    TC_EXPECT(fwdio_drain_wait(f3), FWDIO_OK, "fwdio_drain_wait (third)");
    MPI_Barrier(MPI_COMM_WORLD);
    TC_CHECK(tc_verify_full(MPI_COMM_WORLD, path, FILE_SIZE, 121) == 0, "first file");
    TC_CHECK(tc_verify_full(MPI_COMM_WORLD, path2, FILE_SIZE, 122) == 0, "second file");
    TC_CHECK(tc_verify_full(MPI_COMM_WORLD, path3, FILE_SIZE, 123) == 0, "third file");
    TC_CHECK(tc_rank != 0 || undrained_files(dir) + undrained_files(dir3) == 0,
             "local copies not marked drained after the drains");
    MPI_Barrier(MPI_COMM_WORLD);
    fwdio_file_free(f);
    fwdio_file_free(f2);
    fwdio_file_free(f3);

    tc_phase("capacity: mismatch");
    fwdio_options_t o;
    tier_options(&o, dir);
    o.local_capacity = tc_rank == 0 ? room : 2 * room;
    tc_path(path, sizeof path, "cap-mismatch.dat");
    tc_expect_disagreement(rt, path, FILE_SIZE, &o, "local_capacity");
}

/* ---- wait: a file that does not fit waits for room, up to local_wait ---- */

/* A runtime with local_wait `ms` (0: the default). */
static fwdio_runtime_t *wait_runtime(uint64_t ms)
{
    fwdio_config_t cfg;
    fwdio_config_init(&cfg);
    cfg.callback_mode = g_mode;
    cfg.local_wait_ms = ms;
    return tc_start_runtime_with(MPI_COMM_WORLD, &cfg);
}

/* Whether f's drain is over on every rank (-1: the ranks disagree). */
static int drained_everywhere(fwdio_file_t *f)
{
    int done = -1;
    TC_EXPECT(fwdio_drain_test(f, &done), FWDIO_OK, "fwdio_drain_test");
    return tc_all_same(MPI_COMM_WORLD, done) ? done : -1;
}

static int wait_main(void)
{
    const uint64_t room = 4 << 20; /* one file (~3 MiB of writers' files), not two */
    int writers = tc_size > 1 ? 2 : 1, n = -1;
    char d1[4096], d2[4096], d3[4096], p1[4096], p2[4096], p3[4096];
    cbs_t c1, c2, c3;

    tc_phase("wait: the second file waits for the first's drain");
    fwdio_runtime_t *rt = wait_runtime(0); /* the default: 10 s */
    tc_path(d1, sizeof d1, "local-wait-1");
    tc_path(d2, sizeof d2, "local-wait-2");
    tc_path(d3, sizeof d3, "local-wait-big");
    tc_path(p1, sizeof p1, "wait-1.dat");
    tc_path(p2, sizeof p2, "wait-2.dat");
    tc_path(p3, sizeof p3, "wait-big.dat");
    fwdio_file_t *f1 = tier_file(rt, p1, d1, room, 2 << 20, 131, &c1, &n); /* drains ~0.75 s */
    TC_CHECK(n == writers, "%d local files of the first file, expected %d", n, writers);
    /* larger than local_capacity: can never fit, so it does not wait */
    double t0 = MPI_Wtime();
    fwdio_file_t *f3 = tier_file(rt, p3, d3, 1 << 20, 0, 133, &c3, &n);
    double big = MPI_Wtime() - t0;
    TC_CHECK(n == 0, "%d local files of a file larger than local_capacity", n);
    int over = drained_everywhere(f1);
    if (over == 0)
        TC_CHECK(big < 5.0, "the file larger than local_capacity took %.3f s", big);
    else
        tc_note("the first drain ended before the large file completed (a slow machine): "
                "its no-wait check skipped");
    t0 = MPI_Wtime();
    fwdio_file_t *f2 = tier_file(rt, p2, d2, room, 0, 132, &c2, &n);
    double waited = MPI_Wtime() - t0;
    TC_CHECK(n == writers, "%d local files of the second file, expected %d: it should have "
             "waited for the first drain and completed locally", n, writers);
    TC_CHECK(drained_everywhere(f1) == 1, "the second file completed locally before the first "
             "was drained");
    n = tc_rank == 0 ? local_files(d1, 0) : 0;
    MPI_Bcast(&n, 1, MPI_INT, 0, MPI_COMM_WORLD);
    TC_CHECK(n == 0, "%d local copies of the first file left: evicted for the second", n);
    TC_CHECK(waited < 9.0, "the second file took %.3f s, near local_wait", waited);
    TC_EXPECT(fwdio_drain_wait(f1), FWDIO_OK, "fwdio_drain_wait (first)");
    TC_EXPECT(fwdio_drain_wait(f2), FWDIO_OK, "fwdio_drain_wait (second)");
    TC_EXPECT(fwdio_drain_wait(f3), FWDIO_OK, "fwdio_drain_wait (large)");
    MPI_Barrier(MPI_COMM_WORLD);
    TC_CHECK(tc_verify_full(MPI_COMM_WORLD, p1, FILE_SIZE, 131) == 0, "first file");
    TC_CHECK(tc_verify_full(MPI_COMM_WORLD, p2, FILE_SIZE, 132) == 0, "second file");
    TC_CHECK(tc_verify_full(MPI_COMM_WORLD, p3, FILE_SIZE, 133) == 0, "large file");
    TC_CHECK(tc_rank != 0 || undrained_files(d2) == 0,
             "the second file's copies not marked drained");
    MPI_Barrier(MPI_COMM_WORLD);
    fwdio_file_free(f1);
    fwdio_file_free(f2);
    fwdio_file_free(f3);
    TC_EXPECT(fwdio_finalize(rt), FWDIO_OK, "fwdio_finalize");

    tc_phase("wait: the limit passes");
    rt = wait_runtime(200);
    tc_path(d1, sizeof d1, "local-limit-1");
    tc_path(d2, sizeof d2, "local-limit-2");
    tc_path(p1, sizeof p1, "limit-1.dat");
    tc_path(p2, sizeof p2, "limit-2.dat");
    f1 = tier_file(rt, p1, d1, room, 1 << 20, 141, &c1, &n); /* drains ~1.5 s */
    TC_CHECK(n == writers, "%d local files of the first file, expected %d", n, writers);
    t0 = MPI_Wtime();
    f2 = tier_file(rt, p2, d2, room, 0, 142, &c2, &n);
    waited = MPI_Wtime() - t0;
    over = drained_everywhere(f1);
    if (over == 0) {
        TC_CHECK(n == 0, "%d local files of the second file: local_wait passed, it belongs at "
                 "the target", n);
        TC_CHECK(waited >= 0.2, "the second file completed in %.3f s: it did not wait", waited);
    } else {
        tc_note("the first drain ended before the second file completed (a slow machine): "
                "the limit's checks skipped");
    }
    TC_EXPECT(fwdio_drain_wait(f1), FWDIO_OK, "fwdio_drain_wait (first)");
    TC_EXPECT(fwdio_drain_wait(f2), FWDIO_OK, "fwdio_drain_wait (second)");
    MPI_Barrier(MPI_COMM_WORLD);
    TC_CHECK(tc_verify_full(MPI_COMM_WORLD, p1, FILE_SIZE, 141) == 0, "first file");
    TC_CHECK(tc_verify_full(MPI_COMM_WORLD, p2, FILE_SIZE, 142) == 0, "second file");
    MPI_Barrier(MPI_COMM_WORLD);
    fwdio_file_free(f1);
    fwdio_file_free(f2);
    TC_EXPECT(fwdio_finalize(rt), FWDIO_OK, "fwdio_finalize");

    /* finalize while the second file's writers wait for room: the drain
     * they wait for ends, they open locally, and everything completes */
    tc_phase("wait: fwdio_finalize while a writer waits");
    rt = wait_runtime(0);
    tc_path(d1, sizeof d1, "local-fin-1");
    tc_path(d2, sizeof d2, "local-fin-2");
    tc_path(p1, sizeof p1, "fin-1.dat");
    tc_path(p2, sizeof p2, "fin-2.dat");
    f1 = tier_file(rt, p1, d1, room, 2 << 20, 151, &c1, &n);
    fwdio_file_free(f1); /* its drain goes on */
    static cbs_t late; /* the callbacks run after the handle is freed */
    fwdio_options_t o;
    tier_options(&o, d2);
    o.local_capacity = room;
    fwdio_callbacks_t cb = callbacks(&late);
    TC_EXPECT(fwdio_open(rt, p2, FILE_SIZE, &o, &cb, &f2), FWDIO_OK, "fwdio_open");
    write_share(f2, 152);
    TC_EXPECT(fwdio_close(f2), FWDIO_OK, "fwdio_close");
    fwdio_file_free(f2);
    TC_EXPECT(fwdio_finalize(rt), FWDIO_OK, "fwdio_finalize");
    TC_CHECK(atomic_load(&late.complete_status) == FWDIO_OK &&
                 atomic_load(&late.drained_count) == 1 &&
                 atomic_load(&late.drained_status) == FWDIO_OK,
             "the waiting file after finalize: complete %s, drained %d (%s)",
             fwdio_strerror(atomic_load(&late.complete_status)),
             atomic_load(&late.drained_count),
             fwdio_strerror(atomic_load(&late.drained_status)));
    MPI_Barrier(MPI_COMM_WORLD);
    n = tc_rank == 0 ? local_files(d2, 1) : 0;
    MPI_Bcast(&n, 1, MPI_INT, 0, MPI_COMM_WORLD);
    TC_CHECK(n == writers, "%d local files of the file that waited, expected %d", n, writers);
    TC_CHECK(tc_verify_full(MPI_COMM_WORLD, p1, FILE_SIZE, 151) == 0, "first file (finalize)");
    TC_CHECK(tc_verify_full(MPI_COMM_WORLD, p2, FILE_SIZE, 152) == 0, "second file (finalize)");
    MPI_Barrier(MPI_COMM_WORLD);
    return 0;
}

/* ---- waitabort: a file aborted while its writers wait for room ---- */

/* Under MPI_FAULTS_RULE failing the non-writer rank's open agreement of the
 * second file (its MPI_Iallreduce: the first file's check, open, close,
 * final and drain status come before, then the second's check): the
 * second file's writers are waiting for the first one's drain to make
 * room, and the abort ends their wait without opening anything. */
static int wait_abort_main(void)
{
    const uint64_t room = 4 << 20; /* one file, not two (as wait_main) */
    int writers = tc_size > 1 ? 2 : 1, n = -1;
    char d1[4096], d2[4096], d3[4096], p1[4096], p2[4096], p3[4096];
    cbs_t c1, c3;
    static cbs_t c2;
    tc_phase("waitabort");
    fwdio_runtime_t *rt = wait_runtime(0); /* the default: 10 s */
    tc_path(d1, sizeof d1, "local-wabort-1");
    tc_path(d2, sizeof d2, "local-wabort-2");
    tc_path(d3, sizeof d3, "local-wabort-3");
    tc_path(p1, sizeof p1, "wabort-1.dat");
    tc_path(p2, sizeof p2, "wabort-2.dat");
    tc_path(p3, sizeof p3, "wabort-3.dat");
    fwdio_file_t *f1 = tier_file(rt, p1, d1, room, 2 << 20, 161, &c1, &n); /* drains ~0.75 s */
    TC_CHECK(n == writers, "%d local files of the first file, expected %d", n, writers);
    fwdio_options_t o;
    tier_options(&o, d2);
    o.local_capacity = room;
    fwdio_callbacks_t cb = callbacks(&c2);
    fwdio_file_t *f2 = NULL;
    double t0 = MPI_Wtime();
    TC_EXPECT(fwdio_open(rt, p2, FILE_SIZE, &o, &cb, &f2), FWDIO_OK, "fwdio_open (second)");
    write_share_(f2, 162, 1);
    TC_EXPECT(fwdio_close(f2), FWDIO_OK, "fwdio_close (second)");
    TC_EXPECT(fwdio_wait(f2), FWDIO_EMPI, "fwdio_wait: the second file aborted while its "
                                          "writers waited for room");
    double took = MPI_Wtime() - t0;
    expect_agreed_error(f2, FWDIO_EMPI, "MPI_Iallreduce");
    TC_CHECK(tc_sum(MPI_COMM_WORLD, mpi_faults_fired()) == 1,
             "MPI_FAULTS_RULE fired %ld times, expected once",
             tc_sum(MPI_COMM_WORLD, mpi_faults_fired()));
    TC_CHECK(drained_everywhere(f1) != -1, "the ranks disagree on the first drain");
    TC_CHECK(took < 9.0, "the aborted file took %.3f s: its writers waited on", took);
    MPI_Barrier(MPI_COMM_WORLD);
    n = tc_rank == 0 ? local_files(d2, 0) : 0;
    MPI_Bcast(&n, 1, MPI_INT, 0, MPI_COMM_WORLD);
    TC_CHECK(n == 0, "%d local files of the aborted file: its writers opened after all", n);
    TC_EXPECT(fwdio_drain_wait(f1), FWDIO_OK, "fwdio_drain_wait (first)");
    MPI_Barrier(MPI_COMM_WORLD);
    TC_CHECK(tc_verify_full(MPI_COMM_WORLD, p1, FILE_SIZE, 161) == 0, "first file");
    /* nothing of the aborted file stays counted: the next file fits (the
     * first's drained copies evicted for it) */
    fwdio_file_t *f3 = tier_file(rt, p3, d3, room, 0, 163, &c3, &n);
    TC_CHECK(n == writers, "%d local files of the file after the aborted one, expected %d", n,
             writers);
    TC_EXPECT(fwdio_drain_wait(f3), FWDIO_OK, "fwdio_drain_wait (third)");
    MPI_Barrier(MPI_COMM_WORLD);
    TC_CHECK(tc_verify_full(MPI_COMM_WORLD, p3, FILE_SIZE, 163) == 0, "third file");
    MPI_Barrier(MPI_COMM_WORLD);
    fwdio_file_free(f1);
    fwdio_file_free(f2);
    fwdio_file_free(f3);
    TC_EXPECT(fwdio_finalize(rt), FWDIO_OK, "fwdio_finalize");
    return 0;
}

/* ---- fullstore: a local store without room ---- */

static const char *g_store;

/* ---- nodeevict: another rank's drained copies evicted for a file ---- */

/* tier_file with one writer, `writer`. */
static fwdio_file_t *one_writer_file(fwdio_runtime_t *rt, const char *path, const char *dir,
                                     uint64_t capacity, int writer, uint64_t seed, cbs_t *c,
                                     int *local_at_complete)
{
    fwdio_options_t o;
    tier_options(&o, dir);
    g_writers[0] = writer;
    o.writer_list_len = 1;
    o.local_capacity = capacity;
    return tier_file_with(rt, path, dir, &o, seed, c, local_at_complete);
}

static int node_evict_main(void)
{
    if (tc_node_count(MPI_COMM_WORLD) != 1) {
        tc_note("nodeevict: the ranks are on %d nodes; it needs one", tc_node_count(MPI_COMM_WORLD));
        return 0;
    }
    const uint64_t room = 7 << 20; /* two one-writer files (~3 MiB each), not three */
    fwdio_runtime_t *rt = wait_runtime(0); /* the default local_wait: 10 s */
    char d1[4096], d2[4096], d3[4096], p1[4096], p2[4096], p3[4096];
    cbs_t c1, c2, c3;
    int n = -1;
    tc_path(d1, sizeof d1, "local-nodeevict-1");
    tc_path(d2, sizeof d2, "local-nodeevict-2");
    tc_path(d3, sizeof d3, "local-nodeevict-3");
    tc_path(p1, sizeof p1, "nodeevict-1.dat");
    tc_path(p2, sizeof p2, "nodeevict-2.dat");
    tc_path(p3, sizeof p3, "nodeevict-3.dat");
    tc_phase("nodeevict: two files of rank 0, drained and kept");
    fwdio_file_t *f1 = one_writer_file(rt, p1, d1, room, 0, 161, &c1, &n);
    TC_CHECK(n == 1, "%d local files of the first file, expected 1", n);
    TC_EXPECT(fwdio_drain_wait(f1), FWDIO_OK, "fwdio_drain_wait (first)");
    fwdio_file_t *f2 = one_writer_file(rt, p2, d2, room, 0, 162, &c2, &n);
    TC_CHECK(n == 1, "%d local files of the second file, expected 1", n);
    TC_EXPECT(fwdio_drain_wait(f2), FWDIO_OK, "fwdio_drain_wait (second)");
    MPI_Barrier(MPI_COMM_WORLD);

    tc_phase("nodeevict: a file of the last rank, which has no copy to evict");
    double t0 = MPI_Wtime();
    fwdio_file_t *f3 = one_writer_file(rt, p3, d3, room, tc_size - 1, 163, &c3, &n);
    double took = MPI_Wtime() - t0;
    TC_CHECK(n == 1, "%d local files of the third file, expected 1: rank 0's drained copies "
             "were not evicted for it", n);
    TC_CHECK(took < 5.0, "the third file took %.3f s to complete (local_wait is 10 s)", took);
    int left1 = tc_rank == 0 ? local_files(d1, 0) : -1, left2 = tc_rank == 0 ? local_files(d2, 0) : -1;
    TC_CHECK(tc_rank != 0 || (left1 == 0 && left2 == 1),
             "the first (oldest) file's copy should be evicted and the second's kept: %d and %d "
             "local files left", left1, left2);
    TC_EXPECT(fwdio_drain_wait(f3), FWDIO_OK, "fwdio_drain_wait (third)");
    MPI_Barrier(MPI_COMM_WORLD);
    TC_CHECK(tc_verify_full(MPI_COMM_WORLD, p1, FILE_SIZE, 161) == 0, "first file");
    TC_CHECK(tc_verify_full(MPI_COMM_WORLD, p2, FILE_SIZE, 162) == 0, "second file");
    TC_CHECK(tc_verify_full(MPI_COMM_WORLD, p3, FILE_SIZE, 163) == 0, "third file");
    MPI_Barrier(MPI_COMM_WORLD);
    fwdio_file_free(f1);
    fwdio_file_free(f2);
    fwdio_file_free(f3);
    TC_EXPECT(fwdio_finalize(rt), FWDIO_OK, "fwdio_finalize");
    return 0;
}

static int full_store_main(void)
{
    char dir[4096], path[4096];
    if (g_store)
        snprintf(dir, sizeof dir, "%s/local-%%h", g_store); /* the small tmpfs */
    else
        tc_path(dir, sizeof dir, "local-full-%h");
    tc_path(path, sizeof path, "fullstore.dat");
    /* without the tmpfs, the last writer's store reports itself full */
    fwdio_runtime_t *rt = fault_runtime(g_store ? NULL : "statvfs:enospc:rank=%d");
    cbs_t c;
    int n = -1;
    tc_phase("fullstore");
    fwdio_file_t *f = open_atomic(rt, path, dir, &c);
    write_share(f, 909);
    TC_EXPECT(fwdio_close(f), FWDIO_OK, "fwdio_close");
    TC_EXPECT(fwdio_wait(f), FWDIO_OK, "fwdio_wait: complete with a full local store");
    char host[256] = "", expanded[4096 + 300];
    gethostname(host, sizeof host - 1);
    snprintf(expanded, sizeof expanded, "%.*s%s", (int)(strlen(dir) - 2), dir, host);
    n = tc_rank == 0 ? local_files(expanded, 1) : 0;
    MPI_Bcast(&n, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (!g_store)
        TC_CHECK(n == (tc_size > 1 ? 1 : 0), "%d local files: the full store's writer should "
                 "have written to the target", n);
    else
        TC_CHECK(n == 0, "%d local files in a store without room for any", n);
    TC_EXPECT(fwdio_drain_wait(f), FWDIO_OK, "fwdio_drain_wait");
    TC_CHECK(atomic_load(&c.drained_status) == FWDIO_OK, "drained: %s",
             fwdio_strerror(atomic_load(&c.drained_status)));
    MPI_Barrier(MPI_COMM_WORLD);
    TC_CHECK(tc_verify_full(MPI_COMM_WORLD, path, FILE_SIZE, 909) == 0, "bytes at the target");
    TC_CHECK(tc_rank != 0 || undrained_files(expanded) == 0,
             "local copies not marked drained after the drain");
    MPI_Barrier(MPI_COMM_WORLD);
    fwdio_file_free(f);
    TC_EXPECT(fwdio_finalize(rt), FWDIO_OK, "fwdio_finalize");
    return 0;
}

/* ---- tmpfsfull: a small tmpfs store fills while both writers write ---- */

/* Both writers' files pass the free-space check of the open (--store: a
 * 2 MiB tmpfs, local_tmpfs.sh; each file ~1.5 MiB) but not both fit: a
 * local pwrite meets ENOSPC and that writer's file moves to the target. */
static int tmpfs_full_main(void)
{
    char dir[4096], path[4096], tmp[4096 + 32];
    snprintf(dir, sizeof dir, "%s/local", g_store);
    tc_path(path, sizeof path, "tmpfsfull.dat");
    snprintf(tmp, sizeof tmp, "%.*s.tmpfsfull.dat.fwdio-tmp", (int)(strlen(path) - 13), path);
    int nw = tc_size > 1 ? 2 : 1;
    fwdio_runtime_t *rt = tc_start_runtime(MPI_COMM_WORLD, g_mode);
    cbs_t c;
    tc_phase("tmpfsfull");
    fwdio_file_t *f = open_atomic(rt, path, dir, &c);
    write_share(f, 919);
    TC_EXPECT(fwdio_close(f), FWDIO_OK, "fwdio_close");
    TC_EXPECT(fwdio_wait(f), FWDIO_OK, "fwdio_wait: complete with the store full");
    TC_EXPECT(fwdio_drain_wait(f), FWDIO_OK, "fwdio_drain_wait");
    check_moved_file(rt, path, tmp, dir, 919, nw - 1);
    fwdio_file_free(f);
    TC_EXPECT(fwdio_finalize(rt), FWDIO_OK, "fwdio_finalize");
    return 0;
}

/* ---- finalize waits for a drain ---- */

/* The drain's cap in case_finalize: "finalize_slow" takes one that keeps
 * fwdio_finalize waiting past the 10 s after which it says so. */
static const char *g_finalize_bandwidth = "2M";

static void case_finalize(void)
{
    char dir[4096], path[4096];
    tc_path(dir, sizeof dir, "local-fin");
    tc_path(path, sizeof path, "finalized.dat");
    fwdio_runtime_t *rt = tc_start_runtime(MPI_COMM_WORLD, g_mode);
    fwdio_options_t o;
    tier_options(&o, NULL);
    static cbs_t c; /* the callbacks run after the handle is freed */
    fwdio_callbacks_t cb = callbacks(&c);
    fwdio_file_t *f = NULL;
    tc_phase("finalize");
    setenv("FWDIO_LOCAL_DIR", dir, 1);
    setenv("FWDIO_DRAIN_BANDWIDTH", g_finalize_bandwidth, 1);
    TC_EXPECT(fwdio_open(rt, path, FILE_SIZE, &o, &cb, &f), FWDIO_OK, "fwdio_open");
    unsetenv("FWDIO_LOCAL_DIR");
    unsetenv("FWDIO_DRAIN_BANDWIDTH");
    write_share(f, 606);
    TC_EXPECT(fwdio_close(f), FWDIO_OK, "fwdio_close");
    TC_EXPECT(fwdio_wait(f), FWDIO_OK, "fwdio_wait");
    int done = -1;
    TC_EXPECT(fwdio_drain_test(f, &done), FWDIO_OK, "fwdio_drain_test");
    TC_CHECK(done == 0, "the capped drain was over at completion");
    fwdio_file_free(f); /* the drain goes on */
    TC_EXPECT(fwdio_finalize(rt), FWDIO_OK, "fwdio_finalize");
    TC_CHECK(atomic_load(&c.drained_count) == 1 && atomic_load(&c.drained_status) == FWDIO_OK,
             "finalize returned before drained (%d, %s)", atomic_load(&c.drained_count),
             fwdio_strerror(atomic_load(&c.drained_status)));
    MPI_Barrier(MPI_COMM_WORLD);
    TC_CHECK(tc_verify_full(MPI_COMM_WORLD, path, FILE_SIZE, 606) == 0, "bytes after finalize");
    TC_CHECK(tc_rank != 0 || (local_files(dir, 1) > 0 && undrained_files(dir) == 0),
             "the local copies kept after finalize, marked drained");
    MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
    unsigned timeout = 60;
    tc_mpi_init(&argc, &argv, timeout);
    const char *only = NULL;
    for (int i = 1; i < argc; i++) {
        if (tc_common_option(argc, argv, &i, &timeout, &g_mode))
            continue;
        if (!strcmp(argv[i], "--case") && i + 1 < argc)
            only = argv[++i];
        else if (!strcmp(argv[i], "--expect-target") && i + 1 < argc)
            g_expect_target = argv[++i];
        else if (!strcmp(argv[i], "--store") && i + 1 < argc)
            g_store = argv[++i];
        else if (!strcmp(argv[i], "--text") && i + 1 < argc)
            g_text = argv[++i];
        else if (!strcmp(argv[i], "--free-early"))
            g_free_early = 1;
        else {
            fprintf(stderr, "usage: test_local_tier [--case NAME] [--timeout S] "
                            "[--callback-mode poll|progress] [--expect-target old|either] "
                            "[--text TEXT] [--free-early] [--store DIR]\n");
            return 2;
        }
    }
    tc_watchdog_start(timeout);
    fwdio_runtime_t *rt = tc_start_runtime(MPI_COMM_WORLD, g_mode);
    if (!only || !strcmp(only, "drain"))
        case_drain(rt);
    if (!only || !strcmp(only, "host"))
        case_host(rt);
    if (!only || !strcmp(only, "mismatch"))
        case_mismatch(rt);
    if (!only || !strcmp(only, "baddir"))
        case_baddir(rt);
    if (!only || !strcmp(only, "capacity")) {
        /* local_wait off: the file that does not fit goes to the target at
         * once (case "wait" waits) */
        TC_EXPECT(fwdio_finalize(rt), FWDIO_OK, "fwdio_finalize");
        rt = wait_runtime(FWDIO_LOCAL_WAIT_OFF);
        case_capacity(rt);
    }
    TC_EXPECT(fwdio_finalize(rt), FWDIO_OK, "fwdio_finalize");
    if (!only || !strcmp(only, "drainfail"))
        drain_fail_main();
    if (!only || !strcmp(only, "localfail"))
        local_fail_main();
    if (!only || !strcmp(only, "targetfail"))
        target_fail_main();
    if (only && !strcmp(only, "tmpfsfull"))
        tmpfs_full_main();
    if (only && !strcmp(only, "agreefault"))
        agree_fault_main();
    if (only && !strcmp(only, "wait"))
        wait_main();
    if (only && !strcmp(only, "waitabort"))
        wait_abort_main();
    if (only && !strcmp(only, "nodeevict"))
        node_evict_main();
    if (!only || !strcmp(only, "fullstore"))
        full_store_main();
    if (!only || !strcmp(only, "finalize"))
        case_finalize();
    if (only && !strcmp(only, "finalize_slow")) {
        g_finalize_bandwidth = "120K"; /* ~1.5 MiB per writer: about 12 s */
        case_finalize();
    }
    return tc_finish("test_local_tier");
}
