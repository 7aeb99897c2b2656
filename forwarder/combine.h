/* Write combining (combine.c): small copied writes appended to one open
 * message per (file, writer); runtime lock held unless said otherwise. */
#ifndef FWDIOI_COMBINE_H
#define FWDIOI_COMBINE_H

#include "file.h"

/** Copy a small write, whose bytes are reserved, into the open messages of its
 *  writers; messages that fill up are queued. FWDIO_OK or FWDIO_ENOMEM (the
 *  bytes not taken are given back to the staging budget). */
int fwdioi_combine_write_locked(fwdio_file_t *f, const uint8_t *buf, uint64_t len,
                                uint64_t offset);
/** Queue every open message of the file for the progress thread. */
void fwdioi_combine_flush_file_locked(fwdio_file_t *f);
/** Queue every open message of every file of the runtime. */
void fwdioi_combine_flush_all_locked(struct fwdio_runtime *o);
/** Progress thread, lock not held: send the open messages of files whose
 *  oldest one got its first byte at least `age_ns` ago; returns how many. */
int fwdioi_combine_flush_stale(struct fwdio_runtime *o, uint64_t age_ns);
/** Free the piece tables (the file is done; nothing is open). */
void fwdioi_combine_free(fwdio_file_t *f);

#endif
