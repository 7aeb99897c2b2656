/*
 * --restart: find the newest valid checkpoint "<base>.<step>" and load it.
 * Candidates are tried newest first; one is valid when its header is whole,
 * its commit record is present and matches the header, and the checksum of
 * its atom records equals the one in the commit record. A checkpoint cut
 * short before its commit record (a crash while writing it) is reported and
 * skipped, and the previous one is used.
 */
#ifndef MDLJ_RESTART_H
#define MDLJ_RESTART_H

#include "atoms.h"
#include "ckpt_format.h"
#include "domain.h"

#include <mpi.h>

/*
 * Collective over comm: pick the newest valid checkpoint of `base` and return
 * its header in `info` (every rank). Each rank then reads a slice of it.
 * Returns 0, or -1 on every rank (message printed) when none is valid.
 */
/* Checkpoints of a later step than `max_step` are passed over (a trajectory
 * being continued holds the frames up to it only; INT64_MAX: none is). */
int restart_find(MPI_Comm comm, const char *base, int64_t max_step, ckpt_info_t *info,
                 char *path, size_t cap);

/*
 * Collective over dom->cart: read the atoms of the checkpoint `path` (already
 * checked by restart_find), each rank a slice by id, and send every atom to
 * the rank that owns its position; `atoms` ends with this rank's atoms in id
 * order. Returns 0, or -1 on every rank (message printed).
 */
int restart_load(const md_domain_t *dom, const char *path, const ckpt_info_t *info,
                 md_atoms_t *atoms);

#endif
