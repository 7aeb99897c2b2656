/* SPDX-License-Identifier: BSD-3-Clause */
/* The checks of the unit tests that run without MPI: a failed CHECK says
 * where and what, and the test goes on; unit_result ends it. */
#ifndef FWDIO_UNIT_CHECK_H
#define FWDIO_UNIT_CHECK_H

#include <stdio.h>

static int unit_failures;

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);              \
            unit_failures++;                                                                       \
        }                                                                                          \
    } while (0)

/** main's return value: 0 when every check passed; says which test failed. */
static inline int unit_result(const char *test)
{
    if (unit_failures) {
        fprintf(stderr, "%s: %d check(s) failed\n", test, unit_failures);
        return 1;
    }
    printf("%s: ok\n", test);
    return 0;
}

#endif
