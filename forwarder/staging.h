/* The staging budget: bytes of copied writes a rank holds until they are sent
 * (application threads; reserve with the runtime lock held, release takes it). */
#ifndef FWDIOI_STAGING_H
#define FWDIOI_STAGING_H

#include "file.h"

int fwdioi_staging_reserve_locked(fwdio_file_t *f, uint64_t bytes, int may_wait);
/** Why a write may not go ahead now: FWDIO_ECLOSED, FWDIO_EFAILED or FWDIO_OK. */
int fwdioi_write_refusal_locked(const fwdio_file_t *f);
void fwdioi_staging_release(fwdio_file_t *f, uint64_t bytes);
void fwdioi_staging_release_locked(fwdio_file_t *f, uint64_t bytes);

#endif
