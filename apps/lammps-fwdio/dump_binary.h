/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lammps-fwdio's binary dump: the same snapshots as the text dump, as fixed
 * size binary records, so a reader can seek to any snapshot and any atom.
 *
 * The file is a sequence of snapshots, in step order, all of the same size
 * LFW_BIN_HEADER_SIZE + natoms * LFW_BIN_RECORD_SIZE. One snapshot:
 *
 *   header, 88 bytes
 *     offset  0  char[8]    magic "FWDLMP01" (no NUL)
 *     offset  8  uint32     byte-order mark 0x01020304
 *     offset 12  uint32     header size (88)
 *     offset 16  uint32     record size (32)
 *     offset 20  uint32     number of atom types
 *     offset 24  int64      timestep
 *     offset 32  int64      number of atoms N
 *     offset 40  float64[6] box bounds xlo xhi ylo yhi zlo zhi (periodic)
 *   N records, 32 bytes each, atom id 1 first, id N last
 *     offset  0  int32      atom id
 *     offset  4  int32      atom type
 *     offset  8  float64[3] x y z (as LAMMPS holds them: wrapped into the box
 *                           at the last re-neighbouring, so possibly a little
 *                           outside it)
 *
 * Numbers are in the writing machine's byte order (little-endian on x86-64);
 * a reader that finds the byte-order mark as 0x04030201 must swap bytes.
 * Floating point numbers are IEEE 754 binary64.
 */
#ifndef LFW_DUMP_BINARY_H
#define LFW_DUMP_BINARY_H

#include "dump_text.h"

#include <stddef.h>
#include <stdint.h>

#define LFW_BIN_MAGIC "FWDLMP01"
#define LFW_BIN_MAGIC_LEN 8
#define LFW_BIN_BYTE_ORDER_MARK 0x01020304u
#define LFW_BIN_HEADER_SIZE 88
#define LFW_BIN_RECORD_SIZE 32

/** The values of one snapshot header. */
typedef struct lfw_bin_header {
    int64_t step;
    int64_t natoms;
    uint32_t ntypes;
    lfw_box_t box;
} lfw_bin_header_t;

/** Encode a header into out[0 .. LFW_BIN_HEADER_SIZE). */
void lfw_bin_header_encode(unsigned char *out, const lfw_bin_header_t *h);

/**
 * Decode a header from in[0 .. LFW_BIN_HEADER_SIZE). Returns 0, or -1 with the
 * reason in why[0 .. cap) when the magic, byte order or sizes are not ours.
 */
int lfw_bin_header_decode(const unsigned char *in, lfw_bin_header_t *h, char *why, size_t cap);

/** Encode one atom into out[0 .. LFW_BIN_RECORD_SIZE). */
void lfw_bin_record_encode(unsigned char *out, int32_t id, int32_t type, const double x[3]);

/** Decode one atom from in[0 .. LFW_BIN_RECORD_SIZE). */
void lfw_bin_record_decode(const unsigned char *in, int32_t *id, int32_t *type, double x[3]);

#endif
