/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The text dump's atom lines are the bytes snprintf gives for the format line
 * handed to LAMMPS, whichever way lammps-fwdio builds them (fixed_format.c's
 * fast conversions, or snprintf when they decline): random coordinates over
 * every precision, values next to rounding midpoints, exact ties, negative
 * zero and tiny negatives, and values at and beyond the format's width; the
 * same for LAMMPS's default "%d %d %g %g %g" lines (lfw_put_general against
 * "%g" over every exponent, six-digit midpoints, the style changes at 1e-4
 * and 1e6 and the carries into them, random bit patterns). Also checks that
 * the fast path is the one taken for ordinary values (else the driver would
 * be slow, not wrong).
 *
 *   test_dump_text [--seed N] [--count N]
 */
#include "dump_text.h"
#include "fixed_format.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;

#define CHECK(cond, ...)                                                                       \
    do {                                                                                       \
        if (!(cond)) {                                                                         \
            if (failures++ < 20) {                                                             \
                fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                            \
                fprintf(stderr, __VA_ARGS__);                                                  \
                fputc('\n', stderr);                                                           \
            }                                                                                  \
        }                                                                                      \
    } while (0)

static uint64_t rng_state;

static uint64_t rng_next(void)
{
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Uniform in [lo, hi). */
static double rng_uniform(double lo, double hi)
{
    return lo + (hi - lo) * ((double)(rng_next() >> 11) * 0x1.0p-53);
}

/* One line through lfw_text_line against snprintf of the same format. */
static void check_line(const lfw_text_format_t *fmt, int64_t id, int type, const double x[3])
{
    char got[256], want[256];
    memset(got, 'X', sizeof got);
    size_t n = lfw_text_line(fmt, got, id, type, x);
    int w = snprintf(want, sizeof want, fmt->printf_line, (int)id, type, x[0], x[1], x[2]);
    int fits = 1;
    for (int d = 0; d < 3; d++)
        fits &= fabs(x[d]) < fmt->coord_limit;
    if (fits) {
        CHECK(n == fmt->line_len && (size_t)w == n && memcmp(got, want, n) == 0 && got[n] == '\0',
              "\"%s\": got \"%.*s\" (%zu), snprintf \"%s\" (%d)", fmt->line, (int)n, got, n, want,
              w);
    } else {
        CHECK(n != fmt->line_len, "\"%s\": (%g %g %g) beyond the width was accepted", fmt->line,
              x[0], x[1], x[2]);
    }
    CHECK(got[fmt->line_len + 1] == 'X', "\"%s\": wrote past line_len + 1 bytes", fmt->line);
}

/* lfw_put_fixed against printf for one value; counts the values declined. */
static void check_fixed(int width, int precision, double v, long *declined)
{
    char got[64], want[64];
    size_t n = lfw_put_fixed(got, width, precision, v);
    int w = snprintf(want, sizeof want, "%*.*f", width, precision, v);
    if (n == 0) {
        (*declined)++;
        return;
    }
    CHECK((size_t)w == n && memcmp(got, want, n) == 0, "%%%d.%df of %.17g: got \"%.*s\", want \"%s\"",
          width, precision, v, (int)n, got, want);
}

/* lfw_put_general against printf's "%g" for one value; counts declines. */
static void check_general(double v, long *declined)
{
    char got[64], want[64];
    memset(got, 'X', sizeof got);
    size_t n = lfw_put_general(got, v);
    int w = snprintf(want, sizeof want, "%g", v);
    CHECK(got[LFW_GENERAL_MAX] == 'X', "%%g of %.17g: wrote past LFW_GENERAL_MAX", v);
    if (n == 0) {
        (*declined)++;
        return;
    }
    CHECK((size_t)w == n && memcmp(got, want, n) == 0, "%%g of %.17g: got \"%.*s\", want \"%s\"",
          v, (int)n, got, want);
}

/* One default-format line against snprintf (the fallback included). */
static void check_default_line(int id, int type, const double x[3])
{
    char got[LFW_TEXT_DEFAULT_LINE_MAX + 8], want[256];
    memset(got, 'X', sizeof got);
    size_t n = lfw_text_default_line(got, id, type, x);
    int w = snprintf(want, sizeof want, "%d %d %g %g %g\n", id, type, x[0], x[1], x[2]);
    CHECK((size_t)w == n && memcmp(got, want, n + 1) == 0, "default line: got \"%.*s\", want \"%s\"",
          (int)n, got, want);
    CHECK(got[LFW_TEXT_DEFAULT_LINE_MAX] == 'X', "default line wrote past its maximum");
}

/* LAMMPS's default format: "%g" and whole lines. */
static void check_default_format(long count)
{
    long declined = 0;
    const double specials[] = {0.0,       -0.0,      1.0,        -1.0,     0.0001,   0.00001,
                               9.99995e-5, 9.999949e-5, 9.99995e-4, 999999.5, 999999.4, 999999.0,
                               1e6,       123456.0,  1234567.0, 100000.0, 1e-5,     0.5,
                               1.5,       2.5,       0.000123456, 12.3456789, 1e15,  1e20,
                               9.999995,  99999.95,  1e-16,      1e21,     DBL_MIN,  DBL_MAX,
                               5e-324,    0.1,       0.2,        0.3,      1.0 / 3.0, 2.0 / 3.0};
    for (size_t i = 0; i < sizeof specials / sizeof specials[0]; i++)
        for (int s = 0; s < 2; s++) {
            double v = s ? -specials[i] : specials[i];
            check_general(v, &declined);
            check_general(nextafter(v, INFINITY), &declined);
            check_general(nextafter(v, -INFINITY), &declined);
        }
    /* Every power of ten in range and its neighbours: where the exponent
     * estimate is off and the styles change. */
    for (int e = -18; e <= 22; e++) {
        double v = pow(10.0, e);
        for (int k = -3; k <= 3; k++) {
            double u = v;
            for (int j = 0; j < (k < 0 ? -k : k); j++)
                u = nextafter(u, k < 0 ? 0.0 : INFINITY);
            check_general(u, &declined);
        }
    }
    /* Six-digit midpoints d.dddd5 x 10^e, their neighbours, and the values
     * that round up into a seventh digit (9.999995 x 10^e). */
    for (long k = 0; k < count / 10; k++) {
        int e = -16 + (int)(rng_next() % 37);
        double m = (double)(100000 + rng_next() % 900000) + 0.5;
        if (k % 7 == 0)
            m = 999999.5;
        double v = m * pow(10.0, e - 5);
        check_general(v, &declined);
        check_general(nextafter(v, INFINITY), &declined);
        check_general(nextafter(v, -INFINITY), &declined);
    }
    /* Random bit patterns: every exponent, NaNs and infinities included. */
    for (long k = 0; k < count; k++) {
        uint64_t bits = rng_next();
        double v;
        memcpy(&v, &bits, sizeof v);
        check_general(v, &declined);
    }
    /* Ordinary coordinates and velocities take the fast path. */
    long ordinary_declined = 0;
    for (long k = 0; k < count; k++) {
        double v = rng_uniform(-50.0, 50.0);
        if (k % 3 == 0)
            v *= 1e-3;
        check_general(v, &ordinary_declined);
    }
    CHECK(ordinary_declined * 1000 < count, "%%g: %ld of %ld ordinary values declined",
          ordinary_declined, count);
    CHECK(lfw_put_general((char[LFW_GENERAL_MAX]){0}, NAN) == 0, "%%g: NaN accepted");
    CHECK(lfw_put_general((char[LFW_GENERAL_MAX]){0}, -INFINITY) == 0, "%%g: -inf accepted");
    /* Whole lines, with ids and types of every width and the fallback. */
    for (long k = 0; k < count / 10; k++) {
        double x[3];
        for (int d = 0; d < 3; d++)
            x[d] = rng_uniform(-1e3, 1e3) * pow(10.0, (double)(int)(rng_next() % 9) - 6);
        if (k % 101 == 0)
            x[k % 3] = k % 2 ? NAN : -INFINITY;
        if (k % 103 == 0)
            x[k % 3] = 2.5e-5; /* not a double midpoint: the fast path */
        int id = (int)(rng_next() % 2 ? rng_next() % 1000 : rng_next());
        check_default_line(id, (int)(rng_next() % 100) - 2, x);
    }
    const double big[3] = {-DBL_MAX, -5e-324, -1.23456e-300};
    check_default_line(INT32_MIN, INT32_MIN, big);
    printf("test_dump_text: %%g: %ld special/midpoint/random values left to printf, %ld of %ld "
           "ordinary ones\n",
           declined, ordinary_declined, count);
}

int main(int argc, char **argv)
{
    uint64_t seed = 20220106;
    long count = 200000;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--seed"))
            seed = strtoull(argv[i + 1], NULL, 10);
        else if (!strcmp(argv[i], "--count"))
            count = strtol(argv[i + 1], NULL, 10);
    }
    rng_state = seed;

    /* Whole lines, every precision, boxes of several sizes, atoms a little
     * outside the box and some far beyond the width. */
    const double sides[] = {1.0, 8.4, 16.8, 33.6, 99.4, 1234.5};
    for (size_t b = 0; b < sizeof sides / sizeof sides[0]; b++) {
        lfw_box_t box = {{0, 0, 0}, {sides[b], sides[b], sides[b] * 0.5}};
        for (int p = LFW_TEXT_PRECISION_MIN; p <= LFW_TEXT_PRECISION_MAX; p++) {
            lfw_text_format_t fmt;
            CHECK(lfw_text_format_init(&fmt, 256000, 3, &box, p) == 0, "format init");
            for (long k = 0; k < count / 100; k++) {
                double x[3];
                for (int d = 0; d < 3; d++)
                    x[d] = rng_uniform(-0.1 * sides[b], 1.1 * sides[b]);
                if (k % 97 == 0)
                    x[k % 3] = (k % 2 ? -1 : 1) * fmt.coord_limit * rng_uniform(0.999, 1.5);
                check_line(&fmt, 1 + (int64_t)(rng_next() % 256000), 1 + (int)(rng_next() % 3), x);
            }
        }
    }

    /* Special values, precision 6: negative zero and tiny negatives print
     * "-0.000000"; midpoints and values one ulp around them. */
    long declined = 0;
    const double specials[] = {0.0, -0.0, 1e-300, -1e-300, -4e-7, 4e-7, 5e-7, -5e-7, 6e-7,
                               0.0000005, 1.0000005, 2.0000005, 0.1234565, 99.9999995, -99.9999995,
                               0.125, 0.375, 1.5e-6, 2.5e-6, 1e15, -1e15, DBL_MIN, -DBL_MIN};
    for (size_t i = 0; i < sizeof specials / sizeof specials[0]; i++)
        for (int p = 1; p <= LFW_FIXED_PRECISION_MAX; p++) {
            double v = specials[i];
            check_fixed(40, p, v, &declined);
            check_fixed(40, p, nextafter(v, INFINITY), &declined);
            check_fixed(40, p, nextafter(v, -INFINITY), &declined);
        }
    /* Midpoints k + 0.5 at the last decimal, and their neighbours. */
    for (long k = 0; k < count / 10; k++) {
        int p = 1 + (int)(rng_next() % LFW_FIXED_PRECISION_MAX);
        double v = ((double)(rng_next() % 100000000) + 0.5) / pow(10.0, p);
        if (rng_next() % 2)
            v = -v;
        check_fixed(40, p, v, &declined);
        check_fixed(40, p, nextafter(v, INFINITY), &declined);
        check_fixed(40, p, nextafter(v, -INFINITY), &declined);
    }
    /* NaN and infinities are always left to printf; too narrow a width too. */
    char out[64];
    CHECK(lfw_put_fixed(out, 40, 6, NAN) == 0, "NaN accepted");
    CHECK(lfw_put_fixed(out, 40, 6, INFINITY) == 0, "inf accepted");
    CHECK(lfw_put_fixed(out, 5, 6, 1.0) == 0, "1.000000 fitted into 5 columns");
    CHECK(lfw_put_int(out, 2, 100) == 0, "100 fitted into 2 columns");
    CHECK(lfw_put_int(out, 5, -42) == 5 && !memcmp(out, "  -42", 5), "-42 in 5 columns");
    CHECK(lfw_put_int(out, 20, INT64_MIN) == 20 && !memcmp(out, "-9223372036854775808", 20),
          "INT64_MIN");

    /* Ordinary coordinates take the fast path. */
    long ordinary_declined = 0;
    for (long k = 0; k < count; k++)
        check_fixed(12, 6, rng_uniform(-50.0, 50.0), &ordinary_declined);
    CHECK(ordinary_declined * 1000 < count, "%ld of %ld ordinary values declined",
          ordinary_declined, count);

    check_default_format(count);

    printf("test_dump_text: %d failures; %ld near-midpoint/special values left to printf, "
           "%ld of %ld ordinary ones\n",
           failures, declined, ordinary_declined, count);
    return failures ? 1 : 0;
}
