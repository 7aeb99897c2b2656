/* SPDX-License-Identifier: BSD-3-Clause */
/* Pieces that wait for a write unit's buffer (parking.h). */
#include "write/parking.h"

#include <stdlib.h>

/* What malloc keeps beside each block, counted with the records (as assembly.c). */
enum { MALLOC_OVERHEAD = 16 };

/* A unit with parked pieces: its groups, and its neighbours in the order
 * the units parked in. */
typedef struct fwdioi_parked_unit {
    uint64_t start;
    fwdioi_parked_group_t *head, *tail;
    struct fwdioi_parked_unit *prev, *next;
} fwdioi_parked_unit_t;

static void count_map(fwdioi_parking_t *p, size_t before)
{
    p->memory = p->memory - before + fwdioi_u64map_bytes(&p->units);
}

int fwdioi_parking_empty(const fwdioi_parking_t *p) { return p->first == NULL; }

int fwdioi_parking_has(const fwdioi_parking_t *p, uint64_t unit)
{
    return p->first && fwdioi_u64map_get(&p->units, unit) != NULL;
}

fwdioi_parked_msg_t *fwdioi_parking_msg(fwdioi_parking_t *p, const fwdioi_pieces_view_t *v,
                                         fwdioi_hold_t *hold, int source)
{
    if (p->open && p->open->hold == hold)
        return p->open;
    fwdioi_parked_msg_t *m = malloc(sizeof *m);
    if (!m)
        return NULL;
    *m = (fwdioi_parked_msg_t){*v, hold, source, 0};
    hold->refs++;
    p->memory += sizeof *m + MALLOC_OVERHEAD;
    p->msg_bytes += hold->size;
    p->open = m;
    return m;
}

void fwdioi_parking_msg_end(fwdioi_parking_t *p) { p->open = NULL; }

/* A record without groups goes: its hold is the caller's to drop. */
static fwdioi_hold_t *msg_unused(fwdioi_parking_t *p, fwdioi_parked_msg_t *m)
{
    if (m->groups > 0)
        return NULL;
    fwdioi_hold_t *hold = m->hold;
    if (p->open == m)
        p->open = NULL;
    p->memory -= sizeof *m + MALLOC_OVERHEAD;
    p->msg_bytes -= hold->size;
    free(m);
    return hold;
}

int fwdioi_parking_park(fwdioi_parking_t *p, fwdioi_parked_msg_t *msg, uint64_t unit,
                        uint32_t first, uint32_t count, uint64_t packed_at, uint64_t bytes,
                        fwdioi_hold_t **drop)
{
    *drop = NULL;
    fwdioi_parked_group_t *g = malloc(sizeof *g);
    fwdioi_parked_unit_t *u = p->first ? fwdioi_u64map_get(&p->units, unit) : NULL;
    if (g && !u) {
        size_t before = fwdioi_u64map_bytes(&p->units);
        u = malloc(sizeof *u);
        if (u && fwdioi_u64map_put(&p->units, unit, u) != 0) {
            free(u);
            u = NULL;
        }
        count_map(p, before);
        if (u) {
            *u = (fwdioi_parked_unit_t){unit, NULL, NULL, p->last, NULL};
            if (p->last)
                p->last->next = u;
            else
                p->first = u;
            p->last = u;
            p->memory += sizeof *u + MALLOC_OVERHEAD;
        }
    }
    if (!g || !u) {
        free(g);
        *drop = msg_unused(p, msg);
        return -1;
    }
    *g = (fwdioi_parked_group_t){NULL, msg, first, count, packed_at, bytes};
    if (u->tail)
        u->tail->next = g;
    else
        u->head = g;
    u->tail = g;
    msg->groups++;
    p->bytes += bytes;
    p->memory += sizeof *g + MALLOC_OVERHEAD;
    p->parked++;
    return 0;
}

/* Unlink unit `u` and return its groups. */
static fwdioi_parked_group_t *take(fwdioi_parking_t *p, fwdioi_parked_unit_t *u)
{
    if (u->prev)
        u->prev->next = u->next;
    else
        p->first = u->next;
    if (u->next)
        u->next->prev = u->prev;
    else
        p->last = u->prev;
    fwdioi_u64map_remove(&p->units, u->start);
    fwdioi_parked_group_t *g = u->head;
    free(u);
    p->memory -= sizeof *u + MALLOC_OVERHEAD;
    return g;
}

fwdioi_parked_group_t *fwdioi_parking_take_first(fwdioi_parking_t *p, uint64_t *unit)
{
    if (!p->first)
        return NULL;
    *unit = p->first->start;
    return take(p, p->first);
}

fwdioi_parked_group_t *fwdioi_parking_take_unit(fwdioi_parking_t *p, uint64_t unit)
{
    fwdioi_parked_unit_t *u = p->first ? fwdioi_u64map_get(&p->units, unit) : NULL;
    return u ? take(p, u) : NULL;
}

fwdioi_hold_t *fwdioi_parking_group_done(fwdioi_parking_t *p, fwdioi_parked_group_t *g)
{
    fwdioi_parked_msg_t *m = g->msg;
    p->bytes -= g->bytes;
    p->memory -= sizeof *g + MALLOC_OVERHEAD;
    free(g);
    m->groups--;
    return msg_unused(p, m);
}

void fwdioi_parking_free(fwdioi_parking_t *p)
{
    size_t before = fwdioi_u64map_bytes(&p->units);
    fwdioi_u64map_free(&p->units);
    count_map(p, before);
}
