/*
 * Writer-side assembly: the pieces a writer receives are copied into buffers
 * of one write unit each; a unit is handed to storage as soon as every byte of
 * it has arrived, and at close the partly filled units go out as the extents
 * they hold (holes stay holes). The byte ranges also catch overlapping writes.
 *
 * Memory is bounded by the caller: a unit buffer is only allocated when the
 * reserve hook grants its bytes. Otherwise the piece is written straight from
 * the message that carried it (the direct hook), and when the budget is full
 * of partly filled units the caller flushes the fullest ones as extents
 * (fwdioi_assembly_flush_fullest), so no arrival order can stall the writer.
 */
#ifndef FWDIOI_ASSEMBLY_H
#define FWDIOI_ASSEMBLY_H

#include "plan.h"
#include "ranges.h"

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
    void *arg;
} fwdioi_assembly_hooks_t;

typedef struct fwdioi_unit {
    uint8_t *buf;            /* current buffer, or NULL */
    fwdioi_ranges_t filled;  /* every byte that arrived (overlap detection) */
    fwdioi_ranges_t pending; /* bytes in buf not yet handed to flush */
    int complete;            /* every byte arrived and was handed on */
} fwdioi_unit_t;

typedef struct fwdioi_assembly {
    const fwdioi_plan_t *plan;
    int writer;
    uint64_t units_per_stripe;
    uint64_t nunits;
    fwdioi_unit_t *units; /* allocated on the first piece */
    fwdioi_assembly_hooks_t hooks;
} fwdioi_assembly_t;

void fwdioi_assembly_init(fwdioi_assembly_t *a, const fwdioi_plan_t *plan, int writer,
                          const fwdioi_assembly_hooks_t *hooks);

/**
 * Take file bytes [offset, offset + len) (all owned by this writer). Returns
 * FWDIO_OK, FWDIO_EOVERLAP (*bad_offset = the first byte that had arrived
 * before; nothing of that unit piece is taken) or FWDIO_ENOMEM.
 */
int fwdioi_assembly_add(fwdioi_assembly_t *a, uint64_t offset, const uint8_t *data,
                        uint64_t len, uint64_t *bad_offset);

/** Pending bytes of the fullest partly filled unit (0 if none). */
uint64_t fwdioi_assembly_fullest_pending(const fwdioi_assembly_t *a);

/** Flush the partly filled unit holding the most pending bytes; returns the
 *  size of the buffer handed on (0 if there is none). */
uint64_t fwdioi_assembly_flush_fullest(fwdioi_assembly_t *a, uint64_t *pending_bytes);

/** Flush every partly filled unit as its extents. */
int fwdioi_assembly_flush_partial(fwdioi_assembly_t *a);

/** Free what was never flushed (after a failure) and the unit table. */
void fwdioi_assembly_free(fwdioi_assembly_t *a);

#endif
