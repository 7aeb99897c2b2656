/* SPDX-License-Identifier: BSD-3-Clause */
#include "forward.h"

#include "dump_binary.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void fail(lfw_forward_t *fw, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail(lfw_forward_t *fw, const char *fmt, ...)
{
    if (fw->failed)
        return;
    fw->failed = 1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(fw->error, sizeof fw->error, fmt, ap);
    va_end(ap);
}

/* Make *p hold at least `need` elements of `size` bytes. */
static int reserve(void **p, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap)
        return 0;
    size_t want = need + need / 2;
    void *q = realloc(*p, want * size);
    if (!q)
        return -1;
    *p = q;
    *cap = want;
    return 0;
}

static int by_id(const void *a, const void *b)
{
    int64_t x = ((const lfw_atom_ref_t *)a)->id, y = ((const lfw_atom_ref_t *)b)->id;
    return (x > y) - (x < y);
}

/* Sort the local atoms by id into fw->order; -1 (recorded) on a bad id. */
static int sort_local_atoms(lfw_forward_t *fw, int nlocal, const lfw_tag_t *ids, int64_t step)
{
    if (reserve((void **)&fw->order, &fw->order_cap, (size_t)nlocal, sizeof *fw->order)) {
        fail(fw, "out of memory sorting %d atoms", nlocal);
        return -1;
    }
    for (int i = 0; i < nlocal; i++) {
        if (ids[i] < 1 || ids[i] > fw->natoms) {
            fail(fw, "step %" PRId64 ": atom id %" PRId64 " outside 1..%" PRId64, step,
                 (int64_t)ids[i], fw->natoms);
            return -1;
        }
        fw->order[i] = (lfw_atom_ref_t){.id = ids[i], .index = i};
    }
    qsort(fw->order, (size_t)nlocal, sizeof *fw->order, by_id);
    return 0;
}

/* Lend the n sorted records in b (record_len bytes each) to fwdio, one
 * fwdio_write_lent per run of consecutive ids. */
static int write_runs(lfw_forward_t *fw, const lfw_target_t *t, int64_t s, app_lent_buf_t *b,
                      int n)
{
    size_t rec = t->layout->record_len;
    const char *buf = (const char *)b->mem;
    for (int i = 0, j; i < n; i = j) {
        for (j = i + 1; j < n && fw->order[j].id == fw->order[j - 1].id + 1; j++)
            ;
        uint64_t offset = lfw_layout_atom_offset(t->layout, s, fw->order[i].id);
        int rc = app_lent_write(b, t->file, buf + (size_t)i * rec, (size_t)(j - i) * rec, offset);
        if (rc != FWDIO_OK) {
            fail(fw, "fwdio_write_lent of %zu bytes at offset %" PRIu64 ": %s (%s)",
                 (size_t)(j - i) * rec, offset, fwdio_strerror(rc), fwdio_file_error(t->file));
            return -1;
        }
        fw->write_calls++;
    }
    return 0;
}

/* Rank 0 writes the header of snapshot s at its start. */
static int write_header(lfw_forward_t *fw, const lfw_target_t *t, int64_t s, const void *header,
                        size_t len)
{
    if (len != t->layout->header_len[s]) {
        fail(fw, "snapshot %" PRId64 ": header of %zu bytes, laid out for %zu", s, len,
             t->layout->header_len[s]);
        return -1;
    }
    int rc = fwdio_write(t->file, header, len, t->layout->base[s]);
    if (rc != FWDIO_OK) {
        fail(fw, "fwdio_write of the header of snapshot %" PRId64 ": %s (%s)", s,
             fwdio_strerror(rc), fwdio_file_error(t->file));
        return -1;
    }
    fw->write_calls++;
    return 0;
}

static int forward_text(lfw_forward_t *fw, int64_t s, int64_t step, int n, const int *types,
                        double **x)
{
    size_t line_len = fw->fmt->line_len;
    app_lent_buf_t *b = app_lent_get(&fw->bufs);
    if (app_lent_grow(&fw->bufs, b, (size_t)n * line_len + 1)) {
        fail(fw, "out of memory formatting %d atoms", n);
        return -1;
    }
    for (int k = 0; k < n; k++) {
        int i = fw->order[k].index;
        if (lfw_text_line(fw->fmt, (char *)b->mem + (size_t)k * line_len, fw->order[k].id,
                          types[i], x[i]) != line_len) {
            fail(fw,
                 "step %" PRId64 ": atom %" PRId64 " at (%g, %g, %g) does not fit the text "
                 "format \"%s\"",
                 step, fw->order[k].id, x[i][0], x[i][1], x[i][2], fw->fmt->line);
            return -1;
        }
    }
    if (fw->rank == 0) {
        char header[LFW_TEXT_HEADER_MAX];
        size_t len = lfw_text_header(header, sizeof header, step, fw->natoms, &fw->box);
        if (write_header(fw, &fw->text, s, header, len))
            return -1;
    }
    return write_runs(fw, &fw->text, s, b, n);
}

static int forward_binary(lfw_forward_t *fw, int64_t s, int64_t step, int n, const int *types,
                          double **x)
{
    app_lent_buf_t *b = app_lent_get(&fw->bufs);
    if (app_lent_grow(&fw->bufs, b, (size_t)n * LFW_BIN_RECORD_SIZE + 1)) {
        fail(fw, "out of memory packing %d atoms", n);
        return -1;
    }
    for (int k = 0; k < n; k++) {
        int i = fw->order[k].index;
        lfw_bin_record_encode(b->mem + (size_t)k * LFW_BIN_RECORD_SIZE,
                              (int32_t)fw->order[k].id, types[i], x[i]);
    }
    if (fw->rank == 0) {
        unsigned char header[LFW_BIN_HEADER_SIZE];
        lfw_bin_header_t h = {.step = step, .natoms = fw->natoms, .ntypes = (uint32_t)fw->ntypes,
                              .box = fw->box};
        lfw_bin_header_encode(header, &h);
        if (write_header(fw, &fw->binary, s, header, sizeof header))
            return -1;
    }
    return write_runs(fw, &fw->binary, s, b, n);
}

/* ---- LAMMPS's own format, appended ---- */

/* One snapshot in LAMMPS's default `dump custom id type x y z` format: rank
 * 0's header, then every rank's atoms in its local order ("%d %d %g %g %g"),
 * appended in rank order; the snapshot is a step of the stream. */
static void forward_lammps(lfw_forward_t *fw, int64_t step, int nlocal, const lfw_tag_t *ids,
                           double **x)
{
    size_t at = 0;
    int bad = reserve((void **)&fw->lines, &fw->lines_cap, 4096, 1);
    if (!bad && fw->rank == 0) {
        lfw_box_t box;
        const double *lo = lammps_extract_global(fw->lmp, "boxlo");
        const double *hi = lammps_extract_global(fw->lmp, "boxhi");
        memcpy(box.lo, lo, sizeof box.lo);
        memcpy(box.hi, hi, sizeof box.hi);
        int64_t natoms = (int64_t)lammps_get_natoms(fw->lmp);
        size_t len = lfw_text_header(NULL, 0, step, natoms, &box);
        bad = reserve((void **)&fw->lines, &fw->lines_cap, len + 1, 1);
        if (!bad)
            at = lfw_text_header(fw->lines, fw->lines_cap, step, natoms, &box);
    }
    const int *types = lammps_extract_atom(fw->lmp, "type");
    if (!bad)
        bad = reserve((void **)&fw->lines, &fw->lines_cap,
                      at + (size_t)nlocal * LFW_TEXT_DEFAULT_LINE_MAX, 1);
    for (int i = 0; i < nlocal && !bad; i++)
        at += lfw_text_default_line(fw->lines + at, (int)ids[i], types[i], x[i]);
    int rc = bad ? FWDIO_ENOMEM : fwdio_append(fw->text.file, fw->lines, at);
    if (rc == FWDIO_OK)
        fw->write_calls++;
    /* every rank ends the step, whatever happened here, so ranks stay in step */
    int end_rc = fwdio_step_end(fw->text.file);
    if (rc == FWDIO_OK)
        rc = end_rc;
    if (rc != FWDIO_OK) {
        fail(fw, "step %" PRId64 ": appending %zu bytes: %s (%s)", step, at, fwdio_strerror(rc),
             fwdio_file_error(fw->text.file));
        return;
    }
    fw->snapshots++;
}

/* The box must still be the one the layouts were computed for. */
static int box_unchanged(lfw_forward_t *fw, int64_t step)
{
    const double *lo = lammps_extract_global(fw->lmp, "boxlo");
    const double *hi = lammps_extract_global(fw->lmp, "boxhi");
    for (int d = 0; d < 3; d++)
        if (lo[d] != fw->box.lo[d] || hi[d] != fw->box.hi[d]) {
            fail(fw, "step %" PRId64 ": the box changed; the dumps were laid out for a fixed box",
                 step);
            return 0;
        }
    return 1;
}

static void forward(lfw_forward_t *fw, int64_t step, int nlocal, const lfw_tag_t *ids, double **x)
{
    if (fw->lammps_format) {
        /* A run's first step repeats the last one of the run before: LAMMPS
         * writes no second snapshot of a step, nor does the stream. */
        if (step > fw->last_step)
            forward_lammps(fw, step, nlocal, ids, x);
        fw->last_step = step;
        return;
    }
    const lfw_layout_t *layout = fw->text.file ? fw->text.layout : fw->binary.layout;
    int64_t s = lfw_layout_snapshot(layout, step);
    if (s < 0) {
        fail(fw, "called back at step %" PRId64 ", which has no snapshot", step);
        return;
    }
    if (!box_unchanged(fw, step) || sort_local_atoms(fw, nlocal, ids, step))
        return;
    const int *types = lammps_extract_atom(fw->lmp, "type");
    if (fw->text.file && forward_text(fw, s, step, nlocal, types, x))
        return;
    if (fw->binary.file && forward_binary(fw, s, step, nlocal, types, x))
        return;
    fw->snapshots++;
}

void lfw_forward_callback(void *ctx, lfw_step_t step, int nlocal, lfw_tag_t *ids, double **x,
                          double **fexternal)
{
    lfw_forward_t *fw = ctx;
    double t0 = MPI_Wtime();
    /* fix external adds these to the forces: the output adds none. */
    for (int i = 0; i < nlocal; i++)
        fexternal[i][0] = fexternal[i][1] = fexternal[i][2] = 0.0;
    if (!fw->failed)
        forward(fw, (int64_t)step, nlocal, ids, x);
    else if (fw->lammps_format && step > fw->last_step && fw->text.file) {
        fwdio_step_end(fw->text.file); /* still in step: the stream fails on its own */
        fw->last_step = step;
    }
    fw->seconds += MPI_Wtime() - t0;
}

void lfw_forward_free(lfw_forward_t *fw)
{
    free(fw->order);
    fw->order = NULL;
    fw->order_cap = 0;
    free(fw->lines);
    fw->lines = NULL;
    fw->lines_cap = 0;
    if (fw->bufs.rt)
        app_lent_pool_free(&fw->bufs);
}
