/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Checkpoint sets' pure parts (checkpoint/): set names and their paths, the
 * CRC-32 terms that ranks XOR into a file's checksum, the manifest and the
 * damaged manifests it refuses, and which versions retention removes.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "ckpt_keep.h"
#include "ckpt_manifest.h"
#include "ckpt_name.h"
#include "ckpt_sum.h"
#include "unit_check.h"

static void names_and_paths(void)
{
    CHECK(fwdioi_ckpt_name_check("mdlj") == NULL);
    CHECK(fwdioi_ckpt_name_check("run_1.restart-A") == NULL);
    CHECK(fwdioi_ckpt_name_check("") != NULL);
    CHECK(fwdioi_ckpt_name_check(NULL) != NULL);
    CHECK(fwdioi_ckpt_name_check(".hidden") != NULL);
    CHECK(fwdioi_ckpt_name_check("a/b") != NULL);
    CHECK(fwdioi_ckpt_name_check("a b") != NULL);
    CHECK(fwdioi_ckpt_name_check("caf\xc3\xa9") != NULL);
    char longname[FWDIO_CKPT_NAME_MAX + 2];
    memset(longname, 'x', sizeof longname);
    longname[FWDIO_CKPT_NAME_MAX] = '\0';
    CHECK(fwdioi_ckpt_name_check(longname) == NULL);
    longname[FWDIO_CKPT_NAME_MAX] = 'x';
    longname[FWDIO_CKPT_NAME_MAX + 1] = '\0';
    CHECK(fwdioi_ckpt_name_check(longname) != NULL);

    char p[64];
    CHECK(fwdioi_ckpt_path(p, sizeof p, "/d", "ck", 42, FWDIOI_CKPT_DATA) == 0);
    CHECK(strcmp(p, "/d/ck.v42.ckpt") == 0);
    CHECK(fwdioi_ckpt_path(p, sizeof p, NULL, "ck", 0, FWDIOI_CKPT_MANIFEST) == 0);
    CHECK(strcmp(p, "./ck.v0.manifest") == 0);
    CHECK(fwdioi_ckpt_path(p, sizeof p, "", "ck", UINT64_MAX, FWDIOI_CKPT_DATA) == 0);
    CHECK(strcmp(p, "./ck.v18446744073709551615.ckpt") == 0);
    CHECK(fwdioi_ckpt_path(p, 10, "/d", "ck", 42, FWDIOI_CKPT_DATA) == -1);
    CHECK(fwdioi_ckpt_path(p, sizeof p, "/d", "a/b", 42, FWDIOI_CKPT_DATA) == -1);

    uint64_t v = 7;
    CHECK(fwdioi_ckpt_parse_entry("ck.v42.ckpt", "ck", FWDIOI_CKPT_DATA, &v) && v == 42);
    CHECK(fwdioi_ckpt_parse_entry("ck.v0.manifest", "ck", FWDIOI_CKPT_MANIFEST, &v) && v == 0);
    CHECK(fwdioi_ckpt_parse_entry("ck.v18446744073709551615.ckpt", "ck", FWDIOI_CKPT_DATA, &v) &&
          v == UINT64_MAX);
    /* the other kind, another set, a prefix of the name, temporaries,
     * non-canonical and overflowing versions */
    CHECK(!fwdioi_ckpt_parse_entry("ck.v42.ckpt", "ck", FWDIOI_CKPT_MANIFEST, &v));
    CHECK(!fwdioi_ckpt_parse_entry("ckx.v42.ckpt", "ck", FWDIOI_CKPT_DATA, &v));
    CHECK(!fwdioi_ckpt_parse_entry("ck.v42.ckpt", "c", FWDIOI_CKPT_DATA, &v));
    CHECK(!fwdioi_ckpt_parse_entry(".ck.v42.ckpt.fwdio-tmp", "ck", FWDIOI_CKPT_DATA, &v));
    CHECK(!fwdioi_ckpt_parse_entry("ck.v042.ckpt", "ck", FWDIOI_CKPT_DATA, &v));
    CHECK(!fwdioi_ckpt_parse_entry("ck.v.ckpt", "ck", FWDIOI_CKPT_DATA, &v));
    CHECK(!fwdioi_ckpt_parse_entry("ck.v-1.ckpt", "ck", FWDIOI_CKPT_DATA, &v));
    CHECK(!fwdioi_ckpt_parse_entry("ck.v18446744073709551616.ckpt", "ck", FWDIOI_CKPT_DATA, &v));
    /* names holding ".v": parsed by the set's own name */
    CHECK(fwdioi_ckpt_parse_entry("a.v1.v2.ckpt", "a.v1", FWDIOI_CKPT_DATA, &v) && v == 2);
    CHECK(!fwdioi_ckpt_parse_entry("a.v1.v2.ckpt", "a", FWDIOI_CKPT_DATA, &v));
}

static uint32_t whole_crc(const unsigned char *b, size_t n)
{
    return (uint32_t)crc32(crc32(0L, Z_NULL, 0), b, (uInt)n);
}

static void checksum_terms(void)
{
    static unsigned char zeros[5000];
    for (size_t n = 0; n < sizeof zeros; n += 997)
        CHECK(fwdioi_ckpt_crc_zeros(n) == whole_crc(zeros, n));
    unsigned char *mib = calloc((1u << 20) + 3, 1); /* and past a 16-bit length */
    CHECK(mib && fwdioi_ckpt_crc_zeros((1u << 20) + 3) == whole_crc(mib, (1u << 20) + 3));
    free(mib);
    /* A file cut into pieces in random places, some left as holes (zeros),
     * terms XORed in a shuffled order: the CRC of the whole file. */
    unsigned seed = 12345;
    for (int round = 0; round < 50; round++) {
        size_t size = (size_t)(rand_r(&seed) % 20000);
        unsigned char *file = calloc(size ? size : 1, 1);
        uint32_t terms = 0;
        for (size_t off = 0; off < size;) {
            size_t len = 1 + (size_t)rand_r(&seed) % 3000;
            if (len > size - off)
                len = size - off;
            if (rand_r(&seed) % 4) { /* written; else a hole */
                for (size_t i = 0; i < len; i++)
                    file[off + i] = (unsigned char)rand_r(&seed);
                terms ^= fwdioi_ckpt_sum_bytes(file + off, len, off, size);
            }
            off += len;
        }
        CHECK(fwdioi_ckpt_sum_final(terms, size) == whole_crc(file, size));
        if (size) { /* one flipped bit, one piece missing: another CRC */
            file[size / 2] ^= 0x10;
            CHECK(fwdioi_ckpt_sum_final(terms, size) != whole_crc(file, size));
        }
        free(file);
    }
    /* The order of the XOR does not matter, and a piece's term depends on
     * where it is. */
    const unsigned char a[3] = {1, 2, 3};
    CHECK(fwdioi_ckpt_sum_bytes(a, 3, 0, 10) != fwdioi_ckpt_sum_bytes(a, 3, 1, 10));
    /* Sizes past 4 GiB go through zlib's 64-bit lengths. */
    uint64_t big = ((uint64_t)5 << 30) + 3;
    uint32_t t = fwdioi_ckpt_sum_bytes(a, 3, big - 3, big);
    CHECK(fwdioi_ckpt_sum_final(t, big) ==
          (uint32_t)crc32_combine(fwdioi_ckpt_crc_zeros(big - 3), whole_crc(a, 3), 3));
}

static void manifests(void)
{
    fwdioi_ckpt_manifest_t m = {.name = "ck", .version = 12, .size = 1234567, .crc = 0xdeadbeef};
    char text[FWDIOI_CKPT_MANIFEST_MAX];
    size_t len = fwdioi_ckpt_manifest_format(&m, text, sizeof text);
    CHECK(len > 0);
    const char head[] = "fwdio-ckpt 1\nname ck\nversion 12\nsize 1234567\ncrc32 deadbeef\nend ";
    CHECK(len > sizeof head && memcmp(text, head, sizeof head - 1) == 0);
    fwdioi_ckpt_manifest_t back;
    CHECK(fwdioi_ckpt_manifest_parse(text, len, &back) == NULL);
    CHECK(strcmp(back.name, "ck") == 0 && back.version == 12 && back.size == 1234567 &&
          back.crc == 0xdeadbeef);
    /* Every truncation is refused, and so is every single flipped bit. */
    for (size_t cut = 0; cut < len; cut++)
        CHECK(fwdioi_ckpt_manifest_parse(text, cut, &back) != NULL);
    for (size_t i = 0; i < len; i++)
        for (int bit = 0; bit < 8; bit++) {
            char bad[FWDIOI_CKPT_MANIFEST_MAX];
            memcpy(bad, text, len);
            bad[i] ^= (char)(1 << bit);
            CHECK(fwdioi_ckpt_manifest_parse(bad, len, &back) != NULL);
        }
    /* Bytes after the end line, zeros (a torn write), another magic. */
    char extra[FWDIOI_CKPT_MANIFEST_MAX + 1];
    memcpy(extra, text, len);
    extra[len] = '\n';
    CHECK(fwdioi_ckpt_manifest_parse(extra, len + 1, &back) != NULL);
    char zeros[64] = {0};
    CHECK(fwdioi_ckpt_manifest_parse(zeros, sizeof zeros, &back) != NULL);
    const char other[] = "fwdio-ckpt 2\nname ck\n";
    CHECK(fwdioi_ckpt_manifest_parse(other, sizeof other - 1, &back) != NULL);
    /* A hand-made manifest with a right self-check but a bad field. */
    const char *bodies[] = {
        "fwdio-ckpt 1\nname .x\nversion 1\nsize 1\ncrc32 00000000\n",
        "fwdio-ckpt 1\nname x\nversion 01\nsize 1\ncrc32 00000000\n",
        "fwdio-ckpt 1\nname x\nversion 1\nsize -1\ncrc32 00000000\n",
        "fwdio-ckpt 1\nname x\nversion 1\nsize 1\ncrc32 0000000\n",
        "fwdio-ckpt 1\nname x\nversion 1\nsize 1\ncrc32 DEADBEEF\n",
        "fwdio-ckpt 1\nversion 1\nname x\nsize 1\ncrc32 00000000\n",
    };
    for (size_t i = 0; i < sizeof bodies / sizeof bodies[0]; i++) {
        char t[256];
        size_t b = strlen(bodies[i]);
        memcpy(t, bodies[i], b);
        int n = snprintf(t + b, sizeof t - b, "end %08x\n",
                         (unsigned)whole_crc((const unsigned char *)bodies[i], b));
        CHECK(fwdioi_ckpt_manifest_parse(t, b + (size_t)n, &back) != NULL);
    }
    /* And the same builder with good fields parses (the loop above fails
     * for the fields, not the builder). */
    const char good[] = "fwdio-ckpt 1\nname x\nversion 1\nsize 1\ncrc32 0000abcd\n";
    char t[256];
    memcpy(t, good, sizeof good - 1);
    int n = snprintf(t + sizeof good - 1, sizeof t - sizeof good + 1, "end %08x\n",
                     (unsigned)whole_crc((const unsigned char *)good, sizeof good - 1));
    CHECK(fwdioi_ckpt_manifest_parse(t, sizeof good - 1 + (size_t)n, &back) == NULL);
    CHECK(back.crc == 0xabcd);
    /* A bad name is not formatted. */
    fwdioi_ckpt_manifest_t bad = {.name = "a/b"};
    CHECK(fwdioi_ckpt_manifest_format(&bad, text, sizeof text) == 0);
    CHECK(fwdioi_ckpt_manifest_format(&m, text, 20) == 0);
}

static void retention(void)
{
    uint64_t v[] = {3, 10, 7, 1, 10, 5};
    size_t n = 6;
    size_t first = fwdioi_ckpt_keep_choose(v, &n, 2);
    CHECK(n == 5 && v[0] == 10 && v[1] == 7 && v[2] == 5 && v[3] == 3 && v[4] == 1);
    CHECK(first == 2); /* 5, 3, 1 go */
    uint64_t w[] = {4, 9};
    n = 2;
    CHECK(fwdioi_ckpt_keep_choose(w, &n, 0) == 1 && w[0] == 9); /* keep 0: the newest stays */
    n = 2;
    CHECK(fwdioi_ckpt_keep_choose(w, &n, 5) == 2); /* fewer than keep: none goes */
    n = 0;
    CHECK(fwdioi_ckpt_keep_choose(NULL, &n, 2) == 0 && n == 0); /* an empty directory */
    uint64_t big[] = {UINT64_MAX, 0, UINT64_MAX - 1};
    n = 3;
    CHECK(fwdioi_ckpt_keep_choose(big, &n, 1) == 1 && big[0] == UINT64_MAX && big[2] == 0);
}

int main(void)
{
    names_and_paths();
    checksum_terms();
    manifests();
    retention();
    return unit_result("test_ckpt_parts");
}
