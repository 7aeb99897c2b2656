/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The data role a rank plays for a file: the writer (write/writer.c,
 * fwdioi_writer_role) or a read file's reader (read/reader.c,
 * fwdioi_reader_role). Each fills this table once; fwdio_open picks the
 * file's (fwdio_file's `role`), and the session drives the role through it,
 * as ROMIO's core calls a driver's ADIOI_Fns: session.c names neither role.
 * A slot the role has no use for is NULL. Every slot runs on the progress
 * thread.
 */
#ifndef FWDIOI_ROLE_H
#define FWDIOI_ROLE_H

#include "state.h"

typedef struct fwdioi_role_ops {
    /** Open the file on the I/O thread, then fwdioi_outcome_opened. */
    void (*open)(fwdio_file_t *f);
    /** Whether something may come for this rank that only a probe finds. */
    int (*may_receive)(const fwdio_file_t *f);
    /** Receive what has come; returns the receives started. */
    int (*probe)(fwdio_file_t *f);
    /** The close is agreed: go on until everything agreed has come (the
     *  writer: drain, write, sync, then fwdioi_outcome_data_done). */
    void (*close_agreed)(fwdio_file_t *f);
    /** Whether the role's part of a file whose close is agreed is done (the
     *  reader: every request it was told of answered). */
    int (*done)(fwdio_file_t *f);
    /** The file was aborted after its open started: close the descriptor
     *  once no storage job of it is in flight. */
    void (*close_aborted)(fwdio_file_t *f);
    /** The file was aborted: drop the messages kept for later steps. */
    void (*drop_deferred)(fwdio_file_t *f);
    /** The length of the message waiting for memory, or -1 (none). */
    int (*waiting_len)(const fwdio_file_t *f);
    /** Free the role's state at the session's end. */
    void (*end)(fwdio_file_t *f);
} fwdioi_role_ops_t;

#endif
