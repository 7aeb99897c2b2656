/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mdlj's checkpoint file, in the host's byte order:
 *
 *   header   128 bytes   "MDLJCKP2", sizes, step, atom count, box, dt,
 *                        cutoff, seed, rank count, a hash of the header
 *   atoms    48 N bytes  for atom id 0..N-1: x, y, z, vx, vy, vz (doubles,
 *                        the exact bits of the simulation state)
 *   commit    64 bytes   "MDLJDONE", step, atom count, checksum of the atoms,
 *                        the header's hash, a hash of the record itself
 *
 * The commit record is written last, only once every other byte is durable,
 * so a checkpoint is valid exactly when its commit record is whole, matches
 * the header and the atoms' checksum: a crash during a checkpoint leaves an
 * invalid file and the previous checkpoint untouched. The checksum is a sum
 * over atoms of a hash of (id, record), so ranks can compute it over their
 * own atoms and add the parts in any order (MPI_Allreduce). The hashes are
 * xxHash's XXH64 (libxxhash), each under a seed of its own.
 */
#ifndef MDLJ_CKPT_FORMAT_H
#define MDLJ_CKPT_FORMAT_H

#include "pack.h"
#include "snapshot.h"

#include <stdint.h>

#define CKPT_HEADER_BYTES 128u
#define CKPT_ATOM_BYTES 48u
#define CKPT_COMMIT_BYTES 64u

typedef struct ckpt_info {
    int64_t step;
    int64_t natoms;
    double box;
    double dt;
    double cutoff;
    uint64_t seed;
    uint32_t nranks; /* ranks of the run that wrote it */
} ckpt_info_t;

/* What a commit record says. */
typedef struct ckpt_commit {
    int64_t step;
    int64_t natoms;
    uint64_t checksum;
    uint64_t header_hash;
} ckpt_commit_t;

uint64_t ckpt_file_bytes(int64_t natoms);
uint64_t ckpt_commit_offset(int64_t natoms);

void ckpt_header(unsigned char out[CKPT_HEADER_BYTES], const ckpt_info_t *info);

/* Check and decode a header: 0, or -1 with a reason in `why` (static text). */
int ckpt_parse_header(const unsigned char in[CKPT_HEADER_BYTES], ckpt_info_t *info,
                      const char **why);

/* Hash of a header as stored in it and in the commit record. */
uint64_t ckpt_header_hash(const unsigned char header[CKPT_HEADER_BYTES]);

/* The term one atom adds to the checksum. */
uint64_t ckpt_atom_term(int64_t id, const double x[3], const double v[3]);

/* Sum of ckpt_atom_term over a rank's atoms. */
uint64_t ckpt_partial_checksum(const md_snapshot_t *snap);

void ckpt_commit_record(unsigned char out[CKPT_COMMIT_BYTES], const ckpt_info_t *info,
                        uint64_t checksum, const unsigned char header[CKPT_HEADER_BYTES]);

/* Check and decode a commit record: 0, or -1 with a reason in `why`. */
int ckpt_parse_commit(const unsigned char in[CKPT_COMMIT_BYTES], ckpt_commit_t *commit,
                      const char **why);

/*
 * Append to `pack` this rank's atoms (one extent per run of consecutive ids)
 * and, when `header` is not NULL, the header before them. 0, or -1 when out
 * of memory.
 */
int ckpt_pack(md_pack_t *pack, const md_snapshot_t *snap, const unsigned char *header);

/*
 * The whole file from all atoms at once (any order, `n` = natoms), checksum
 * computed here atom by atom: out receives ckpt_file_bytes(natoms) bytes.
 * The serial output and the verification use this.
 */
void ckpt_image(unsigned char *out, const ckpt_info_t *info, const int64_t *id, const double *x,
                const double *v, size_t n);

#endif
