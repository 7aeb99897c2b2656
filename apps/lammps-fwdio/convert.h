/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Binary dump to text dump: the checks and the messages that the serial
 * converter (bin2txt.c, lammps-fwdio-bin2txt) and the parallel one
 * (bin2txt_mpi.c, lammps-fwdio-bin2txt-mpi) share, so that both accept the
 * same files, write the same bytes and refuse a damaged file with the same
 * words. Snapshots are counted from 0, atoms from 1.
 *
 * Every function that checks returns 0, or -1 with the message (without the
 * program's name) in why[0 .. cap).
 */
#ifndef LFW_CONVERT_H
#define LFW_CONVERT_H

#include "dump_binary.h"
#include "dump_text.h"

#include <stddef.h>
#include <stdint.h>

/** Room for any message of this file. */
#define LFW_CONV_WHY_MAX 256

/**
 * Decode the header of snapshot `snapshot` from raw[0 .. LFW_BIN_HEADER_SIZE)
 * into *h. `first` is the first snapshot's header, NULL when this is the
 * first; a later snapshot must have the first's atom count, type count and
 * box (only the step differs).
 */
int lfw_conv_header(const unsigned char *raw, int64_t snapshot, const lfw_bin_header_t *first,
                    lfw_bin_header_t *h, char *why, size_t cap);

/** The text format of a run from its first header, with `precision` decimals. */
int lfw_conv_format(lfw_text_format_t *fmt, const lfw_bin_header_t *first, int precision,
                    char *why, size_t cap);

/**
 * Turn the record of atom `id` of snapshot `snapshot`, rec[0 ..
 * LFW_BIN_RECORD_SIZE), into its text line at out (room for fmt->line_len + 1
 * bytes; a NUL follows the line). The record must hold atom `id` (a hole reads
 * as id 0) and its coordinates must fit the format.
 */
int lfw_conv_record(const lfw_text_format_t *fmt, const unsigned char *rec, int64_t id,
                    int64_t snapshot, char *out, char *why, size_t cap);

/** The message for a file that ends inside snapshot `snapshot`, before the
 *  record of atom `id` is whole. Returns -1. */
int lfw_conv_truncated(int64_t snapshot, int64_t id, char *why, size_t cap);

/** The message for `bytes` (fewer than a header) left after `snapshots` whole
 *  snapshots; with none, an empty file. Returns -1. */
int lfw_conv_stray(uint64_t bytes, int64_t snapshots, char *why, size_t cap);

/** Bytes of one snapshot of `natoms` atoms in the binary dump. */
static inline uint64_t lfw_conv_snapshot_size(int64_t natoms)
{
    return LFW_BIN_HEADER_SIZE + (uint64_t)natoms * LFW_BIN_RECORD_SIZE;
}

#endif
