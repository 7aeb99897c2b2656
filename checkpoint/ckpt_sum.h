/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A version's checksum: the CRC-32 (zlib's crc32, the polynomial of gzip and
 * PNG) of the whole data file, holes as zeros, computed without a pass over
 * the file. CRC-32 is affine over GF(2): with L(m) = crc32(m) ^ crc32(zeros
 * of |m|), L is linear, and the file is the XOR of its pieces each padded
 * with zeros to the file's size. So every rank turns each piece it writes
 * into its term, L of the padded piece, from the piece's own crc32, its
 * offset and the file's size (fwdioi_ckpt_sum_term), XORs the terms in any
 * order, and one MPI_BXOR reduction over the ranks gives L(file), from
 * which fwdioi_ckpt_sum_final gives crc32(file). Pieces must not overlap
 * (the checkpoint's file refuses options.overlaps). Pure; no MPI
 * (tests/unit/checkpoint/test_ckpt_sum checks it against crc32 of whole
 * buffers).
 */
#ifndef FWDIOI_CKPT_SUM_H
#define FWDIOI_CKPT_SUM_H

#include <stddef.h>
#include <stdint.h>

/** crc32 of `len` zero bytes, in one crc32_combine. */
uint32_t fwdioi_ckpt_crc_zeros(uint64_t len);

/** The term of `len` bytes whose crc32 is `crc`, at `offset` of a file of
 *  `size` bytes (offset + len <= size). */
uint32_t fwdioi_ckpt_sum_term(uint32_t crc, uint64_t len, uint64_t offset, uint64_t size);

/** The term of the bytes `buf[0..len)` at `offset` (crc32 and then
 *  fwdioi_ckpt_sum_term: one pass over the bytes). */
uint32_t fwdioi_ckpt_sum_bytes(const void *buf, size_t len, uint64_t offset, uint64_t size);

/** crc32 of a file of `size` bytes whose terms XOR to `terms`. */
uint32_t fwdioi_ckpt_sum_final(uint32_t terms, uint64_t size);

#endif
