/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The Fortran bindings of the calls the layer takes over (calls.c): a
 * Fortran code's mpi_file_write_at_all and friends. MPI's own Fortran
 * bindings call the C profiling interface (PMPI_File_*) directly, so a
 * Fortran program would never reach the layer's C entry points; these
 * definitions, found first as the layer is preloaded, do what MPI's bindings
 * do (convert the handles with the f2c/c2f calls, the file name and datarep
 * from blank-padded Fortran strings, LOGICAL flags, MPI_STATUS_IGNORE through
 * MPI_F_STATUS_IGNORE) and call the layer's C entry point of the same call,
 * which hands a file that is not taken to MPI-IO.
 *
 * Each call is defined once and exported under the names Fortran compilers
 * give it: mpi_file_open_ (gfortran, the `mpi` module and mpif.h),
 * mpi_file_open__, mpi_file_open, MPI_FILE_OPEN, and mpi_file_open_f08_ (the
 * `mpi_f08` module's procedures in Open MPI and MPICH, whose handles are the
 * same integers inside a derived type and whose ierror is optional: NULL when
 * absent; MPICH's mpi_f08 calls with a buffer are mpi_*_f08ts_, which take
 * array descriptors and call the C MPI_File_* themselves, so they reach the
 * layer's C entry points). Choice buffers arrive as addresses (MPI's
 * bindings ignore type, kind and rank); Open MPI's and MPICH's Fortran
 * MPI_BOTTOM are recognised when their symbols are there.
 */
#include "layer.h"

#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

/* Open MPI's Fortran MPI_BOTTOM (a common block of its Fortran library), and
 * MPICH's (libmpichfort's MPIR_F_MPI_BOTTOM holds the address `use mpi` and
 * mpif.h pass for it, which MPICH's own bindings compare with): weak, so
 * that the layer loads into programs without them. */
extern int mpi_fortran_bottom_ __attribute__((weak));
extern void *MPIR_F_MPI_BOTTOM __attribute__((weak));

static void *c_buf(void *buf)
{
    if (&mpi_fortran_bottom_ && buf == (void *)&mpi_fortran_bottom_)
        return MPI_BOTTOM;
    if (&MPIR_F_MPI_BOTTOM && MPIR_F_MPI_BOTTOM && buf == MPIR_F_MPI_BOTTOM)
        return MPI_BOTTOM;
    return buf;
}

static void set_ierr(MPI_Fint *ierr, int rc)
{
    if (ierr)
        *ierr = (MPI_Fint)rc;
}

static void status_out(const MPI_Status *c, MPI_Fint *f)
{
    if (f && f != MPI_F_STATUS_IGNORE)
        MPI_Status_c2f(c, f);
}

/* A Fortran string without its trailing blanks (and leading ones, as MPI's
 * bindings drop them too), as a C string; NULL without memory. */
static char *c_string(const char *s, size_t len)
{
    while (len > 0 && s[len - 1] == ' ')
        len--;
    while (len > 0 && *s == ' ') {
        s++;
        len--;
    }
    char *c = malloc(len + 1);
    if (c) {
        memcpy(c, s, len);
        c[len] = '\0';
    }
    return c;
}

/* The five names of one call (see the top). */
#define FORTRAN_NAMES(impl, lower, upper)                                                     \
    extern __typeof__(impl) lower##_ EXPORT __attribute__((alias(#impl)));                   \
    extern __typeof__(impl) lower##__ EXPORT __attribute__((alias(#impl)));                  \
    extern __typeof__(impl) lower EXPORT __attribute__((alias(#impl)));                      \
    extern __typeof__(impl) upper EXPORT __attribute__((alias(#impl)));                      \
    extern __typeof__(impl) lower##_f08_ EXPORT __attribute__((alias(#impl)));

/* ---- reads and writes at the individual or shared pointer:
 * (fh, buf, count, datatype, status, ierr) */
#define AT_POINTER(call, lower, upper)                                                        \
    static void f_##lower(MPI_Fint *fh, void *buf, MPI_Fint *count, MPI_Fint *type,          \
                          MPI_Fint *status, MPI_Fint *ierr)                                   \
    {                                                                                         \
        MPI_Status s;                                                                         \
        set_ierr(ierr, call(MPI_File_f2c(*fh), c_buf(buf), (int)*count, MPI_Type_f2c(*type),  \
                            &s));                                                             \
        status_out(&s, status);                                                               \
    }                                                                                         \
    FORTRAN_NAMES(f_##lower, lower, upper)

AT_POINTER(MPI_File_read, mpi_file_read, MPI_FILE_READ)
AT_POINTER(MPI_File_read_all, mpi_file_read_all, MPI_FILE_READ_ALL)
AT_POINTER(MPI_File_read_shared, mpi_file_read_shared, MPI_FILE_READ_SHARED)
AT_POINTER(MPI_File_read_ordered, mpi_file_read_ordered, MPI_FILE_READ_ORDERED)
AT_POINTER(MPI_File_write, mpi_file_write, MPI_FILE_WRITE)
AT_POINTER(MPI_File_write_all, mpi_file_write_all, MPI_FILE_WRITE_ALL)
AT_POINTER(MPI_File_write_shared, mpi_file_write_shared, MPI_FILE_WRITE_SHARED)
AT_POINTER(MPI_File_write_ordered, mpi_file_write_ordered, MPI_FILE_WRITE_ORDERED)

/* ---- at an explicit offset: (fh, offset, buf, count, datatype, status, ierr) */
#define AT_OFFSET(call, lower, upper)                                                         \
    static void f_##lower(MPI_Fint *fh, MPI_Offset *offset, void *buf, MPI_Fint *count,      \
                          MPI_Fint *type, MPI_Fint *status, MPI_Fint *ierr)                   \
    {                                                                                         \
        MPI_Status s;                                                                         \
        set_ierr(ierr, call(MPI_File_f2c(*fh), *offset, c_buf(buf), (int)*count,              \
                            MPI_Type_f2c(*type), &s));                                        \
        status_out(&s, status);                                                               \
    }                                                                                         \
    FORTRAN_NAMES(f_##lower, lower, upper)

AT_OFFSET(MPI_File_read_at, mpi_file_read_at, MPI_FILE_READ_AT)
AT_OFFSET(MPI_File_read_at_all, mpi_file_read_at_all, MPI_FILE_READ_AT_ALL)
AT_OFFSET(MPI_File_write_at, mpi_file_write_at, MPI_FILE_WRITE_AT)
AT_OFFSET(MPI_File_write_at_all, mpi_file_write_at_all, MPI_FILE_WRITE_AT_ALL)

/* ---- nonblocking: (fh, buf, count, datatype, request, ierr) */
#define NB_POINTER(call, lower, upper)                                                        \
    static void f_##lower(MPI_Fint *fh, void *buf, MPI_Fint *count, MPI_Fint *type,          \
                          MPI_Fint *request, MPI_Fint *ierr)                                  \
    {                                                                                         \
        MPI_Request r = MPI_REQUEST_NULL;                                                     \
        int rc = call(MPI_File_f2c(*fh), c_buf(buf), (int)*count, MPI_Type_f2c(*type), &r);   \
        if (rc == MPI_SUCCESS)                                                                \
            *request = MPI_Request_c2f(r);                                                    \
        set_ierr(ierr, rc);                                                                   \
    }                                                                                         \
    FORTRAN_NAMES(f_##lower, lower, upper)

NB_POINTER(MPI_File_iread, mpi_file_iread, MPI_FILE_IREAD)
NB_POINTER(MPI_File_iread_all, mpi_file_iread_all, MPI_FILE_IREAD_ALL)
NB_POINTER(MPI_File_iread_shared, mpi_file_iread_shared, MPI_FILE_IREAD_SHARED)
NB_POINTER(MPI_File_iwrite, mpi_file_iwrite, MPI_FILE_IWRITE)
NB_POINTER(MPI_File_iwrite_all, mpi_file_iwrite_all, MPI_FILE_IWRITE_ALL)
NB_POINTER(MPI_File_iwrite_shared, mpi_file_iwrite_shared, MPI_FILE_IWRITE_SHARED)

/* (fh, offset, buf, count, datatype, request, ierr) */
#define NB_OFFSET(call, lower, upper)                                                         \
    static void f_##lower(MPI_Fint *fh, MPI_Offset *offset, void *buf, MPI_Fint *count,      \
                          MPI_Fint *type, MPI_Fint *request, MPI_Fint *ierr)                  \
    {                                                                                         \
        MPI_Request r = MPI_REQUEST_NULL;                                                     \
        int rc = call(MPI_File_f2c(*fh), *offset, c_buf(buf), (int)*count,                   \
                      MPI_Type_f2c(*type), &r);                                               \
        if (rc == MPI_SUCCESS)                                                                \
            *request = MPI_Request_c2f(r);                                                    \
        set_ierr(ierr, rc);                                                                   \
    }                                                                                         \
    FORTRAN_NAMES(f_##lower, lower, upper)

NB_OFFSET(MPI_File_iread_at, mpi_file_iread_at, MPI_FILE_IREAD_AT)
NB_OFFSET(MPI_File_iread_at_all, mpi_file_iread_at_all, MPI_FILE_IREAD_AT_ALL)
NB_OFFSET(MPI_File_iwrite_at, mpi_file_iwrite_at, MPI_FILE_IWRITE_AT)
NB_OFFSET(MPI_File_iwrite_at_all, mpi_file_iwrite_at_all, MPI_FILE_IWRITE_AT_ALL)

/* ---- split collectives' beginnings: (fh, [offset,] buf, count, datatype, ierr) */
#define BEGIN_POINTER(call, lower, upper)                                                     \
    static void f_##lower(MPI_Fint *fh, void *buf, MPI_Fint *count, MPI_Fint *type,          \
                          MPI_Fint *ierr)                                                     \
    {                                                                                         \
        set_ierr(ierr, call(MPI_File_f2c(*fh), c_buf(buf), (int)*count, MPI_Type_f2c(*type)));\
    }                                                                                         \
    FORTRAN_NAMES(f_##lower, lower, upper)

BEGIN_POINTER(MPI_File_read_all_begin, mpi_file_read_all_begin, MPI_FILE_READ_ALL_BEGIN)
BEGIN_POINTER(MPI_File_read_ordered_begin, mpi_file_read_ordered_begin,
              MPI_FILE_READ_ORDERED_BEGIN)
BEGIN_POINTER(MPI_File_write_all_begin, mpi_file_write_all_begin, MPI_FILE_WRITE_ALL_BEGIN)
BEGIN_POINTER(MPI_File_write_ordered_begin, mpi_file_write_ordered_begin,
              MPI_FILE_WRITE_ORDERED_BEGIN)

#define BEGIN_OFFSET(call, lower, upper)                                                      \
    static void f_##lower(MPI_Fint *fh, MPI_Offset *offset, void *buf, MPI_Fint *count,      \
                          MPI_Fint *type, MPI_Fint *ierr)                                     \
    {                                                                                         \
        set_ierr(ierr, call(MPI_File_f2c(*fh), *offset, c_buf(buf), (int)*count,              \
                            MPI_Type_f2c(*type)));                                            \
    }                                                                                         \
    FORTRAN_NAMES(f_##lower, lower, upper)

BEGIN_OFFSET(MPI_File_read_at_all_begin, mpi_file_read_at_all_begin, MPI_FILE_READ_AT_ALL_BEGIN)
BEGIN_OFFSET(MPI_File_write_at_all_begin, mpi_file_write_at_all_begin,
             MPI_FILE_WRITE_AT_ALL_BEGIN)

/* ---- (fh, offset value, ierr) and (fh, offset out, ierr) */
#define FH_OFFSET_IN(call, lower, upper)                                                      \
    static void f_##lower(MPI_Fint *fh, MPI_Offset *offset, MPI_Fint *ierr)                  \
    {                                                                                         \
        set_ierr(ierr, call(MPI_File_f2c(*fh), *offset));                                     \
    }                                                                                         \
    FORTRAN_NAMES(f_##lower, lower, upper)

FH_OFFSET_IN(MPI_File_preallocate, mpi_file_preallocate, MPI_FILE_PREALLOCATE)
FH_OFFSET_IN(MPI_File_set_size, mpi_file_set_size, MPI_FILE_SET_SIZE)

#define FH_OFFSET_OUT(call, lower, upper)                                                     \
    static void f_##lower(MPI_Fint *fh, MPI_Offset *offset, MPI_Fint *ierr)                  \
    {                                                                                         \
        MPI_Offset v = 0;                                                                     \
        int rc = call(MPI_File_f2c(*fh), &v);                                                 \
        if (rc == MPI_SUCCESS)                                                                \
            *offset = v;                                                                      \
        set_ierr(ierr, rc);                                                                   \
    }                                                                                         \
    FORTRAN_NAMES(f_##lower, lower, upper)

FH_OFFSET_OUT(MPI_File_get_position, mpi_file_get_position, MPI_FILE_GET_POSITION)
FH_OFFSET_OUT(MPI_File_get_size, mpi_file_get_size, MPI_FILE_GET_SIZE)

/* (fh, offset, whence, ierr) */
#define SEEK(call, lower, upper)                                                              \
    static void f_##lower(MPI_Fint *fh, MPI_Offset *offset, MPI_Fint *whence, MPI_Fint *ierr)\
    {                                                                                         \
        set_ierr(ierr, call(MPI_File_f2c(*fh), *offset, (int)*whence));                       \
    }                                                                                         \
    FORTRAN_NAMES(f_##lower, lower, upper)

SEEK(MPI_File_seek, mpi_file_seek, MPI_FILE_SEEK)
SEEK(MPI_File_seek_shared, mpi_file_seek_shared, MPI_FILE_SEEK_SHARED)

/* ---- the rest, one by one */
static void f_mpi_file_get_byte_offset(MPI_Fint *fh, MPI_Offset *offset, MPI_Offset *disp,
                                       MPI_Fint *ierr)
{
    MPI_Offset v = 0;
    int rc = MPI_File_get_byte_offset(MPI_File_f2c(*fh), *offset, &v);
    if (rc == MPI_SUCCESS)
        *disp = v;
    set_ierr(ierr, rc);
}
FORTRAN_NAMES(f_mpi_file_get_byte_offset, mpi_file_get_byte_offset, MPI_FILE_GET_BYTE_OFFSET)

static void f_mpi_file_sync(MPI_Fint *fh, MPI_Fint *ierr)
{
    set_ierr(ierr, MPI_File_sync(MPI_File_f2c(*fh)));
}
FORTRAN_NAMES(f_mpi_file_sync, mpi_file_sync, MPI_FILE_SYNC)

static void f_mpi_file_set_atomicity(MPI_Fint *fh, MPI_Fint *flag, MPI_Fint *ierr)
{
    set_ierr(ierr, MPI_File_set_atomicity(MPI_File_f2c(*fh), *flag != 0));
}
FORTRAN_NAMES(f_mpi_file_set_atomicity, mpi_file_set_atomicity, MPI_FILE_SET_ATOMICITY)

static void f_mpi_file_get_info(MPI_Fint *fh, MPI_Fint *info, MPI_Fint *ierr)
{
    MPI_Info i = MPI_INFO_NULL;
    int rc = MPI_File_get_info(MPI_File_f2c(*fh), &i);
    if (rc == MPI_SUCCESS)
        *info = MPI_Info_c2f(i);
    set_ierr(ierr, rc);
}
FORTRAN_NAMES(f_mpi_file_get_info, mpi_file_get_info, MPI_FILE_GET_INFO)

static void f_mpi_file_close(MPI_Fint *fh, MPI_Fint *ierr)
{
    MPI_File c = MPI_File_f2c(*fh);
    int rc = MPI_File_close(&c);
    if (rc == MPI_SUCCESS)
        *fh = MPI_File_c2f(c);
    set_ierr(ierr, rc);
}
FORTRAN_NAMES(f_mpi_file_close, mpi_file_close, MPI_FILE_CLOSE)

static void f_mpi_file_open(MPI_Fint *comm, char *name, MPI_Fint *amode, MPI_Fint *info,
                            MPI_Fint *fh, MPI_Fint *ierr, size_t name_len)
{
    char *path = c_string(name, name_len);
    if (!path) {
        set_ierr(ierr, MPI_ERR_NO_MEM);
        return;
    }
    MPI_File c = MPI_FILE_NULL;
    int rc = MPI_File_open(MPI_Comm_f2c(*comm), path, (int)*amode, MPI_Info_f2c(*info), &c);
    free(path);
    if (rc == MPI_SUCCESS)
        *fh = MPI_File_c2f(c);
    set_ierr(ierr, rc);
}
FORTRAN_NAMES(f_mpi_file_open, mpi_file_open, MPI_FILE_OPEN)

static void f_mpi_file_delete(char *name, MPI_Fint *info, MPI_Fint *ierr, size_t name_len)
{
    char *path = c_string(name, name_len);
    if (!path) {
        set_ierr(ierr, MPI_ERR_NO_MEM);
        return;
    }
    set_ierr(ierr, MPI_File_delete(path, MPI_Info_f2c(*info)));
    free(path);
}
FORTRAN_NAMES(f_mpi_file_delete, mpi_file_delete, MPI_FILE_DELETE)

static void f_mpi_file_set_view(MPI_Fint *fh, MPI_Offset *disp, MPI_Fint *etype,
                                MPI_Fint *filetype, char *datarep, MPI_Fint *info,
                                MPI_Fint *ierr, size_t datarep_len)
{
    char *rep = c_string(datarep, datarep_len);
    if (!rep) {
        set_ierr(ierr, MPI_ERR_NO_MEM);
        return;
    }
    set_ierr(ierr, MPI_File_set_view(MPI_File_f2c(*fh), *disp, MPI_Type_f2c(*etype),
                                     MPI_Type_f2c(*filetype), rep, MPI_Info_f2c(*info)));
    free(rep);
}
FORTRAN_NAMES(f_mpi_file_set_view, mpi_file_set_view, MPI_FILE_SET_VIEW)

/* ---- MPI_INIT, MPI_INIT_THREAD, MPI_FINALIZE: the layer asks for
 * MPI_THREAD_MULTIPLE and finalizes its runtimes (calls.c) */
static void f_mpi_init(MPI_Fint *ierr)
{
    int argc = 0;
    char **argv = NULL;
    set_ierr(ierr, MPI_Init(&argc, &argv));
}
FORTRAN_NAMES(f_mpi_init, mpi_init, MPI_INIT)

static void f_mpi_init_thread(MPI_Fint *required, MPI_Fint *provided, MPI_Fint *ierr)
{
    int argc = 0, got = MPI_THREAD_SINGLE;
    char **argv = NULL;
    int rc = MPI_Init_thread(&argc, &argv, (int)*required, &got);
    if (rc == MPI_SUCCESS)
        *provided = (MPI_Fint)got;
    set_ierr(ierr, rc);
}
FORTRAN_NAMES(f_mpi_init_thread, mpi_init_thread, MPI_INIT_THREAD)

static void f_mpi_finalize(MPI_Fint *ierr) { set_ierr(ierr, MPI_Finalize()); }
FORTRAN_NAMES(f_mpi_finalize, mpi_finalize, MPI_FINALIZE)
