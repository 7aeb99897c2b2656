/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Calls of fwdio that only the MPI-IO layer makes (mpiio/): not part of
 * fwdio.h, since their rules are the layer's to keep (api.c).
 */
#ifndef FWDIO_LAYER_API_H
#define FWDIO_LAYER_API_H

#include "fwdio.h"

/** fwdio_open of a stream (size FWDIO_SIZE_GROWS), opened dormant
 *  (session/dormant.h): it takes its place in the open order and its
 *  communicator, but starts no agreement until some rank uses it (a write,
 *  fwdio_step_end, fwdio_wait_ready, fwdio_close), which wakes it on every
 *  rank. Every rank opens the file dormant or none does (a rank that did
 *  not would wait in its open until another rank uses or closes the file).
 *  Not for the node-local tier (local_dir): opened as fwdio_open opens it. */
int fwdioi_open_dormant(fwdio_runtime_t *rt, const char *path, const fwdio_options_t *opts,
                        const fwdio_callbacks_t *cbs, fwdio_file_t **out);

/** Close a file opened with fwdioi_open_dormant that no rank used: it
 *  completes at once, with no message (ready, then complete, with FWDIO_OK).
 *  Only where every rank knows that no rank used the file or will (the
 *  layer's close agrees on it), and every rank discards it: a rank that
 *  used it would wait for the others for ever. A file this rank used, or
 *  woken already by another rank's use, is closed as fwdio_close closes it
 *  (no byte lost either way). Then fwdio_wait or fwdio_file_free as after
 *  fwdio_close. FWDIO_ECLOSED if it is closed already. */
int fwdioi_discard(fwdio_file_t *f);

#endif
