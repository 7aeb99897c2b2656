/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * --restart: find the newest valid checkpoint and load it. With --output
 * fwdio the checkpoints are versions of the fwdio checkpoint set of `base`
 * (out_fwdio.c): fwdio_ckpt_latest_upto finds the newest whose bytes match
 * their manifest's CRC-32 (at most the step the trajectory reaches; it
 * reads each candidate once to verify it), and mdlj's checks below run on
 * it as it loads (a failure there asks fwdio again, below that version).
 * The other modes' checkpoints are the files "<base>.<step>" (ckpt_files.h).
 * Candidates are tried newest first; one is valid when its header is whole,
 * its commit record is present and matches the header, and the checksum of
 * its atom records equals the one in the commit record. A checkpoint cut
 * short before its commit record (a crash while writing it) is reported and
 * skipped, and the previous one is used.
 *
 * The checkpoint may come from a run on any number of ranks: its atoms are
 * stored by id, not by rank. Each of the M ranks of the restarted run reads
 * the records of an even share of the ids (about 1/M of the atoms, one
 * contiguous piece of the file), adds them to the checksum, and keeps them;
 * restart_load then sends every atom to the rank whose region holds its
 * position. The atoms are read once: the checked bytes are the loaded bytes.
 *
 * With a fwdio runtime the reads go through fwdio (fwdio_ckpt_open_read: a few
 * reader ranks pread whole, aligned write units and hand every rank its
 * piece); without one (the MPI-IO, serial and no-output modes, which do not
 * start fwdio) rank 0 preads the header and the commit record and every rank
 * preads its piece.
 */
#ifndef MDLJ_RESTART_H
#define MDLJ_RESTART_H

#include "atoms.h"
#include "ckpt_format.h"
#include "domain.h"

#include "fwdio.h"

#include <mpi.h>

/* The checkpoint a restart continues from, and this rank's share of it. */
typedef struct md_restart {
    ckpt_info_t info;         /* its header (every rank) */
    char path[4096];
    int64_t first, count;     /* the ids this rank read: [first, first + count) */
    unsigned char *records;   /* their records, count * CKPT_ATOM_BYTES; NULL once loaded */
    /* Through fwdio, summed over the ranks (0 otherwise): bytes asked for with
     * fwdio_read, bytes the readers pread, and the readers. */
    uint64_t bytes_asked, bytes_from_storage;
    int readers;
} md_restart_t;

/*
 * Collective over comm: pick the newest valid checkpoint of `base` and fill
 * `r` (every rank: header and path; each rank: its share of the atoms,
 * checked). Checkpoints of a later step than `max_step` are passed over (a
 * trajectory being continued holds the frames up to it only; INT64_MAX: none
 * is). `rt`: read through fwdio with `writers` readers (0: fwdio's default),
 * or NULL: pread. Returns 0, or -1 on every rank (message printed) when none
 * is valid.
 */
int restart_find(MPI_Comm comm, fwdio_runtime_t *rt, int writers, const char *base,
                 int64_t max_step, md_restart_t *r);

/*
 * Collective over dom->cart (the ranks of restart_find's comm, in the same
 * order): send every atom of r's shares to the rank that owns its position;
 * `atoms` ends with this rank's atoms in id order. Releases r's records.
 * Returns 0, or -1 on every rank (message printed).
 */
int restart_load(const md_domain_t *dom, md_restart_t *r, md_atoms_t *atoms);

/* Release what restart_find kept (any time; restart_load already did). */
void restart_free(md_restart_t *r);

/*
 * Collective over dom->cart (--dump-loaded): gather the owned atoms to rank 0
 * and write them there, placed by id, as the checkpoint file `info` describes
 * (header, atoms, commit record with their checksum) at `path`: after a
 * restart it equals the checkpoint read, byte for byte, exactly when every
 * atom arrived once with its exact bits. Checks too that every rank holds
 * only atoms its region holds. Returns 0, or -1 on every rank (message printed).
 */
int restart_dump(const md_domain_t *dom, const md_atoms_t *atoms, const ckpt_info_t *info,
                 const char *path);

#endif
