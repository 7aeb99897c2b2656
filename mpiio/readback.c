/* SPDX-License-Identifier: BSD-3-Clause */
/* Independent reads of bytes this rank wrote since its last collective call
 * on the file. Those bytes may still be on their way to fwdio's writers, and
 * only a collective call can wait for them; so the layer keeps a copy of
 * each (up to FWDIO_MPIIO_READBACK bytes per file and step; the step's
 * independent writes past that are written at once by the layer, access.c),
 * reads the file through MPI-IO once the ended steps are in it, and lays the
 * kept bytes over what it read. */
#include "layer.h"

#include <stdlib.h>
#include <string.h>

/* --- laying them over a read ------------------------------------------------- */

typedef struct patch_ctx {
    const mpiio_file_t *f;
    char *data;  /* the read's packed data; NULL: only find how far patches reach */
    int64_t top; /* the highest data position a patch reaches */
} patch_ctx_t;

/* Copy bytes [src_off, src_off + src_len) of the file, held at src, where
 * they meet the read's extent of `len` bytes at file offset `off`, which are
 * data bytes from `data_pos` on. */
static void lay(patch_ctx_t *p, int64_t off, int64_t len, int64_t data_pos, const char *src,
                int64_t src_off, int64_t src_len)
{
    int64_t lo = off > src_off ? off : src_off;
    int64_t hi = off + len < src_off + src_len ? off + len : src_off + src_len;
    if (lo >= hi)
        return;
    if (p->data)
        memcpy(p->data + data_pos + (lo - off), src + (lo - src_off), (size_t)(hi - lo));
    if (data_pos + (hi - off) > p->top)
        p->top = data_pos + (hi - off);
}

/* The stream's copies first (disjoint), then the overlay in call order: the
 * later write wins. */
static int patch_extent(void *arg, int64_t off, int64_t len, int64_t data_pos)
{
    patch_ctx_t *p = arg;
    const mpiio_copies_t *k = &p->f->copies;
    for (size_t i = 0; i < k->n; i++)
        lay(p, off, len, data_pos, k->data + k->c[i].at, k->c[i].off, k->c[i].len);
    for (const mpiio_overlay_t *o = p->f->overlay; o; o = o->next)
        lay(p, off, len, data_pos, o->data, o->off, o->len);
    return 0;
}

/* Write the kept copies to the file, in call order (adjacent ones in one
 * pwrite), and keep none: a read patches every copy it meets, so many small
 * ones (HDF5's point selections: millions of 16-byte pieces, each read back)
 * would make every read cost as many copies as the step holds. The stream
 * still has the same bytes of this rank's and writes them again, the same;
 * the rank's later writes of them in the step are in the overlay, laid over
 * reads and written after the step, as before. The steps ended before are
 * in the file (the caller settled them). */
static int flush_copies(mpiio_file_t *f, const char *call)
{
    int code = mpiio_direct_write_copies(f, &f->copies, call);
    mpiio_copies_clear(&f->copies);
    return code;
}

int mpiio_read_own(mpiio_file_t *f, int64_t offset, void *buf, int count, MPI_Datatype type,
                   int64_t *bytes, const char *call)
{
    int64_t n = 0;
    int cls = mpiio_type_bytes(count, type, &n);
    if (cls != MPI_SUCCESS)
        return mpiio_refuse(f, cls, "%s: a negative count or an invalid datatype", call);
    if (f->copies.n > MPIIO_PATCH_MAX) {
        int code = flush_copies(f, call);
        if (code != MPI_SUCCESS)
            return code;
    }
    MPI_Status st;
    int rc = PMPI_File_read_at(f->fh, offset, buf, count, type, &st);
    if (rc != MPI_SUCCESS)
        return rc;
    MPI_Count got = 0; /* bytes MPI-IO read: fewer at the end of the file */
    PMPI_Get_elements_x(&st, MPI_BYTE, &got);
    if (got < 0)
        got = 0;
    if (got > n)
        got = n;
    /* The read's data, packed: the buffer itself when it is one run. */
    const char *in;
    char *packed = NULL;
    int prc = mpiio_pack(buf, count, type, n, &in, &packed);
    if (prc != MPI_SUCCESS)
        return mpiio_refuse(f, prc, "%s: the read's data could not be laid out to patch", call);
    char *data = (char *)in; /* the application's buffer, or our packed copy */
    int64_t pos = offset * f->view.etype_size;
    patch_ctx_t p = {.f = f, .data = NULL, .top = 0};
    mpiio_view_map(&f->view, pos, n, patch_extent, &p);
    /* Bytes past what the file holds now but below this rank's kept bytes
     * are holes once those are written: they read as zeros. */
    if (p.top > got)
        memset(data + got, 0, (size_t)(p.top - got));
    p.data = data;
    mpiio_view_map(&f->view, pos, n, patch_extent, &p);
    if (packed) {
        mpiio_unpack(packed, n, buf, count, type);
        free(packed);
    }
    *bytes = p.top > got ? p.top : (int64_t)got;
    return MPI_SUCCESS;
}
