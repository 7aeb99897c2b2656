/* SPDX-License-Identifier: BSD-3-Clause */
#include "dump_text.h"

#include "fixed_format.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* Decimal digits of v >= 0 (1 for 0). */
static int digits_of(uint64_t v)
{
    int n = 1;
    while (v >= 10) {
        v /= 10;
        n++;
    }
    return n;
}

int lfw_text_format_init(lfw_text_format_t *fmt, int64_t natoms, int ntypes, const lfw_box_t *box,
                         int precision)
{
    memset(fmt, 0, sizeof *fmt);
    if (natoms < 1 || natoms > INT32_MAX || ntypes < 1 || precision < LFW_TEXT_PRECISION_MIN ||
        precision > LFW_TEXT_PRECISION_MAX)
        return -1;

    double largest = 0.0;
    for (int d = 0; d < 3; d++) {
        largest = fmax(largest, fabs(box->lo[d]));
        largest = fmax(largest, fabs(box->hi[d]));
    }
    /* Integer digits for every value below 2 * largest. Values are accepted
     * below 10^d - 1, so that rounding to `precision` decimals never carries
     * into one more digit. */
    double reach = floor(2.0 * largest) + 1.0;
    if (!(reach < 1e15))
        return -1;
    int int_digits = digits_of((uint64_t)reach);
    fmt->coord_limit = pow(10.0, int_digits) - 1.0;
    int coord_width = 1 + int_digits + 1 + precision; /* sign, integer part, '.', decimals */
    int id_width = digits_of((uint64_t)natoms);
    int type_width = digits_of((uint64_t)ntypes);

    int n = snprintf(fmt->line, sizeof fmt->line, "%%%dd %%%dd %%%d.%df %%%d.%df %%%d.%df",
                     id_width, type_width, coord_width, precision, coord_width, precision,
                     coord_width, precision);
    if (n < 0 || (size_t)n >= sizeof fmt->line)
        return -1;
    snprintf(fmt->printf_line, sizeof fmt->printf_line, "%s\n", fmt->line);
    fmt->line_len = (size_t)(id_width + 1 + type_width + 3 * (1 + coord_width) + 1);
    fmt->id_width = id_width;
    fmt->type_width = type_width;
    fmt->coord_width = coord_width;
    fmt->precision = precision;
    return 0;
}

size_t lfw_text_line(const lfw_text_format_t *fmt, char *out, int64_t id, int type, const double x[3])
{
    /* A coordinate beyond the limit would widen the line; NaN has no width
     * guarantee either. Report such a line as not fitting without formatting
     * it (the caller's buffer holds exactly line_len + 1 bytes). */
    for (int d = 0; d < 3; d++)
        if (!(fabs(x[d]) < fmt->coord_limit))
            return 0;
    /* Column by column, each exactly its width; a column the fast conversion
     * declines (a rounding too close to call) sends the line to snprintf. */
    char *p = out;
    size_t n = lfw_put_int(p, fmt->id_width, id);
    p += n;
    *p++ = ' ';
    size_t m = n ? lfw_put_int(p, fmt->type_width, type) : 0;
    p += m;
    n = n && m;
    for (int d = 0; d < 3 && n; d++) {
        *p++ = ' ';
        n = lfw_put_fixed(p, fmt->coord_width, fmt->precision, x[d]);
        p += n;
    }
    if (n) {
        *p++ = '\n';
        *p = '\0';
        return (size_t)(p - out);
    }
    int len = snprintf(out, fmt->line_len + 1, fmt->printf_line, (int)id, type, x[0], x[1], x[2]);
    return len < 0 ? 0 : (size_t)len;
}

size_t lfw_text_default_line(char *out, int id, int type, const double x[3])
{
    char *p = out;
    p += lfw_put_decimal(p, id);
    *p++ = ' ';
    p += lfw_put_decimal(p, type);
    for (int d = 0; d < 3; d++) {
        *p++ = ' ';
        size_t n = lfw_put_general(p, x[d]);
        if (n == 0) /* too close to call, or not finite: printf's own */
            return (size_t)snprintf(out, LFW_TEXT_DEFAULT_LINE_MAX, "%d %d %g %g %g\n", id, type,
                                    x[0], x[1], x[2]);
        p += n;
    }
    *p++ = '\n';
    *p = '\0';
    return (size_t)(p - out);
}

size_t lfw_text_header(char *out, size_t cap, int64_t step, int64_t natoms, const lfw_box_t *box)
{
    int n = snprintf(out, cap,
                     "ITEM: TIMESTEP\n%" PRId64 "\n"
                     "ITEM: NUMBER OF ATOMS\n%" PRId64 "\n"
                     "ITEM: BOX BOUNDS pp pp pp\n"
                     "%.16e %.16e\n%.16e %.16e\n%.16e %.16e\n"
                     "ITEM: ATOMS id type x y z\n",
                     step, natoms, box->lo[0], box->hi[0], box->lo[1], box->hi[1], box->lo[2],
                     box->hi[2]);
    return n < 0 ? 0 : (size_t)n;
}
