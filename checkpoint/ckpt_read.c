/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Restarting from a checkpoint set: the newest intact version
 * (fwdio_ckpt_latest), checking a version's bytes against its manifest
 * (fwdio_ckpt_verify) and opening it for reading (fwdio_ckpt_open_read).
 * Rank 0 reads the directory and the manifests and sends what it found;
 * every rank reads a share of the data. See include/fwdio.h, "Checkpoint
 * sets".
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ckpt_agree.h"
#include "ckpt_dir.h"
#include "ckpt_keep.h"
#include "ckpt_sum.h"
#include "fwdio.h"

/* The piece a rank reads at a time while verifying. */
#define VERIFY_PIECE ((uint64_t)8 << 20)

/* A version rank 0 found complete: [0] version, [1] size, [2] crc. */
typedef uint64_t candidate_t[3];

typedef struct read_wait {
    atomic_int done;
    atomic_int status;
} read_wait_t;

static void read_done(fwdio_file_t *file, void *buf, int status, void *arg)
{
    (void)file;
    (void)buf;
    read_wait_t *w = arg;
    atomic_store(&w->status, status);
    atomic_store(&w->done, 1);
}

/* Read [offset, offset + len) into buf and wait for it: the read's status.
 * fwdio_poll runs its callback in the poll mode; in the progress mode it
 * runs on the progress thread, and this only waits. */
static int read_piece(fwdio_runtime_t *rt, fwdio_file_t *f, void *buf, size_t len,
                      uint64_t offset)
{
    read_wait_t w;
    atomic_init(&w.done, 0);
    atomic_init(&w.status, FWDIO_OK);
    int rc = fwdio_read(f, buf, len, offset, read_done, &w);
    if (rc != FWDIO_OK)
        return rc;
    const struct timespec nap = {0, 50000};
    while (!atomic_load(&w.done)) {
        if (fwdio_poll(rt) == 0)
            nanosleep(&nap, NULL);
    }
    return atomic_load(&w.status);
}

/* Collective: the CRC-32 of `path`'s bytes against `crc` and `size`. Each
 * rank reads pieces r, r + P, ... of VERIFY_PIECE bytes through one
 * fwdio_open_read and XORs their checksum terms; one reduction combines
 * them. The same status on every rank. */
static int verify_bytes(fwdio_runtime_t *rt, MPI_Comm comm, const char *path, uint64_t size,
                        uint32_t crc, const fwdio_options_t *fo)
{
    int rank, nranks;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &nranks);
    fwdio_file_t *f = NULL;
    int rc = fwdio_open_read(rt, path, fo, NULL, &f);
    if (rc != FWDIO_OK)
        return rc; /* refused at the call: the same options, the same refusal everywhere */
    int st = fwdio_wait_ready(f);
    uint64_t got = 0;
    if (st == FWDIO_OK)
        st = fwdio_file_size(f, &got);
    uint32_t terms = 0;
    int local = FWDIO_OK;
    if (st == FWDIO_OK && got == size) {
        uint64_t cap = size < VERIFY_PIECE ? size : VERIFY_PIECE;
        unsigned char *buf = cap ? malloc(cap) : NULL;
        if (cap && !buf)
            local = FWDIO_ENOMEM;
        for (uint64_t off = (uint64_t)rank * VERIFY_PIECE; buf && off < size;
             off += (uint64_t)nranks * VERIFY_PIECE) {
            uint64_t len = size - off < VERIFY_PIECE ? size - off : VERIFY_PIECE;
            local = read_piece(rt, f, buf, (size_t)len, off);
            if (local != FWDIO_OK)
                break;
            terms ^= fwdioi_ckpt_sum_bytes(buf, (size_t)len, off, size);
        }
        free(buf);
    }
    fwdio_close(f);
    int done = fwdio_wait(f); /* the first failure of any rank's read, agreed */
    fwdio_file_free(f);
    int failed = local != FWDIO_OK, any_failed = 0;
    uint32_t all = 0;
    if (MPI_Allreduce(&terms, &all, 1, MPI_UINT32_T, MPI_BXOR, comm) != MPI_SUCCESS ||
        MPI_Allreduce(&failed, &any_failed, 1, MPI_INT, MPI_MAX, comm) != MPI_SUCCESS)
        return FWDIO_EMPI;
    if (st != FWDIO_OK)
        return st; /* the open's agreed status */
    if (got != size)
        return FWDIO_ECHECKSUM; /* the file changed size after its manifest */
    if (done != FWDIO_OK)
        return done;
    if (any_failed)
        return FWDIO_ENOMEM; /* a rank could not read its share (out of memory) */
    return fwdioi_ckpt_sum_final(all, size) == crc ? FWDIO_OK : FWDIO_ECHECKSUM;
}

/* Load the manifest of (name, version): the one of a version complete at
 * the target, else the ".local" one of a version complete in the
 * node-local stores (whose data a restart reads from there, checked by its
 * checksum). NULL, or why neither loads. */
static const char *load_either(const char *dir, const char *name, uint64_t version,
                               fwdioi_ckpt_manifest_t *m)
{
    const char *why = fwdioi_ckpt_manifest_load(dir, name, version, m);
    if (why && !fwdioi_ckpt_manifest_load_kind(dir, name, version, FWDIOI_CKPT_LOCAL, m))
        why = NULL;
    return why;
}

/* The versions of `name` with a manifest of either kind, newest first, each
 * once. 0, or -errno. */
static int list_versions(const char *dir, const char *name, uint64_t **out, size_t *n)
{
    uint64_t *a, *b;
    size_t na, nb;
    int rc = fwdioi_ckpt_list(dir, name, FWDIOI_CKPT_MANIFEST, &a, &na);
    if (rc)
        return rc;
    rc = fwdioi_ckpt_list(dir, name, FWDIOI_CKPT_LOCAL, &b, &nb);
    uint64_t *all = rc ? NULL : realloc(a, (na + nb ? na + nb : 1) * sizeof *all);
    if (!all) {
        free(a);
        free(b);
        return rc ? rc : -ENOMEM;
    }
    if (nb > 0)
        memcpy(all + na, b, nb * sizeof *b);
    free(b);
    size_t nv = na + nb;
    (void)fwdioi_ckpt_keep_choose(all, &nv, 0); /* sorts, newest first */
    size_t k = 0;
    for (size_t i = 0; i < nv; i++)
        if (k == 0 || all[k - 1] != all[i])
            all[k++] = all[i];
    *out = all;
    *n = k;
    return 0;
}

/* The versions of the set that look complete, newest first, on every rank:
 * rank 0 lists the manifests and keeps those that load (parse, match, data
 * file of their size; or, for a version complete in the node-local stores
 * only, its ".local" manifest: the restart reads it from the local copies,
 * falling back to the next older version if it cannot); the others get its
 * list. The count, or a negative status. */
static long candidates(MPI_Comm comm, int rank, const char *dir, const char *name,
                       candidate_t **out)
{
    long n = 0;
    candidate_t *list = NULL;
    if (rank == 0) {
        uint64_t *versions;
        size_t nv;
        if (list_versions(dir, name, &versions, &nv) == 0) {
            list = nv ? calloc(nv, sizeof *list) : NULL;
            for (size_t i = 0; list && i < nv; i++) {
                fwdioi_ckpt_manifest_t m;
                const char *why = load_either(dir, name, versions[i], &m);
                if (why) {
                    fprintf(stderr, "fwdio_ckpt_latest: %s version %llu skipped: %s\n", name,
                            (unsigned long long)versions[i], why);
                    continue;
                }
                list[n][0] = m.version;
                list[n][1] = m.size;
                list[n][2] = m.crc;
                n++;
            }
            if (nv && !list)
                n = -1;
            free(versions);
        }
    }
    if (MPI_Bcast(&n, 1, MPI_LONG, 0, comm) != MPI_SUCCESS) {
        free(list);
        return FWDIO_EMPI;
    }
    if (n < 0)
        return FWDIO_ENOMEM;
    if (rank != 0 && n > 0)
        list = calloc((size_t)n, sizeof *list);
    /* Every rank has room for the list, or none receives it. */
    int rc = fwdioi_ckpt_agree(comm, n == 0 || list, 0, "fwdio_ckpt_latest");
    if (rc != FWDIO_OK) {
        free(list);
        return rc == FWDIO_EINVAL ? FWDIO_ENOMEM : rc;
    }
    if (n > 0 && MPI_Bcast(list, (int)(3 * n), MPI_UINT64_T, 0, comm) != MPI_SUCCESS) {
        free(list);
        return FWDIO_EMPI;
    }
    *out = list;
    return n;
}

/* The arguments' checks and agreement shared by the read calls: a valid
 * name, and a path of its versions that fits (that of the longest version
 * number when `version` is UINT64_MAX, as for fwdio_ckpt_latest). */
static int start(fwdio_runtime_t *rt, const char *name, uint64_t version,
                 const fwdio_ckpt_options_t *opts, const char *call, MPI_Comm *comm, int *rank)
{
    if (!rt)
        return FWDIO_EINVAL;
    int rc = fwdioi_ckpt_comm(rt, comm, rank);
    if (rc != FWDIO_OK)
        return rc;
    const char *why = fwdioi_ckpt_name_check(name);
    char path[4096];
    if (!why && fwdioi_ckpt_path(path, sizeof path, opts ? opts->dir : NULL, name, UINT64_MAX,
                                 FWDIOI_CKPT_MANIFEST))
        why = "the path is too long";
    if (why)
        fprintf(stderr, "%s: rank %d: set \"%s\": %s\n", call, *rank, name ? name : "(null)", why);
    return fwdioi_ckpt_agree(*comm, !why,
                             fwdioi_ckpt_digest(why ? NULL : name, opts ? opts->dir : NULL,
                                                version, 0, 0),
                             call);
}

static const char *dir_of(const fwdio_ckpt_options_t *opts)
{
    return opts && opts->dir && *opts->dir ? opts->dir : ".";
}

int fwdio_ckpt_latest(fwdio_runtime_t *rt, const char *name, const fwdio_ckpt_options_t *opts,
                      uint64_t *version)
{
    return fwdio_ckpt_latest_upto(rt, name, opts, UINT64_MAX, version);
}

int fwdio_ckpt_latest_upto(fwdio_runtime_t *rt, const char *name,
                           const fwdio_ckpt_options_t *opts, uint64_t max_version,
                           uint64_t *version)
{
    if (!version)
        return FWDIO_EINVAL;
    MPI_Comm comm;
    /* max_version in the digest: ranks passing different bounds could
     * settle on different versions. */
    int rank, rc = start(rt, name, max_version, opts, "fwdio_ckpt_latest", &comm, &rank);
    if (rc != FWDIO_OK)
        return rc;
    candidate_t *list = NULL;
    long n = candidates(comm, rank, dir_of(opts), name, &list);
    if (n < 0)
        return (int)n;
    rc = FWDIO_ENOCKPT;
    for (long i = 0; i < n; i++) {
        if (list[i][0] > max_version)
            continue; /* newer than asked: not read, not reported */
        char path[4096];
        fwdioi_ckpt_path(path, sizeof path, dir_of(opts), name, list[i][0], FWDIOI_CKPT_DATA);
        int st = verify_bytes(rt, comm, path, list[i][1], (uint32_t)list[i][2],
                              opts ? opts->file : NULL);
        if (st == FWDIO_OK) {
            *version = list[i][0];
            rc = FWDIO_OK;
            break;
        }
        if (st == FWDIO_EMPI || st == FWDIO_EINVAL) {
            rc = st;
            break;
        }
        if (rank == 0)
            fprintf(stderr, "fwdio_ckpt_latest: %s version %llu skipped: %s\n", name,
                    (unsigned long long)list[i][0], fwdio_strerror(st));
    }
    free(list);
    return rc;
}

/* Rank 0 loads version's manifest and sends it: FWDIO_OK with *c set, or
 * FWDIO_ENOCKPT, on every rank. */
static int one_candidate(MPI_Comm comm, int rank, const char *dir, const char *name,
                         uint64_t version, candidate_t c)
{
    uint64_t msg[4] = {0, 0, 0, 0};
    if (rank == 0) {
        fwdioi_ckpt_manifest_t m;
        const char *why = load_either(dir, name, version, &m);
        if (why)
            fprintf(stderr, "fwdio_ckpt: %s version %llu: %s\n", name,
                    (unsigned long long)version, why);
        else {
            msg[0] = 1;
            msg[1] = m.version;
            msg[2] = m.size;
            msg[3] = m.crc;
        }
    }
    if (MPI_Bcast(msg, 4, MPI_UINT64_T, 0, comm) != MPI_SUCCESS)
        return FWDIO_EMPI;
    if (!msg[0])
        return FWDIO_ENOCKPT;
    memcpy(c, msg + 1, sizeof(candidate_t));
    return FWDIO_OK;
}

/* The start of verify and open_read: the arguments agreed, and version's
 * manifest found by rank 0 (*c), on every rank; the data file's path. */
static int find_version(fwdio_runtime_t *rt, const char *name, uint64_t version,
                        const fwdio_ckpt_options_t *opts, const char *call, MPI_Comm *comm,
                        candidate_t c, char *path, size_t cap)
{
    int rank, rc = start(rt, name, version, opts, call, comm, &rank);
    if (rc == FWDIO_OK)
        rc = one_candidate(*comm, rank, dir_of(opts), name, version, c);
    if (rc == FWDIO_OK) /* fits: start checked the longest version's path */
        fwdioi_ckpt_path(path, cap, dir_of(opts), name, version, FWDIOI_CKPT_DATA);
    return rc;
}

int fwdio_ckpt_verify(fwdio_runtime_t *rt, const char *name, uint64_t version,
                      const fwdio_ckpt_options_t *opts)
{
    MPI_Comm comm;
    candidate_t c;
    char path[4096];
    int rc = find_version(rt, name, version, opts, "fwdio_ckpt_verify", &comm, c, path,
                          sizeof path);
    if (rc != FWDIO_OK)
        return rc;
    return verify_bytes(rt, comm, path, c[1], (uint32_t)c[2], opts ? opts->file : NULL);
}

int fwdio_ckpt_open_read(fwdio_runtime_t *rt, const char *name, uint64_t version,
                         const fwdio_ckpt_options_t *opts, const fwdio_callbacks_t *cbs,
                         fwdio_file_t **file)
{
    if (!file)
        return FWDIO_EINVAL;
    MPI_Comm comm;
    candidate_t c;
    char path[4096];
    int rc = find_version(rt, name, version, opts, "fwdio_ckpt_open_read", &comm, c, path,
                          sizeof path);
    if (rc != FWDIO_OK)
        return rc;
    return fwdio_open_read(rt, path, opts ? opts->file : NULL, cbs, file);
}
