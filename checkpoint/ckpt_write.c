/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Writing a version of a checkpoint set: the data file through fwdio, the
 * checksum terms of every write, and the version's completion (manifest,
 * retention), step by step without blocking in fwdio_ckpt_test, and
 * fwdio_ckpt_wait as that test plus a wait. See include/fwdio.h,
 * "Checkpoint sets".
 *
 * The completion's steps, each entered on a rank when the one before it is
 * over there (the ranks get to them at different times):
 *   DATA      the data file complete (at the target, or with the node-local
 *             tier in the local stores); then this rank's checksum terms go
 *             into a nonblocking BXOR reduction, and whether its drain is
 *             over already into a MIN one;
 *   TERMS     those reductions (every rank complete); where some rank's
 *             drain is not over, rank 0 puts the version's ".local"
 *             manifest in place (POSIX: written, synced, renamed), so that a
 *             restart finds the version in the local stores while the drain
 *             runs, after it failed or after the job was killed;
 *   DRAIN     the data file's drain (complete at the target); then rank 0
 *             writes the manifest text and every rank closes the manifest
 *             file;
 *   MANIFEST  the manifest file's drain; then the outcome goes into a
 *             nonblocking MIN reduction (rank 0's write may have failed);
 *   AGREE     that reduction; then rank 0 applies keep and removes the
 *             ".local" manifest (or removes a manifest that must not stand,
 *             keeping the ".local" one: the local copies are the version's
 *             whole copy) and the version is DONE.
 * The manifest file is opened at fwdio_ckpt_open, right after the data file:
 * fwdio_open is collective in the order of the calls, and the ranks reach
 * TERMS at different moments, between other opens. The reductions run on a
 * communicator of the version's own (duplicated at the open), so they
 * cannot cross the blocking collectives of the other ckpt calls or of other
 * versions.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ckpt_agree.h"
#include "ckpt_dir.h"
#include "ckpt_keep.h"
#include "ckpt_manifest.h"
#include "ckpt_name.h"
#include "ckpt_sum.h"
#include "fwdio.h"

/* The completion's steps (see the top of the file). */
typedef enum { ST_DATA, ST_TERMS, ST_DRAIN, ST_MANIFEST, ST_AGREE, ST_DONE } ckpt_stage_t;

struct fwdio_ckpt {
    fwdio_runtime_t *rt;
    fwdio_file_t *file;
    fwdio_file_t *manifest; /* opened with the data, written once it drained */
    MPI_Comm vcomm;         /* the version's own, for the completion's reductions */
    int rank;
    char name[FWDIO_CKPT_NAME_MAX + 1];
    char *dir;
    uint64_t version, size;
    unsigned keep;
    size_t manifest_len;
    _Atomic uint32_t terms; /* XOR of this rank's checksum terms */
    int closed;             /* fwdio_ckpt_close succeeded on this rank */
    /* The completion, touched only by the thread that tests or waits. */
    ckpt_stage_t stage;
    MPI_Request req;        /* the reduction of TERMS or AGREE, MPI_REQUEST_NULL else */
    MPI_Request req_drained; /* TERMS: whether every rank's drain was over */
    uint32_t my_terms, all_terms;
    int my_drained, all_drained;
    int local_written;      /* rank 0: the ".local" manifest is in place */
    int data_status;        /* the data file's drained status (agreed) */
    int my_outcome, outcome; /* AGREE's contribution and its result */
    int final;              /* once DONE: what test and wait return */
};

void fwdio_ckpt_options_init(fwdio_ckpt_options_t *opts)
{
    if (opts)
        memset(opts, 0, sizeof *opts);
}

static int reserved_zero(const fwdio_ckpt_options_t *o)
{
    for (size_t i = 0; i < sizeof o->reserved / sizeof o->reserved[0]; i++)
        if (o->reserved[i])
            return 0;
    return 1;
}

/* The local checks of fwdio_ckpt_open's arguments: NULL or why not. */
static const char *refusal(const char *name, uint64_t size, const fwdio_ckpt_options_t *o)
{
    const char *why = fwdioi_ckpt_name_check(name);
    if (why)
        return why;
    if (size == FWDIO_SIZE_GROWS)
        return "a checkpoint has a size (not FWDIO_SIZE_GROWS)";
    if (o && !reserved_zero(o))
        return "the options' reserved tail is not zero";
    if (o && o->file && o->file->overlaps)
        return "options.overlaps: the checksum needs every byte written once";
    return NULL;
}

int fwdio_ckpt_path(const char *name, uint64_t version, const fwdio_ckpt_options_t *opts,
                    char *buf, size_t cap)
{
    if (!buf)
        return FWDIO_EINVAL;
    return fwdioi_ckpt_path(buf, cap, opts ? opts->dir : NULL, name, version, FWDIOI_CKPT_DATA)
               ? FWDIO_EINVAL
               : FWDIO_OK;
}

/* The manifest's text: the same bytes on every rank. Its length does not
 * depend on the CRC (printed as 8 hex digits), so it is known at the open. */
static size_t manifest_text(const fwdio_ckpt_t *ck, uint32_t crc, char *text, size_t cap)
{
    fwdioi_ckpt_manifest_t m = {.version = ck->version, .size = ck->size, .crc = crc};
    snprintf(m.name, sizeof m.name, "%s", ck->name);
    return fwdioi_ckpt_manifest_format(&m, text, cap);
}

/* Open the version's manifest file (collective, nonblocking): written by
 * rank 0 through fwdio, atomic_replace, once the data drained. */
static int open_manifest(fwdio_ckpt_t *ck)
{
    char text[FWDIOI_CKPT_MANIFEST_MAX], path[4096];
    ck->manifest_len = manifest_text(ck, 0, text, sizeof text);
    if (!ck->manifest_len || fwdioi_ckpt_path(path, sizeof path, ck->dir, ck->name, ck->version,
                                              FWDIOI_CKPT_MANIFEST))
        return FWDIO_EINVAL; /* cannot be: the name and path were checked */
    fwdio_options_t mo;
    fwdio_options_init(&mo);
    mo.atomic_replace = 1;
    mo.writers = 1;
    mo.pinned |= FWDIO_PIN_ATOMIC_REPLACE | FWDIO_PIN_WRITERS;
    return fwdio_open(ck->rt, path, ck->manifest_len, &mo, NULL, &ck->manifest);
}

int fwdio_ckpt_open(fwdio_runtime_t *rt, const char *name, uint64_t version, uint64_t size,
                    const fwdio_ckpt_options_t *opts, fwdio_ckpt_t **out)
{
    if (!rt || !out)
        return FWDIO_EINVAL;
    *out = NULL;
    MPI_Comm comm;
    int rank, rc = fwdioi_ckpt_comm(rt, &comm, &rank);
    if (rc != FWDIO_OK)
        return rc;
    const char *dir = opts && opts->dir && *opts->dir ? opts->dir : ".";
    unsigned keep = opts && opts->keep ? opts->keep : FWDIO_CKPT_DEFAULT_KEEP;
    const char *why = refusal(name, size, opts);
    char path[4096];
    if (!why && fwdioi_ckpt_path(path, sizeof path, dir, name, version, FWDIOI_CKPT_DATA))
        why = "the path is too long";
    if (why)
        fprintf(stderr, "fwdio_ckpt_open: rank %d: set \"%s\": %s\n", rank, name ? name : "(null)",
                why);
    fwdio_ckpt_t *ck = why ? NULL : calloc(1, sizeof *ck);
    char *dir_copy = ck ? strdup(dir) : NULL;
    rc = fwdioi_ckpt_agree(comm, ck && dir_copy,
                           fwdioi_ckpt_digest(why ? NULL : name, dir, version, size, keep),
                           "fwdio_ckpt_open");
    if (rc != FWDIO_OK) {
        free(dir_copy);
        free(ck);
        return rc;
    }
    ck->rt = rt;
    ck->rank = rank;
    snprintf(ck->name, sizeof ck->name, "%s", name);
    ck->dir = dir_copy;
    ck->version = version;
    ck->size = size;
    ck->keep = keep;
    ck->vcomm = MPI_COMM_NULL;
    ck->req = MPI_REQUEST_NULL;
    ck->req_drained = MPI_REQUEST_NULL;
    ck->stage = ST_DATA;
    atomic_init(&ck->terms, 0);
    /* A rewrite of a complete version stops looking complete before its
     * data can change: rank 0 removes the manifest before its own open, and
     * the data is renamed into place only after every rank opened. */
    if (rank == 0) {
        char mpath[4096];
        if (fwdioi_ckpt_path(mpath, sizeof mpath, dir, name, version, FWDIOI_CKPT_MANIFEST) == 0 &&
            unlink(mpath) != 0 && errno != ENOENT)
            fprintf(stderr, "fwdio_ckpt_open: cannot remove the old manifest %s: %s\n", mpath,
                    strerror(errno));
    }
    fwdio_options_t fo;
    if (opts && opts->file)
        fo = *opts->file;
    else
        fwdio_options_init(&fo);
    fo.atomic_replace = 1;
    fo.pinned |= FWDIO_PIN_ATOMIC_REPLACE;
    /* The data file on every rank: a refused fwdio_open (options.file set
     * on one rank, say, or no memory) still takes its place (fwdio.h,
     * "Refusals") and fails the others' file, which then writes nothing.
     * Agreed before the manifest's file is opened: a manifest opened and
     * then freed unwritten would complete as zeros renamed into place. */
    int data_rc = fwdio_open(rt, path, size, &fo, NULL, &ck->file);
    rc = fwdioi_ckpt_agree(comm, data_rc == FWDIO_OK, 0, "fwdio_ckpt_open (data)");
    if (rc != FWDIO_OK) {
        fwdio_ckpt_free(ck);
        return data_rc != FWDIO_OK ? data_rc : rc;
    }
    /* The manifest's file, in the same order on every rank, and the
     * version's communicator, called on every rank whatever happened to
     * the other here; one more agreement. */
    int manifest_rc = open_manifest(ck);
    int dup_ok = MPI_Comm_dup(comm, &ck->vcomm) == MPI_SUCCESS;
    rc = fwdioi_ckpt_agree(comm, manifest_rc == FWDIO_OK && dup_ok, 0,
                           "fwdio_ckpt_open (manifest)");
    if (rc != FWDIO_OK) {
        fwdio_ckpt_free(ck);
        return manifest_rc != FWDIO_OK ? manifest_rc : !dup_ok ? FWDIO_EMPI : rc;
    }
    *out = ck;
    return FWDIO_OK;
}

fwdio_file_t *fwdio_ckpt_file(fwdio_ckpt_t *ck) { return ck ? ck->file : NULL; }

int fwdio_ckpt_write(fwdio_ckpt_t *ck, const void *buf, size_t len, uint64_t offset)
{
    if (!ck)
        return FWDIO_EINVAL;
    int rc = fwdio_write(ck->file, buf, len, offset);
    /* fwdio_write checked the range: offset + len <= size. */
    if (rc == FWDIO_OK && len)
        atomic_fetch_xor(&ck->terms, fwdioi_ckpt_sum_bytes(buf, len, offset, ck->size));
    return rc;
}

int fwdio_ckpt_write_lent(fwdio_ckpt_t *ck, const void *buf, size_t len, uint64_t offset,
                          fwdio_lent_cb_t done, void *arg)
{
    if (!ck)
        return FWDIO_EINVAL;
    /* The term first: once lent, the buffer may come back (done) and be
     * reused before fwdio_write_lent returns. Out of range is refused below
     * and its term dropped. */
    int in_range = offset <= ck->size && len <= ck->size - offset;
    uint32_t term = in_range && len ? fwdioi_ckpt_sum_bytes(buf, len, offset, ck->size) : 0;
    int rc = fwdio_write_lent(ck->file, buf, len, offset, done, arg);
    if (rc == FWDIO_OK)
        atomic_fetch_xor(&ck->terms, term);
    return rc;
}

int fwdio_ckpt_set_commit(fwdio_ckpt_t *ck, const void *buf, size_t len, uint64_t offset)
{
    if (!ck)
        return FWDIO_EINVAL;
    int rc = fwdio_set_commit(ck->file, buf, len, offset);
    if (rc == FWDIO_OK && len) /* checked by fwdio_set_commit: in the file */
        atomic_fetch_xor(&ck->terms, fwdioi_ckpt_sum_bytes(buf, len, offset, ck->size));
    return rc;
}

int fwdio_ckpt_close(fwdio_ckpt_t *ck)
{
    if (!ck)
        return FWDIO_EINVAL;
    int rc = fwdio_close(ck->file);
    if (rc == FWDIO_OK)
        ck->closed = 1;
    return rc;
}

/* Rank 0, after a version completed: remove the complete versions beyond
 * the `keep` newest. Only manifests that load count (a version freed before
 * it was done leaves one of zeros, a damaged one does not load either):
 * such versions are neither counted nor removed. Failures are said, not
 * returned. */
static void apply_keep(const fwdio_ckpt_t *ck)
{
    uint64_t *versions;
    size_t n;
    int rc = fwdioi_ckpt_list(ck->dir, ck->name, FWDIOI_CKPT_MANIFEST, &versions, &n);
    if (rc) {
        fprintf(stderr, "fwdio_ckpt: cannot list %s: %s\n", ck->dir, strerror(-rc));
        return;
    }
    size_t loaded = 0;
    for (size_t i = 0; i < n; i++) {
        fwdioi_ckpt_manifest_t m;
        if (!fwdioi_ckpt_manifest_load(ck->dir, ck->name, versions[i], &m))
            versions[loaded++] = versions[i];
    }
    n = loaded;
    for (size_t i = fwdioi_ckpt_keep_choose(versions, &n, ck->keep); i < n; i++) {
        rc = fwdioi_ckpt_remove(ck->dir, ck->name, versions[i]);
        if (rc)
            fprintf(stderr, "fwdio_ckpt: cannot remove version %llu of %s: %s\n",
                    (unsigned long long)versions[i], ck->name, strerror(-rc));
    }
    free(versions);
}

/* Rank 0, after a version failed: its manifest file completed all the same
 * (zeros, or rank 0's text when only a later step failed) and was renamed
 * into place; it must not stand. Zeros never parse, so until this removal
 * the version is still not complete to fwdio_ckpt_latest. */
static void remove_manifest(const fwdio_ckpt_t *ck, fwdioi_ckpt_kind_t kind)
{
    char path[4096];
    if (fwdioi_ckpt_path(path, sizeof path, ck->dir, ck->name, ck->version, kind) == 0 &&
        unlink(path) != 0 && errno != ENOENT)
        fprintf(stderr, "fwdio_ckpt: cannot remove %s: %s\n", path, strerror(errno));
}

/* Rank 0: the version's ".local" manifest (the manifest's text, `crc`), put
 * in place whole: a temporary written and synced, renamed over, the
 * directory synced. 0, or -1 (said on stderr: the version then is not found
 * in the local stores before its drain ends). */
static int put_local_manifest(const fwdio_ckpt_t *ck, uint32_t crc)
{
    char text[FWDIOI_CKPT_MANIFEST_MAX], path[4096], tmp[4200];
    size_t len = manifest_text(ck, crc, text, sizeof text);
    if (!len || fwdioi_ckpt_path(path, sizeof path, ck->dir, ck->name, ck->version,
                                 FWDIOI_CKPT_LOCAL))
        return -1;
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    int ok = fd >= 0 && write(fd, text, len) == (ssize_t)len && fsync(fd) == 0;
    if (fd >= 0 && close(fd) != 0)
        ok = 0;
    ok = ok && rename(tmp, path) == 0;
    if (ok) {
        int dfd = open(ck->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd >= 0) {
            (void)fsync(dfd);
            close(dfd);
        }
    } else {
        fprintf(stderr, "fwdio_ckpt: cannot put %s in place: %s\n", path, strerror(errno));
        unlink(tmp);
    }
    return ok ? 0 : -1;
}

/* The version is over on this rank with `status`. */
static int finish(fwdio_ckpt_t *ck, int status, int *done)
{
    ck->stage = ST_DONE;
    ck->final = status;
    *done = 1;
    return status;
}

/* Whether the reduction in flight is over (MPI_Test); -1 when MPI failed. */
static int reduced(fwdio_ckpt_t *ck)
{
    int flag = 0;
    if (MPI_Test(&ck->req, &flag, MPI_STATUS_IGNORE) != MPI_SUCCESS)
        return -1;
    return flag;
}

/* The same for TERMS' second reduction (whether every drain was over). */
static int reduced_drained(fwdio_ckpt_t *ck)
{
    int flag = 0;
    if (MPI_Test(&ck->req_drained, &flag, MPI_STATUS_IGNORE) != MPI_SUCCESS)
        return -1;
    return flag;
}

int fwdio_ckpt_test(fwdio_ckpt_t *ck, int *done)
{
    if (!ck || !done)
        return FWDIO_EINVAL;
    *done = 0;
    /* Runs the queued callbacks, and refuses the progress thread. */
    int rc = fwdio_poll(ck->rt);
    if (rc < 0)
        return rc;
    if (ck->stage == ST_DONE) {
        *done = 1;
        return ck->final;
    }
    if (!ck->closed)
        return FWDIO_ENOTCLOSED;
    int d = 0, r;
    switch (ck->stage) {
    case ST_DATA:
        /* Complete: at the target, or with the node-local tier in the local
         * stores (its drain comes next). */
        ck->data_status = fwdio_test(ck->file, &d);
        if (!d)
            return FWDIO_OK;
        ck->my_terms = atomic_load(&ck->terms);
        if (fwdio_drain_test(ck->file, &ck->my_drained) != FWDIO_OK)
            ck->my_drained = 1; /* the drain's own failure is seen below */
        if (MPI_Iallreduce(&ck->my_terms, &ck->all_terms, 1, MPI_UINT32_T, MPI_BXOR, ck->vcomm,
                           &ck->req) != MPI_SUCCESS ||
            MPI_Iallreduce(&ck->my_drained, &ck->all_drained, 1, MPI_INT, MPI_MIN, ck->vcomm,
                           &ck->req_drained) != MPI_SUCCESS)
            return finish(ck, FWDIO_EMPI, done);
        ck->stage = ST_TERMS;
        /* fall through */
    case ST_TERMS:
        if ((r = reduced(ck)) <= 0)
            return r < 0 ? finish(ck, FWDIO_EMPI, done) : FWDIO_OK;
        if ((r = reduced_drained(ck)) <= 0)
            return r < 0 ? finish(ck, FWDIO_EMPI, done) : FWDIO_OK;
        /* Complete on every rank, the drain not over on some: the version
         * lives in the local stores only until it is, so a restart may
         * look for it there. */
        if (ck->data_status == FWDIO_OK && !ck->all_drained && ck->rank == 0)
            ck->local_written =
                put_local_manifest(ck, fwdioi_ckpt_sum_final(ck->all_terms, ck->size)) == 0;
        ck->stage = ST_DRAIN;
        /* fall through */
    case ST_DRAIN:
        /* Complete at the target: with the node-local tier that is the drain. */
        ck->data_status = fwdio_drain_test(ck->file, &d);
        if (!d)
            return FWDIO_OK;
        /* Every rank's data drained with the same (agreed) status. After a
         * failure no text is written: the manifest file holds zeros. */
        ck->my_outcome = FWDIO_OK;
        if (ck->data_status == FWDIO_OK && ck->rank == 0) {
            char text[FWDIOI_CKPT_MANIFEST_MAX];
            size_t len = manifest_text(ck, fwdioi_ckpt_sum_final(ck->all_terms, ck->size), text,
                                       sizeof text);
            /* Out of memory only (the length was known at the open); the
             * zeros then left do not parse, and the outcome says it. */
            ck->my_outcome = len == ck->manifest_len
                                 ? fwdio_write(ck->manifest, text, len, 0)
                                 : FWDIO_EINVAL;
        }
        rc = fwdio_close(ck->manifest);
        if (ck->my_outcome == FWDIO_OK)
            ck->my_outcome = rc;
        ck->stage = ST_MANIFEST;
        /* fall through */
    case ST_MANIFEST:
        rc = fwdio_drain_test(ck->manifest, &d);
        if (!d)
            return FWDIO_OK;
        /* The data's status first, then the manifest file's (agreed), then
         * what this rank could not do; fwdio's codes are negative: the MIN
         * is a failure if any rank had one. */
        if (ck->data_status != FWDIO_OK)
            ck->my_outcome = ck->data_status;
        else if (rc != FWDIO_OK)
            ck->my_outcome = rc;
        if (MPI_Iallreduce(&ck->my_outcome, &ck->outcome, 1, MPI_INT, MPI_MIN, ck->vcomm,
                           &ck->req) != MPI_SUCCESS)
            return finish(ck, FWDIO_EMPI, done);
        ck->stage = ST_AGREE;
        /* fall through */
    case ST_AGREE:
        if ((r = reduced(ck)) <= 0)
            return r < 0 ? finish(ck, FWDIO_EMPI, done) : FWDIO_OK;
        if (ck->rank == 0) {
            if (ck->outcome == FWDIO_OK) {
                if (ck->local_written) /* the manifest stands: complete at the target */
                    remove_manifest(ck, FWDIOI_CKPT_LOCAL);
                apply_keep(ck);
            } else {
                remove_manifest(ck, FWDIOI_CKPT_MANIFEST); /* a ".local" one stays */
            }
        }
        return finish(ck, ck->outcome, done);
    case ST_DONE:
        break;
    }
    *done = 1;
    return ck->final;
}

int fwdio_ckpt_wait(fwdio_ckpt_t *ck)
{
    if (!ck)
        return FWDIO_EINVAL;
    if (ck->stage == ST_DONE)
        return ck->final;
    /* The data's completion and then its drain, blocking (and
     * FWDIO_ECONTEXT from a callback, FWDIO_ENOTCLOSED before this rank
     * closed the file, as fwdio_wait and fwdio_drain_wait say them; a file
     * closed by fwdio_close directly counts as closed); the rest, short
     * steps, by testing. */
    if (fwdio_wait_ready(ck->file) == FWDIO_ECONTEXT)
        return FWDIO_ECONTEXT;
    const struct timespec nap = {0, 50000};
    for (;;) {
        if (ck->stage == ST_DATA || ck->stage == ST_DRAIN) {
            int st = ck->stage == ST_DATA ? fwdio_wait(ck->file) : fwdio_drain_wait(ck->file);
            if (st == FWDIO_ENOTCLOSED || st == FWDIO_ECONTEXT || st == FWDIO_EINVAL)
                return st;
            ck->closed = 1;
        }
        int done = 0, rc = fwdio_ckpt_test(ck, &done);
        if (done || rc != FWDIO_OK)
            return rc;
        if (ck->stage != ST_DATA && ck->stage != ST_DRAIN)
            nanosleep(&nap, NULL);
    }
}

void fwdio_ckpt_free(fwdio_ckpt_t *ck)
{
    if (!ck)
        return;
    /* A reduction this rank posted ends once every rank posted its part:
     * they do as they test or wait (see fwdio_ckpt_free in fwdio.h). */
    if (ck->req != MPI_REQUEST_NULL)
        MPI_Wait(&ck->req, MPI_STATUS_IGNORE);
    if (ck->req_drained != MPI_REQUEST_NULL)
        MPI_Wait(&ck->req_drained, MPI_STATUS_IGNORE);
    if (ck->vcomm != MPI_COMM_NULL)
        MPI_Comm_free(&ck->vcomm);
    fwdio_file_free(ck->manifest);
    fwdio_file_free(ck->file);
    free(ck->dir);
    free(ck);
}
