/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Dormant files (dormant.c). A file opened dormant (fwdioi_open_dormant,
 * layer_api.h) takes its place in the open order and its communicator like
 * any other, but its session starts no collective of its own until some rank
 * uses it: writes to it, ends a step, waits for its ready status or closes it
 * (each wakes it on that rank, fwdioi_dormant_use). A rank that wakes its
 * file tells the others along the relay tree (relay_tree.h, on the runtime's
 * communicator, as aborts travel: O(log P) messages per rank), and each rank
 * whose file hears it wakes too and carries it on, so every rank's session
 * starts, whichever rank used the file first. A wake heard before this rank
 * opened the file is kept until it does.
 *
 * A file no rank used costs no agreement: where every rank knows that no
 * rank used it (the MPI-IO layer's close agrees on that), each discards it
 * (fwdioi_discard), and it completes at once, with no message. A discard is
 * only right where no rank can have woken the file: a rank whose file was
 * woken by another's use goes the normal way (a close), and a wake that comes
 * after a discard finds no file and is dropped (so a rank that used the file
 * while another discarded it would wait for ever: the caller's agreement
 * rules that out).
 *
 * While a file is dormant its progress thread looks for wakes every
 * FWDIOI_WAIT_TICK_US (a rank whose application waits in fwdio, far sooner).
 */
#ifndef FWDIOI_DORMANT_H
#define FWDIOI_DORMANT_H

#include "state.h"

/** Set up f's dormancy at its open (application thread, before its open
 *  task is submitted): `dormant` or not. */
void fwdioi_dormant_init(fwdio_file_t *f, int dormant);
/** The application uses f (a write, a step's end, a wait for ready, a
 *  close): wake it if it is dormant here (lock held, or not: _locked). */
void fwdioi_dormant_use(fwdio_file_t *f);
void fwdioi_dormant_use_locked(fwdio_file_t *f);
/** The application discards f: no later call of its wakes it (lock held;
 *  the progress thread's close task decides whether it is still dormant). */
void fwdioi_dormant_discard_locked(fwdio_file_t *f);

/** f's open task ran (progress thread): a dormant file counts as one, and
 *  wakes at once if a wake for it came first; a refused stand-in
 *  (session/refused.h) tells the other ranks, whose dormant file must then
 *  run its check to fail with the refusal. */
void fwdioi_dormant_opened(fwdio_file_t *f);
/** Wake f if dormant here, telling the neighbours in the relay tree but
 *  `except` (-1: all of them) (progress thread). */
void fwdioi_dormant_wake(fwdio_file_t *f, int except);
/** f ends (discarded, or aborted while dormant): no longer counted
 *  (progress thread). */
void fwdioi_dormant_ended(fwdio_file_t *f);
/** Take the wakes other ranks sent (progress thread); returns how many. */
int fwdioi_dormant_receive(struct fwdio_runtime *o);
/** Free what dormant.c keeps (fwdio_finalize, after the threads stopped). */
void fwdioi_dormant_free(struct fwdio_runtime *o);

#endif
