/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Storage faults end a file as failed, never the job. Each --fault case makes
 * a writer's file-system call fail on "victim.dat": for real where this
 * machine allows it (a file-size limit for EFBIG, a small tmpfs for ENOSPC, a
 * read-only bind mount for EROFS; skipped without the privilege), through
 * FWDIO_FAULT otherwise. Then:
 *   - fwdio_wait and both callbacks give the expected status, the same on
 *     every rank;
 *   - fwdio_file_error_info names the faulting writer, the errno and a
 *     plausible offset, the same on every rank, and fwdio_file_error names the
 *     call, the path, the rank and the errno;
 *   - the failed writer received every byte sent to it (no sender was left
 *     blocked: that is what lets every rank get here);
 *   - files in flight beside the victim complete and verify byte for byte;
 *   - a later file on the same runtime completes and verifies byte for byte:
 *     the faulty writer opens it once the victim's descriptor is closed, so
 *     it usually gets that descriptor's number back, and none of its writes
 *     may be skipped as the failed victim's are (a failure kept by
 *     descriptor number, never forgotten, fails this in pwrite-edquot-from
 *     and one-of-several).
 * The commit step (atomic replace, commit blocks) is faulted too: rename,
 * directory sync, the commit block's pwrite and fdatasync end the file with
 * FWDIO_ECOMMIT, and a failed atomic replace leaves the old file as it was
 * and no temporary. Faults that must not fail the file (short writes, EINTR,
 * slow writes) check the victim's bytes instead. A rank that hangs is caught by the watchdog
 * (--timeout). The writers are ranks 0 and P-1; the fault hits P-1.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include "fwdio.h"
#include "pattern.h"
#include "scratch_mounts.h"
#include "test_common.h"

#define WRITE_SIZE ((uint64_t)64 << 10)
#define STRIPE_SIZE ((uint64_t)256 << 10)
#define FILE_SIZE ((uint64_t)2 << 20)
#define CHUNK WRITE_SIZE /* chunk c of a file is written by rank c mod P */

typedef enum { REAL_NONE, REAL_EFBIG, REAL_ENOSPC, REAL_EROFS } real_t;

/* Where the reported offset may be. */
typedef enum {
    AT_UNIT,  /* a write-unit start in the reporting writer's stripes */
    AT_WRITER, /* anywhere in them: under a small writer budget, partly filled
                * units are flushed early and their pwrites start where their
                * data does, which depends on timing */
    AT_PAGE,  /* a page boundary in the reporting writer's stripes */
    AT_LIMIT, /* the file-size limit, or a unit start above it */
    AT_ZERO,
    AT_SIZE,  /* the file size (ftruncate) */
    AT_COMMIT /* the commit block's offset */
} offset_rule_t;

/* Which rank must report the fault. */
typedef enum { BY_FAULTY, BY_FIRST_WRITER, BY_ANY_WRITER, BY_COMMITTER } by_t;

typedef struct scenario {
    const char *name;
    const char *fault; /* FWDIO_FAULT; "{R}" stands for the faulty writer's rank */
    real_t real;
    int durable;
    int status; /* final status of victim.dat */
    int err;
    const char *call; /* the call fwdio_file_error must name */
    offset_rule_t at;
    by_t by;
    int bystanders;       /* other files in flight beside the victim */
    uint64_t size;        /* of the victim (0: FILE_SIZE) */
    size_t small_budgets; /* writer and staging budget (0: defaults) */
    int nothing_after;    /* the faulty writer's 1st pwrite fails: it writes nothing after */
    int atomic;           /* options.atomic_replace, over an old victim.dat */
    int commit;           /* rank COMMIT_RANK gives victim.dat a commit block */
} scenario_t;

/* The rank that sets the commit block: not a writer with 3 ranks, so the
 * block's pwrite and fdatasync are its only ones. */
#define COMMIT_RANK 1
#define COMMIT_LEN ((uint64_t)4096)
#define OLD_LEN 1000 /* bytes of the old victim.dat an atomic replace must keep on failure */

#define INJECTED(name_, fault_, status_, err_, call_, at_, by_) \
    .name = name_, .fault = fault_, .status = status_, .err = err_, .call = call_, .at = at_, \
    .by = by_
#define REAL(name_, real_, status_, err_, call_, at_, by_) \
    .name = name_, .real = real_, .status = status_, .err = err_, .call = call_, .at = at_, \
    .by = by_

static const scenario_t scenarios[] = {
    {INJECTED("pwrite-eio", "pwrite:eio:nth=3:rank={R}", FWDIO_EWRITE, EIO, "pwrite", AT_UNIT,
              BY_FAULTY)},
    {INJECTED("pwrite-edquot-from", "pwrite:errno=122:from=2:rank={R}:path=victim",
              FWDIO_EWRITE, EDQUOT, "pwrite", AT_UNIT, BY_FAULTY)},
    {INJECTED("pwrite-stall", "pwrite:stall:nth=2:rank={R}", FWDIO_EWRITE, 0, "pwrite", AT_UNIT,
              BY_FAULTY)},
    {INJECTED("pwrite-short", "pwrite:short;pwrite:errno=4:nth=2", FWDIO_OK, 0, NULL, AT_ZERO,
              BY_FAULTY),
     .durable = 1},
    {INJECTED("pwrite-slow", "pwrite:slow=20:rank={R}", FWDIO_OK, 0, NULL, AT_ZERO, BY_FAULTY)},
    {INJECTED("pwrite-slow-eio", "pwrite:slow=20:rank={R};pwrite:eio:nth=4:rank={R}",
              FWDIO_EWRITE, EIO, "pwrite", AT_UNIT, BY_FAULTY)},
    {INJECTED("fdatasync-eio", "fdatasync:eio:rank={R}:path=victim", FWDIO_ESYNC, EIO,
              "fdatasync", AT_ZERO, BY_FAULTY),
     .durable = 1},
    {INJECTED("close-eio", "close:eio:rank={R}:path=victim", FWDIO_ESYNC, EIO, "close", AT_ZERO,
              BY_FAULTY)},
    {INJECTED("open-erofs", "open:erofs:rank={R}:path=victim", FWDIO_EOPEN, EROFS, "open",
              AT_ZERO, BY_FAULTY)},
    {INJECTED("ftruncate-efbig", "ftruncate:efbig:path=victim", FWDIO_EOPEN, EFBIG, "ftruncate",
              AT_SIZE, BY_FIRST_WRITER)},
    {INJECTED("one-of-several", "pwrite:enospc:rank={R}:path=victim", FWDIO_EWRITE, ENOSPC,
              "pwrite", AT_UNIT, BY_FAULTY),
     .bystanders = 2},
    {INJECTED("drain", "pwrite:enospc:nth=1:rank={R}", FWDIO_EWRITE, ENOSPC, "pwrite", AT_WRITER,
              BY_FAULTY),
     .size = (uint64_t)32 << 20, .small_budgets = (size_t)256 << 10, .nothing_after = 1},
    {INJECTED("rename-eio", "rename:eio:path=victim", FWDIO_ECOMMIT, EIO, "rename", AT_ZERO,
              BY_FIRST_WRITER),
     .atomic = 1},
    {INJECTED("fsync-dir-eio", "fsync_dir:eio:nth=1", FWDIO_ECOMMIT, EIO, "fsync_dir", AT_ZERO,
              BY_FIRST_WRITER),
     .atomic = 1},
    {INJECTED("commit-pwrite-eio", "pwrite:eio:rank=1:path=victim", FWDIO_ECOMMIT, EIO, "pwrite",
              AT_COMMIT, BY_COMMITTER),
     .commit = 1},
    {INJECTED("commit-fdatasync-eio", "fdatasync:eio:rank=1:path=victim", FWDIO_ECOMMIT, EIO,
              "fdatasync", AT_COMMIT, BY_COMMITTER),
     .commit = 1, .atomic = 1},
    {REAL("real-efbig", REAL_EFBIG, FWDIO_EWRITE, EFBIG, "pwrite", AT_LIMIT, BY_FAULTY)},
    {REAL("real-enospc", REAL_ENOSPC, FWDIO_EWRITE, ENOSPC, "pwrite", AT_PAGE, BY_ANY_WRITER)},
    {REAL("real-erofs", REAL_EROFS, FWDIO_EOPEN, EROFS, "open", AT_ZERO, BY_FIRST_WRITER)},
};
enum { NSCENARIOS = sizeof scenarios / sizeof scenarios[0] };

typedef struct tfile {
    char name[64];
    char path[4096];
    char written[4200]; /* what the writers open: path, or its temporary */
    uint64_t size, seed;
    tc_cbstate_t cb;
    fwdio_file_t *f;
} tfile_t;

static fwdio_callback_mode_t g_mode = FWDIO_CALLBACKS_ON_POLL;
static int g_writers[2];
static int g_nwriters;
static uint64_t g_limit; /* REAL_EFBIG: the file-size limit of the faulty writer */

static int faulty_rank(void) { return g_writers[g_nwriters - 1]; }

static void file_options(const scenario_t *sc, fwdio_options_t *o)
{
    fwdio_options_init(o);
    o->write_size = WRITE_SIZE;
    o->stripe_size = STRIPE_SIZE;
    o->layout = FWDIO_LAYOUT_BLOCK;
    o->writer_list = g_writers;
    o->writer_list_len = g_nwriters;
    o->durable = sc->durable;
    o->atomic_replace = sc->atomic;
}

/* Bytes [lo, hi) the writer `rank` owns: block layout, the stripes divide evenly. */
static int writer_region(int rank, uint64_t size, uint64_t *lo, uint64_t *hi)
{
    for (int k = 0; k < g_nwriters; k++) {
        if (g_writers[k] != rank)
            continue;
        uint64_t stripes = size / STRIPE_SIZE;
        *lo = stripes * (uint64_t)k / (uint64_t)g_nwriters * STRIPE_SIZE;
        *hi = stripes * (uint64_t)(k + 1) / (uint64_t)g_nwriters * STRIPE_SIZE;
        return k;
    }
    return -1;
}

static void open_file(fwdio_runtime_t *rt, const scenario_t *sc, tfile_t *t, const char *dir,
                      const char *name, uint64_t size, uint64_t seed)
{
    snprintf(t->name, sizeof t->name, "%s", name);
    snprintf(t->path, sizeof t->path, "%s/%s", dir, name);
    if (sc->atomic) /* as documented for options.atomic_replace */
        snprintf(t->written, sizeof t->written, "%s/.%s.fwdio-tmp", dir, name);
    else
        snprintf(t->written, sizeof t->written, "%s", t->path);
    t->size = size;
    t->seed = seed;
    tc_cb_init(&t->cb);
    fwdio_callbacks_t cbs = tc_cb_callbacks(&t->cb);
    fwdio_options_t o;
    file_options(sc, &o);
    tc_phase("open %s", t->path);
    TC_EXPECT(fwdio_open(rt, t->path, size, &o, &cbs, &t->f), FWDIO_OK, t->name);
    if (!t->f) {
        fflush(stderr);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

/* Every rank writes its chunks of all the files, interleaved, then closes
 * them. A file that fails at open may refuse writes with FWDIO_EFAILED. */
static void write_and_close(tfile_t *files, int n, int may_refuse)
{
    uint64_t most = 0;
    for (int i = 0; i < n; i++)
        most = files[i].size > most ? files[i].size : most;
    tc_phase("write %d file(s)", n);
    for (uint64_t c = (uint64_t)tc_rank; c * CHUNK < most; c += (uint64_t)tc_size) {
        for (int i = 0; i < n; i++) {
            uint64_t off = c * CHUNK;
            if (off >= files[i].size)
                continue;
            uint64_t len = files[i].size - off < CHUNK ? files[i].size - off : CHUNK;
            int rc = tc_write_pattern(files[i].f, off, len, files[i].seed, 0);
            if (rc != FWDIO_OK && !(may_refuse && rc == FWDIO_EFAILED))
                tc_fail("%s: fwdio_write at %" PRIu64 " returned %d (%s)", files[i].name, off,
                        rc, fwdio_strerror(rc));
        }
    }
    for (int i = 0; i < n; i++) {
        tc_phase("close %s", files[i].name);
        TC_EXPECT(fwdio_close(files[i].f), FWDIO_OK, files[i].name);
    }
}

/* A file that must succeed: status, callbacks, bytes. */
static void check_good(tfile_t *t)
{
    tc_phase("wait %s", t->name);
    TC_EXPECT(fwdio_wait(t->f), FWDIO_OK, t->name);
    tc_cb_check(MPI_COMM_WORLD, &t->cb, t->name, FWDIO_OK, FWDIO_OK, g_mode, t->f);
    tc_phase("verify %s", t->name);
    if (tc_verify_full(MPI_COMM_WORLD, t->path, t->size, t->seed) == 0 && tc_rank == 0)
        tc_note("%s complete and verified", t->name);
}

static void check_offset(const scenario_t *sc, const fwdio_error_info_t *info, uint64_t size)
{
    uint64_t lo = 0, hi = 0;
    if (writer_region(info->rank, size, &lo, &hi) < 0)
        return; /* reported by check_failed */
    uint64_t off = info->offset;
    int ok = 1;
    switch (sc->at) {
    case AT_UNIT: ok = off >= lo && off < hi && off % WRITE_SIZE == 0; break;
    case AT_WRITER: ok = off >= lo && off < hi; break;
    case AT_PAGE: ok = off >= lo && off < hi && off % 4096 == 0; break;
    case AT_LIMIT: ok = off < hi && (off == g_limit || (off > g_limit && off % WRITE_SIZE == 0)); break;
    case AT_ZERO: ok = off == 0; break;
    case AT_SIZE: ok = off == size; break;
    case AT_COMMIT: ok = off == size - COMMIT_LEN; break;
    }
    TC_CHECK(ok, "%s: offset %" PRIu64 " is not where the fault can be (writer stripes [%" PRIu64
             ", %" PRIu64 "), limit %" PRIu64 ")",
             sc->name, off, lo, hi, g_limit);
}

/* The victim failed as the scenario says, the same way on every rank. */
static void check_failed(const scenario_t *sc, tfile_t *t)
{
    tc_phase("wait %s", t->name);
    TC_EXPECT(fwdio_wait(t->f), sc->status, t->name);
    int ready = sc->status == FWDIO_EOPEN ? FWDIO_EOPEN : FWDIO_OK;
    tc_cb_check(MPI_COMM_WORLD, &t->cb, t->name, ready, sc->status, g_mode, t->f);

    fwdio_error_info_t info;
    memset(&info, 0, sizeof info);
    TC_EXPECT(fwdio_file_error_info(t->f, &info), FWDIO_OK, "fwdio_file_error_info");
    TC_CHECK(info.status == sc->status, "%s: error info status %d (%s), expected %s", sc->name,
             info.status, fwdio_strerror(info.status), fwdio_strerror(sc->status));
    TC_CHECK(info.sys_errno == sc->err, "%s: errno %d (%s), expected %d (%s)", sc->name,
             info.sys_errno, strerror(info.sys_errno), sc->err, strerror(sc->err));
    uint64_t lo = 0, hi = 0;
    switch (sc->by) {
    case BY_FAULTY:
        TC_CHECK(info.rank == faulty_rank(), "%s: reported by rank %d, the fault hit rank %d",
                 sc->name, info.rank, faulty_rank());
        break;
    case BY_FIRST_WRITER:
        TC_CHECK(info.rank == g_writers[0], "%s: reported by rank %d, expected writer 0 (rank %d)",
                 sc->name, info.rank, g_writers[0]);
        break;
    case BY_ANY_WRITER:
        TC_CHECK(writer_region(info.rank, t->size, &lo, &hi) >= 0,
                 "%s: reported by rank %d, not a writer", sc->name, info.rank);
        break;
    case BY_COMMITTER:
        TC_CHECK(info.rank == COMMIT_RANK, "%s: reported by rank %d, the commit block's is %d",
                 sc->name, info.rank, COMMIT_RANK);
        break;
    }
    check_offset(sc, &info, t->size);
    if (!tc_all_same(MPI_COMM_WORLD, info.status) || !tc_all_same(MPI_COMM_WORLD, info.rank) ||
        !tc_all_same(MPI_COMM_WORLD, info.sys_errno) ||
        !tc_all_same(MPI_COMM_WORLD, (long)info.offset))
        tc_fail("%s: error info differs between ranks (here: status %d rank %d errno %d "
                "offset %" PRIu64 ")",
                sc->name, info.status, info.rank, info.sys_errno, info.offset);

    /* The text says what failed, where, and why. */
    const char *text = fwdio_file_error(t->f);
    char want[8500];
    if (!strcmp(sc->call, "rename"))
        snprintf(want, sizeof want, "rename of %s to %s", t->written, t->path);
    else if (!strcmp(sc->call, "fsync_dir"))
        snprintf(want, sizeof want, "fsync of the directory of %s", t->path);
    else
        snprintf(want, sizeof want, "%s of %s", sc->call, t->written);
    TC_CHECK(strstr(text, want) != NULL, "%s: '%s' does not say '%s'", sc->name, text, want);
    snprintf(want, sizeof want, "rank %d", info.rank);
    TC_CHECK(strstr(text, want) != NULL, "%s: '%s' does not say '%s'", sc->name, text, want);
    if (sc->err) {
        snprintf(want, sizeof want, "%s (errno %d)", strerror(sc->err), sc->err);
        TC_CHECK(strstr(text, want) != NULL, "%s: '%s' does not say '%s'", sc->name, text, want);
    } else {
        TC_CHECK(strstr(text, "wrote nothing") != NULL, "%s: '%s' does not say 'wrote nothing'",
                 sc->name, text);
    }
    if (!strcmp(sc->call, "pwrite") || !strcmp(sc->call, "ftruncate")) {
        snprintf(want, sizeof want, "%" PRIu64, info.offset);
        TC_CHECK(strstr(text, want) != NULL, "%s: '%s' does not give the offset %s", sc->name,
                 text, want);
    }
    if (tc_rank == 0)
        tc_note("%s: fwdio_file_error: %s", sc->name, text);

    /* The rank that saw the failure says when its call failed. */
    fwdio_file_stats_t fst;
    TC_EXPECT(fwdio_file_stats(t->f, &fst), FWDIO_OK, "fwdio_file_stats");
    if (info.rank == tc_rank)
        TC_CHECK(fst.time_to_failure > 0 && fst.time_to_failure <= fst.time_to_complete,
                 "%s: time_to_failure %g (complete after %g)", sc->name, fst.time_to_failure,
                 fst.time_to_complete);

    /* A writer that failed after open still took in every byte sent to it. */
    if (sc->status != FWDIO_EOPEN) {
        int k = writer_region(tc_rank, t->size, &lo, &hi);
        uint64_t agreed[2] = {0, 0};
        fwdio_file_stats_t st;
        TC_EXPECT(fwdio_file_writer_bytes(t->f, agreed, 2), g_nwriters, "fwdio_file_writer_bytes");
        TC_EXPECT(fwdio_file_stats(t->f, &st), FWDIO_OK, "fwdio_file_stats");
        if (k >= 0)
            TC_CHECK(st.writer_bytes == agreed[k],
                     "%s: writer rank %d received %" PRIu64 " bytes, %" PRIu64 " were sent to it",
                     sc->name, tc_rank, st.writer_bytes, agreed[k]);
    }
}

/* The faulty writer's first pwrite failed: its later writes of the file were
 * skipped, so its stripes are still the holes ftruncate made, while the
 * other writer's stripes hold their bytes. */
static void check_nothing_after(tfile_t *t)
{
    uint64_t lo = 0, hi = 0;
    writer_region(faulty_rank(), t->size, &lo, &hi);
    tc_extent_t ext[3] = {{0, lo, 0}, {lo, hi - lo, -1}, {hi, t->size - hi, 0}};
    size_t n = hi < t->size ? 3 : 2;
    tc_phase("verify %s: writer %d wrote nothing after its failure", t->name, faulty_rank());
    if (tc_verify_extents(MPI_COMM_WORLD, t->path, t->size, t->seed, lo ? ext : ext + 1,
                          lo ? n : n - 1) == 0 &&
        tc_rank == 0)
        tc_note("%s: writer %d wrote nothing after its failed pwrite", t->name, faulty_rank());
}

/* An atomic replace that failed left the old file as it was and no temporary. */
static void check_old_kept(tfile_t *t)
{
    if (tc_rank != 0)
        return;
    tc_phase("check %s kept", t->path);
    unsigned char buf[OLD_LEN + 1];
    FILE *in = fopen(t->path, "rb");
    size_t n = in ? fread(buf, 1, sizeof buf, in) : 0;
    if (in)
        fclose(in);
    int same = n == OLD_LEN;
    for (size_t i = 0; same && i < n; i++)
        same = buf[i] == 'o';
    TC_CHECK(same, "%s: the old file was not kept (%zu bytes read)", t->name, n);
    struct stat st;
    TC_CHECK(stat(t->written, &st) != 0 && errno == ENOENT, "%s: the temporary %s was left",
             t->name, t->written);
}

/* "Previous checkpoint": what an atomic replace must not destroy on failure. */
static void make_old_file(const char *path)
{
    if (tc_rank == 0) {
        FILE *out = fopen(path, "wb");
        for (int i = 0; out && i < OLD_LEN; i++)
            fputc('o', out);
        if (!out || fclose(out) != 0)
            tc_fail("cannot write the old %s: %s", path, strerror(errno));
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

/* ---- real faults ---- */

/* Rank 0 mounts a 512 KiB tmpfs (ENOSPC) or a read-only view (EROFS) at dir;
 * every rank learns its errno (0: mounted). */
static int mount_on_rank0(int real, const char *dir)
{
    int err = 0;
    if (tc_rank == 0)
        err = real == REAL_ENOSPC ? scratch_mount_tmpfs(dir, 512 << 10)
                                  : scratch_mount_read_only(dir);
    MPI_Bcast(&err, 1, MPI_INT, 0, MPI_COMM_WORLD);
    return err;
}

static void unmount_on_rank0(const char *dir)
{
    MPI_Barrier(MPI_COMM_WORLD); /* nobody uses it any more */
    if (tc_rank == 0 && umount2(dir, MNT_DETACH) != 0)
        tc_fail("umount %s: %s", dir, strerror(errno));
}

/* The faulty writer may not grow a file past g_limit: a write across it is
 * cut short, the next one fails with EFBIG. fwdio leaves signal dispositions
 * alone, so the process ignores SIGXFSZ itself (default: killed). */
static void limit_file_size(uint64_t victim_size, struct rlimit *saved)
{
    uint64_t lo = 0, hi = 0;
    writer_region(faulty_rank(), victim_size, &lo, &hi);
    g_limit = lo + 2 * WRITE_SIZE + WRITE_SIZE / 2 + 100;
    if (tc_rank != faulty_rank())
        return;
    signal(SIGXFSZ, SIG_IGN);
    struct rlimit lim;
    getrlimit(RLIMIT_FSIZE, saved);
    lim = *saved;
    lim.rlim_cur = (rlim_t)g_limit;
    if (setrlimit(RLIMIT_FSIZE, &lim) != 0)
        tc_fail("setrlimit(RLIMIT_FSIZE, %" PRIu64 "): %s", g_limit, strerror(errno));
}

/* ---- the cases ---- */

static char *with_rank(const char *spec, int rank)
{
    static char out[512];
    size_t n = 0;
    for (const char *p = spec; *p && n + 16 < sizeof out; p++) {
        if (!strncmp(p, "{R}", 3)) {
            n += (size_t)snprintf(out + n, sizeof out - n, "%d", rank);
            p += 2;
        } else {
            out[n++] = *p;
        }
    }
    out[n] = '\0';
    return out;
}

static int run_scenario(const scenario_t *sc)
{
    const char *tmp = tc_tmpdir();
    char victim_dir[4096], mounted[4096] = "";
    snprintf(victim_dir, sizeof victim_dir, "%s", tmp);
    if (sc->real == REAL_ENOSPC || sc->real == REAL_EROFS) {
        snprintf(mounted, sizeof mounted, "%s/%s", tmp,
                 sc->real == REAL_ENOSPC ? "small-tmpfs" : "read-only");
        tc_phase("mount %s", mounted);
        int err = mount_on_rank0(sc->real, mounted);
        if (err == EPERM || err == EACCES)
            return tc_skip(sc->name, "mounting a file system is not permitted here");
        if (err != 0) {
            tc_fail("mount %s: %s", mounted, strerror(err));
            return tc_finish(sc->name);
        }
        snprintf(victim_dir, sizeof victim_dir, "%s", mounted);
    }

    if (sc->fault)
        setenv("FWDIO_FAULT", with_rank(sc->fault, faulty_rank()), 1);
    fwdio_config_t cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.callback_mode = g_mode;
    cfg.writer_buffer = sc->small_budgets;
    cfg.staging_buffer = sc->small_budgets;
    fwdio_runtime_t *rt = tc_start_runtime_with(MPI_COMM_WORLD, &cfg);
    unsetenv("FWDIO_FAULT"); /* read by fwdio_init: the rules stay in force */
    if (tc_rank == 0 && sc->fault)
        tc_note("%s: FWDIO_FAULT=%s", sc->name, with_rank(sc->fault, faulty_rank()));

    uint64_t size = sc->size ? sc->size : FILE_SIZE;
    struct rlimit saved;
    if (sc->real == REAL_EFBIG)
        limit_file_size(size, &saved);

    tfile_t files[3];
    int n = 1 + sc->bystanders;
    if (sc->atomic) {
        char old[4200];
        snprintf(old, sizeof old, "%s/victim.dat", victim_dir);
        make_old_file(old);
    }
    open_file(rt, sc, &files[0], victim_dir, "victim.dat", size, 101);
    if (sc->commit && tc_rank == COMMIT_RANK) {
        unsigned char block[COMMIT_LEN];
        pattern_fill(block, COMMIT_LEN, size - COMMIT_LEN, files[0].seed);
        TC_EXPECT(fwdio_set_commit(files[0].f, block, COMMIT_LEN, size - COMMIT_LEN), FWDIO_OK,
                  "fwdio_set_commit");
    }
    for (int i = 1; i < n; i++) {
        char name[64];
        snprintf(name, sizeof name, "bystander%d.dat", i);
        open_file(rt, sc, &files[i], tmp, name, size + (uint64_t)i * STRIPE_SIZE * 2,
                  101 + (uint64_t)i);
    }
    write_and_close(files, n, sc->status == FWDIO_EOPEN);
    if (sc->status == FWDIO_OK)
        check_good(&files[0]);
    else
        check_failed(sc, &files[0]);
    if (sc->nothing_after)
        check_nothing_after(&files[0]);
    /* (a failed directory sync comes after the rename: the new file is in place) */
    if (sc->atomic && sc->status != FWDIO_OK && strcmp(sc->call, "fsync_dir") != 0)
        check_old_kept(&files[0]);
    for (int i = 1; i < n; i++)
        check_good(&files[i]);
    if (sc->real == REAL_EFBIG && tc_rank == faulty_rank())
        setrlimit(RLIMIT_FSIZE, &saved);

    /* The runtime carries on: the next file is whole. */
    tfile_t after;
    open_file(rt, sc, &after, tmp, "after.dat", FILE_SIZE, 202);
    write_and_close(&after, 1, 0);
    check_good(&after);
    for (int i = 0; i < n; i++)
        fwdio_file_free(files[i].f);
    fwdio_file_free(after.f);
    tc_phase("finalize");
    TC_EXPECT(fwdio_finalize(rt), FWDIO_OK, "fwdio_finalize");
    if (mounted[0])
        unmount_on_rank0(mounted);
    return tc_finish(sc->name);
}

/* A malformed FWDIO_FAULT fails fwdio_init on every rank; without it the
 * runtime works. */
static int run_bad_spec(void)
{
    static const char *const bad[] = {"pwrite:oops", "fsync:eio", "pwrite:eio:nth=0",
                                      "fdatasync:short"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        setenv("FWDIO_FAULT", bad[i], 1);
        fwdio_runtime_t *rt = NULL;
        tc_phase("fwdio_init with FWDIO_FAULT=%s", bad[i]);
        TC_EXPECT(fwdio_init(MPI_COMM_WORLD, NULL, &rt), FWDIO_EINVAL, bad[i]);
        TC_CHECK(rt == NULL, "a runtime was returned for FWDIO_FAULT=%s", bad[i]);
    }
    unsetenv("FWDIO_FAULT");
    scenario_t sc = {.name = "bad-spec", .status = FWDIO_OK};
    fwdio_config_t cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.callback_mode = g_mode;
    fwdio_runtime_t *rt = tc_start_runtime_with(MPI_COMM_WORLD, &cfg);
    tfile_t t;
    open_file(rt, &sc, &t, tc_tmpdir(), "after.dat", FILE_SIZE, 303);
    write_and_close(&t, 1, 0);
    check_good(&t);
    fwdio_file_free(t.f);
    TC_EXPECT(fwdio_finalize(rt), FWDIO_OK, "fwdio_finalize");
    return tc_finish("bad-spec");
}

static void usage(void)
{
    fprintf(stderr, "usage: test_faults --fault CASE [--timeout S] [--callback-mode poll|progress]\n"
                    "cases: bad-spec");
    for (int i = 0; i < NSCENARIOS; i++)
        fprintf(stderr, " %s", scenarios[i].name);
    fputc('\n', stderr);
    exit(2);
}

int main(int argc, char **argv)
{
    unsigned timeout = 100;
    const char *name = NULL;
    for (int i = 1; i < argc; i++) {
        if (tc_common_option(argc, argv, &i, &timeout, &g_mode))
            continue;
        if (!strcmp(argv[i], "--fault") && i + 1 < argc)
            name = argv[++i];
        else
            usage();
    }
    const scenario_t *sc = NULL;
    for (int i = 0; name && i < NSCENARIOS; i++)
        if (!strcmp(name, scenarios[i].name))
            sc = &scenarios[i];
    if (!name || (!sc && strcmp(name, "bad-spec")))
        usage();
    tc_mpi_init(&argc, &argv, timeout);
    g_writers[0] = 0;
    g_writers[1] = tc_size - 1;
    g_nwriters = tc_size > 1 ? 2 : 1;
    if (!sc)
        return run_bad_spec();
    if (sc->real == REAL_EFBIG && tc_size < 2)
        return tc_skip(sc->name, "needs a second writer (writer 0 sizes the file)");
    if (sc->commit && tc_size != 3)
        return tc_skip(sc->name, "runs on 3 ranks (the commit block's rank must not be a writer)");
    return run_scenario(sc);
}
