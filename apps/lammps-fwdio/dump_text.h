/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * LAMMPS's `dump custom ... id type x y z` text format, with a fixed-width
 * `dump_modify format line`, so that every atom line of a run has the same
 * length and any rank can compute where any atom's line lands in the file.
 *
 * One snapshot is
 *     ITEM: TIMESTEP\n<step>\n
 *     ITEM: NUMBER OF ATOMS\n<natoms>\n
 *     ITEM: BOX BOUNDS pp pp pp\n<xlo> <xhi>\n<ylo> <yhi>\n<zlo> <zhi>\n   (bounds as %.16e)
 *     ITEM: ATOMS id type x y z\n
 * followed by one line per atom in id order (`dump_modify sort id`), each the
 * format line's columns separated by one space and ended by '\n' — what
 * LAMMPS writes, as it formats every column with the format given.
 * The same header over LAMMPS's default format ("%d %d %g %g %g", variable
 * width, no sort) is lfw_text_default_line's.
 */
#ifndef LFW_DUMP_TEXT_H
#define LFW_DUMP_TEXT_H

#include <stddef.h>
#include <stdint.h>

/** The simulation box of a run (orthogonal, periodic in x, y and z). */
typedef struct lfw_box {
    double lo[3];
    double hi[3];
} lfw_box_t;

/** Longest format line lfw_text_format_init makes, NUL included. */
#define LFW_TEXT_FORMAT_MAX 64

/** Longest snapshot header, NUL included (the numbers are at most 20 digits). */
#define LFW_TEXT_HEADER_MAX 256

/** Fewest and most decimals of a coordinate. */
#define LFW_TEXT_PRECISION_MIN 1
#define LFW_TEXT_PRECISION_MAX 17

typedef struct lfw_text_format {
    /** The LAMMPS format line, e.g. "%4d %1d %11.6f %11.6f %11.6f", for
     *  `dump_modify ID format line "..."`. */
    char line[LFW_TEXT_FORMAT_MAX];
    /** The same with '\n' appended: the printf format of one atom line. */
    char printf_line[LFW_TEXT_FORMAT_MAX + 1];
    /** Bytes of every atom line, '\n' included. */
    size_t line_len;
    /** Coordinates must lie in (-coord_limit, coord_limit) to fit the width. */
    double coord_limit;
    /** The widths and decimals written into the format line. */
    int id_width, type_width, coord_width, precision;
} lfw_text_format_t;

/**
 * The fixed-width format for a run: ids padded to the digits of natoms, types
 * to the digits of ntypes, coordinates with `precision` decimals and room for
 * a sign and for any value up to twice the box's largest |bound| (atoms may sit
 * a little outside the periodic box between re-neighbourings).
 * Returns 0, or -1 if natoms, ntypes or precision are out of range.
 */
int lfw_text_format_init(lfw_text_format_t *fmt, int64_t natoms, int ntypes, const lfw_box_t *box,
                         int precision);

/**
 * Format one atom line into out (room for fmt->line_len + 1 bytes: a NUL
 * follows the line), the bytes snprintf(fmt->printf_line, ...) gives (through
 * fixed_format.h, with snprintf itself where that cannot be sure). Returns the
 * line's length, which differs from fmt->line_len only if a value did not fit
 * the width (the bytes are then not usable; out receives at most line_len + 1
 * bytes either way).
 */
size_t lfw_text_line(const lfw_text_format_t *fmt, char *out, int64_t id, int type, const double x[3]);

/** Longest line lfw_text_default_line writes, NUL included (two "%d" of an
 *  int, three "%g", blanks and '\n'). */
#define LFW_TEXT_DEFAULT_LINE_MAX 80

/**
 * One atom line of LAMMPS's default `dump custom id type x y z` format,
 * "%d %d %g %g %g\n", into out (room for LFW_TEXT_DEFAULT_LINE_MAX bytes; a
 * NUL follows the line): the bytes snprintf gives, through fixed_format.h
 * and snprintf itself where that cannot be sure. Returns the line's length.
 */
size_t lfw_text_default_line(char *out, int id, int type, const double x[3]);

/**
 * Format a snapshot header into out[0 .. cap) as snprintf does, and return its
 * length (out may be NULL with cap 0 to measure it).
 */
size_t lfw_text_header(char *out, size_t cap, int64_t step, int64_t natoms, const lfw_box_t *box);

#endif
