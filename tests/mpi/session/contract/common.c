/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_contract: what its cases share (contract.h): the options of their
 * files, old files written by plain I/O, each rank's share of a file, the
 * status every rank must see.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <unistd.h>

#include "contract.h"
#include "fwdio.h"
#include "mpi_faults.h"
#include "pattern.h"
#include "test_common.h"

const uint64_t SIZE = (1 << 20) + 4321;

void options(fwdio_options_t *o)
{
    fwdio_options_init(o);
    o->stripe_size = STRIPE;
    o->write_size = UNIT;
    o->writers = tc_size > 1 ? 2 : 1;
}

/* Rank 0 writes `path` with the pattern of `seed` by plain I/O (an old file). */
void old_file(const char *path, uint64_t size, uint64_t seed)
{
    if (tc_rank == 0) {
        FILE *out = fopen(path, "wb");
        if (!out) {
            tc_fail("cannot create %s: %s", path, strerror(errno));
        } else {
            uint8_t buf[4096];
            for (uint64_t off = 0; off < size; off += sizeof buf) {
                size_t n = size - off < sizeof buf ? (size_t)(size - off) : sizeof buf;
                pattern_fill(buf, n, off, seed);
                fwrite(buf, 1, n, out);
            }
            fclose(out);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

/* Writes to a file that is known to have failed are refused (EFAILED):
 * expected where an MPI failure is injected. */
int g_writes_may_fail;

/* This rank's share of [0, size): stripe-sized pieces round robin. */
void write_share(fwdio_file_t *f, uint64_t size, uint64_t seed)
{
    int piece = 0;
    for (uint64_t off = 0; off < size; off += STRIPE / 2, piece++) {
        if (piece % tc_size != tc_rank)
            continue;
        uint64_t len = size - off < STRIPE / 2 ? size - off : STRIPE / 2;
        int rc = tc_write_pattern(f, off, len, seed, 0);
        if (!(g_writes_may_fail && rc == FWDIO_EFAILED))
            TC_EXPECT(rc, FWDIO_OK, "write");
    }
}

/* Every rank: the file's status is `want` and its text holds `text`. */
void expect_status(fwdio_file_t *f, int status, int want, const char *text,
                   const char *what)
{
    TC_EXPECT(status, want, what);
    TC_CHECK(tc_all_same(MPI_COMM_WORLD, status), "%s: ranks disagree on the status", what);
    const char *msg = fwdio_file_error(f);
    if (text)
        TC_CHECK(strstr(msg, text) != NULL, "%s: error text \"%s\" does not mention \"%s\"", what,
                 msg, text);
    if (tc_rank == 0)
        tc_note("%s: %s", what, msg);
}

int exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}
