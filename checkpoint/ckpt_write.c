/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Writing a version of a checkpoint set: the data file through fwdio, the
 * checksum terms of every write, and the version's completion (manifest,
 * retention) in fwdio_ckpt_wait. See include/fwdio.h, "Checkpoint sets".
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ckpt_agree.h"
#include "ckpt_dir.h"
#include "ckpt_keep.h"
#include "ckpt_manifest.h"
#include "ckpt_name.h"
#include "ckpt_sum.h"
#include "fwdio.h"

struct fwdio_ckpt {
    fwdio_runtime_t *rt;
    fwdio_file_t *file;
    MPI_Comm comm;
    int rank;
    char name[FWDIO_CKPT_NAME_MAX + 1];
    char *dir;
    uint64_t version, size;
    unsigned keep;
    _Atomic uint32_t terms; /* XOR of this rank's checksum terms */
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
    ck->comm = comm;
    ck->rank = rank;
    snprintf(ck->name, sizeof ck->name, "%s", name);
    ck->dir = dir_copy;
    ck->version = version;
    ck->size = size;
    ck->keep = keep;
    atomic_init(&ck->terms, 0);
    /* A rewrite of a complete version stops looking complete before its
     * data can change: rank 0 removes the manifest before its own open, and
     * the data is renamed into place only after every rank opened. */
    if (rank == 0) {
        const fwdioi_ckpt_kind_t kinds[2] = {FWDIOI_CKPT_MANIFEST, FWDIOI_CKPT_LOCAL};
        for (int i = 0; i < 2; i++) {
            char mpath[4096];
            if (fwdioi_ckpt_path(mpath, sizeof mpath, dir, name, version, kinds[i]) == 0 &&
                unlink(mpath) != 0 && errno != ENOENT)
                fprintf(stderr, "fwdio_ckpt_open: cannot remove the old manifest %s: %s\n",
                        mpath, strerror(errno));
        }
    }
    fwdio_options_t fo;
    if (opts && opts->file)
        fo = *opts->file;
    else
        fwdio_options_init(&fo);
    fo.atomic_replace = 1;
    fo.pinned |= FWDIO_PIN_ATOMIC_REPLACE;
    rc = fwdio_open(rt, path, size, &fo, NULL, &ck->file);
    if (rc != FWDIO_OK) {
        free(ck->dir);
        free(ck);
        return rc;
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

int fwdio_ckpt_close(fwdio_ckpt_t *ck) { return ck ? fwdio_close(ck->file) : FWDIO_EINVAL; }

/* Write the manifest (`kind`: FWDIOI_CKPT_MANIFEST, or FWDIOI_CKPT_LOCAL
 * for a version complete in the node-local stores) of a version whose data
 * is in place (collective): its text, the same on every rank, through fwdio
 * with atomic_replace, written by rank 0. The agreed status of that file. */
static int write_manifest(fwdio_ckpt_t *ck, uint32_t crc, fwdioi_ckpt_kind_t kind)
{
    fwdioi_ckpt_manifest_t m = {.version = ck->version, .size = ck->size, .crc = crc};
    snprintf(m.name, sizeof m.name, "%s", ck->name);
    char text[FWDIOI_CKPT_MANIFEST_MAX], path[4096];
    size_t len = fwdioi_ckpt_manifest_format(&m, text, sizeof text);
    if (!len || fwdioi_ckpt_path(path, sizeof path, ck->dir, ck->name, ck->version, kind))
        return FWDIO_EINVAL; /* cannot be: the name and path were checked at the open */
    fwdio_options_t mo;
    fwdio_options_init(&mo);
    mo.atomic_replace = 1;
    mo.writers = 1;
    mo.pinned |= FWDIO_PIN_ATOMIC_REPLACE | FWDIO_PIN_WRITERS;
    fwdio_file_t *mf = NULL;
    int rc = fwdio_open(ck->rt, path, len, &mo, NULL, &mf);
    int ok = rc == FWDIO_OK;
    /* A rank whose open failed at the call (out of memory) must not leave
     * the others waiting for it. */
    int rc2 = fwdioi_ckpt_agree(ck->comm, ok, 0, "fwdio_ckpt_wait (manifest)");
    if (rc2 != FWDIO_OK) {
        if (mf)
            fwdio_file_free(mf);
        return ok ? rc2 : rc;
    }
    if (ck->rank == 0)
        rc = fwdio_write(mf, text, len, 0);
    int rc_close = fwdio_close(mf);
    int st = fwdio_drain_wait(mf);
    fwdio_file_free(mf);
    /* Rank 0's write can only fail out of memory; the manifest then holds
     * zeros, which do not parse: the version is not complete. Every rank
     * says so: the outcome is agreed (the file's own status already is). */
    if (st == FWDIO_OK && rc != FWDIO_OK)
        st = rc;
    if (st == FWDIO_OK && rc_close != FWDIO_OK)
        st = rc_close;
    int agreed = st; /* fwdio's codes are negative: the min is a failure if any */
    if (MPI_Allreduce(&st, &agreed, 1, MPI_INT, MPI_MIN, ck->comm) != MPI_SUCCESS)
        return FWDIO_EMPI;
    return agreed;
}

/* Rank 0, after a version completed: remove the complete versions beyond
 * the `keep` newest. Failures are said, not returned. */
static void apply_keep(const fwdio_ckpt_t *ck)
{
    uint64_t *versions;
    size_t n;
    int rc = fwdioi_ckpt_list(ck->dir, ck->name, FWDIOI_CKPT_MANIFEST, &versions, &n);
    if (rc) {
        fprintf(stderr, "fwdio_ckpt_wait: cannot list %s: %s\n", ck->dir, strerror(-rc));
        return;
    }
    for (size_t i = fwdioi_ckpt_keep_choose(versions, &n, ck->keep); i < n; i++) {
        rc = fwdioi_ckpt_remove(ck->dir, ck->name, versions[i]);
        if (rc)
            fprintf(stderr, "fwdio_ckpt_wait: cannot remove version %llu of %s: %s\n",
                    (unsigned long long)versions[i], ck->name, strerror(-rc));
    }
    free(versions);
}

int fwdio_ckpt_wait(fwdio_ckpt_t *ck)
{
    if (!ck)
        return FWDIO_EINVAL;
    /* Complete: at the target, or with the node-local tier in the local
     * stores (the drain comes next). */
    int st = fwdio_wait(ck->file);
    if (st == FWDIO_ENOTCLOSED || st == FWDIO_ECONTEXT)
        return st;
    uint32_t mine = atomic_load(&ck->terms), terms = 0;
    if (MPI_Allreduce(&mine, &terms, 1, MPI_UINT32_T, MPI_BXOR, ck->comm) != MPI_SUCCESS)
        return FWDIO_EMPI;
    if (st != FWDIO_OK)
        return st;
    const uint32_t crc = fwdioi_ckpt_sum_final(terms, ck->size);
    /* Drained already on every rank (always without the tier)? Else the
     * version is complete in the local stores only: its ".local" manifest
     * lets a restart find it there while the drain runs, or after it
     * failed or the job was killed (the local copies are its whole copy). */
    int done = 0, all_done = 0;
    if (fwdio_drain_test(ck->file, &done) != FWDIO_OK)
        done = 0;
    if (MPI_Allreduce(&done, &all_done, 1, MPI_INT, MPI_MIN, ck->comm) != MPI_SUCCESS)
        return FWDIO_EMPI;
    if (!all_done && write_manifest(ck, crc, FWDIOI_CKPT_LOCAL) == FWDIO_EMPI)
        return FWDIO_EMPI; /* another failure costs the restart this version's local copies only */
    /* Complete at the target: with the node-local tier that is the drain. */
    st = fwdio_drain_wait(ck->file);
    if (st != FWDIO_OK)
        return st;
    st = write_manifest(ck, crc, FWDIOI_CKPT_MANIFEST);
    if (st == FWDIO_OK && ck->rank == 0) {
        char lpath[4096];
        if (!all_done &&
            fwdioi_ckpt_path(lpath, sizeof lpath, ck->dir, ck->name, ck->version,
                             FWDIOI_CKPT_LOCAL) == 0 &&
            unlink(lpath) != 0 && errno != ENOENT)
            fprintf(stderr, "fwdio_ckpt_wait: cannot remove %s: %s\n", lpath, strerror(errno));
        apply_keep(ck);
    }
    return st;
}

void fwdio_ckpt_free(fwdio_ckpt_t *ck)
{
    if (!ck)
        return;
    fwdio_file_free(ck->file);
    free(ck->dir);
    free(ck);
}
