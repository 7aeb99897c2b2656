/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The one size grammar (runtime/util/parse_size.h) that the library, the apps, the
 * benchmarks and the tests share: every spelling the three former parsers
 * took still gives the same bytes, and malformed or too large text is refused.
 */
#include "parse_size.h"

#include <stdio.h>

static int failures;

static void expect(const char *text, int ok, uint64_t want)
{
    uint64_t got = 12345;
    int rc = fwdioi_parse_size(text, &got);
    if (ok && (rc != 0 || got != want)) {
        fprintf(stderr, "FAIL: \"%s\": rc %d, %llu bytes; expected %llu\n", text, rc,
                (unsigned long long)got, (unsigned long long)want);
        failures++;
    } else if (!ok && rc == 0) {
        fprintf(stderr, "FAIL: \"%s\" accepted as %llu bytes\n", text, (unsigned long long)got);
        failures++;
    } else if (!ok && got != 12345) {
        fprintf(stderr, "FAIL: \"%s\" refused but the output was changed\n", text);
        failures++;
    }
}

int main(void)
{
    /* plain numbers */
    expect("0", 1, 0);
    expect("123", 1, 123);
    expect("18446744073709551615", 1, UINT64_MAX);
    /* units, either case, powers of 1024 */
    expect("64K", 1, 64u << 10);
    expect("64k", 1, 64u << 10);
    expect("8M", 1, 8u << 20);
    expect("8m", 1, 8u << 20);
    expect("2G", 1, (uint64_t)2 << 30);
    expect("3g", 1, (uint64_t)3 << 30);
    expect("1T", 1, (uint64_t)1 << 40);
    expect("1t", 1, (uint64_t)1 << 40);
    /* optional i and B */
    expect("2GiB", 1, (uint64_t)2 << 30);
    expect("4KiB", 1, 4u << 10);
    expect("4kB", 1, 4u << 10);
    expect("512B", 1, 512);
    expect("1mib", 1, 1u << 20);
    /* blanks around */
    expect("  16M ", 1, 16u << 20);
    expect("\t7\n", 1, 7);
    /* the largest that fits, and one more */
    expect("16777215T", 1, (uint64_t)16777215 << 40);
    expect("16777216T", 0, 0);
    expect("18446744073709551616", 0, 0);
    /* malformed */
    expect("", 0, 0);
    expect("   ", 0, 0);
    expect("K", 0, 0);
    expect("-5", 0, 0);
    expect("+5", 0, 0);
    expect("0x10", 0, 0);
    expect("1.5M", 0, 0);
    expect("8 M", 0, 0);
    expect("8MM", 0, 0);
    expect("8P", 0, 0);
    expect("8iB", 0, 0);
    expect("8Mi B", 0, 0);
    expect("lots", 0, 0);
    uint64_t v;
    if (fwdioi_parse_size(NULL, &v) == 0) {
        fprintf(stderr, "FAIL: NULL accepted\n");
        failures++;
    }
    if (failures == 0)
        printf("test_parse_size: ok\n");
    return failures ? 1 : 0;
}
