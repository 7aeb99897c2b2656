/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Writer-side assembly: the pieces a writer receives are copied into buffers
 * of one write unit each; a unit is handed to storage as soon as every byte of
 * it has arrived, and at close the partly filled units go out as the extents
 * they hold (holes stay holes). The byte ranges also catch overlapping writes,
 * or, in a file that allows them (options.overlaps), make the unit's bytes the
 * union of its pieces: a byte given twice holds one of its copies.
 *
 * Memory is bounded by the caller: a unit buffer is only allocated when the
 * reserve hook grants its bytes. Otherwise the piece is written straight from
 * the message that carried it (the direct hook), and when the budget is full
 * of partly filled units the caller flushes the fullest ones as extents
 * (fwdioi_assembly_flush_fullest), so no arrival order can stall the writer.
 *
 * Bookkeeping is sparse, so it follows the units in progress, not the size of
 * the file: a bitmap of the units touched so far, allocated a page at a time
 * (a page whose units are all touched is dropped for a marker), and a hash
 * table of the units in progress (touched, not complete), each with its byte
 * ranges (byteset.h: at most about an eighth of the unit whatever the pieces)
 * and its buffer if it has one. A touched unit that is not in the
 * table is complete. Runs of whole untouched units only set bits and go
 * direct, without a table lookup. Every byte of this bookkeeping is reported
 * through the meta hook, so that it counts against the writer's budget.
 */
#ifndef FWDIOI_ASSEMBLY_H
#define FWDIOI_ASSEMBLY_H

#include "plan/plan.h"
#include "byteset.h"

typedef struct fwdioi_assembly_hooks {
    /** Takes a unit buffer (ownership passes) of `size` bytes holding file bytes
     *  from `offset`, and the extents to write from it (relative to offset,
     *  ownership passes). The buffer's reservation ends when it is freed. */
    void (*flush)(void *arg, uint8_t *buf, uint64_t size, uint64_t offset,
                  fwdioi_range_t *extents, size_t nextents);
    /** Writes file bytes [offset, offset + len) straight from `data`, which is
     *  valid only during the call unless its owner keeps it alive. */
    void (*direct)(void *arg, const uint8_t *data, uint64_t offset, uint64_t len);
    /** Asks for `bytes` of buffer memory; non-zero when granted. */
    int (*reserve)(void *arg, uint64_t bytes);
    /** Gives back a reservation whose buffer was freed without a flush. */
    void (*unreserve)(void *arg, uint64_t bytes);
    /** The bookkeeping grew (delta > 0) or shrank by |delta| bytes. It cannot be
     *  refused: it records what has arrived. May be NULL. */
    void (*meta)(void *arg, int64_t delta);
    void *arg;
} fwdioi_assembly_hooks_t;

/* A unit in progress: some of its bytes arrived, not all. Where pieces may
 * overlap, a unit that wrote a piece direct keeps no record of which bytes
 * arrived (nothing is refused, and its direct bytes need no buffer): its
 * `filled` only counts them (fwdioi_byteset_count_only, overlapping ones
 * twice), and it is taken as complete once the count reaches its length,
 * after which its pieces go direct, as every piece of a complete unit does
 * there. So the record of a file with overlaps takes memory only for the
 * units that have a buffer, which the budget bounds. */
typedef struct fwdioi_unit {
    uint64_t index;          /* local unit index; FWDIOI_UNIT_NONE: a free slot */
    uint8_t *buf;            /* current buffer, or NULL */
    uint64_t pending_bytes;  /* bytes of `pending` */
    fwdioi_byteset_t filled;  /* every byte that arrived (overlap detection) */
    fwdioi_byteset_t pending; /* bytes in buf not yet handed to flush */
} fwdioi_unit_t;

#define FWDIOI_UNIT_NONE UINT64_MAX

/* One page of the touched-units bitmap. */
typedef struct fwdioi_unit_page {
    uint64_t *bits; /* NULL: no unit touched; a shared marker: all of them */
    uint32_t set;   /* units touched */
} fwdioi_unit_page_t;

typedef struct fwdioi_assembly {
    const fwdioi_plan_t *plan;
    int writer;
    uint64_t units_per_stripe;
    uint64_t nunits;
    fwdioi_unit_page_t *pages; /* [npages], allocated on the first piece */
    uint64_t npages;
    fwdioi_unit_t *slots;      /* [cap] hash table of the units in progress */
    size_t cap, count;
    unsigned shift;            /* 64 - log2(cap) */
    size_t nbuffered;          /* units in progress that hold a buffer */
    uint64_t meta;             /* bookkeeping bytes held now */
    uint64_t meta_reported;    /* ... as last told to the meta hook */
    uint64_t copied;           /* bytes copied into unit buffers (stats) */
    int overlaps;              /* pieces may overlap (options.overlaps); set after init */
    fwdioi_assembly_hooks_t hooks;
} fwdioi_assembly_t;

void fwdioi_assembly_init(fwdioi_assembly_t *a, const fwdioi_plan_t *plan, int writer,
                          const fwdioi_assembly_hooks_t *hooks);

/**
 * Take file bytes [offset, offset + len), which must all be this writer's (in
 * the file, and in stripes it owns). Returns FWDIO_OK, FWDIO_EOVERLAP
 * (unless a->overlaps; *bad_offset = the first byte that had arrived before;
 * nothing of that unit piece is taken), FWDIO_EINVAL (bytes that are not this writer's;
 * *bad_offset = offset; nothing is taken) or FWDIO_ENOMEM.
 */
int fwdioi_assembly_add(fwdioi_assembly_t *a, uint64_t offset, const uint8_t *data,
                        uint64_t len, uint64_t *bad_offset);

/** Whether the unit holding `offset` (one of this writer's bytes) takes a
 *  piece without a new buffer: it has one, or it is complete. */
int fwdioi_assembly_unit_buffered(fwdioi_assembly_t *a, uint64_t offset);

/** Pending bytes of the fullest partly filled unit (0 if none). */
uint64_t fwdioi_assembly_fullest_pending(const fwdioi_assembly_t *a);

/** Flush the partly filled unit holding the most pending bytes; returns the
 *  size of the buffer handed on (0 if there is none). */
uint64_t fwdioi_assembly_flush_fullest(fwdioi_assembly_t *a, uint64_t *pending_bytes);

/** Flush every partly filled unit as its extents. */
int fwdioi_assembly_flush_partial(fwdioi_assembly_t *a);

/** Units in progress (touched, not complete). */
size_t fwdioi_assembly_units_in_progress(const fwdioi_assembly_t *a);

/** Bookkeeping bytes held now (what the meta hook has been told). */
uint64_t fwdioi_assembly_meta_bytes(const fwdioi_assembly_t *a);

/** Forget which bytes were taken (every unit buffer must have been flushed):
 *  the same bytes may be taken again, as new. */
void fwdioi_assembly_forget(fwdioi_assembly_t *a);

/** Free what was never flushed (after a failure) and the bookkeeping. */
void fwdioi_assembly_free(fwdioi_assembly_t *a);

#endif
