/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * poll_spin_us chosen per node: spinning only where every rank of the node
 * has a CPU, never where the CPUs are unknown, and a configured value always
 * wins (1 keeps it off, anything else is taken as it is).
 */
#include "config.h"

#include <stdio.h>

static int failures;

static void expect(unsigned configured, int ranks, int cpus, unsigned want)
{
    unsigned got = fwdioi_spin_choice(configured, ranks, cpus);
    if (got != want) {
        fprintf(stderr, "configured %u, %d ranks on %d CPUs: got %u, want %u\n", configured,
                ranks, cpus, got, want);
        failures++;
    }
}

int main(void)
{
    const unsigned on = FWDIO_AUTO_POLL_SPIN_US, off = 1;
    expect(0, 1, 1, on);    /* one rank, one CPU */
    expect(0, 2, 2, on);    /* a CPU per rank */
    expect(0, 64, 128, on); /* hyperthreads spare */
    expect(0, 3, 2, off);   /* oversubscribed */
    expect(0, 8, 2, off);   /* the test suite's 8 ranks on 2 cores */
    expect(0, 2, -1, off);  /* CPUs unknown */
    expect(0, 2, 0, off);
    expect(0, 0, 4, off);   /* no ranks counted: nothing to decide on */
    expect(1, 2, 2, off);   /* off, whatever the node */
    expect(200, 8, 2, 200); /* set: taken as it is, oversubscribed or not */
    expect(50, 1, 64, 50);
    if (failures)
        return 1;
    printf("spin choice: 11 cases ok\n");
    return 0;
}
