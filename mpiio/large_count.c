/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MPI-4's large-count data calls (MPI_File_write_at_c and the others with an
 * MPI_Count count): the same calls as the int-count ones in calls.c, which
 * they become. Without them an MPI-4 program (IOR, HDF5 and PnetCDF built
 * against an MPI-4 library use them) would reach MPI-IO directly on a file
 * the layer took: its writes would overtake the layer's earlier ones of the
 * same bytes, and its reads would miss this rank's writes still on their
 * way. A count that fits an int is passed as it is; a larger one becomes one
 * element of a contiguous type of `count` elements (the layer takes memory
 * types of any size, and the status counts bytes, so MPI_Get_count_c on it
 * gives the elements of the caller's type). Only where the MPI library has
 * them (MPI_VERSION 4: MPICH 4; Open MPI 4.1 has none).
 */
#include "layer.h"

#if MPI_VERSION >= 4

#include <limits.h>

/* (count, type) as the int-count calls take them; *made is a type made
 * here (MPI_DATATYPE_NULL if none), for the caller to free after the call
 * (a nonblocking call keeps what it needs of it: MPI's rule). */
static int as_int_count(MPI_Count count, MPI_Datatype type, int *n, MPI_Datatype *t,
                        MPI_Datatype *made)
{
    *made = MPI_DATATYPE_NULL;
    *t = type;
    if (count <= INT_MAX) { /* a negative one: the call's MPI_ERR_COUNT */
        *n = count < INT_MIN ? -1 : (int)count;
        return MPI_SUCCESS;
    }
    /* Made with the int-count constructors, which every MPI the layer
     * builds with has: `count / CHUNK` chunks of CHUNK elements, then the
     * rest. */
    enum { CHUNK = 1 << 30 };
    MPI_Count q = count / CHUNK, r = count % CHUNK;
    MPI_Aint lb = 0, extent = 0;
    MPI_Datatype chunk = MPI_DATATYPE_NULL;
    int rc = q > INT_MAX ? MPI_ERR_COUNT : PMPI_Type_get_extent(type, &lb, &extent);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Type_contiguous(CHUNK, type, &chunk);
    if (rc == MPI_SUCCESS && r == 0) {
        rc = PMPI_Type_contiguous((int)q, chunk, made);
    } else if (rc == MPI_SUCCESS) {
        int lens[2] = {(int)q, (int)r};
        MPI_Aint at[2] = {0, (MPI_Aint)(q * CHUNK) * extent};
        MPI_Datatype types[2] = {chunk, type};
        rc = PMPI_Type_create_struct(2, lens, at, types, made);
    }
    if (chunk != MPI_DATATYPE_NULL)
        PMPI_Type_free(&chunk);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Type_commit(made);
    *n = 1;
    *t = *made;
    return rc;
}

/* The body of a large-count call: the int-count call `call` with the
 * arguments given (n_ and t_ standing for count and type). */
#define VIA_INT(call, ...)                                          \
    do {                                                            \
        int n_;                                                     \
        MPI_Datatype t_, made_;                                     \
        int rc_ = as_int_count(count, type, &n_, &t_, &made_);      \
        if (rc_ == MPI_SUCCESS)                                     \
            rc_ = call(__VA_ARGS__);                                \
        if (made_ != MPI_DATATYPE_NULL)                             \
            PMPI_Type_free(&made_);                                 \
        return rc_;                                                 \
    } while (0)

/* The same for a nonblocking call: no request if it could not start. */
#define VIA_INT_REQUEST(call, ...)                                  \
    do {                                                            \
        int n_;                                                     \
        MPI_Datatype t_, made_;                                     \
        int rc_ = as_int_count(count, type, &n_, &t_, &made_);      \
        if (rc_ == MPI_SUCCESS)                                     \
            rc_ = call(__VA_ARGS__);                                \
        else                                                        \
            *request = MPI_REQUEST_NULL;                            \
        if (made_ != MPI_DATATYPE_NULL)                             \
            PMPI_Type_free(&made_);                                 \
        return rc_;                                                 \
    } while (0)

/* --- writes --------------------------------------------------------------- */

MPIIO_EXPORT int MPI_File_write_at_c(MPI_File fh, MPI_Offset offset, const void *buf,
                                     MPI_Count count, MPI_Datatype type, MPI_Status *status)
{
    VIA_INT(MPI_File_write_at, fh, offset, buf, n_, t_, status);
}

MPIIO_EXPORT int MPI_File_write_at_all_c(MPI_File fh, MPI_Offset offset, const void *buf,
                                         MPI_Count count, MPI_Datatype type, MPI_Status *status)
{
    VIA_INT(MPI_File_write_at_all, fh, offset, buf, n_, t_, status);
}

MPIIO_EXPORT int MPI_File_write_c(MPI_File fh, const void *buf, MPI_Count count,
                                  MPI_Datatype type, MPI_Status *status)
{
    VIA_INT(MPI_File_write, fh, buf, n_, t_, status);
}

MPIIO_EXPORT int MPI_File_write_all_c(MPI_File fh, const void *buf, MPI_Count count,
                                      MPI_Datatype type, MPI_Status *status)
{
    VIA_INT(MPI_File_write_all, fh, buf, n_, t_, status);
}

MPIIO_EXPORT int MPI_File_iwrite_at_c(MPI_File fh, MPI_Offset offset, const void *buf,
                                      MPI_Count count, MPI_Datatype type, MPI_Request *request)
{
    VIA_INT_REQUEST(MPI_File_iwrite_at, fh, offset, buf, n_, t_, request);
}

MPIIO_EXPORT int MPI_File_iwrite_at_all_c(MPI_File fh, MPI_Offset offset, const void *buf,
                                          MPI_Count count, MPI_Datatype type,
                                          MPI_Request *request)
{
    VIA_INT_REQUEST(MPI_File_iwrite_at_all, fh, offset, buf, n_, t_, request);
}

MPIIO_EXPORT int MPI_File_iwrite_c(MPI_File fh, const void *buf, MPI_Count count,
                                   MPI_Datatype type, MPI_Request *request)
{
    VIA_INT_REQUEST(MPI_File_iwrite, fh, buf, n_, t_, request);
}

MPIIO_EXPORT int MPI_File_iwrite_all_c(MPI_File fh, const void *buf, MPI_Count count,
                                       MPI_Datatype type, MPI_Request *request)
{
    VIA_INT_REQUEST(MPI_File_iwrite_all, fh, buf, n_, t_, request);
}

MPIIO_EXPORT int MPI_File_write_shared_c(MPI_File fh, const void *buf, MPI_Count count,
                                         MPI_Datatype type, MPI_Status *status)
{
    VIA_INT(MPI_File_write_shared, fh, buf, n_, t_, status);
}

MPIIO_EXPORT int MPI_File_iwrite_shared_c(MPI_File fh, const void *buf, MPI_Count count,
                                          MPI_Datatype type, MPI_Request *request)
{
    VIA_INT_REQUEST(MPI_File_iwrite_shared, fh, buf, n_, t_, request);
}

MPIIO_EXPORT int MPI_File_write_ordered_c(MPI_File fh, const void *buf, MPI_Count count,
                                          MPI_Datatype type, MPI_Status *status)
{
    VIA_INT(MPI_File_write_ordered, fh, buf, n_, t_, status);
}

/* The split collectives' begin calls: their made type is freed at once,
 * which MPI allows (the operation keeps what it needs). */
MPIIO_EXPORT int MPI_File_write_at_all_begin_c(MPI_File fh, MPI_Offset offset, const void *buf,
                                               MPI_Count count, MPI_Datatype type)
{
    VIA_INT(MPI_File_write_at_all_begin, fh, offset, buf, n_, t_);
}

MPIIO_EXPORT int MPI_File_write_all_begin_c(MPI_File fh, const void *buf, MPI_Count count,
                                            MPI_Datatype type)
{
    VIA_INT(MPI_File_write_all_begin, fh, buf, n_, t_);
}

MPIIO_EXPORT int MPI_File_write_ordered_begin_c(MPI_File fh, const void *buf, MPI_Count count,
                                                MPI_Datatype type)
{
    VIA_INT(MPI_File_write_ordered_begin, fh, buf, n_, t_);
}

/* --- reads ---------------------------------------------------------------- */

MPIIO_EXPORT int MPI_File_read_at_c(MPI_File fh, MPI_Offset offset, void *buf, MPI_Count count,
                                    MPI_Datatype type, MPI_Status *status)
{
    VIA_INT(MPI_File_read_at, fh, offset, buf, n_, t_, status);
}

MPIIO_EXPORT int MPI_File_read_at_all_c(MPI_File fh, MPI_Offset offset, void *buf,
                                        MPI_Count count, MPI_Datatype type, MPI_Status *status)
{
    VIA_INT(MPI_File_read_at_all, fh, offset, buf, n_, t_, status);
}

MPIIO_EXPORT int MPI_File_read_c(MPI_File fh, void *buf, MPI_Count count, MPI_Datatype type,
                                 MPI_Status *status)
{
    VIA_INT(MPI_File_read, fh, buf, n_, t_, status);
}

MPIIO_EXPORT int MPI_File_read_all_c(MPI_File fh, void *buf, MPI_Count count,
                                     MPI_Datatype type, MPI_Status *status)
{
    VIA_INT(MPI_File_read_all, fh, buf, n_, t_, status);
}

MPIIO_EXPORT int MPI_File_iread_at_c(MPI_File fh, MPI_Offset offset, void *buf,
                                     MPI_Count count, MPI_Datatype type, MPI_Request *request)
{
    VIA_INT_REQUEST(MPI_File_iread_at, fh, offset, buf, n_, t_, request);
}

MPIIO_EXPORT int MPI_File_iread_at_all_c(MPI_File fh, MPI_Offset offset, void *buf,
                                         MPI_Count count, MPI_Datatype type,
                                         MPI_Request *request)
{
    VIA_INT_REQUEST(MPI_File_iread_at_all, fh, offset, buf, n_, t_, request);
}

MPIIO_EXPORT int MPI_File_iread_c(MPI_File fh, void *buf, MPI_Count count, MPI_Datatype type,
                                  MPI_Request *request)
{
    VIA_INT_REQUEST(MPI_File_iread, fh, buf, n_, t_, request);
}

MPIIO_EXPORT int MPI_File_iread_all_c(MPI_File fh, void *buf, MPI_Count count,
                                      MPI_Datatype type, MPI_Request *request)
{
    VIA_INT_REQUEST(MPI_File_iread_all, fh, buf, n_, t_, request);
}

MPIIO_EXPORT int MPI_File_read_shared_c(MPI_File fh, void *buf, MPI_Count count,
                                        MPI_Datatype type, MPI_Status *status)
{
    VIA_INT(MPI_File_read_shared, fh, buf, n_, t_, status);
}

MPIIO_EXPORT int MPI_File_iread_shared_c(MPI_File fh, void *buf, MPI_Count count,
                                         MPI_Datatype type, MPI_Request *request)
{
    VIA_INT_REQUEST(MPI_File_iread_shared, fh, buf, n_, t_, request);
}

MPIIO_EXPORT int MPI_File_read_ordered_c(MPI_File fh, void *buf, MPI_Count count,
                                         MPI_Datatype type, MPI_Status *status)
{
    VIA_INT(MPI_File_read_ordered, fh, buf, n_, t_, status);
}

MPIIO_EXPORT int MPI_File_read_at_all_begin_c(MPI_File fh, MPI_Offset offset, void *buf,
                                              MPI_Count count, MPI_Datatype type)
{
    VIA_INT(MPI_File_read_at_all_begin, fh, offset, buf, n_, t_);
}

MPIIO_EXPORT int MPI_File_read_all_begin_c(MPI_File fh, void *buf, MPI_Count count,
                                           MPI_Datatype type)
{
    VIA_INT(MPI_File_read_all_begin, fh, buf, n_, t_);
}

MPIIO_EXPORT int MPI_File_read_ordered_begin_c(MPI_File fh, void *buf, MPI_Count count,
                                               MPI_Datatype type)
{
    VIA_INT(MPI_File_read_ordered_begin, fh, buf, n_, t_);
}

#else
/* An MPI without them: nothing to route (ISO C wants a declaration). */
typedef int mpiio_large_count_unused;
#endif
