/* SPDX-License-Identifier: BSD-3-Clause */
/* Taking a file at MPI_File_open, the steps that the collective calls end,
 * waiting for what was written, releasing a file to MPI-IO, and the close. */
#include "layer.h"

#include "layer_api.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Strip a ROMIO file-system prefix ("ufs:", "nfs:", "lustre:"). */
static const char *plain_path(const char *filename)
{
    const char *colon = strchr(filename, ':');
    if (!colon || colon - filename < 2 || strchr(filename, '/') < colon)
        return filename;
    for (const char *p = filename; p < colon; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9')))
            return filename;
    return colon + 1;
}

/* Why this open is not taken, or NULL when it is (same answer on every rank:
 * the arguments of a collective open are the same everywhere). */
static const char *refuse_reason(const char *path, int amode)
{
    if (!mpiio_match(path))
        return "no FWDIO_MPIIO pattern matches";
    if (!mpiio_active())
        return "MPI did not provide MPI_THREAD_MULTIPLE";
    if (amode & MPI_MODE_RDONLY)
        return "opened read-only";
    if (amode & MPI_MODE_SEQUENTIAL)
        return "MPI_MODE_SEQUENTIAL";
    if (amode & MPI_MODE_DELETE_ON_CLOSE)
        return "MPI_MODE_DELETE_ON_CLOSE";
    /* Its writes and that handle's, both MPI-IO's, land in program order. */
    if (mpiio_untaken_open(path))
        return "this process has the path open through a handle MPI-IO has";
    return NULL;
}

static void free_file(mpiio_file_t *f)
{
    /* A stream whose ready callback has not run (a close from inside an
     * fwdio callback, where nothing can wait for it) may still call it with
     * f: the record is left, not freed (unless its stream frees it: below). */
    if (!f->record_pending && atomic_load(&f->opening) == MPIIO_OPEN_PENDING &&
        atomic_load(&f->ready_status) == MPIIO_READY_UNKNOWN)
        return;
    mpiio_overlay_drop(f);
    mpiio_extents_clear(&f->own);
    mpiio_copies_free(&f->copies);
    mpiio_copies_free(&f->open_log);
    mpiio_hold_drop(f);
    if (f->direct_fd >= 0)
        close(f->direct_fd);
    /* Kept for a later file of the group when the file ended well: after a
     * failure (an agreement of the layer's that failed in MPI among them)
     * its communicator may be out of step between ranks, so it is freed and
     * its slot never offered again here (the core's rule, comm_pool.h). */
    if (f->comm != MPI_COMM_NULL)
        mpiio_comms_give_back(f->rt, f->error_code == MPI_SUCCESS ? f->comm_slot : -1,
                              &f->comm);
    mpiio_view_free(&f->view);
    if (f->record_pending) /* freed with its stream (hold.c) */
        return;
    free(f->path);
    free(f);
}

/* Give up a stream at the open (the file will not be taken): no status to
 * report, the handle is MPI-IO's. */
static void drop_stream(mpiio_file_t *f)
{
    fwdio_close(f->stream);
    fwdio_wait(f->stream);
    fwdio_file_free(f->stream);
    f->stream = NULL;
}

/* The node-local tier this rank would open the file in: the hint
 * fwdio_local_dir (in opts), else FWDIO_LOCAL_DIR; NULL for none. */
static const char *tier_dir(const fwdio_options_t *opts)
{
    const char *local = getenv("FWDIO_LOCAL_DIR");
    return opts->local_dir ? opts->local_dir : local && *local ? local : NULL;
}

/* A digest of tier_dir for the open's agreement (0: none). */
static uint64_t tier_digest(const fwdio_options_t *opts)
{
    const char *dir = tier_dir(opts);
    if (!dir)
        return 0;
    uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */
    for (const char *c = dir; *c; c++)
        h = (h ^ (unsigned char)*c) * 0x100000001b3ull;
    return h | 1;
}

/* Open the stream (collective, nonblocking: its ready status comes later,
 * opening.c). A refusal here on some ranks only (an environment only they
 * have, out of memory) still takes the stream's place in fwdio's open order
 * (fwdio.h, "Refusals"): the other ranks' streams fail their open check with
 * it, and mpiio_open's last agreement leaves the file to MPI-IO on every
 * rank alike. */
static int start_stream(mpiio_file_t *f, int64_t size, char *why, size_t why_len)
{
    fwdio_options_t opts = f->opts;
    /* MPI keeps a file's bytes at the open: the stream keeps all of them. */
    opts.append_start = (uint64_t)size;
    opts.pinned |= FWDIO_PIN_APPEND_START;
    /* ... and never cuts it: other handles of the path, here or in other
     * processes, may have written past the size measured a moment ago. */
    opts.keep_contents = 1;
    /* ... nor makes it: MPI_File_open made it, and the stream's writers may
     * open it after the code renamed or deleted it (hold.c) */
    opts.must_exist = !tier_dir(&opts);
    /* MPI lets later writes change bytes written before: a later step's
     * bytes replace an earlier step's in the stream. */
    opts.rewrites = 1;
    /* MPI lets ranks write the same bytes in one step (only those bytes'
     * contents are undefined): every rank's bytes land, overlapped ones hold
     * one rank's. A rank's own second write of a byte in a step, which MPI
     * orders, never reaches the stream in that step (access.c). */
    opts.overlaps = 1;
    /* Every byte has its offset (the layer places shared-pointer and
     * ordered writes itself): a step and the close skip the appends' round. */
    opts.offsets_only = 1;
    /* The layer's default stripe, where nothing else chooses one: a hint
     * pins stripe_size; the environment and a config file are fwdio's to
     * apply (a config file may set it, and the layer cannot read one). */
    if (!opts.stripe_size && !(opts.pinned & FWDIO_PIN_STRIPE_SIZE) && !opts.write_size &&
        !(opts.pinned & FWDIO_PIN_WRITE_SIZE) && !getenv("FWDIO_STRIPE_SIZE") &&
        !getenv("FWDIO_WRITE_SIZE") && !getenv("FWDIO_CONFIG"))
        opts.stripe_size = MPIIO_DEFAULT_STRIPE;
    /* The node-local tier (FWDIO_LOCAL_DIR, or the hint fwdio_local_dir):
     * fwdio leaves a stream straight unless the code asks, and the layer
     * asks, since it waits for the steps' drains wherever MPI-IO would
     * find the bytes at the path (steps.c); one copy (a stream has no
     * partner copies). */
    opts.local_dir = tier_dir(&opts);
    if (opts.local_dir) {
        opts.local_copies = 1;
        opts.pinned |= FWDIO_PIN_LOCAL_COPIES;
        /* a step durable in the local stores, as MPI_File_sync promises
         * there (and each step's drain durable at the path) */
        opts.durable = 1;
        opts.pinned |= FWDIO_PIN_DURABLE;
        f->tier = 1;
    }
    fwdio_callbacks_t cbs;
    mpiio_opening_callbacks(f, &cbs);
    /* A file every rank holds (hold.c) opens dormant: its stream starts
     * only when some rank first hands it a byte or needs it, so a small
     * file whose bytes the ranks write themselves at the close costs fwdio
     * no agreement (discarded there). */
    int rc = f->dormant ? fwdioi_open_dormant(f->rt, f->path, &opts, &cbs, &f->stream)
                        : fwdio_open(f->rt, f->path, FWDIO_SIZE_GROWS, &opts, &cbs, &f->stream);
    if (rc != FWDIO_OK) {
        snprintf(why, why_len, "fwdio_open refused it: %s", fwdio_strerror(rc));
        f->stream = NULL;
        return -1;
    }
    return 0;
}

/* A handle of a matching path that can write but was not taken: its writes
 * are ordered against this process's taken handles of the path (aliases.c). */
static void remember_untaken(MPI_File fh, const char *path, int amode)
{
    if (path && !(amode & MPI_MODE_RDONLY) && mpiio_wanted() && mpiio_match(path))
        mpiio_untaken_add(fh, path);
}

/* A path the same group of ranks opens again while a taken handle of it is
 * open: one runtime cannot hold a path twice, and the two handles' writes
 * must keep each process's order, so the earlier handles go back to MPI-IO
 * (collective over the same ranks, in the same order everywhere: the open
 * order of one group) and the new one is not taken. Returns how many. */
static size_t release_same_group(fwdio_runtime_t *rt, const char *path)
{
    mpiio_file_t *same[MPIIO_ALIASES_MAX];
    size_t n = mpiio_held_in(path, rt, same, MPIIO_ALIASES_MAX);
    for (size_t i = 0; i < n; i++)
        mpiio_release(same[i], "the same ranks opened the path again");
    return n;
}

int mpiio_open(MPI_Comm comm, const char *filename, int amode, MPI_Info info, MPI_File *fh)
{
    double t0 = PMPI_Wtime();
    const char *path = filename ? plain_path(filename) : NULL;
    /* A file closed asynchronously is complete before its path opens again. */
    int pending = path && mpiio_wanted() ? mpiio_wait_pending(path) : MPI_SUCCESS;
    if (pending != MPI_SUCCESS) { /* its failure is this call's to report */
        *fh = MPI_FILE_NULL;
        return pending;
    }
    int rc = PMPI_File_open(comm, filename, amode, info, fh);
    int inter = 1;
    if (PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter)
        return rc; /* no MPI-IO file on an intercommunicator */
    /* Every rank decides alike, also when the ranks' environments or
     * arguments differ (FWDIO_MPIIO set on some ranks only, say), or the
     * open failed on some: one MPI_Allreduce per open, taken or not, so that
     * no rank waits in a collective of the layer that others never reach. */
    const char *no = rc != MPI_SUCCESS ? "the open failed"
                     : !path           ? "no file name"
                                       : refuse_reason(path, amode);
    char why[MPIIO_REASON_LEN] = "";
    mpiio_file_t *f = NULL;
    MPI_Offset size = 0;
    int ok = no == NULL;
    if (ok) { /* what this rank needs to take it, before the ranks decide */
        f = calloc(1, sizeof(*f));
        ok = f && (f->path = strdup(path)) && mpiio_view_default(&f->view) == 0;
        if (f) {
            f->comm = MPI_COMM_NULL;
            f->comm_slot = -1;
            f->direct_fd = -1;
            f->overlay_tail = &f->overlay;
            f->own_lo = f->ind_lo = f->read_lo = INT64_MAX; /* no byte yet */
        }
        if (!ok)
            snprintf(why, sizeof(why), "out of memory");
    }
    if (ok && PMPI_File_get_size(*fh, &size) != MPI_SUCCESS) {
        snprintf(why, sizeof(why), "MPI_File_get_size failed");
        ok = 0;
    }
    if (ok) {
        fwdio_options_init(&f->opts);
        MPI_Info usable = mpiio_hints_for_fwdio(info, path);
        if (usable != MPI_INFO_NULL) {
            if (fwdio_options_set_info(&f->opts, usable) != FWDIO_OK) {
                snprintf(why, sizeof(why), "its MPI_Info hints are refused by fwdio (see above)");
                ok = 0;
            }
            PMPI_Info_free(&usable);
        }
    }
    /* Every rank decides alike, also when the ranks' environments or
     * arguments differ (FWDIO_MPIIO set on some ranks only, say), or the
     * open failed on some: one MPI_Allreduce per open, taken or not, so that
     * no rank waits in a collective of the layer that others never reach;
     * and every rank agrees before it makes a runtime or opens a stream, so
     * that fwdio_open sees the same arguments everywhere. */
    /* With it, whether every rank has the runtime for comm already (made by
     * an earlier open): then none makes one, and none can fail to; and which
     * of the communicators earlier files of the group gave back are idle on
     * every rank (reserved here until the file takes one or is not taken),
     * so that a file takes one of them instead of a new duplication. A
     * bitwise AND of all-ones (yes) or zeros (no) and of the idle slots. */
    /* With them the node-local tier each rank would use, as a digest d and
     * its complement: the AND is d and ~d on every rank exactly when every
     * rank has the same d (FWDIO_LOCAL_DIR set on some ranks only leaves
     * the file to MPI-IO, as FWDIO_MPIIO does). */
    /* With them whether the rank would hold the file's first bytes (hold.c:
     * a handle that only writes, FWDIO_MPIIO_HOLD, the tier and the close's
     * mode): where every rank would, the stream opens dormant. */
    uint64_t reserved = ok ? mpiio_comms_reserve(comm) : 0;
    uint64_t tier = ok ? tier_digest(&f->opts) : 0;
    if (ok) {
        PMPI_Comm_rank(comm, &f->rank);
        f->write_only = (amode & MPI_MODE_WRONLY) != 0;
        f->tier = tier_dir(&f->opts) != NULL;
        mpiio_hold_start(f);
    }
    uint64_t mine[6] = {ok ? ~(uint64_t)0 : 0,
                        ok && mpiio_runtime_exists(comm) ? ~(uint64_t)0 : 0, reserved, tier,
                        ok ? ~tier : 0, ok && f->holding ? ~(uint64_t)0 : 0};
    uint64_t every[6] = {0, 0, 0, 0, 0, 0};
    if (PMPI_Allreduce(mine, every, 6, MPI_UINT64_T, MPI_BAND, comm) != MPI_SUCCESS)
        memset(every, 0, sizeof every);
    int all = every[0] != 0;
    if (all && (every[3] != tier || every[4] != ~tier)) {
        snprintf(why, sizeof(why), "the ranks' node-local tiers differ (FWDIO_LOCAL_DIR or "
                                   "the hint fwdio_local_dir)");
        all = 0;
    }
    if (rc != MPI_SUCCESS) {
        if (f)
            free_file(f);
        return rc;
    }
    if (!all) {
        int r = 0;
        PMPI_Comm_rank(comm, &r);
        if (mpiio_verbose() && mpiio_wanted() && mpiio_match(path) && (no || why[0] || r == 0))
            mpiio_say("%s: not taken: %s", path,
                      no ? no : why[0] ? why : "another rank cannot take it");
        if (f)
            free_file(f);
        mpiio_comms_unreserve(comm, reserved);
        remember_untaken(*fh, path, amode);
        return MPI_SUCCESS;
    }
    fwdio_runtime_t *rt = mpiio_runtime_for(comm, why, sizeof(why));
    ok = rt != NULL;
    if (!every[1]) /* some rank made its runtime now: did every rank manage? */
        PMPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, comm);
    if (all && release_same_group(rt, path)) {
        /* Every rank found the same handles (the same ranks opened them). */
        snprintf(why, sizeof(why), "the same ranks have it open through another handle, "
                                   "which goes back to MPI-IO too");
        all = 0;
    }
    if (all) {
        f->fh = *fh;
        f->rt = rt;
        f->dormant = every[5] != 0;
        /* fwdio's open runs on its progress thread while the layer takes
         * the file's own communicator: a kept one, or a new duplicate. The
         * open is not waited for (opening.c): the ranks agree only that
         * every rank's fwdio_open accepted the stream (a refusal is known at
         * the call), and its ready status is checked at the file's calls. */
        ok = start_stream(f, size, why, sizeof(why)) == 0;
        f->comm_slot = mpiio_comms_choose(rt, comm, reserved, every[2], every[1] != 0, &f->comm);
        reserved = 0;
        PMPI_Comm_rank(f->comm, &f->rank);
        f->readback_limit = mpiio_readback_limit(f->rank);
        PMPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, f->comm);
        if (!all && f->stream) { /* another rank could not: give ours up */
            drop_stream(f);
            if (!why[0])
                snprintf(why, sizeof(why), "another rank could not take it");
        }
        if (all)
            atomic_store(&f->opening, MPIIO_OPEN_PENDING);
    }
    if (!all) {
        if (mpiio_verbose())
            mpiio_say("%s: not taken: %s", path, why[0] ? why : "another rank could not take it");
        mpiio_comms_unreserve(comm, reserved); /* none taken (given back if one was) */
        free_file(f);
        remember_untaken(*fh, path, amode);
        return MPI_SUCCESS;
    }
    if (amode & MPI_MODE_APPEND)
        f->fp = size;
    f->t_open = PMPI_Wtime() - t0;
    mpiio_add_file(f);
    if (mpiio_verbose() && f->rank == 0)
        mpiio_say("%s: taken (pattern '%s'), %lld bytes kept", path, mpiio_match(path),
                  (long long)size);
    return MPI_SUCCESS;
}

/* Wait for a stream fwdio_close returned `closed` for: every byte written
 * is in the file. */
static int wait_stream(mpiio_file_t *f, int closed, const char *call)
{
    int rc = closed;
    if (rc == FWDIO_OK)
        rc = fwdio_wait(f->stream);
    /* A close that did not wait for the stream's open (mpiio_close): its
     * status is known by now (ready comes before complete); a failed open
     * is not the file's failure, its bytes are the layer's to write. */
    if (atomic_load(&f->opening) == MPIIO_OPEN_PENDING) {
        int given = mpiio_opening_close(f, call);
        if (!f->stream)
            return given;
    }
    int code = rc == FWDIO_OK ? MPI_SUCCESS : mpiio_file_error(f, rc, call);
    /* In the node-local tier the file is complete in the local stores and
     * drains to its path in the background: the path's next open, its
     * MPI_File_delete and MPI_Finalize wait for that and return its failure
     * (state.c), also where the drain has ended by now (it may have on some
     * ranks only: the next open is the same call everywhere), unless the
     * file's failure is the close's to return already (agreed by now). */
    if (rc == FWDIO_OK && f->tier)
        mpiio_add_pending(f->stream, f->path, f->error_code != MPI_SUCCESS, NULL);
    else
        fwdio_file_free(f->stream);
    f->stream = NULL;
    return code;
}

/* Close the stream and wait for it. */
static int finish_stream(mpiio_file_t *f, const char *call)
{
    return wait_stream(f, fwdio_close(f->stream), call);
}

int mpiio_release(mpiio_file_t *f, const char *reason)
{
    /* Collective: a pending open is known first (a failed one gave the
     * file back already). */
    int code = mpiio_opening_resolve_all(f, reason);
    if (!f->stream)
        return code;
    code = mpiio_hold_release_call(f, reason); /* the held bytes are the step's */
    int settled = mpiio_settle_all(f, reason);
    code = code != MPI_SUCCESS ? code : settled;
    int fin = finish_stream(f, "MPI_File_close");
    code = code != MPI_SUCCESS ? code : fin;
    snprintf(f->released, sizeof(f->released), "released: %s", reason);
    mpiio_untaken_add(f->fh, f->path); /* MPI-IO's now, and ordered as any */
    if (mpiio_verbose() && f->rank == 0)
        mpiio_say("%s: handed back to MPI-IO: %s", f->path, reason);
    /* MPI-IO keeps the individual file pointer from now on. */
    PMPI_File_seek(f->fh, f->fp, MPI_SEEK_SET);
    return code;
}

/* FWDIO_VERBOSE: what a closed file took, summed or the most over its ranks
 * (collective over the file's ranks, at every rank's close). */
static void say_closed(mpiio_file_t *f)
{
    int64_t mine[3] = {f->bytes_stream, f->bytes_direct, f->syncs}, sum[3] = {0, 0, 0};
    double most[MPIIO_BLOCKED_KINDS];
    PMPI_Reduce(mine, sum, 3, MPI_INT64_T, MPI_SUM, 0, f->comm);
    PMPI_Reduce(f->blocked, most, MPIIO_BLOCKED_KINDS, MPI_DOUBLE, MPI_MAX, 0, f->comm);
    if (f->rank == 0) {
        mpiio_say("%s: closed%s: %lld bytes through fwdio, %lld written by the layer "
                  "itself, %lld syncs (all ranks)", f->path,
                  f->released[0] ? " (after its release)" : "",
                  (long long)sum[0], (long long)sum[1], (long long)sum[2]);
        mpiio_say("%s: seconds in its MPI-IO calls (max over ranks): open %.4f, writes %.4f, "
                  "sizes %.4f, syncs %.4f, reads %.4f, close %.4f", f->path, f->t_open,
                  most[MPIIO_T_WRITE], most[MPIIO_T_SIZE], most[MPIIO_T_SYNC],
                  most[MPIIO_T_READ], most[MPIIO_T_CLOSE]);
    }
}

/* Whether fh's error handler only returns the error (MPI_ERRORS_RETURN,
 * files' default): then nothing needs the handle to report one. */
static int handler_returns(MPI_File fh)
{
    MPI_Errhandler eh = MPI_ERRHANDLER_NULL;
    int returns = PMPI_File_get_errhandler(fh, &eh) == MPI_SUCCESS && eh == MPI_ERRORS_RETURN;
    if (eh != MPI_ERRHANDLER_NULL)
        PMPI_Errhandler_free(&eh);
    return returns;
}

int mpiio_close(mpiio_file_t *f, MPI_File *fh)
{
    double t0 = PMPI_Wtime();
    mpiio_untaken_remove(*fh);
    int code = f->error_code;
    /* A failure of the layer's own writes is one rank's: every rank's close
     * reports the file's outcome, and every rank decides alike whether the
     * close may return before the stream is done. The same round says
     * whether any rank keeps overwrites for after the stream's bytes (its
     * overlay): then every rank ends a last step (collective), so that they
     * are written after it. Otherwise the bytes since the last step end go
     * with the close itself, which saves the step's own agreements. The
     * outcome is agreed again either way (a blocking allreduce, about a
     * microsecond), so that a rank whose first agreement failed, and which
     * cannot know what the others chose, makes the same calls as they do.
     *
     * The stream's open may not be known yet (opening.c): its outcome is
     * then waited for as late as can be, with the stream itself after
     * MPI-IO's close (below), so that the wait for fwdio's ready overlaps
     * the close's own work. That needs the wait after MPI-IO's close and no
     * last step on this rank; the same round says whether any rank cannot
     * (or gave the file back already, at a call whose outcome no collective
     * call agreed yet): then every rank resolves its open first, alike. A
     * failed open's replay is agreed at the end, on every rank whose open's
     * outcome was not agreed before this close (every rank alike, as the
     * outcome is the same everywhere). */
    /* The same round says whether every rank still holds all it wrote
     * (hold.c), or gave the stream no byte at all (a file only read, or
     * opened and closed): then each writes its own held bytes, if any, and
     * the stream, which got none, finishes in the background. */
    int opening = atomic_load(&f->opening);
    int unsettled = opening != MPIIO_OPEN_KNOWN;
    const int returns = handler_returns(*fh); /* the handler, asked once */
    int late = opening == MPIIO_OPEN_PENDING && f->overlay == NULL && !f->sync_owed &&
               !mpiio_close_async() && returns;
    int untouched = f->stream && (f->holding || (f->bytes_stream == 0 && !f->tier &&
                                                 !mpiio_close_async()));
    int flags[3] = {f->stream && f->overlay != NULL, unsettled && !late, !untouched};
    mpiio_step_end_t end;
    int end_failed = 0;
    mpiio_step_end_mine(f, &end);
    code = mpiio_agree_step_end(f, code, "MPI_File_close", flags, 3, &end_failed, &end);
    mpiio_unsynced_check(f, &end, "MPI_File_close");
    int held = !flags[2];
    int last_step = flags[0] && !held;
    if (held) {
        int rc = mpiio_hold_write(f, "MPI_File_close");
        code = code != MPI_SUCCESS ? code : rc;
    } else {
        int rc = flags[0] || flags[1] ? mpiio_opening_close(f, "MPI_File_close") : MPI_SUCCESS;
        code = code != MPI_SUCCESS ? code : rc;
        rc = f->stream ? mpiio_hold_release_call(f, "MPI_File_close") : MPI_SUCCESS;
        code = code != MPI_SUCCESS ? code : rc;
    }
    /* made by every rank (with or without the stream), so that a rank whose
     * first agreement failed makes as many as the others. Where nothing
     * before MPI-IO's close needs its outcome (no asynchronous close, no
     * sync owed, a handler that only returns errors, so that none is
     * called once the handle is closed), it runs beside that close, which
     * waits for every rank anyway, and is finished after it. */
    mpiio_agreement_t second;
    const int beside = !mpiio_close_async() && !f->sync_owed && returns;
    int clean = 0; /* the second agreement: no rank failed (held files, below) */
    {
        int rc = f->stream && last_step ? mpiio_end_step(f, "MPI_File_close") : MPI_SUCCESS;
        rc = code != MPI_SUCCESS ? code : rc;
        if (beside) {
            mpiio_agree_error_start(f, rc, &second);
            code = MPI_SUCCESS; /* the agreement carries it */
        } else {
            int flag = 0, failed = 0;
            const int mine_ok = rc == MPI_SUCCESS && f->local_code == MPI_SUCCESS;
            code = mpiio_agree_error_round(f, rc, "MPI_File_close", &flag, &failed);
            clean = failed ? mine_ok : code == MPI_SUCCESS; /* as mpiio_agreement_clean */
        }
    }
    /* fwdio's close, then the wait for it (every byte in the file), unless
     * the close may return early (FWDIO_MPIIO_CLOSE=async). The wait goes
     * after MPI-IO's own close where it can, so that the two overlap: where
     * the file's error handler only returns the error (the default), which
     * needs no handle. Otherwise the handler must see the handle open, and
     * a sync owed must follow fwdio's bytes: the wait comes first. */
    int wait_after = 0;
    if (f->stream && !held) { /* a held file's stream got no byte: after MPI-IO's close */
        int closing = fwdio_close(f->stream);
        if (closing == FWDIO_OK && mpiio_close_async() && code == MPI_SUCCESS) {
            mpiio_add_pending(f->stream, f->path, 0, NULL);
            f->stream = NULL;
        } else if (closing == FWDIO_OK && !f->sync_owed && returns) {
            wait_after = 1;
        } else { /* an earlier failure stays the one reported */
            int fin = wait_stream(f, closing, "MPI_File_close");
            code = code != MPI_SUCCESS ? code : fin;
        }
    }
    /* Syncs that returned early (FWDIO_MPIIO_SYNC=async) promised durability
     * by the close at the latest. */
    if (f->sync_owed && code == MPI_SUCCESS && !f->tier) /* the tier's steps are durable */
        code = PMPI_File_sync(*fh);
    mpiio_remove_file(f);
    int rc = PMPI_File_close(fh);
    f->fh = MPI_FILE_NULL; /* nothing to call a handler on from here */
    if (beside) { /* its failure goes before any found since */
        int agreed = mpiio_agree_error_finish(f, &second, "MPI_File_close");
        clean = mpiio_agreement_clean(f, &second);
        code = agreed != MPI_SUCCESS ? agreed : code;
    }
    fwdio_file_t *leftover = held ? f->stream : NULL; /* no byte in it */
    if (leftover) {
        f->stream = NULL;
        f->record_pending = 1;
        /* A dormant stream no rank used is discarded, with no message, where
         * every rank knows no rank used it: every rank held all it wrote (the
         * first agreement) and none failed (the second: a rank whose first
         * agreement failed took the stream's way, and its use woke the
         * stream, which every rank then closes). Else it is closed, which
         * wakes it: it finishes in the background, writing nothing. */
        if (!f->dormant || !clean || fwdioi_discard(leftover) != FWDIO_OK)
            fwdio_close(leftover);
    }
    if (wait_after) { /* its handler returns errors: nothing to call */
        int fin = wait_stream(f, FWDIO_OK, "MPI_File_close");
        code = code != MPI_SUCCESS ? code : fin;
    }
    if (unsettled && atomic_load(&f->opening) == MPIIO_OPEN_GIVEN_BACK) {
        atomic_store(&f->opening, MPIIO_OPEN_KNOWN);
        code = mpiio_agree_error(f, code, "MPI_File_close");
    }
    f->blocked[MPIIO_T_CLOSE] += PMPI_Wtime() - t0;
    if (mpiio_verbose())
        say_closed(f);
    free_file(f);
    if (leftover)
        mpiio_hold_leave(f, leftover);
    return code != MPI_SUCCESS ? code : rc;
}
