/* SPDX-License-Identifier: BSD-3-Clause */
/* The files of a checkpoint version as the set's tests look at them
 * (test_checkpoint, test_ckpt_test): "<dir>/<name>.v<version>.<suffix>". */
#ifndef FWDIO_TEST_CKPT_FILES_H
#define FWDIO_TEST_CKPT_FILES_H

#include <stdint.h>

/** Whether the version's file with `suffix` ("ckpt", "manifest", ...) exists. */
int ckpt_exists(const char *dir, const char *name, uint64_t version, const char *suffix);

/** Rank 0 checks that the version's data file holds `size` bytes, byte k
 *  being byte_of(version, k) (a failed check names the file and counts). */
void ckpt_check_bytes(const char *dir, const char *name, uint64_t version, uint64_t size,
                      unsigned char (*byte_of)(uint64_t version, uint64_t offset));

#endif
