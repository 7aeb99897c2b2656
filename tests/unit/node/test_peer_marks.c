/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A writer reads a peer's heap only where the peer marked its chunks
 * committed (node/node_area.c: fwdioi_area_mark_chunks,
 * fwdioi_area_peer_committed, fwdioi_area_peer_bytes): ranges in committed
 * chunks are readable, a range touching a chunk given back or never
 * committed is not, nor one outside the heap; marks cleared when chunks go
 * back. No MPI, no shared memory: the segment is a buffer.
 */
#include "node/node_area.h"
#include "unit_check.h"

#include <stdlib.h>
#include <string.h>

int main(void)
{
    const uint64_t chunk = FWDIOI_AREA_CHUNK, heap_size = 8 * chunk;
    const uint64_t marks_off = 256, heap_off = 4096;
    uint8_t *seg = aligned_alloc(64, heap_off + heap_size);
    CHECK(seg != NULL);
    if (!seg)
        return unit_result("test_peer_marks");
    memset(seg, 0, heap_off);
    uint8_t *segs[1] = {seg};
    fwdioi_area_t a;
    memset(&a, 0, sizeof a);
    a.enabled = 1;
    a.seg = segs;
    a.marks_off = marks_off;
    a.heap_off = heap_off;
    a.heap_size = heap_size;
    a.seg_size = heap_off + heap_size;
    uint8_t *heap = seg + heap_off;

    /* nothing committed: nothing readable */
    CHECK(!fwdioi_area_peer_committed(&a, 0, heap, 1));
    CHECK(fwdioi_area_peer_bytes(&a, 0, heap_off, 16) == NULL);
    /* chunks 1 and 2 committed */
    fwdioi_area_mark_chunks(&a, chunk, 2 * chunk, 1);
    CHECK(fwdioi_area_peer_committed(&a, 0, heap + chunk, 2 * chunk));
    CHECK(fwdioi_area_peer_committed(&a, 0, heap + chunk + 100, 0));
    CHECK(fwdioi_area_peer_bytes(&a, 0, heap_off + chunk + 8, chunk) == heap + chunk + 8);
    CHECK(!fwdioi_area_peer_committed(&a, 0, heap + chunk - 1, 2)); /* starts in chunk 0 */
    CHECK(!fwdioi_area_peer_committed(&a, 0, heap + 3 * chunk - 1, 2)); /* ends in chunk 3 */
    CHECK(fwdioi_area_peer_bytes(&a, 0, heap_off + 2 * chunk, chunk + 1) == NULL);
    /* outside the heap, or running off its end */
    CHECK(!fwdioi_area_peer_committed(&a, 0, seg, 1));
    CHECK(!fwdioi_area_peer_committed(&a, 0, heap + heap_size, 0));
    CHECK(fwdioi_area_peer_bytes(&a, 0, heap_off - 8, 16) == NULL);
    fwdioi_area_mark_chunks(&a, 7 * chunk, chunk, 1);
    CHECK(fwdioi_area_peer_committed(&a, 0, heap + 7 * chunk, chunk));
    CHECK(!fwdioi_area_peer_committed(&a, 0, heap + 7 * chunk, chunk + 1));
    CHECK(fwdioi_area_peer_bytes(&a, 0, heap_off + 7 * chunk, UINT64_MAX) == NULL);
    /* chunk 2 given back: chunk 1 still readable, 2 not */
    fwdioi_area_mark_chunks(&a, 2 * chunk, chunk, 0);
    CHECK(fwdioi_area_peer_committed(&a, 0, heap + chunk, chunk));
    CHECK(!fwdioi_area_peer_committed(&a, 0, heap + 2 * chunk, 1));
    CHECK(!fwdioi_area_peer_committed(&a, 0, heap + chunk, chunk + 1));
    /* a last chunk shorter than the others (a heap that is not a whole
     * number of chunks) */
    a.heap_size = heap_size - 100;
    a.seg_size = heap_off + a.heap_size;
    CHECK(fwdioi_area_peer_committed(&a, 0, heap + 7 * chunk, chunk - 100));
    CHECK(!fwdioi_area_peer_committed(&a, 0, heap + 7 * chunk, chunk - 99));
    free(seg);
    return unit_result("test_peer_marks");
}
