/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The node-local tier's count of local space (local_capacity) in the
 * node-shared area (fwdioi_area_local_take / _give, node/node_area.c): with
 * the area, one count in local rank 0's segment header that never passes the
 * capacity, whichever rank takes (two "ranks" here: two areas mapping one
 * header); without it, each rank's own count against its share. No MPI,
 * no shared memory: the header is a buffer.
 */
#include "node/node_area.h"
#include "unit_check.h"

#include <string.h>

int main(void)
{
    enum { MIB = 1 << 20 };
    _Alignas(64) static uint8_t header[4096];
    uint8_t *segs[1] = {header};
    fwdioi_area_t a, b;
    memset(&a, 0, sizeof a);
    a.enabled = 1;
    a.seg = segs;
    b = a; /* another rank of the node: the same count */
    uint64_t used = 1, peak = 1;
    fwdioi_area_local_usage(&a, &used, &peak);
    CHECK(used == 0 && peak == 0);
    /* capacity 4 MiB: 3 MiB fit, then 1.5 MiB more do not, 1 MiB does */
    CHECK(fwdioi_area_local_take(&a, 4 * MIB, 0, 3 * MIB) == 0);
    CHECK(fwdioi_area_local_take(&b, 4 * MIB, 0, 3 * MIB / 2) != 0);
    CHECK(fwdioi_area_local_take(&b, 4 * MIB, 0, MIB) == 0);
    CHECK(fwdioi_area_local_take(&a, 4 * MIB, 0, 1) != 0);
    fwdioi_area_local_usage(&b, &used, &peak);
    CHECK(used == 4 * MIB && peak == 4 * MIB);
    fwdioi_area_local_give(&a, 3 * MIB);
    CHECK(fwdioi_area_local_take(&b, 4 * MIB, 0, 3 * MIB / 2) == 0);
    fwdioi_area_local_usage(&a, &used, &peak);
    CHECK(used == 5 * MIB / 2 && peak == 4 * MIB);
    CHECK(fwdioi_area_local_take(&a, 4 * MIB, 0, UINT64_MAX) != 0);
    /* without the area: the rank's share, its own count */
    fwdioi_area_t off;
    memset(&off, 0, sizeof off);
    CHECK(fwdioi_area_local_take(&off, 4 * MIB, MIB, MIB) == 0);
    CHECK(fwdioi_area_local_take(&off, 4 * MIB, MIB, 1) != 0);
    fwdioi_area_local_give(&off, MIB);
    CHECK(fwdioi_area_local_take(&off, 4 * MIB, MIB, MIB / 2) == 0);
    fwdioi_area_local_usage(&a, &used, &peak);
    CHECK(used == 5 * MIB / 2);
    return unit_result("test_local_count");
}
