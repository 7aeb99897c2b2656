/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The node-local tier's pure parts: local_dir's "%h" expansion and the name
 * of a writer's local file (local_name.c), and the index at the end of a
 * local file (local_index.c): what is encoded decodes the same, from the
 * tail of a longer file too, and any damage (a flipped byte, a cut, runs
 * out of order or past the size) is refused rather than trusted.
 */
#include "local/local_index.h"
#include "local/local_name.h"
#include "unit_check.h"

#include <stdlib.h>
#include <string.h>

static void test_expand(void)
{
    char out[64];
    CHECK(fwdioi_local_expand("/dev/shm/ck-%h", "node7", out, sizeof out) == 0);
    CHECK(!strcmp(out, "/dev/shm/ck-node7"));
    CHECK(fwdioi_local_expand("%h/%h", "a", out, sizeof out) == 0 && !strcmp(out, "a/a"));
    CHECK(fwdioi_local_expand("/x/100%%/%h", "h", out, sizeof out) == 0 &&
          !strcmp(out, "/x/100%/h"));
    CHECK(fwdioi_local_expand("/plain", "h", out, sizeof out) == 0 && !strcmp(out, "/plain"));
    /* typos and what does not fit are refused, with an empty result */
    CHECK(fwdioi_local_expand("/x/%d", "h", out, sizeof out) == -1 && out[0] == '\0');
    CHECK(fwdioi_local_expand("/x/%", "h", out, sizeof out) == -1 && out[0] == '\0');
    CHECK(fwdioi_local_expand("", "h", out, sizeof out) == -1);
    CHECK(fwdioi_local_expand(NULL, "h", out, sizeof out) == -1);
    char small[8];
    CHECK(fwdioi_local_expand("/abc%h", "host", small, sizeof small) == -1 && small[0] == '\0');
    CHECK(fwdioi_local_expand("/abc%h", "hos", small, sizeof small) == 0 &&
          !strcmp(small, "/abchos"));
}

static void test_file_name(void)
{
    char a[256], b[256], c[256];
    CHECK(fwdioi_local_file_name("/l", "/t/ckpt.dat", 3, a, sizeof a) == 0);
    CHECK(!strncmp(a, "/l/ckpt.dat.", 12) && strstr(a, ".w3.fwdio-local"));
    /* a trailing slash adds none; the same path gives the same name */
    CHECK(fwdioi_local_file_name("/l/", "/t/ckpt.dat", 3, b, sizeof b) == 0 && !strcmp(a, b));
    /* same name in another directory: another local file */
    CHECK(fwdioi_local_file_name("/l", "/u/ckpt.dat", 3, c, sizeof c) == 0 && strcmp(a, c));
    CHECK(fwdioi_local_file_name("/l", "/t/ckpt.dat", 4, c, sizeof c) == 0 && strcmp(a, c));
    CHECK(fwdioi_local_file_name("/l", "/t/ckpt.dat", 3, c, 20) == -1);
}

static fwdioi_local_index_t sample(fwdioi_local_run_t *runs)
{
    runs[0] = (fwdioi_local_run_t){0, 65536};
    runs[1] = (fwdioi_local_run_t){131072, 65536};
    runs[2] = (fwdioi_local_run_t){262144, 1000};
    fwdioi_local_index_t ix = {.size = 263144,
                               .stripe_size = 65536,
                               .write_size = 16384,
                               .writer = 1,
                               .nwriters = 2,
                               .version = 42,
                               .created_ns = 1234567890123ull,
                               .path = "/scratch/run/ckpt.0007",
                               .nruns = 3,
                               .runs = runs};
    return ix;
}

static void test_index_roundtrip(void)
{
    fwdioi_local_run_t runs[3];
    fwdioi_local_index_t ix = sample(runs);
    CHECK(fwdioi_local_index_offset(ix.size) == 266240); /* 65 x 4 KiB */
    CHECK(fwdioi_local_index_offset(0) == 0 && fwdioi_local_index_offset(4096) == 4096);
    size_t len = fwdioi_local_index_len(&ix);
    CHECK(len % 8 == 0);
    /* the index ends a longer file: decoded from the file's tail */
    size_t pre = 100;
    uint8_t *file = calloc(1, pre + len);
    fwdioi_local_index_encode(&ix, file + pre);
    fwdioi_local_index_t got;
    CHECK(fwdioi_local_index_decode(file, pre + len, &got) == 0);
    CHECK(got.size == ix.size && got.stripe_size == ix.stripe_size &&
          got.write_size == ix.write_size && got.writer == 1 && got.nwriters == 2 &&
          got.version == 42 && got.created_ns == ix.created_ns && !strcmp(got.path, ix.path) &&
          got.nruns == 3);
    for (size_t i = 0; i < 3 && got.nruns == 3; i++)
        CHECK(got.runs[i].offset == runs[i].offset && got.runs[i].len == runs[i].len);
    fwdioi_local_index_free(&got);

    /* any flipped byte of the index is found (magic, lengths or hash) */
    int refused = 0;
    for (size_t i = 0; i < len; i++) {
        file[pre + i] ^= 0x5a;
        fwdioi_local_index_t bad;
        if (fwdioi_local_index_decode(file, pre + len, &bad) != 0)
            refused++;
        else
            fwdioi_local_index_free(&bad);
        file[pre + i] ^= 0x5a;
    }
    CHECK(refused == (int)len);
    /* a cut index (a crash while it was written) */
    fwdioi_local_index_t bad;
    CHECK(fwdioi_local_index_decode(file + pre, len - 1, &bad) != 0);
    CHECK(fwdioi_local_index_decode(file + pre + 1, len - 1, &bad) != 0);
    CHECK(fwdioi_local_index_decode(file, 10, &bad) != 0);
    free(file);
}

static void test_index_bad_runs(void)
{
    fwdioi_local_run_t runs[3];
    fwdioi_local_index_t ix = sample(runs);
    uint8_t *buf = malloc(fwdioi_local_index_len(&ix));
    fwdioi_local_index_t got;
    runs[1].offset = 10; /* overlaps the first: out of order */
    fwdioi_local_index_encode(&ix, buf);
    CHECK(fwdioi_local_index_decode(buf, fwdioi_local_index_len(&ix), &got) != 0);
    ix = sample(runs);
    runs[2].len = 1001; /* past the size */
    fwdioi_local_index_encode(&ix, buf);
    CHECK(fwdioi_local_index_decode(buf, fwdioi_local_index_len(&ix), &got) != 0);
    ix = sample(runs);
    ix.writer = 2; /* not a writer of two */
    fwdioi_local_index_encode(&ix, buf);
    CHECK(fwdioi_local_index_decode(buf, fwdioi_local_index_len(&ix), &got) != 0);
    ix = sample(runs);
    ix.nruns = 0; /* a writer that holds nothing */
    fwdioi_local_index_encode(&ix, buf);
    CHECK(fwdioi_local_index_decode(buf, fwdioi_local_index_len(&ix), &got) == 0 &&
          got.nruns == 0 && got.runs == NULL);
    free(buf);
}

int main(void)
{
    test_expand();
    test_file_name();
    test_index_roundtrip();
    test_index_bad_runs();
    return unit_result("test_local");
}
