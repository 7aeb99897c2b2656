/* SPDX-License-Identifier: BSD-3-Clause */
#define _POSIX_C_SOURCE 200809L
#include "verify.h"
#include "gather.h"

#include <errno.h>
#include <stdarg.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct expected_ckpt {
    int64_t step;
    unsigned char *image;
    uint64_t len;
    struct expected_ckpt *next;
};

struct md_verify {
    MPI_Comm comm;
    int rank;
    int has_dcd;
    dcd_info_t dcd;
    md_gathered_t gathered;
    unsigned char **frames;       /* rank 0: expected frame images, NULL where not given */
    int64_t nframes;
    struct expected_ckpt *ckpts;  /* rank 0: pending checkpoint images */
    int failures;                 /* rank 0 */
    int64_t frames_checked, ckpts_checked;
};

md_verify_t *verify_create(MPI_Comm comm, const dcd_info_t *dcd)
{
    md_verify_t *v = calloc(1, sizeof *v);
    if (!v)
        return NULL;
    v->comm = comm;
    MPI_Comm_rank(comm, &v->rank);
    if (dcd) {
        v->has_dcd = 1;
        v->dcd = *dcd;
        v->nframes = dcd->nframes;
        if (v->rank == 0 && v->nframes > 0) {
            v->frames = calloc((size_t)v->nframes, sizeof *v->frames);
            if (!v->frames) {
                free(v);
                return NULL;
            }
        }
    }
    return v;
}

void verify_destroy(md_verify_t *v)
{
    if (!v)
        return;
    for (int64_t i = 0; v->frames && i < v->nframes; i++)
        free(v->frames[i]);
    free(v->frames);
    while (v->ckpts) {
        struct expected_ckpt *c = v->ckpts;
        v->ckpts = c->next;
        free(c->image);
        free(c);
    }
    gather_free(&v->gathered);
    free(v);
}

static void fail(md_verify_t *v, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail(md_verify_t *v, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "mdlj: verify: ");
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    v->failures++;
}

void verify_expect_frame(md_verify_t *v, const md_snapshot_t *snap, int64_t frame)
{
    if (gather_snapshot(v->comm, snap, &v->gathered) != 0) {
        if (v->rank == 0)
            fail(v, "cannot gather frame %" PRId64 " (out of memory)", frame);
        return;
    }
    if (v->rank != 0)
        return;
    if (!v->has_dcd || frame < 0 || frame >= v->nframes) {
        fail(v, "frame %" PRId64 " outside the trajectory", frame);
        return;
    }
    if (v->gathered.n != (size_t)v->dcd.natoms) {
        fail(v, "frame %" PRId64 ": %zu atoms gathered, %" PRId64 " expected", frame,
             v->gathered.n, v->dcd.natoms);
        return;
    }
    unsigned char *image = malloc(dcd_frame_bytes(v->dcd.natoms));
    if (!image) {
        fail(v, "no memory to keep frame %" PRId64, frame);
        return;
    }
    dcd_frame_image(image, &v->dcd, v->gathered.id, v->gathered.x, v->gathered.n);
    free(v->frames[frame]);
    v->frames[frame] = image;
}

void verify_expect_checkpoint(md_verify_t *v, const md_snapshot_t *snap, const ckpt_info_t *info)
{
    if (gather_snapshot(v->comm, snap, &v->gathered) != 0) {
        if (v->rank == 0)
            fail(v, "cannot gather checkpoint %" PRId64 " (out of memory)", info->step);
        return;
    }
    if (v->rank != 0)
        return;
    if (v->gathered.n != (size_t)info->natoms) {
        fail(v, "checkpoint %" PRId64 ": %zu atoms gathered, %" PRId64 " expected", info->step,
             v->gathered.n, info->natoms);
        return;
    }
    struct expected_ckpt *c = calloc(1, sizeof *c);
    uint64_t len = ckpt_file_bytes(info->natoms);
    unsigned char *image = c ? malloc(len) : NULL;
    if (!image) {
        free(c);
        fail(v, "no memory to keep checkpoint %" PRId64, info->step);
        return;
    }
    ckpt_image(image, info, v->gathered.id, v->gathered.x, v->gathered.v, v->gathered.n);
    *c = (struct expected_ckpt){.step = info->step, .image = image, .len = len, .next = v->ckpts};
    v->ckpts = c;
}

static struct expected_ckpt *take_checkpoint(md_verify_t *v, int64_t step)
{
    for (struct expected_ckpt **pc = &v->ckpts; *pc; pc = &(*pc)->next) {
        if ((*pc)->step == step) {
            struct expected_ckpt *c = *pc;
            *pc = c->next;
            return c;
        }
    }
    return NULL;
}

/* Read [offset, offset + len) of an open file; 0 or -1 (errno, or EIO at a short file). */
static int read_exact(FILE *f, uint64_t offset, unsigned char *buf, uint64_t len)
{
    if (fseeko(f, (off_t)offset, SEEK_SET) != 0)
        return -1;
    if (fread(buf, 1, len, f) != len) {
        if (!ferror(f))
            errno = EIO;
        return -1;
    }
    return 0;
}

/* Index of the first differing byte of two buffers, or len when equal. */
static uint64_t first_difference(const unsigned char *a, const unsigned char *b, uint64_t len)
{
    if (memcmp(a, b, len) == 0)
        return len;
    uint64_t i = 0;
    while (a[i] == b[i])
        i++;
    return i;
}

static long long file_size(FILE *f)
{
    if (fseeko(f, 0, SEEK_END) != 0)
        return -1;
    return (long long)ftello(f);
}

void verify_checkpoint_file(md_verify_t *v, int64_t step, const char *path)
{
    if (v->rank != 0)
        return;
    struct expected_ckpt *c = take_checkpoint(v, step);
    if (!c) {
        fail(v, "checkpoint %" PRId64 " completed but was never gathered", step);
        return;
    }
    FILE *f = fopen(path, "rb");
    unsigned char *got = malloc(c->len);
    long long size = f ? file_size(f) : -1;
    if (!f || !got) {
        fail(v, "cannot read %s: %s", path, f ? "out of memory" : strerror(errno));
    } else if (size != (long long)c->len) {
        fail(v, "%s has %lld bytes, expected %" PRIu64, path, size, c->len);
    } else if (read_exact(f, 0, got, c->len) != 0) {
        fail(v, "cannot read %s: %s", path, strerror(errno));
    } else {
        uint64_t at = first_difference(got, c->image, c->len);
        if (at < c->len) {
            const char *where = at < CKPT_HEADER_BYTES                 ? "header"
                                : at < c->len - CKPT_COMMIT_BYTES ? "atom records"
                                                                       : "commit record";
            fail(v, "%s differs from the gathered state at byte %" PRIu64 " (%s)", path, at,
                 where);
        }
        v->ckpts_checked++;
    }
    if (f)
        fclose(f);
    free(got);
    free(c->image);
    free(c);
}

void verify_drop_checkpoint(md_verify_t *v, int64_t step)
{
    if (v->rank != 0)
        return;
    struct expected_ckpt *c = take_checkpoint(v, step);
    if (c) {
        free(c->image);
        free(c);
    }
}

void verify_trajectory_file(md_verify_t *v, const char *path,
                            const unsigned char header[DCD_HEADER_BYTES])
{
    if (v->rank != 0 || !v->has_dcd)
        return;
    FILE *f = fopen(path, "rb");
    if (!f) {
        fail(v, "cannot open %s: %s", path, strerror(errno));
        return;
    }
    uint64_t frame_len = dcd_frame_bytes(v->dcd.natoms);
    unsigned char *got = malloc(frame_len > DCD_HEADER_BYTES ? frame_len : DCD_HEADER_BYTES);
    long long size = file_size(f);
    if (!got) {
        fail(v, "no memory to read %s", path);
    } else if (size != (long long)dcd_file_bytes(&v->dcd)) {
        fail(v, "%s has %lld bytes, expected %" PRIu64, path, size, dcd_file_bytes(&v->dcd));
    } else if (read_exact(f, 0, got, DCD_HEADER_BYTES) != 0 ||
               memcmp(got, header, DCD_HEADER_BYTES) != 0) {
        fail(v, "%s: header differs", path);
    } else {
        uint64_t n = (uint64_t)v->dcd.natoms;
        for (int64_t k = v->dcd.kept; k < v->nframes; k++) { /* the earlier ones are a previous run's */
            if (!v->frames[k]) {
                fail(v, "%s: frame %" PRId64 " was never gathered", path, k);
                continue;
            }
            if (read_exact(f, dcd_frame_offset(&v->dcd, k), got, frame_len) != 0) {
                fail(v, "cannot read frame %" PRId64 " of %s: %s", k, path, strerror(errno));
                continue;
            }
            uint64_t at = first_difference(got, v->frames[k], frame_len);
            if (at < frame_len) {
                uint64_t in_arrays = at >= DCD_FRAME_PREFIX_BYTES ? at - DCD_FRAME_PREFIX_BYTES : 0;
                fail(v,
                     "%s: frame %" PRId64 " (step %" PRId64 ") differs at byte %" PRIu64
                     " of the frame (coordinate array %c, atom %" PRIu64 ")",
                     path, k, v->dcd.first_step + k * v->dcd.interval, at,
                     "xyz?"[in_arrays / (4 * n + 8) < 3 ? in_arrays / (4 * n + 8) : 3],
                     (in_arrays % (4 * n + 8)) / 4);
            }
            v->frames_checked++;
        }
    }
    free(got);
    fclose(f);
}

int verify_result(md_verify_t *v, int64_t *frames_checked, int64_t *checkpoints_checked)
{
    int failures = v->failures;
    if (v->rank == 0) {
        /* A checkpoint gathered but never completed was not checked. */
        for (struct expected_ckpt *c = v->ckpts; c; c = c->next)
            fail(v, "checkpoint %" PRId64 " never completed", c->step);
        failures = v->failures;
    }
    MPI_Bcast(&failures, 1, MPI_INT, 0, v->comm);
    *frames_checked = v->frames_checked;
    *checkpoints_checked = v->ckpts_checked;
    return failures;
}
