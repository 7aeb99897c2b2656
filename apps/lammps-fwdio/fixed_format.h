/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Fast conversions for the fixed-width columns of a text dump, giving the very
 * bytes printf gives for "%<width>d" and "%<width>.<precision>f" — about ten
 * times faster than snprintf, which matters because every atom of every
 * snapshot goes through them. When a conversion cannot be certain to match
 * printf (a value whose decimal rounding is too close to call in double
 * arithmetic, NaN, infinities, huge values) or the result would not fit the
 * width, it writes nothing and returns 0: the caller then uses snprintf.
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

#endif
