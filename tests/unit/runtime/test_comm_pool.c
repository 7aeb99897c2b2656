/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The pool of kept communicators (forwarder/session/comm_pool.c): slots made
 * in order and the same for the same choices, the lowest slot of an agreed
 * AND taken, a slot not offered here never taken, all 64 slots made and then
 * none, a reservation hiding idle slots from other offers, only idle
 * communicators released at the end.
 */
#include "comm_pool.h"
#include "unit_check.h"

static int released;
static void release(MPI_Comm *comm)
{
    *comm = MPI_COMM_NULL;
    released++;
}

int main(void)
{
    fwdioi_comm_pool_t p;
    fwdioi_comm_pool_init(&p);
    MPI_Comm c = MPI_COMM_SELF;
    CHECK(fwdioi_comm_pool_offer(&p) == 0);
    CHECK(fwdioi_comm_pool_take(&p, 0, &c) == -1 && c == MPI_COMM_NULL);
    /* two slots made, in order; both given back idle */
    CHECK(fwdioi_comm_pool_make(&p) == 0 && fwdioi_comm_pool_make(&p) == 1);
    CHECK(p.made == 3 && fwdioi_comm_pool_offer(&p) == 0); /* made, not idle yet */
    fwdioi_comm_pool_give(&p, 1, MPI_COMM_WORLD);
    CHECK(fwdioi_comm_pool_offer(&p) == 2);
    /* an agreement naming a slot this rank did not offer takes nothing */
    CHECK(fwdioi_comm_pool_take(&p, 1, &c) == -1 && c == MPI_COMM_NULL);
    fwdioi_comm_pool_give(&p, 0, MPI_COMM_SELF);
    /* the lowest agreed slot is taken, the other stays idle */
    CHECK(fwdioi_comm_pool_take(&p, 3, &c) == 0 && c == MPI_COMM_SELF);
    CHECK(fwdioi_comm_pool_offer(&p) == 2);
    CHECK(fwdioi_comm_pool_take(&p, 2, &c) == 1 && c == MPI_COMM_WORLD);
    CHECK(fwdioi_comm_pool_offer(&p) == 0 && p.comm[1] == MPI_COMM_NULL);
    /* a slot whose file failed is never given back: it stays made, and a
     * new one goes to the next free number */
    CHECK(fwdioi_comm_pool_make(&p) == 2);
    for (int i = 3; i < FWDIOI_COMM_POOL_SLOTS; i++)
        CHECK(fwdioi_comm_pool_make(&p) == i);
    CHECK(~p.made == 0 && fwdioi_comm_pool_make(&p) == -1);
    /* an open's reservation hides the idle slots from another's offer
     * until it gives them back; the agreed one is then taken */
    fwdioi_comm_pool_give(&p, 7, MPI_COMM_SELF);
    fwdioi_comm_pool_give(&p, 9, MPI_COMM_WORLD);
    uint64_t mine = fwdioi_comm_pool_reserve(&p);
    CHECK(mine == ((1ull << 7) | (1ull << 9)) && fwdioi_comm_pool_offer(&p) == 0);
    CHECK(fwdioi_comm_pool_reserve(&p) == 0); /* another open at the same time */
    fwdioi_comm_pool_unreserve(&p, mine);
    CHECK(fwdioi_comm_pool_take(&p, 1ull << 9, &c) == 9 && c == MPI_COMM_WORLD);
    CHECK(fwdioi_comm_pool_offer(&p) == 1ull << 7);
    CHECK(fwdioi_comm_pool_take(&p, 1ull << 7, &c) == 7 && c == MPI_COMM_SELF);
    /* the end releases the idle communicators only */
    fwdioi_comm_pool_give(&p, 63, MPI_COMM_SELF);
    fwdioi_comm_pool_give(&p, 5, MPI_COMM_WORLD);
    fwdioi_comm_pool_drain(&p, release);
    CHECK(released == 2 && p.idle == 0 && p.comm[63] == MPI_COMM_NULL);
    return unit_result("unit_comm_pool");
}
