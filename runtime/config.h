/* SPDX-License-Identifier: BSD-3-Clause */
/* Runtime configuration: defaults, environment variables, checks. */
#ifndef FWDIOI_CONFIG_H
#define FWDIOI_CONFIG_H

#include "fwdio.h"
#include "refuse.h"

/** Smallest combine_size in force (other than 1, off): a header, one piece
 *  and some data. */
#define FWDIOI_COMBINE_MIN ((size_t)64)

/** The range of max_message_size (0 is the default, 8 MiB). */
#define FWDIOI_MAX_MESSAGE_MIN ((size_t)4096)
#define FWDIOI_MAX_MESSAGE_MAX ((size_t)1 << 30)

/* fwdio_config_t.poll_background_us by default: polls at most every
 * millisecond while no application thread waits. Over TCP, each poll of a
 * second thread into Open MPI can hold up the application's own MPI calls;
 * see docs/ARCHITECTURE.md, "The progress thread". */
#define FWDIOI_DEFAULT_POLL_BACKGROUND_US 1000u
/* The most fwdio_config_t.poll_spin_us may be: a wait longer than this is
 * not one an agreement round would end. */
#define FWDIOI_MAX_POLL_SPIN_US 100000u

/** Smallest writer_buffer in force: room for four of the smallest messages
 *  (max_message_size is lowered to a quarter of the budget, not below 64 KiB)
 *  and for the bookkeeping of the units in progress. */
#define FWDIOI_MIN_WRITER_BUFFER ((size_t)256 << 10)

/** Smallest staging_buffer in force: a copied write is cut into messages of
 *  at most the staging budget, and below 64 KiB a message costs more to send
 *  than its bytes (64 MiB from 2 ranks: 1 s through 1 KiB of staging, 0.5 s
 *  through 4 KiB, 0.1 s through 16 KiB, 0.05 s from 64 KiB up). */
#define FWDIOI_MIN_STAGING_BUFFER ((size_t)64 << 10)

/** Smallest node_buffer in force: room for a few combined messages (256 KiB
 *  by default) in the node-shared area's chunks of 256 KiB
 *  (forwarder/node/node_area.h). */
#define FWDIOI_MIN_NODE_BUFFER ((size_t)1 << 20)

/**
 * Check the values fwdioi_config_resolve refuses (callback_mode,
 * max_message_size, the reserved tail), saying why through `why` (refuse.h;
 * NULL: origins unknown). FWDIO_OK or FWDIO_EINVAL.
 */
int fwdioi_config_check(const fwdio_config_t *cfg, fwdioi_origins_t *why);

/** Fill in defaults and check (fwdioi_config_check, origins unknown), and
 *  raise the budgets too small to work with; FWDIO_OK or FWDIO_EINVAL.
 *  `ranks_on_node`: the ranks of the runtime on this rank's node (0:
 *  unknown, taken as one), which the default staging_buffer, and the
 *  combine_size and shared_buffer that follow it, depend on. */
int fwdioi_config_resolve(const fwdio_config_t *in, int ranks_on_node, fwdio_config_t *out);

/** Say on stderr which values given in `in` (code, environment or file)
 *  fwdioi_config_resolve raised or lowered so the budgets can hold them, and
 *  why. Call on one rank. */
void fwdioi_config_report_clamps(const fwdio_config_t *in, const fwdio_config_t *resolved);

/** poll_spin_us for a node with `ranks_on_node` ranks of one runtime and
 *  `node_cpus` usable CPUs (-1 unknown), when the config leaves it to fwdio
 *  (`configured` 0): FWDIO_AUTO_POLL_SPIN_US with a CPU for every rank,
 *  else 1 (off); `configured` otherwise (pure). */
unsigned fwdioi_spin_choice(unsigned configured, int ranks_on_node, int node_cpus);

/** staging_buffer by default for one of `ranks_on_node` ranks (0: unknown,
 *  taken as one) on a node of `node_memory` bytes (0: unknown): the node's
 *  staging, 1/32 of its memory at most FWDIO_DEFAULT_NODE_STAGING_CAP, shared
 *  out, at most FWDIO_DEFAULT_STAGING_BUFFER, at least
 *  FWDIO_MIN_DEFAULT_STAGING_BUFFER (pure). */
size_t fwdioi_default_staging_buffer(uint64_t node_memory, int ranks_on_node);
/** node_buffer by default on a node of `node_memory` bytes (0: unknown):
 *  1/64 of it, at most FWDIO_DEFAULT_NODE_BUFFER_CAP, at least
 *  FWDIOI_MIN_NODE_BUFFER (pure). */
size_t fwdioi_default_node_buffer(uint64_t node_memory);

#endif
