/* SPDX-License-Identifier: BSD-3-Clause */
/* The staging budget: bytes of copied writes a rank holds until they are sent
 * (application threads; reserve with the runtime lock held, release takes it). */
#ifndef FWDIOI_STAGING_H
#define FWDIOI_STAGING_H

#include "state.h"

int fwdioi_staging_reserve_locked(fwdio_file_t *f, uint64_t bytes, int may_wait);
/** Why a write may not go ahead now: FWDIO_ECLOSED, FWDIO_EFAILED or FWDIO_OK. */
int fwdioi_write_refusal_locked(const fwdio_file_t *f);
void fwdioi_staging_release(fwdio_file_t *f, uint64_t bytes);
void fwdioi_staging_release_locked(fwdio_file_t *f, uint64_t bytes);
/** A staged message goes to its writer (progress thread). Takes the lock:
 *  its bytes count as sent until fwdioi_staging_release_msg gives them back. */
void fwdioi_staging_sent(fwdio_file_t *f, fwdioi_msg_t *m);
/** Give back the staged bytes of a message being freed (takes the lock). */
void fwdioi_staging_release_msg(fwdio_file_t *f, const fwdioi_msg_t *m);

#endif
