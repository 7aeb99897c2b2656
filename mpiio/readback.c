/* Independent reads of bytes this rank wrote since its last collective call
 * on the file. Those bytes may still be on their way to fwdio's writers, and
 * only a collective call can wait for them; so the layer keeps a copy of
 * each (up to FWDIO_MPIIO_READBACK bytes per file and step), reads the file
 * through MPI-IO once the ended steps are in it, and lays the kept bytes
 * over what it read. */
#include "layer.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* --- the copies ------------------------------------------------------------- */

static int grow(void **p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return 0;
    size_t n = *cap ? *cap : 64;
    while (n < need)
        n *= 2;
    void *q = realloc(*p, n * elem);
    if (!q)
        return -1;
    *p = q;
    *cap = n;
    return 0;
}

void mpiio_copies_keep(mpiio_copies_t *k, const char *data, int64_t len, int64_t off,
                       int64_t limit)
{
    if (k->incomplete)
        return;
    if ((int64_t)k->used + len > limit ||
        grow((void **)&k->data, &k->data_cap, k->used + (size_t)len, 1) != 0 ||
        grow((void **)&k->c, &k->cap, k->n + 1, sizeof(*k->c)) != 0) {
        k->incomplete = 1; /* reads of this step's bytes are refused instead */
        return;
    }
    memcpy(k->data + k->used, data, (size_t)len);
    k->c[k->n++] = (mpiio_copy_t){.off = off, .len = len, .at = k->used};
    k->used += (size_t)len;
}

void mpiio_copies_clear(mpiio_copies_t *k)
{
    k->used = 0;
    k->n = 0;
    k->incomplete = 0;
}

void mpiio_copies_free(mpiio_copies_t *k)
{
    free(k->data);
    free(k->c);
    *k = (mpiio_copies_t){0};
}

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

int mpiio_read_own(mpiio_file_t *f, int64_t offset, void *buf, int count, MPI_Datatype type,
                   int64_t *bytes, const char *call)
{
    int size = 0;
    PMPI_Type_size(type, &size);
    int64_t n = (int64_t)count * size;
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
    MPI_Aint start;
    char *data, *packed = NULL;
    if (mpiio_one_run(count, type, &start)) {
        data = (char *)buf + start;
    } else {
        if (n > INT_MAX) /* MPI_Pack counts in int */
            return mpiio_refuse(f, MPI_ERR_COUNT, "%s: more than 2^31 bytes to patch", call);
        packed = malloc((size_t)n);
        if (!packed)
            return mpiio_refuse(f, MPI_ERR_NO_MEM, "%s: no memory to patch the read", call);
        int pos = 0;
        PMPI_Pack(buf, count, type, packed, (int)n, &pos, MPI_COMM_SELF);
        data = packed;
    }
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
        int at = 0;
        PMPI_Unpack(packed, (int)n, &at, buf, count, type, MPI_COMM_SELF);
        free(packed);
    }
    *bytes = p.top > got ? p.top : (int64_t)got;
    return MPI_SUCCESS;
}
