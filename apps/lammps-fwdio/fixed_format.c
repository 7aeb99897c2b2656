/* SPDX-License-Identifier: BSD-3-Clause */
#include "fixed_format.h"

#include <math.h>
#include <string.h>

/* Longest text either function builds: sign, 20 digits, '.', 17 decimals. */
#define SCRATCH 48

/* The powers of ten that are exact doubles. */
#define POW10_EXACT_MAX 22
static const double pow10_double[POW10_EXACT_MAX + 1] = {
    1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
    1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

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

/* |v| * 10^k rounded to the nearest integer as printf rounds the exact value,
 * for |k| <= POW10_EXACT_MAX: 0 if that cannot be told in doubles. */
static int round_scaled(double magnitude, int k, uint64_t *rounded)
{
    /* One correctly rounded multiplication or division by an exact power of
     * ten; below 2^52 its integer and fractional parts are exact, and NaN
     * and infinities fail the test too. */
    double scaled = k >= 0 ? magnitude * pow10_double[k] : magnitude / pow10_double[-k];
    if (!(scaled < 4503599627370496.0))
        return 0;
    double below = floor(scaled);
    double frac = scaled - below;
    /* printf rounds the exact value of |v| * 10^k to the nearest integer.
     * Rounding to double is monotonic and every m + 1/2 below 2^52 is a
     * double, so the result lies on the same side of each midpoint as the
     * exact value, or on it: only one that is exactly a midpoint may round
     * otherwise (or be a true tie, which printf breaks by the rounding mode).
     * Those go to printf. */
    if (frac == 0.5)
        return 0;
    *rounded = (uint64_t)below + (frac > 0.5);
    return 1;
}

/* printf("%" PRId64, v), written backwards ending at end: its start. */
static char *decimal_backwards(char *end, int64_t v)
{
    uint64_t magnitude = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    char *start = digits_backwards(end, magnitude, 1);
    if (v < 0)
        *--start = '-';
    return start;
}

size_t lfw_put_int(char *out, int width, int64_t v)
{
    char text[SCRATCH];
    char *end = text + sizeof text;
    char *start = decimal_backwards(end, v);
    return pad_left(out, width, start, (size_t)(end - start));
}

size_t lfw_put_fixed(char *out, int width, int precision, double v)
{
    if (precision < 1 || precision > LFW_FIXED_PRECISION_MAX)
        return 0;
    uint64_t rounded;
    if (!round_scaled(fabs(v), precision, &rounded))
        return 0;
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

size_t lfw_put_decimal(char *out, int64_t v)
{
    char text[SCRATCH];
    char *end = text + sizeof text;
    char *start = decimal_backwards(end, v);
    memcpy(out, start, (size_t)(end - start));
    return (size_t)(end - start);
}

/* "%g": six significant digits (the default precision P), style e when the
 * exponent X of the rounded value is below -4 or at least P, else style f
 * with P - 1 - X decimals; trailing zeros of the fraction dropped, and the
 * point with them when no decimal is left (C11 7.21.6.1). */
#define GENERAL_DIGITS 6

size_t lfw_put_general(char *out, double v)
{
    char *p = out;
    if (signbit(v))
        *p++ = '-';
    double magnitude = fabs(v);
    if (magnitude == 0.0) {
        *p++ = '0';
        return (size_t)(p - out);
    }
    /* |exponent| stays where every power of ten used is exact (NaN fails). */
    if (!(magnitude >= 1e-16 && magnitude < 1e21))
        return 0;
    /* The six digits n and exponent X with n * 10^(X - 5) the value rounded
     * to six significant digits: 100000 <= n <= 999999. The first guess,
     * from the binary exponent (2^(b-1) <= |v| < 2^b), is the decimal
     * exponent or one below it; the loop corrects it. */
    int binary_exponent;
    frexp(magnitude, &binary_exponent);
    int exponent = (int)floor((binary_exponent - 1) * 0.30102999566398120);
    uint64_t n = 0;
    for (int tries = 0;; tries++) {
        if (tries == 3 || !round_scaled(magnitude, GENERAL_DIGITS - 1 - exponent, &n))
            return 0;
        if (n > 1000000) {
            exponent++; /* a seventh digit: the exponent was too small */
        } else if (n == 1000000) {
            n = 100000; /* rounding carried into a seventh digit: 1.00000e(X+1) */
            exponent++;
            break;
        } else if (n < 100000) {
            exponent--; /* the exponent was too large */
        } else {
            break;
        }
    }
    char digits[GENERAL_DIGITS];
    for (int i = GENERAL_DIGITS - 1; i >= 0; i--) {
        digits[i] = (char)('0' + n % 10);
        n /= 10;
    }
    int kept = GENERAL_DIGITS; /* significant digits left after the trailing zeros */
    while (kept > 1 && digits[kept - 1] == '0')
        kept--;
    if (exponent >= -4 && exponent < GENERAL_DIGITS) {
        if (exponent >= 0) { /* every integer digit, then the fraction's */
            memcpy(p, digits, (size_t)exponent + 1);
            p += exponent + 1;
            if (kept > exponent + 1) {
                *p++ = '.';
                memcpy(p, digits + exponent + 1, (size_t)(kept - exponent - 1));
                p += kept - exponent - 1;
            }
        } else { /* 0.000ddd */
            *p++ = '0';
            *p++ = '.';
            for (int i = 0; i < -exponent - 1; i++)
                *p++ = '0';
            memcpy(p, digits, (size_t)kept);
            p += kept;
        }
        return (size_t)(p - out);
    }
    *p++ = digits[0];
    if (kept > 1) {
        *p++ = '.';
        memcpy(p, digits + 1, (size_t)kept - 1);
        p += kept - 1;
    }
    *p++ = 'e';
    *p++ = exponent < 0 ? '-' : '+';
    int e = exponent < 0 ? -exponent : exponent;
    *p++ = (char)('0' + e / 10); /* two digits: |X| <= 21 here */
    *p++ = (char)('0' + e % 10);
    return (size_t)(p - out);
}
