/* SPDX-License-Identifier: BSD-3-Clause */
#include "fixed_format.h"

#include <math.h>
#include <string.h>

/* Longest text either function builds: sign, 20 digits, '.', 17 decimals. */
#define SCRATCH 48

static const double pow10_double[LFW_FIXED_PRECISION_MAX + 1] = {
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17};

/* Right-align text[0 .. len) in out[0 .. width); 0 if it does not fit. */
static size_t pad_left(char *out, int width, const char *text, size_t len)
{
    if (width < 0 || len > (size_t)width)
        return 0;
    size_t pad = (size_t)width - len;
    memset(out, ' ', pad);
    memcpy(out + pad, text, len);
    return (size_t)width;
}

/* Digits of v, written backwards ending at *end; returns the new start. */
static char *digits_backwards(char *end, uint64_t v, int min_digits)
{
    int n = 0;
    do {
        *--end = (char)('0' + v % 10);
        v /= 10;
        n++;
    } while (v != 0 || n < min_digits);
    return end;
}

size_t lfw_put_int(char *out, int width, int64_t v)
{
    char text[SCRATCH];
    char *end = text + sizeof text;
    uint64_t magnitude = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    char *start = digits_backwards(end, magnitude, 1);
    if (v < 0)
        *--start = '-';
    return pad_left(out, width, start, (size_t)(end - start));
}

size_t lfw_put_fixed(char *out, int width, int precision, double v)
{
    if (precision < 1 || precision > LFW_FIXED_PRECISION_MAX)
        return 0;
    /* |v| * 10^precision in one correctly rounded multiplication (10^p is
     * exact for p <= 22); below 2^52 its integer and fractional parts are
     * exact, and NaN and infinities fail the test too. */
    double scaled = fabs(v) * pow10_double[precision];
    if (!(scaled < 4503599627370496.0))
        return 0;
    double below = floor(scaled);
    double frac = scaled - below;
    /* printf rounds the exact value of v * 10^p to the nearest integer.
     * Rounding to double is monotonic and every k + 1/2 below 2^52 is a
     * double, so the product lies on the same side of each midpoint as the
     * exact value, or on it: only a product that is exactly a midpoint may
     * round otherwise (or be a true tie, which printf breaks by the rounding
     * mode). Those go to printf. */
    if (frac == 0.5)
        return 0;
    uint64_t rounded = (uint64_t)below + (frac > 0.5);
    uint64_t unit = (uint64_t)pow10_double[precision];

    char text[SCRATCH];
    char *end = text + sizeof text;
    char *start = digits_backwards(end, rounded % unit, precision);
    *--start = '.';
    start = digits_backwards(start, rounded / unit, 1);
    if (signbit(v)) /* printf writes "-0.000000" for negative values that round to 0 */
        *--start = '-';
    return pad_left(out, width, start, (size_t)(end - start));
}
