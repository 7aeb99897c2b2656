/* SPDX-License-Identifier: BSD-3-Clause */
/* Communicators kept for later files (comm_pool.h). */
#include "comm_pool.h"

static uint64_t bit(int slot) { return (uint64_t)1 << slot; }

void fwdioi_comm_pool_init(fwdioi_comm_pool_t *p)
{
    for (int i = 0; i < FWDIOI_COMM_POOL_SLOTS; i++)
        p->comm[i] = MPI_COMM_NULL;
    p->made = p->idle = 0;
}

uint64_t fwdioi_comm_pool_offer(const fwdioi_comm_pool_t *p) { return p->idle; }

int fwdioi_comm_pool_take(fwdioi_comm_pool_t *p, uint64_t agreed, MPI_Comm *comm)
{
    *comm = MPI_COMM_NULL;
    if (agreed == 0)
        return -1;
    int slot = __builtin_ctzll(agreed);
    if (!(p->idle & bit(slot)))
        return -1;
    p->idle &= ~bit(slot);
    *comm = p->comm[slot];
    p->comm[slot] = MPI_COMM_NULL;
    return slot;
}

int fwdioi_comm_pool_make(fwdioi_comm_pool_t *p)
{
    if (~p->made == 0)
        return -1;
    int slot = __builtin_ctzll(~p->made);
    p->made |= bit(slot);
    return slot;
}

uint64_t fwdioi_comm_pool_reserve(fwdioi_comm_pool_t *p)
{
    uint64_t reserved = p->idle;
    p->idle = 0;
    return reserved;
}

void fwdioi_comm_pool_unreserve(fwdioi_comm_pool_t *p, uint64_t reserved) { p->idle |= reserved; }

void fwdioi_comm_pool_give(fwdioi_comm_pool_t *p, int slot, MPI_Comm comm)
{
    p->comm[slot] = comm;
    p->idle |= bit(slot);
}

void fwdioi_comm_pool_drain(fwdioi_comm_pool_t *p, void (*release)(MPI_Comm *comm))
{
    for (int i = 0; i < FWDIOI_COMM_POOL_SLOTS; i++)
        if (p->idle & bit(i))
            release(&p->comm[i]);
    p->idle = 0;
}
