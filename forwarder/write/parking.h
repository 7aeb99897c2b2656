/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Pieces that wait for a write unit's buffer (the writer, progress thread).
 *
 * A writer at its budget has no buffer for a new unit, and a piece written
 * straight from its message costs one pwrite: for interleaved pieces of a
 * few bytes (a parallel HDF5 point selection, a column of a 2-D array) one
 * system call per piece, the whole file long once the ranks' pace differs
 * by more than the budget holds. Such pieces park here instead, their
 * message kept alive, until the writes under way give memory back; then the
 * oldest unit's pieces are copied into a buffer of their own, in the order
 * they came (writer.c decides what parks and when it is taken back).
 *
 * What is kept is a group per message and unit: pieces [first, first +
 * count) of the message's table, consecutive and all in one unit, and where
 * the first one's bytes start among the message's packed bytes. Units keep
 * their groups in arrival order, and the units the order they first parked
 * in. A message's record holds one reference to it until its last group is
 * taken back (fwdioi_parking_group_done gives the reference to drop).
 *
 * Every byte of the parking's own records is counted (`memory`), so that the
 * writer can count it against its budget.
 */
#ifndef FWDIOI_PARKING_H
#define FWDIOI_PARKING_H

#include "state.h"
#include "u64map.h"

/* A message some of whose pieces are parked. */
typedef struct fwdioi_parked_msg {
    fwdioi_pieces_view_t v;
    fwdioi_hold_t *hold; /* one reference, dropped after the last group */
    int source;          /* the sending rank */
    uint32_t groups;     /* its groups still parked */
} fwdioi_parked_msg_t;

/* Consecutive pieces of one message, all in one unit. */
typedef struct fwdioi_parked_group {
    struct fwdioi_parked_group *next; /* the unit's next group, in arrival order */
    fwdioi_parked_msg_t *msg;
    uint32_t first, count; /* pieces [first, first + count) of msg's table */
    uint64_t packed_at;    /* where piece `first`'s bytes start in msg's packed bytes */
    uint64_t bytes;        /* the pieces' bytes */
} fwdioi_parked_group_t;

struct fwdioi_parked_unit;

typedef struct fwdioi_parking {
    fwdioi_u64map_t units;                   /* unit start -> struct fwdioi_parked_unit */
    struct fwdioi_parked_unit *first, *last; /* in the order they first parked */
    fwdioi_parked_msg_t *open;               /* the last record made: its message's next
                                                group shares it */
    uint64_t bytes;     /* bytes of the parked pieces */
    uint64_t msg_bytes; /* sizes of the messages with parked pieces */
    uint64_t memory;    /* bytes of the records, the map included */
    uint64_t parked;    /* groups parked so far (stats) */
} fwdioi_parking_t;

/* A zeroed struct is an empty parking. */

/** Whether any piece is parked. */
int fwdioi_parking_empty(const fwdioi_parking_t *p);

/** Whether pieces of the unit starting at `unit` are parked. */
int fwdioi_parking_has(const fwdioi_parking_t *p, uint64_t unit);

/**
 * The record of a message whose pieces are to park: the last one made when it
 * is this hold's (a message's groups share one), else a new one (taking a
 * reference to `hold`, and copying the view). NULL without memory.
 */
fwdioi_parked_msg_t *fwdioi_parking_msg(fwdioi_parking_t *p, const fwdioi_pieces_view_t *v,
                                         fwdioi_hold_t *hold, int source);

/** The message being taken is done with: its next groups, if any, get a
 *  record of their own (the hold may be reused for another message). */
void fwdioi_parking_msg_end(fwdioi_parking_t *p);

/**
 * Park pieces [first, first + count) of `msg`, `bytes` in all, whose bytes
 * start at `packed_at` among its packed bytes, all in the unit starting at
 * `unit`, behind the unit's other groups. 0, or -1 without memory (nothing
 * parked; a record left without groups is freed and its hold returned in
 * *drop, else *drop is NULL).
 */
int fwdioi_parking_park(fwdioi_parking_t *p, fwdioi_parked_msg_t *msg, uint64_t unit,
                        uint32_t first, uint32_t count, uint64_t packed_at, uint64_t bytes,
                        fwdioi_hold_t **drop);

/** Take back the groups of the unit that parked first (NULL if none), in
 *  arrival order, linked by `next`; *unit = its start. The unit is no longer
 *  parked: give each group to fwdioi_parking_group_done once taken. */
fwdioi_parked_group_t *fwdioi_parking_take_first(fwdioi_parking_t *p, uint64_t *unit);

/** Take back the groups of the unit starting at `unit` (NULL if none). */
fwdioi_parked_group_t *fwdioi_parking_take_unit(fwdioi_parking_t *p, uint64_t unit);

/** A group taken back is done with: freed. Returns its message's hold when
 *  that was the message's last group (the caller drops that reference), else
 *  NULL. */
fwdioi_hold_t *fwdioi_parking_group_done(fwdioi_parking_t *p, fwdioi_parked_group_t *g);

/** Free the map (every group must have been taken back and done with). */
void fwdioi_parking_free(fwdioi_parking_t *p);

#endif
