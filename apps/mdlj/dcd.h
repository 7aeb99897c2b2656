/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The DCD trajectory layout (CHARMM flavour, as NAMD writes it and VMD and
 * MDAnalysis read it), in the host's byte order, all records framed by 4-byte
 * Fortran record markers:
 *
 *   header  [84] "CORD" + 20 int32 control words [84]
 *           [164] NTITLE = 2, two 80-character title lines [164]
 *           [4] NATOM [4]                                 276 bytes
 *   frame   [48] unit cell: 6 doubles A, gamma, B, beta, alpha, C [48]
 *           [4N] x of atoms 0..N-1, float32 [4N]
 *           [4N] y [4N]   [4N] z [4N]                      80 + 12 N bytes
 *
 * Control words used: NSET (frames in the file), ISTART (step of the first
 * frame), NSAVC (steps between frames), NSTEP (step of the last frame),
 * DELTA (the time step, float32), the unit-cell flag (1) and the CHARMM
 * version (24). Lengths are in the reduced unit sigma, angles in degrees.
 * NSET counts the frames written so far: the fwdio output writes the file as
 * a stream, each frame a step whose commit blocks are the frame's closing
 * marker and then the header, so a killed run leaves whole frames only and
 * a file no longer than them plus part of the next; the MPI-IO and serial
 * outputs size the file for every frame and rewrite the header after each.
 * A restart continues a DCD of this layout (frames every NSAVC steps from
 * step NSAVC) from the frames its header counts (dcd_info_t.kept).
 */
#ifndef MDLJ_DCD_H
#define MDLJ_DCD_H

#include "pack.h"
#include "snapshot.h"

#include <stdint.h>

#define DCD_HEADER_BYTES 276u
/* Bytes before the first x of a frame: the unit-cell record and x's marker. */
#define DCD_FRAME_PREFIX_BYTES 60u
/* The most atoms whose coordinate record length fits the int32 marker. */
#define DCD_MAX_ATOMS (INT32_MAX / 4)

typedef struct dcd_info {
    int64_t natoms;
    int64_t nframes;
    int64_t first_step; /* step of frame 0 */
    int64_t interval;   /* steps between frames */
    double dt;
    double box;
    uint64_t seed;
    int64_t kept; /* frames 0..kept-1 are a previous run's (a continued trajectory) */
} dcd_info_t;

uint64_t dcd_frame_bytes(int64_t natoms);
uint64_t dcd_file_bytes(const dcd_info_t *info);
uint64_t dcd_frame_offset(const dcd_info_t *info, int64_t frame);

/* The 276 header bytes. */
void dcd_header(unsigned char out[DCD_HEADER_BYTES], const dcd_info_t *info);

/* The header of `count` frames (NSET, NSTEP) for a file described by info. */
void dcd_header_of(unsigned char out[DCD_HEADER_BYTES], const dcd_info_t *info, int64_t count);

/* What the header of the DCD at `path` says: its frame count, first step,
 * steps between frames and atoms. 0, or -1 when there is no such file or it
 * is not a DCD this program writes. */
int dcd_read_header(const char *path, int64_t *nframes, int64_t *first_step, int64_t *interval,
                    int64_t *natoms);

/* What dcd_pack_frame packs beside the atoms (one rank packs the records). */
enum {
    DCD_ATOMS_ONLY = 0,
    DCD_WITH_RECORDS = 1,   /* the unit cell and every record marker */
    DCD_WITHOUT_TAIL = 2    /* ... but the frame's last marker (dcd_frame_tail) */
};

/* The frame's last 4 bytes (the marker closing z) and where they go: a
 * writer that puts them last keeps the file short of the frame's end until
 * the frame is whole (readers that count frames by the file's size). */
uint64_t dcd_frame_tail(const dcd_info_t *info, int64_t frame, unsigned char tail[4]);

/*
 * Append to `pack` this rank's part of frame `frame`: its atoms' x, y and z,
 * one extent per run of consecutive ids in each of the three arrays, and,
 * as `records` says (one rank), the unit cell and the record markers.
 * Returns 0, or -1 when out of memory.
 */
int dcd_pack_frame(md_pack_t *pack, const dcd_info_t *info, int64_t frame,
                   const md_snapshot_t *snap, int records);

/*
 * The whole frame from all atoms at once (any order; `n` must be natoms):
 * out receives dcd_frame_bytes(natoms) bytes. The serial output and the
 * verification use this; it places atom by atom instead of run by run.
 */
void dcd_frame_image(unsigned char *out, const dcd_info_t *info, const int64_t *id,
                     const double *x, size_t n);

#endif
