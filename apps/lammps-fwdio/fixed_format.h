/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Fast conversions for the columns of a text dump, giving the very bytes
 * printf gives for "%<width>d", "%<width>.<precision>f", "%d" and "%g" —
 * several times faster than snprintf, which matters because every atom of
 * every snapshot goes through them. When a conversion cannot be certain to
 * match printf (a value whose decimal rounding is too close to call in double
 * arithmetic, NaN, infinities, huge or tiny values) or the result would not
 * fit the width, it writes nothing and returns 0: the caller then uses
 * snprintf.
 */
#ifndef LFW_FIXED_FORMAT_H
#define LFW_FIXED_FORMAT_H

#include <stddef.h>
#include <stdint.h>

/** Most decimals lfw_put_fixed handles. */
#define LFW_FIXED_PRECISION_MAX 17

/**
 * printf("%*" PRId64, width, v) into out[0 .. width): returns width, or 0
 * (nothing written) if v needs more than width characters.
 */
size_t lfw_put_int(char *out, int width, int64_t v);

/**
 * printf("%*.*f", width, precision, v) into out[0 .. width), for precision
 * 1 .. LFW_FIXED_PRECISION_MAX: returns width, or 0 (nothing written) if the
 * result would be longer than width or could differ from printf's.
 */
size_t lfw_put_fixed(char *out, int width, int precision, double v);

/** Longest text lfw_put_general writes ("-1.23457e-308"). */
#define LFW_GENERAL_MAX 13

/** Longest text lfw_put_decimal writes ("-9223372036854775808"). */
#define LFW_DECIMAL_MAX 20

/** printf("%" PRId64, v) into out[0 .. LFW_DECIMAL_MAX): returns its length. */
size_t lfw_put_decimal(char *out, int64_t v);

/**
 * printf("%g", v) into out[0 .. LFW_GENERAL_MAX), no NUL: returns its
 * length, or 0 (nothing written) if it could differ from printf's: NaN,
 * infinities, |v| outside about [1e-16, 1e21], and values whose rounding to
 * six significant digits is too close to call in double arithmetic (a
 * scaled value exactly on a midpoint; about one in 10^10 of random values).
 */
size_t lfw_put_general(char *out, double v);

#endif
