/*
 * Writer-side assembly: the pieces a writer receives are copied into buffers
 * of one write unit each; a unit is handed to storage as soon as every byte of
 * it has arrived, and at close the partly filled units go out as the extents
 * they hold (holes stay holes). The byte ranges also catch overlapping writes.
 */
#ifndef FWDIOI_ASSEMBLY_H
#define FWDIOI_ASSEMBLY_H

#include "plan.h"
#include "ranges.h"

/**
 * Receives a unit's buffer (ownership passes) holding file bytes
 * [offset, offset + unit length), and the extents that are valid in it
 * (relative to offset, ownership passes).
 */
typedef void (*fwdioi_flush_fn)(void *arg, uint8_t *buf, uint64_t offset,
                                fwdioi_range_t *extents, size_t nextents);

/**
 * Receives a run of whole units that arrived in one piece and were empty
 * before: file bytes [offset, offset + len) at `data`, which stays valid only
 * during the call unless the owner of the data keeps it alive. Writing them from
 * there saves the copy into a unit buffer.
 */
typedef void (*fwdioi_direct_fn)(void *arg, const uint8_t *data, uint64_t offset, uint64_t len);

typedef struct fwdioi_unit {
    uint8_t *buf;
    fwdioi_ranges_t filled;
    int flushed;
} fwdioi_unit_t;

typedef struct fwdioi_assembly {
    const fwdioi_plan_t *plan;
    int writer;
    uint64_t units_per_stripe;
    uint64_t nunits;
    fwdioi_unit_t *units; /* allocated on the first piece */
    fwdioi_flush_fn flush;
    fwdioi_direct_fn direct; /* may be NULL: then every byte goes through a buffer */
    void *flush_arg;
} fwdioi_assembly_t;

void fwdioi_assembly_init(fwdioi_assembly_t *a, const fwdioi_plan_t *plan, int writer,
                          fwdioi_flush_fn flush, fwdioi_direct_fn direct, void *flush_arg);

/**
 * Copy file bytes [offset, offset + len) (all owned by this writer) into their
 * units, flushing the units this completes; runs of whole empty units go to
 * the direct callback instead. Returns FWDIO_OK, FWDIO_EOVERLAP
 * (*bad_offset = the first byte that had arrived before; nothing of the
 * overlapping unit piece is copied) or FWDIO_ENOMEM.
 */
int fwdioi_assembly_add(fwdioi_assembly_t *a, uint64_t offset, const uint8_t *data,
                        uint64_t len, uint64_t *bad_offset);

/** Flush every partly filled unit as its extents. */
int fwdioi_assembly_flush_partial(fwdioi_assembly_t *a);

/** Free buffers that were never flushed (after a failure) and the unit table. */
void fwdioi_assembly_free(fwdioi_assembly_t *a);

#endif
