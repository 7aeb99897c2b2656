/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Whether a writer whose file does not fit local_capacity waits for room
 * (local_room.c): only while drains in flight or evictions of drained
 * copies can free enough and the limit has not passed; never for a file
 * larger than the limit, with local_wait off, or when what stays counted
 * leaves no room even once every file in flight is drained and every
 * evictable copy evicted.
 */
#include "local/local_room.h"

#include "unit_check.h"

enum { MIB = 1 << 20 };

/* A node with room for 4 MiB, 3 MiB of it used; a 2 MiB file. */
static fwdioi_local_room_in_t base(void)
{
    return (fwdioi_local_room_in_t){.bytes = 2 * MIB, .limit = 4 * MIB, .used = 3 * MIB,
                                    .pending = 3 * MIB, .kept = 0, .waited_ms = 0,
                                    .wait_ms = 10000};
}

static void test_choose(void)
{
    fwdioi_local_room_in_t in = base();
    /* every used byte drains: wait */
    CHECK(fwdioi_local_room_choose(&in) == FWDIOI_ROOM_WAIT);
    in.waited_ms = 9999;
    CHECK(fwdioi_local_room_choose(&in) == FWDIOI_ROOM_WAIT);
    /* the limit passed */
    in.waited_ms = 10000;
    CHECK(fwdioi_local_room_choose(&in) == FWDIOI_ROOM_TIMED_OUT);
    /* off: never waits, whatever is in flight */
    in = base();
    in.wait_ms = FWDIOI_ROOM_NEVER_WAIT;
    CHECK(fwdioi_local_room_choose(&in) == FWDIOI_ROOM_OFF);
    /* larger than the limit: never fits, never waits, even on an empty node */
    in = base();
    in.bytes = 4 * MIB + 1;
    in.used = in.pending = 0;
    CHECK(fwdioi_local_room_choose(&in) == FWDIOI_ROOM_NEVER);
    in.bytes = 4 * MIB; /* exactly the limit: it fits once the node is empty */
    in.used = in.pending = 1;
    CHECK(fwdioi_local_room_choose(&in) == FWDIOI_ROOM_WAIT);
    /* nothing in flight and no drained copy: nothing will free anything */
    in = base();
    in.pending = 0;
    CHECK(fwdioi_local_room_choose(&in) == FWDIOI_ROOM_NOTHING);
    /* nothing in flight, but drained copies that may be evicted for it (the
     * node's, whose ranks evict them when asked): wait for the evictions */
    in.kept = MIB;
    CHECK(fwdioi_local_room_choose(&in) == FWDIOI_ROOM_WAIT);
    in.kept = MIB - 1; /* not enough of them */
    CHECK(fwdioi_local_room_choose(&in) == FWDIOI_ROOM_NOTHING);
    /* 2 MiB that no drain or eviction frees stay: 2 MiB left, just enough;
     * a byte more stays and it can never fit by waiting */
    in = base();
    in.pending = MIB;
    CHECK(fwdioi_local_room_choose(&in) == FWDIOI_ROOM_WAIT);
    in.pending = MIB - 1;
    CHECK(fwdioi_local_room_choose(&in) == FWDIOI_ROOM_NOTHING);
    /* evictable drained copies count as room that can be made */
    in.kept = 1;
    CHECK(fwdioi_local_room_choose(&in) == FWDIOI_ROOM_WAIT);
    /* counters read one after the other may disagree (pending above used) */
    in = base();
    in.pending = 5 * MIB;
    CHECK(fwdioi_local_room_choose(&in) == FWDIOI_ROOM_WAIT);
}

static void test_why(void)
{
    CHECK(fwdioi_local_room_why(FWDIOI_ROOM_TIMED_OUT)[0] != '?');
    CHECK(fwdioi_local_room_why(FWDIOI_ROOM_NEVER)[0] != '?');
    CHECK(fwdioi_local_room_why((fwdioi_local_room_t)99)[0] == '?');
}

int main(void)
{
    test_choose();
    test_why();
    return unit_result("test_local_room");
}
