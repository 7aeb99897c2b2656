/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The C side of the Fortran module (fwdio.F90): what Fortran cannot pass to
 * the C API as it is. Communicators and infos arrive as Fortran handles
 * (MPI_Fint) and are converted with MPI's f2c calls; buffers of any type and
 * rank arrive as C descriptors (ISO_Fortran_binding.h, Fortran 2018), whose
 * address and size are checked here: a buffer that is not contiguous, or
 * holds fewer bytes than the call names, is refused with FWDIO_EINVAL and a
 * line on stderr rather than read or written past its end.
 */
#include "fwdio.h"

#include <ISO_Fortran_binding.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>

/* The bytes a descriptor describes, and its address; -1 (with a message)
 * when it cannot be used for `len` bytes. */
static int usable(const CFI_cdesc_t *d, int64_t len, const char *call, void **addr)
{
    if (len < 0) {
        fprintf(stderr, "fwdio (Fortran): %s: a negative length (%lld)\n", call, (long long)len);
        return -1;
    }
    if (len == 0) {
        *addr = d ? d->base_addr : NULL;
        return 0;
    }
    if (!d || !d->base_addr) {
        fprintf(stderr, "fwdio (Fortran): %s: the buffer is not allocated\n", call);
        return -1;
    }
    if (!CFI_is_contiguous(d)) {
        fprintf(stderr, "fwdio (Fortran): %s: the buffer is not contiguous (pass a contiguous "
                        "array or a copy of the section)\n",
                call);
        return -1;
    }
    int64_t bytes = (int64_t)d->elem_len;
    for (int i = 0; i < d->rank; i++)
        bytes *= (int64_t)d->dim[i].extent;
    if (len > bytes) {
        fprintf(stderr, "fwdio (Fortran): %s: %lld bytes named, the buffer holds %lld\n", call,
                (long long)len, (long long)bytes);
        return -1;
    }
    *addr = d->base_addr;
    return 0;
}

int fwdio_f_init(MPI_Fint comm, fwdio_runtime_t **rt)
{
    *rt = NULL;
    return fwdio_init(MPI_Comm_f2c(comm), NULL, rt);
}

/* Options from the info's hints (fwdio_options_set_info), none for MPI_INFO_NULL. */
static int options_from(MPI_Fint info, fwdio_options_t *opts)
{
    fwdio_options_init(opts);
    MPI_Info c_info = MPI_Info_f2c(info);
    return c_info == MPI_INFO_NULL ? FWDIO_OK : fwdio_options_set_info(opts, c_info);
}

int fwdio_f_open(fwdio_runtime_t *rt, const char *path, int64_t size, MPI_Fint info,
                 fwdio_file_t **file)
{
    *file = NULL;
    fwdio_options_t opts;
    int rc = options_from(info, &opts);
    return rc != FWDIO_OK ? rc : fwdio_open(rt, path, (uint64_t)size, &opts, NULL, file);
}

int fwdio_f_open_read(fwdio_runtime_t *rt, const char *path, MPI_Fint info, fwdio_file_t **file)
{
    *file = NULL;
    fwdio_options_t opts;
    int rc = options_from(info, &opts);
    return rc != FWDIO_OK ? rc : fwdio_open_read(rt, path, &opts, NULL, file);
}

int fwdio_f_write(fwdio_file_t *file, const CFI_cdesc_t *buf, int64_t len, int64_t offset)
{
    void *p;
    if (usable(buf, len, "fwdio_write", &p) != 0 || offset < 0)
        return FWDIO_EINVAL;
    return fwdio_write(file, p, (size_t)len, (uint64_t)offset);
}

int fwdio_f_append(fwdio_file_t *file, const CFI_cdesc_t *buf, int64_t len)
{
    void *p;
    if (usable(buf, len, "fwdio_append", &p) != 0)
        return FWDIO_EINVAL;
    return fwdio_append(file, p, (size_t)len);
}

int fwdio_f_set_commit(fwdio_file_t *file, const CFI_cdesc_t *buf, int64_t len, int64_t offset)
{
    void *p;
    if (usable(buf, len, "fwdio_set_commit", &p) != 0 || offset < 0)
        return FWDIO_EINVAL;
    return fwdio_set_commit(file, p, (size_t)len, (uint64_t)offset);
}

int fwdio_f_read(fwdio_file_t *file, CFI_cdesc_t *buf, int64_t len, int64_t offset)
{
    void *p;
    if (usable(buf, len, "fwdio_read", &p) != 0 || offset < 0)
        return FWDIO_EINVAL;
    return fwdio_read(file, p, (size_t)len, (uint64_t)offset, NULL, NULL);
}

/* MPI_INFO_NULL as a Fortran handle (its value is the MPI library's). */
MPI_Fint fwdio_f_info_null(void) { return MPI_Info_c2f(MPI_INFO_NULL); }

/* Checkpoint sets' options: the set's directory ("" for the default), its
 * keep (0: the default) and the data file's options from the info's hints. */
static int ckpt_options_from(const char *dir, int keep, MPI_Fint info, fwdio_options_t *fo,
                             fwdio_ckpt_options_t *co)
{
    fwdio_ckpt_options_init(co);
    if (keep < 0)
        return FWDIO_EINVAL;
    co->dir = dir;
    co->keep = (unsigned)keep;
    co->file = fo;
    return options_from(info, fo);
}

int fwdio_f_ckpt_open(fwdio_runtime_t *rt, const char *name, const char *dir, int keep,
                      int64_t version, int64_t size, MPI_Fint info, fwdio_ckpt_t **ck)
{
    *ck = NULL;
    fwdio_options_t fo;
    fwdio_ckpt_options_t co;
    int rc = ckpt_options_from(dir, keep, info, &fo, &co);
    /* A negative version or size is refused on this rank; the open's own
     * agreement gives the other ranks FWDIO_EINVAL too. */
    if (rc == FWDIO_OK && (version < 0 || size < 0))
        name = "";
    return rc != FWDIO_OK ? rc
                          : fwdio_ckpt_open(rt, name, (uint64_t)version, (uint64_t)size, &co, ck);
}

int fwdio_f_ckpt_write(fwdio_ckpt_t *ck, const CFI_cdesc_t *buf, int64_t len, int64_t offset)
{
    void *p;
    if (usable(buf, len, "fwdio_ckpt_write", &p) != 0 || offset < 0)
        return FWDIO_EINVAL;
    return fwdio_ckpt_write(ck, p, (size_t)len, (uint64_t)offset);
}

/* `upto` negative (the Fortran wrapper's -1 without the argument): no bound. */
int fwdio_f_ckpt_latest(fwdio_runtime_t *rt, const char *name, const char *dir, MPI_Fint info,
                        int64_t upto, int64_t *version)
{
    fwdio_options_t fo;
    fwdio_ckpt_options_t co;
    uint64_t v = 0;
    *version = -1;
    int rc = ckpt_options_from(dir, 0, info, &fo, &co);
    if (rc == FWDIO_OK)
        rc = fwdio_ckpt_latest_upto(rt, name, &co, upto < 0 ? UINT64_MAX : (uint64_t)upto, &v);
    /* Fortran has no unsigned integers: versions past INT64_MAX are refused. */
    if (rc == FWDIO_OK && v > (uint64_t)INT64_MAX)
        return FWDIO_ERANGE;
    if (rc == FWDIO_OK)
        *version = (int64_t)v;
    return rc;
}

int fwdio_f_ckpt_open_read(fwdio_runtime_t *rt, const char *name, int64_t version,
                           const char *dir, MPI_Fint info, fwdio_file_t **file)
{
    *file = NULL;
    fwdio_options_t fo;
    fwdio_ckpt_options_t co;
    int rc = ckpt_options_from(dir, 0, info, &fo, &co);
    if (rc == FWDIO_OK && version < 0)
        name = "";
    return rc != FWDIO_OK ? rc : fwdio_ckpt_open_read(rt, name, (uint64_t)version, &co, NULL, file);
}
