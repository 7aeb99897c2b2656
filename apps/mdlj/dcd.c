/* SPDX-License-Identifier: BSD-3-Clause */
#include "dcd.h"

#include <stdio.h>
#include <string.h>

/* Control word indices (after "CORD"). */
enum {
    DCD_NSET = 0,
    DCD_ISTART = 1,
    DCD_NSAVC = 2,
    DCD_NSTEP = 3,
    DCD_DELTA = 9,
    DCD_HAS_CELL = 10,
    DCD_VERSION = 19
};
#define DCD_TITLE_LINES 2
#define DCD_TITLE_LEN 80
#define DCD_CELL_BYTES 48u

static unsigned char *put_i32(unsigned char *p, int32_t v)
{
    memcpy(p, &v, 4);
    return p + 4;
}

uint64_t dcd_frame_bytes(int64_t natoms)
{
    return DCD_CELL_BYTES + 8 + 3 * (8 + 4 * (uint64_t)natoms);
}

uint64_t dcd_file_bytes(const dcd_info_t *info)
{
    return DCD_HEADER_BYTES + (uint64_t)info->nframes * dcd_frame_bytes(info->natoms);
}

uint64_t dcd_frame_offset(const dcd_info_t *info, int64_t frame)
{
    return DCD_HEADER_BYTES + (uint64_t)frame * dcd_frame_bytes(info->natoms);
}

static int32_t clamp_i32(int64_t v)
{
    return v > INT32_MAX ? INT32_MAX : v < INT32_MIN ? INT32_MIN : (int32_t)v;
}

void dcd_header(unsigned char out[DCD_HEADER_BYTES], const dcd_info_t *info)
{
    int32_t control[20] = {0};
    control[DCD_NSET] = clamp_i32(info->nframes);
    control[DCD_ISTART] = clamp_i32(info->first_step);
    control[DCD_NSAVC] = clamp_i32(info->interval);
    control[DCD_NSTEP] = clamp_i32(info->first_step + (info->nframes - 1) * info->interval);
    float delta = (float)info->dt;
    memcpy(&control[DCD_DELTA], &delta, 4);
    control[DCD_HAS_CELL] = 1;
    control[DCD_VERSION] = 24;

    unsigned char *p = out;
    p = put_i32(p, 84);
    memcpy(p, "CORD", 4);
    p += 4;
    memcpy(p, control, sizeof control);
    p += sizeof control;
    p = put_i32(p, 84);

    char title[DCD_TITLE_LINES][DCD_TITLE_LEN + 1];
    snprintf(title[0], sizeof title[0],
             "REMARKS mdlj Lennard-Jones fluid, reduced units (sigma = epsilon = mass = 1)");
    snprintf(title[1], sizeof title[1], "REMARKS %lld atoms, cubic box %.6f, seed %llu",
             (long long)info->natoms, info->box, (unsigned long long)info->seed);
    p = put_i32(p, 4 + DCD_TITLE_LINES * DCD_TITLE_LEN);
    p = put_i32(p, DCD_TITLE_LINES);
    for (int i = 0; i < DCD_TITLE_LINES; i++) {
        size_t len = strlen(title[i]);
        memset(p, ' ', DCD_TITLE_LEN);
        memcpy(p, title[i], len);
        p += DCD_TITLE_LEN;
    }
    p = put_i32(p, 4 + DCD_TITLE_LINES * DCD_TITLE_LEN);

    p = put_i32(p, 4);
    p = put_i32(p, (int32_t)info->natoms);
    put_i32(p, 4);
}

void dcd_header_of(unsigned char out[DCD_HEADER_BYTES], const dcd_info_t *info, int64_t count)
{
    dcd_info_t part = *info;
    part.nframes = count;
    dcd_header(out, &part);
}

int dcd_read_header(const char *path, int64_t *nframes, int64_t *first_step, int64_t *interval,
                    int64_t *natoms)
{
    unsigned char h[DCD_HEADER_BYTES];
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    size_t got = fread(h, 1, sizeof h, f);
    fclose(f);
    int32_t marker, control[20], atoms;
    if (got != sizeof h)
        return -1;
    memcpy(&marker, h, 4);
    memcpy(control, h + 8, sizeof control);
    memcpy(&atoms, h + DCD_HEADER_BYTES - 8, 4);
    if (marker != 84 || memcmp(h + 4, "CORD", 4) != 0 || control[DCD_VERSION] != 24)
        return -1;
    *nframes = control[DCD_NSET];
    *first_step = control[DCD_ISTART];
    *interval = control[DCD_NSAVC];
    *natoms = atoms;
    return 0;
}

/* The unit cell record and the marker opening x (DCD_FRAME_PREFIX_BYTES). */
static void frame_prefix(unsigned char *p, const dcd_info_t *info)
{
    /* CHARMM order A, gamma, B, beta, alpha, C; 90 degrees is read as an
     * angle (not a cosine) by every reader. */
    double cell[6] = {info->box, 90.0, info->box, 90.0, 90.0, info->box};
    p = put_i32(p, DCD_CELL_BYTES);
    memcpy(p, cell, sizeof cell);
    p += sizeof cell;
    p = put_i32(p, DCD_CELL_BYTES);
    put_i32(p, (int32_t)(4 * info->natoms));
}

uint64_t dcd_frame_tail(const dcd_info_t *info, int64_t frame, unsigned char tail[4])
{
    put_i32(tail, (int32_t)(4 * info->natoms));
    return dcd_frame_offset(info, frame + 1) - 4;
}

int dcd_pack_frame(md_pack_t *pack, const dcd_info_t *info, int64_t frame,
                   const md_snapshot_t *snap, int records)
{
    const int with_records = records != DCD_ATOMS_ONLY;
    const uint64_t n = (uint64_t)info->natoms;
    const int32_t marker = (int32_t)(4 * n);
    uint64_t base = dcd_frame_offset(info, frame) + DCD_FRAME_PREFIX_BYTES;
    if (with_records) {
        unsigned char *p = pack_append(pack, base - DCD_FRAME_PREFIX_BYTES, DCD_FRAME_PREFIX_BYTES);
        if (!p)
            return -1;
        frame_prefix(p, info);
    }
    for (int d = 0; d < 3; d++) {
        /* Coordinate array d starts at base + d * (4n + 8). */
        uint64_t array = base + (uint64_t)d * (4 * n + 8);
        size_t i = 0;
        while (i < snap->n) {
            size_t run = 1;
            while (i + run < snap->n && snap->id[i + run] == snap->id[i] + (int64_t)run)
                run++;
            float *out = pack_append(pack, array + 4 * (uint64_t)snap->id[i], 4 * run);
            if (!out)
                return -1;
            for (size_t k = 0; k < run; k++)
                out[k] = (float)snap->x[3 * (i + k) + (size_t)d];
            i += run;
        }
        if (with_records) {
            /* The marker closing this array, and the one opening the next. */
            size_t len = d < 2 ? 8 : 4;
            if (d == 2 && records == DCD_WITHOUT_TAIL)
                break;
            unsigned char *p = pack_append(pack, array + 4 * n, len);
            if (!p)
                return -1;
            p = put_i32(p, marker);
            if (d < 2)
                put_i32(p, marker);
        }
    }
    return 0;
}

void dcd_frame_image(unsigned char *out, const dcd_info_t *info, const int64_t *id,
                     const double *x, size_t n)
{
    const uint64_t natoms = (uint64_t)info->natoms;
    const int32_t marker = (int32_t)(4 * natoms);
    frame_prefix(out, info);
    for (int d = 0; d < 3; d++) {
        unsigned char *array = out + DCD_FRAME_PREFIX_BYTES + (size_t)d * (4 * natoms + 8);
        for (size_t i = 0; i < n; i++) {
            float value = (float)x[3 * i + (size_t)d];
            memcpy(array + 4 * (size_t)id[i], &value, 4);
        }
        unsigned char *p = put_i32(array + 4 * natoms, marker);
        if (d < 2)
            put_i32(p, marker);
    }
}
