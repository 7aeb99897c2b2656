/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The budgets' defaults that depend on the node (runtime/config.c): the
 * default staging_buffer is a share of the node's staging, so the staging of
 * a node does not grow with its ranks, and what follows staging (combine_size,
 * shared_buffer) follows the share; a staging_buffer set explicitly keeps its
 * meaning, a budget per rank, whatever the ranks per node.
 */
#include "config.h"
#include "node_memory.h"
#include "runtime.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static int failures, cases;

#define MiB ((uint64_t)1 << 20)
#define GiB ((uint64_t)1 << 30)

static void expect_u64(const char *what, uint64_t got, uint64_t want)
{
    cases++;
    if (got != want) {
        fprintf(stderr, "%s: got %" PRIu64 ", want %" PRIu64 "\n", what, got, want);
        failures++;
    }
}

static void staging(uint64_t node_memory, int ranks, uint64_t want)
{
    char what[96];
    snprintf(what, sizeof what, "default staging, %" PRIu64 " MiB node, %d ranks",
             node_memory / MiB, ranks);
    expect_u64(what, fwdioi_default_staging_buffer(node_memory, ranks), want);
}

/* The configuration resolved for `ranks` ranks on the node from `in`. */
static fwdio_config_t resolved(fwdio_config_t in, int ranks)
{
    fwdio_config_t out;
    if (fwdioi_config_resolve(&in, ranks, &out) != FWDIO_OK) {
        fprintf(stderr, "fwdioi_config_resolve refused a good configuration\n");
        failures++;
    }
    return out;
}

int main(void)
{
    /* 24 GiB, this machine: the node's staging is 512 MiB (the cap) */
    staging(24 * GiB, 1, 64 * MiB);
    staging(24 * GiB, 2, 64 * MiB);
    staging(24 * GiB, 8, 64 * MiB);
    staging(24 * GiB, 9, 512 * MiB / 9);
    staging(24 * GiB, 64, 8 * MiB);
    staging(24 * GiB, 128, 4 * MiB);
    staging(24 * GiB, 256, 2 * MiB);
    staging(24 * GiB, 512, 1 * MiB);
    staging(24 * GiB, 1024, 1 * MiB); /* the floor */
    /* a small node: 1/32 of its memory */
    staging(4 * GiB, 2, 64 * MiB);
    staging(4 * GiB, 8, 16 * MiB);
    staging(4 * GiB, 64, 2 * MiB);
    staging(4 * GiB, 256, 1 * MiB);
    /* unknown memory or ranks: the cap, one rank */
    staging(0, 128, 4 * MiB);
    staging(24 * GiB, 0, 64 * MiB);
    staging(0, 0, 64 * MiB);
    /* the node's staging does not grow with its ranks up to the floor */
    for (int n = 1; n <= 512; n++) {
        uint64_t node = (uint64_t)n * fwdioi_default_staging_buffer(256 * GiB, n);
        cases++;
        if (node > FWDIO_DEFAULT_NODE_STAGING_CAP) {
            fprintf(stderr, "%d ranks hold %" PRIu64 " bytes of staging, over the node's %zu\n",
                    n, node, FWDIO_DEFAULT_NODE_STAGING_CAP);
            failures++;
        }
    }

    /* resolved: the default follows the ranks of the node, and what is
     * derived from staging follows it */
    fwdio_config_t none;
    memset(&none, 0, sizeof none); /* fwdio_config_init, which lives in the library */
    uint64_t mem = fwdioi_node_memory();
    for (int ranks = 1; ranks <= 256; ranks *= 2) {
        fwdio_config_t c = resolved(none, ranks);
        uint64_t want = fwdioi_default_staging_buffer(mem, ranks);
        expect_u64("resolved staging", c.staging_buffer, want);
        expect_u64("resolved shared_buffer", c.shared_buffer,
                   want + c.max_message_size + FWDIOI_MESSAGE_HEADROOM);
        expect_u64("resolved combine_size", c.combine_size,
                   want < FWDIO_DEFAULT_COMBINE_SIZE ? want : FWDIO_DEFAULT_COMBINE_SIZE);
    }
    /* set explicitly: per rank, whatever the ranks per node */
    fwdio_config_t set = none;
    set.staging_buffer = 96 * MiB;
    for (int ranks = 1; ranks <= 256; ranks *= 4) {
        fwdio_config_t c = resolved(set, ranks);
        expect_u64("explicit staging", c.staging_buffer, 96 * MiB);
        expect_u64("explicit staging's shared_buffer", c.shared_buffer,
                   96 * MiB + c.max_message_size + FWDIOI_MESSAGE_HEADROOM);
    }
    /* a small explicit staging lowers combine_size, at any ranks per node */
    set.staging_buffer = 128 << 10;
    expect_u64("combine_size under a small staging", resolved(set, 128).combine_size, 128 << 10);
    /* shared_buffer and combine_size set explicitly are not the default's */
    set = none;
    set.shared_buffer = 40 * MiB;
    set.combine_size = 64 << 10;
    /* local_wait: 0 is the default, off stays off, a value stands */
    expect_u64("default local_wait_ms", resolved(none, 4).local_wait_ms,
               FWDIO_DEFAULT_LOCAL_WAIT_MS);
    set.local_wait_ms = FWDIO_LOCAL_WAIT_OFF;
    expect_u64("local_wait off", resolved(set, 4).local_wait_ms, FWDIO_LOCAL_WAIT_OFF);
    set.local_wait_ms = 200;
    expect_u64("local_wait 0.2 s", resolved(set, 4).local_wait_ms, 200);
    set.local_wait_ms = 0;
    fwdio_config_t c = resolved(set, 128);
    expect_u64("explicit shared_buffer", c.shared_buffer, 40 * MiB);
    expect_u64("explicit combine_size", c.combine_size, 64 << 10);
    if (failures)
        return 1;
    printf("budget defaults: %d cases ok\n", cases);
    return 0;
}
