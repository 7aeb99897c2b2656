/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libfwdio-iocount.so: an LD_PRELOAD shim that counts the read system calls a
 * process makes on one file (docs/results/restart-reads.md), so a
 * benchmark can report storage requests per byte for paths it does not
 * control (MPI-IO's ROMIO and ompio, plain pread) the same way as for fwdio.
 *
 * It interposes open, open64, openat, openat64, creat, creat64 and their
 * fortified forms (__open_2, ...) to learn which descriptors name the file
 * set by fwdio_iocount_set_path() or, until then, by the environment variable
 * FWDIO_IOCOUNT_PATH (unset or empty: nothing is counted). A path passed to
 * open matches when it ends with that name at a '/' or is it ("ckpt" matches
 * "ckpt", "./ckpt" and "/x/ckpt", not "ckpt.locktest.0" or
 * "sem.OMPIO_ckpt", side files ompio makes). close forgets a descriptor. On those descriptors it counts
 * read, pread, pread64, readv, preadv, preadv64, preadv2, preadv64v2 and the
 * fortified __read_chk, __pread_chk, __pread64_chk: calls and the bytes they
 * returned. Descriptors made by dup, fcntl(F_DUPFD) or inherited are not
 * followed; no MPI-IO component or fwdio uses them on a file it reads.
 *
 * A program that wants the counts looks the functions up at run time, so it
 * runs without the shim too:
 *
 *     fwdio_iocount_get_fn get = (fwdio_iocount_get_fn)dlsym(RTLD_DEFAULT,
 *                                                            FWDIO_IOCOUNT_GET);
 *     uint64_t c[FWDIO_IOCOUNT_N];
 *     if (get) get(c, FWDIO_IOCOUNT_N);    absent: "n/a"
 *
 * The counters only grow; take differences around what you measure. All
 * counting is atomic (several threads read at once).
 */
#ifndef FWDIO_IO_COUNT_H
#define FWDIO_IO_COUNT_H

#include <stdint.h>

/* Indices of the counters. */
enum fwdio_iocount_index {
    FWDIO_IOCOUNT_CALLS = 0,  /* read calls of any kind on a matching descriptor */
    FWDIO_IOCOUNT_BYTES,      /* bytes those calls returned */
    FWDIO_IOCOUNT_OPENS,      /* opens of a matching path that succeeded */
    FWDIO_IOCOUNT_PREAD,      /* of CALLS: pread, pread64, __pread*_chk */
    FWDIO_IOCOUNT_PREADV,     /* of CALLS: preadv, preadv64, preadv2, preadv64v2 */
    FWDIO_IOCOUNT_READ,       /* of CALLS: read, readv, __read_chk */
    FWDIO_IOCOUNT_ERRORS,     /* read calls that returned -1 (not in CALLS) */
    FWDIO_IOCOUNT_N
};

#define FWDIO_IOCOUNT_GET "fwdio_iocount_get"
#define FWDIO_IOCOUNT_SET_PATH "fwdio_iocount_set_path"

/* Copy the first n counters (at most FWDIO_IOCOUNT_N) to out; returns how
 * many the shim has (FWDIO_IOCOUNT_N). */
typedef int (*fwdio_iocount_get_fn)(uint64_t *out, int n);
/* Count descriptors opened from now on whose path ends with `name` (see
 * above; copied; NULL or "" counts nothing). Descriptors already open keep
 * their state. */
typedef void (*fwdio_iocount_set_path_fn)(const char *name);

#endif
