/* SPDX-License-Identifier: BSD-3-Clause */
/* The MPI calls the layer defines over MPI's profiling interface. Each looks
 * up the handle: a file the layer does not hold (never taken, or released)
 * goes straight to the real call; a taken file is handled here. */
#include "layer.h"

#include <stdlib.h>
#include <string.h>

/* The taken file of fh, or NULL when the real MPI-IO handles it. Its
 * stream's open may still be pending (opening.c): checked without waiting. */
static mpiio_file_t *taken(MPI_File fh)
{
    mpiio_file_t *f = mpiio_find(fh);
    if (f && f->stream)
        mpiio_opening_check(f);
    return f && f->stream ? f : NULL;
}

/* The taken file of fh once its stream's outcome is known: a pending open
 * is resolved first (a failed one gives the file back to MPI-IO: NULL). A
 * collective call (every rank makes it) also agrees on a failed open's
 * outcome, wherever it was resolved. *rc: MPI_SUCCESS, or the error the
 * call returns as it is (the same on every rank for a collective one). */
static mpiio_file_t *taken_resolved(MPI_File fh, int collective, const char *call, int *rc)
{
    *rc = MPI_SUCCESS;
    mpiio_file_t *f = mpiio_find(fh);
    if (!f)
        return NULL;
    *rc = collective ? mpiio_opening_resolve_all(f, call) : mpiio_opening_resolve(f, call);
    return f->stream ? f : NULL;
}

/* The same for a call that needs the stream itself (its bytes, its steps):
 * the bytes held back from it go to it first (hold.c). */
static mpiio_file_t *taken_known(MPI_File fh, int collective, const char *call, int *rc)
{
    mpiio_file_t *f = taken_resolved(fh, collective, call, rc);
    if (f) {
        int held = mpiio_hold_release_call(f, call);
        *rc = *rc != MPI_SUCCESS ? *rc : held;
    }
    return f;
}

/* The taken file of fh for an independent read: its open is known first
 * (a failed one gives the file back with this rank's bytes written), unless
 * this rank has written nothing and no step has ended, when the outcome
 * changes nothing the read could see (a code's first read after its open:
 * HDF5's superblock, a restart's data). */
static mpiio_file_t *taken_for_read(MPI_File fh, const char *call, int *rc)
{
    *rc = MPI_SUCCESS;
    mpiio_file_t *f = taken(fh);
    return f && mpiio_opening_moot(f) ? f : taken_known(fh, 0, call, rc);
}

/* The taken file of fh for a write of count x type: a collective one ends
 * the step (the open must be known), an independent one waits only when the
 * open log has no room for it. */
static mpiio_file_t *taken_for_write(MPI_File fh, int count, MPI_Datatype type, int collective,
                                     const char *call, int *rc)
{
    *rc = MPI_SUCCESS;
    if (collective)
        return taken_known(fh, 1, call, rc);
    mpiio_file_t *f = taken(fh);
    return f && mpiio_opening_log_full(f, count, type) ? taken_known(fh, 0, call, rc) : f;
}

static void set_status(MPI_Status *status, int64_t bytes)
{
    if (status != MPI_STATUS_IGNORE) {
        PMPI_Status_set_elements_x(status, MPI_BYTE, (MPI_Count)bytes);
        PMPI_Status_set_cancelled(status, 0);
    }
}

/* --- requests of nonblocking writes: complete when made -------------------- */

static int greq_query(void *extra, MPI_Status *status)
{
    set_status(status, *(int64_t *)extra);
    status->MPI_SOURCE = MPI_UNDEFINED;
    status->MPI_TAG = MPI_UNDEFINED;
    status->MPI_ERROR = MPI_SUCCESS;
    return MPI_SUCCESS;
}

static int greq_free(void *extra)
{
    free(extra);
    return MPI_SUCCESS;
}

static int greq_cancel(void *extra, int complete)
{
    (void)extra;
    (void)complete;
    return MPI_SUCCESS;
}

static int completed_request(int64_t bytes, MPI_Request *request)
{
    int64_t *extra = malloc(sizeof(*extra));
    if (!extra)
        return MPI_ERR_NO_MEM;
    *extra = bytes;
    int rc = PMPI_Grequest_start(greq_query, greq_free, greq_cancel, extra, request);
    if (rc != MPI_SUCCESS) {
        free(extra);
        return rc;
    }
    return PMPI_Grequest_complete(*request);
}

/* --- start and end ------------------------------------------------------------- */

/*
 * Codes may close their files from attribute callbacks of MPI_COMM_SELF,
 * which MPI_Finalize runs first, last set first (parallel HDF5 closes its
 * open files so). The layer's runtimes must outlive those closes: they are
 * finalized by the delete callback of an attribute the layer sets on
 * MPI_COMM_SELF right after MPI_Init, before any code can set one, so it
 * runs after every other, while MPI still works.
 */
static int finalize_keyval = MPI_KEYVAL_INVALID;

/*
 * MPICH stops being thread safe inside MPI_Finalize before it deletes
 * MPI_COMM_SELF's attributes (it sets itself single-threaded, then runs the
 * delete callbacks): a close from such a callback, and the runtimes' own
 * finalize, would have fwdio's progress threads call MPI at the same time as
 * the closing thread, unlocked (UCX aborts: "worker->inprogress++ == 0").
 * So the layer deletes the attributes codes set on MPI_COMM_SELF itself, at
 * the start of its MPI_Finalize, last set first as MPI would, while MPI is
 * still thread safe; under MPICH it also finalizes its runtimes there, before
 * PMPI_Finalize (under Open MPI, whose MPI_Finalize stays thread safe while
 * it deletes them, its attribute does so inside PMPI_Finalize, after any
 * attribute the layer did not see being set: Fortran's calls go to PMPI).
 * The keyvals, in the order they were set (C calls, while the layer is on).
 */
#define SELF_KEYVALS_MAX 64
static int self_keyvals[SELF_KEYVALS_MAX];
static int self_keyvals_n;
static pthread_mutex_t self_keyvals_lock = PTHREAD_MUTEX_INITIALIZER;

static void self_keyval_set(MPI_Comm comm, int keyval)
{
    if (comm != MPI_COMM_SELF || !mpiio_wanted() || keyval == finalize_keyval)
        return;
    pthread_mutex_lock(&self_keyvals_lock);
    int known = 0;
    for (int i = 0; i < self_keyvals_n; i++)
        known |= self_keyvals[i] == keyval;
    if (!known && self_keyvals_n < SELF_KEYVALS_MAX)
        self_keyvals[self_keyvals_n++] = keyval;
    pthread_mutex_unlock(&self_keyvals_lock);
}

static void self_keyval_deleted(MPI_Comm comm, int keyval)
{
    if (comm != MPI_COMM_SELF)
        return;
    pthread_mutex_lock(&self_keyvals_lock);
    for (int i = 0; i < self_keyvals_n; i++)
        if (self_keyvals[i] == keyval) {
            memmove(&self_keyvals[i], &self_keyvals[i + 1],
                    (size_t)(self_keyvals_n - i - 1) * sizeof self_keyvals[0]);
            self_keyvals_n--;
            break;
        }
    pthread_mutex_unlock(&self_keyvals_lock);
}

/* Delete the recorded attributes of MPI_COMM_SELF, last set first (their
 * callbacks may close files and set or delete attributes), errors returned
 * rather than fatal. */
static void delete_self_attributes(void)
{
    MPI_Errhandler old = MPI_ERRHANDLER_NULL;
    PMPI_Comm_get_errhandler(MPI_COMM_SELF, &old);
    PMPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    for (;;) {
        pthread_mutex_lock(&self_keyvals_lock);
        int keyval = self_keyvals_n > 0 ? self_keyvals[--self_keyvals_n] : MPI_KEYVAL_INVALID;
        pthread_mutex_unlock(&self_keyvals_lock);
        if (keyval == MPI_KEYVAL_INVALID)
            break;
        PMPI_Comm_delete_attr(MPI_COMM_SELF, keyval);
    }
    if (old != MPI_ERRHANDLER_NULL) {
        PMPI_Comm_set_errhandler(MPI_COMM_SELF, old);
        PMPI_Errhandler_free(&old);
    }
}

MPIIO_EXPORT int MPI_Comm_set_attr(MPI_Comm comm, int keyval, void *value)
{
    int rc = PMPI_Comm_set_attr(comm, keyval, value);
    if (rc == MPI_SUCCESS)
        self_keyval_set(comm, keyval);
    return rc;
}

MPIIO_EXPORT int MPI_Comm_delete_attr(MPI_Comm comm, int keyval)
{
    self_keyval_deleted(comm, keyval);
    return PMPI_Comm_delete_attr(comm, keyval);
}

static int finalize_at_self_delete(MPI_Comm comm, int keyval, void *value, void *extra)
{
    (void)comm;
    (void)value;
    (void)extra;
    mpiio_finalize_runtimes(); /* a failed asynchronous close is printed */
    PMPI_Comm_free_keyval(&keyval);
    return MPI_SUCCESS;
}

static void after_init(int provided)
{
    mpiio_set_thread_level(provided);
    if (PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, finalize_at_self_delete,
                                &finalize_keyval, NULL) != MPI_SUCCESS ||
        PMPI_Comm_set_attr(MPI_COMM_SELF, finalize_keyval, NULL) != MPI_SUCCESS)
        finalize_keyval = MPI_KEYVAL_INVALID; /* MPI_Finalize finalizes them first */
}

/* The layer asked MPI for MPI_THREAD_MULTIPLE and MPI declined: every file
 * goes to MPI-IO as it is. Said once, by rank 0, whatever FWDIO_VERBOSE says:
 * the user set FWDIO_MPIIO and would otherwise not learn why nothing is taken. */
static void say_thread_level(int provided)
{
    int rank = 0;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (provided == MPI_THREAD_MULTIPLE || rank != 0)
        return;
    mpiio_say("MPI provides thread level %d, not MPI_THREAD_MULTIPLE (%d), which fwdio needs: "
              "no file is taken, every file goes to MPI-IO as it is. On Cray MPICH set "
              "MPICH_MAX_THREAD_SAFETY=multiple; an Open MPI must be built with thread support "
              "(ompi_info | grep -i thread).",
              provided, MPI_THREAD_MULTIPLE);
}

MPIIO_EXPORT int MPI_Init(int *argc, char ***argv)
{
    if (!mpiio_wanted())
        return PMPI_Init(argc, argv);
    int provided;
    int rc = PMPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided);
    if (rc == MPI_SUCCESS) {
        after_init(provided);
        say_thread_level(provided);
    }
    return rc;
}

MPIIO_EXPORT int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    if (!mpiio_wanted())
        return PMPI_Init_thread(argc, argv, required, provided);
    int rc = PMPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, provided);
    if (rc == MPI_SUCCESS) {
        after_init(*provided);
        say_thread_level(*provided);
    }
    return rc;
}

MPIIO_EXPORT int MPI_Finalize(void)
{
    /* Files closed asynchronously before: their failure is this call's. */
    int code = mpiio_wait_pending(NULL);
    if (mpiio_wanted())
        delete_self_attributes(); /* see self_keyvals */
#ifdef MPICH_VERSION
    if (finalize_keyval != MPI_KEYVAL_INVALID) {
        /* runs finalize_at_self_delete, which frees the keyval */
        PMPI_Comm_delete_attr(MPI_COMM_SELF, finalize_keyval);
        finalize_keyval = MPI_KEYVAL_INVALID;
    }
#endif
    if (finalize_keyval == MPI_KEYVAL_INVALID) /* no attribute: now (none left after it) */
        mpiio_finalize_runtimes();
    int rc = PMPI_Finalize();
    return code != MPI_SUCCESS ? code : rc;
}

/* --- open, close, delete, view, info --------------------------------------------- */

MPIIO_EXPORT int MPI_File_open(MPI_Comm comm, const char *filename, int amode, MPI_Info info, MPI_File *fh)
{
    return mpiio_open(comm, filename, amode, info, fh);
}

MPIIO_EXPORT int MPI_File_close(MPI_File *fh)
{
    mpiio_file_t *f = fh ? mpiio_find(*fh) : NULL;
    if (f)
        return mpiio_close(f, fh);
    if (fh)
        mpiio_untaken_remove(*fh);
    return PMPI_File_close(fh);
}

MPIIO_EXPORT int MPI_File_delete(const char *filename, MPI_Info info)
{
    if (mpiio_wanted() && filename)
        mpiio_wait_pending(filename);
    return PMPI_File_delete(filename, info);
}

/* The layer's map of a view (its filetype flattened): 1, or 0 with why;
 * -1 for arguments MPI-IO's own set_view refuses (null handles), which are
 * no reason to give the file back. */
static int view_map(mpiio_view_t *v, MPI_Datatype etype, MPI_Datatype filetype,
                    const char *datarep, char *why, size_t why_len)
{
    if (etype == MPI_DATATYPE_NULL || filetype == MPI_DATATYPE_NULL || !datarep)
        return -1;
    int esize = 0;
    PMPI_Type_size(etype, &esize);
    v->etype_size = esize;
    if (strcmp(datarep, "native") != 0) {
        snprintf(why, why_len, "data representation \"%s\"", datarep);
        return 0;
    }
    if (esize <= 0) {
        snprintf(why, why_len, "an etype of no bytes");
        return 0;
    }
    return mpiio_flatten(filetype, &v->ft, why, why_len) == 0;
}

MPIIO_EXPORT int MPI_File_set_view(MPI_File fh, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype,
                      const char *datarep, MPI_Info info)
{
    /* The open is known before the view changes (a failed one gives the
     * file back with the individual pointer in the old view). */
    int rc;
    mpiio_file_t *f = taken_known(fh, 1, "MPI_File_set_view", &rc);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!f)
        return PMPI_File_set_view(fh, disp, etype, filetype, datarep, info);
    char why[MPIIO_REASON_LEN] = "";
    mpiio_view_t v = {.disp = disp};
    int mapped = view_map(&v, etype, filetype, datarep, why, sizeof why);
    int ok = mapped != 0;
    /* Every rank keeps the file or every rank releases it. MPI-IO's own
     * set_view is collective and waits for every rank (Open MPI's and
     * ROMIO's alike), so the ranks' agreement runs beside it: started
     * before, finished after, by when every rank has made its part and
     * MPI's progress inside that call has mostly moved it. It is made
     * whatever MPI-IO's call returns, so no rank waits for one that left. */
    int all = ok;
    MPI_Request req = MPI_REQUEST_NULL;
    int agreed = PMPI_Iallreduce(&ok, &all, 1, MPI_INT, MPI_MIN, f->comm, &req);
    rc = PMPI_File_set_view(fh, disp, etype, filetype, datarep, info);
    if (agreed == MPI_SUCCESS)
        agreed = PMPI_Wait(&req, MPI_STATUS_IGNORE);
    int code = rc;
    if (agreed != MPI_SUCCESS) {
        /* This rank cannot know what the others chose: it keeps its own
         * choice and says so (never a silent success over it). */
        all = ok;
        int failed = mpiio_agreement_failed(f, agreed, "MPI_File_set_view", "MPI_Iallreduce");
        code = code != MPI_SUCCESS ? code : failed;
    }
    if (!all) {
        mpiio_runs_free(&v.ft);
        char reason[MPIIO_REASON_LEN + 32];
        snprintf(reason, sizeof(reason), "MPI_File_set_view with %s",
                 why[0] ? why : "a view another rank could not map");
        int released = mpiio_release(f, reason);
        return code != MPI_SUCCESS ? code : released;
    }
    if (rc != MPI_SUCCESS || mapped < 0) { /* MPI-IO kept the old view: so does the layer */
        mpiio_runs_free(&v.ft);
        return code;
    }
    mpiio_view_free(&f->view);
    f->view = v;
    f->fp = 0;
    return code;
}

MPIIO_EXPORT int MPI_File_get_info(MPI_File fh, MPI_Info *info_used)
{
    /* Whether the file is taken: its open must be known. */
    int rc;
    taken_resolved(fh, 0, "MPI_File_get_info", &rc); /* its state: the bytes may stay held */
    if (rc != MPI_SUCCESS)
        return rc;
    rc = PMPI_File_get_info(fh, info_used);
    if (rc != MPI_SUCCESS)
        return rc;
    mpiio_file_t *f = mpiio_find(fh);
    if (f) {
        PMPI_Info_set(*info_used, "fwdio_mpiio", f->stream ? "taken" : f->released);
    } else {
        /* Not taken: the key may have come in with the info of the open (a
         * code passing on another file's info); it must not say "taken". */
        char value[MPI_MAX_INFO_VAL + 1];
        int flag = 0;
        if (PMPI_Info_get(*info_used, "fwdio_mpiio", MPI_MAX_INFO_VAL, value, &flag) ==
                MPI_SUCCESS &&
            flag)
            PMPI_Info_delete(*info_used, "fwdio_mpiio");
    }
    return rc;
}

MPIIO_EXPORT int MPI_File_set_atomicity(MPI_File fh, int flag)
{
    int rc;
    mpiio_file_t *f = taken_known(fh, 1, "MPI_File_set_atomicity", &rc);
    if (rc != MPI_SUCCESS)
        return rc;
    if (f && flag) {
        rc = mpiio_release(f, "MPI_File_set_atomicity(1): atomic mode");
        if (rc != MPI_SUCCESS)
            return rc;
    }
    return PMPI_File_set_atomicity(fh, flag);
}

/* --- writes ------------------------------------------------------------------------ */

/* A write of count x type at `offset` etypes of the view, or at the
 * individual file pointer (which then advances); a collective one ends the
 * step on every rank, also when this rank's part failed (ranks stay in step),
 * and returns the same outcome on every rank. */
static int write_view(mpiio_file_t *f, int64_t offset, int at_pointer, const void *buf,
                      int count, MPI_Datatype type, MPI_Status *status, int collective,
                      const char *call)
{
    double t0 = PMPI_Wtime();
    int64_t bytes;
    int64_t at = at_pointer ? f->fp : offset;
    int rc = mpiio_write(f, at * f->view.etype_size, buf, count, type, collective, &bytes,
                         call);
    if (at_pointer)
        f->fp += bytes / f->view.etype_size;
    /* the step's bounds: this rank's bytes in it, every rank's once agreed
     * (a read outside those of every step on its way need not wait) */
    if (collective) {
        mpiio_step_end_t end;
        rc = mpiio_end_step_agreed(f, rc, call, &end);
        if (rc == MPI_SUCCESS && f->stream)
            mpiio_inflight_set(f, f->steps_ended - 1, end.lo, end.hi);
    }
    if (rc == MPI_SUCCESS)
        set_status(status, bytes);
    f->blocked[MPIIO_T_WRITE] += PMPI_Wtime() - t0;
    return rc;
}

MPIIO_EXPORT int MPI_File_write_at(MPI_File fh, MPI_Offset offset, const void *buf, int count,
                      MPI_Datatype type, MPI_Status *status)
{
    int rc0;
    mpiio_file_t *f = taken_for_write(fh, count, type, 0, "MPI_File_write_at", &rc0);
    if (rc0 != MPI_SUCCESS)
        return rc0;
    if (!f) { /* MPI-IO's, after this process's writes through taken handles */
        mpiio_untaken_write_t w;
        int copy = mpiio_untaken_begin(fh, offset, 0, &w);
        int rc = PMPI_File_write_at(fh, offset, buf, count, type, status);
        return copy ? mpiio_untaken_end(&w, rc, buf, count, type) : rc;
    }
    return write_view(f, offset, 0, buf, count, type, status, 0, "MPI_File_write_at");
}

MPIIO_EXPORT int MPI_File_write_at_all(MPI_File fh, MPI_Offset offset, const void *buf, int count,
                          MPI_Datatype type, MPI_Status *status)
{
    int rc0;
    mpiio_file_t *f = taken_for_write(fh, count, type, 1, "MPI_File_write_at_all", &rc0);
    if (rc0 != MPI_SUCCESS)
        return rc0;
    if (!f) { /* MPI-IO's, after this process's writes through taken handles */
        mpiio_untaken_write_t w;
        int copy = mpiio_untaken_begin(fh, offset, 0, &w);
        int rc = PMPI_File_write_at_all(fh, offset, buf, count, type, status);
        return copy ? mpiio_untaken_end(&w, rc, buf, count, type) : rc;
    }
    return write_view(f, offset, 0, buf, count, type, status, 1, "MPI_File_write_at_all");
}

MPIIO_EXPORT int MPI_File_write(MPI_File fh, const void *buf, int count, MPI_Datatype type,
                   MPI_Status *status)
{
    int rc0;
    mpiio_file_t *f = taken_for_write(fh, count, type, 0, "MPI_File_write", &rc0);
    if (rc0 != MPI_SUCCESS)
        return rc0;
    if (!f) { /* MPI-IO's, after this process's writes through taken handles */
        mpiio_untaken_write_t w;
        int copy = mpiio_untaken_begin(fh, 0, 1, &w);
        int rc = PMPI_File_write(fh, buf, count, type, status);
        return copy ? mpiio_untaken_end(&w, rc, buf, count, type) : rc;
    }
    return write_view(f, 0, 1, buf, count, type, status, 0, "MPI_File_write");
}

MPIIO_EXPORT int MPI_File_write_all(MPI_File fh, const void *buf, int count, MPI_Datatype type,
                       MPI_Status *status)
{
    int rc0;
    mpiio_file_t *f = taken_for_write(fh, count, type, 1, "MPI_File_write_all", &rc0);
    if (rc0 != MPI_SUCCESS)
        return rc0;
    if (!f) { /* MPI-IO's, after this process's writes through taken handles */
        mpiio_untaken_write_t w;
        int copy = mpiio_untaken_begin(fh, 0, 1, &w);
        int rc = PMPI_File_write_all(fh, buf, count, type, status);
        return copy ? mpiio_untaken_end(&w, rc, buf, count, type) : rc;
    }
    return write_view(f, 0, 1, buf, count, type, status, 1, "MPI_File_write_all");
}

/* A nonblocking write is done when the call returns: a completed request. */
static int as_request(int rc, const MPI_Status *st, MPI_Request *request)
{
    if (rc != MPI_SUCCESS) {
        *request = MPI_REQUEST_NULL;
        return rc;
    }
    MPI_Count bytes = 0;
    PMPI_Get_elements_x(st, MPI_BYTE, &bytes);
    return completed_request((int64_t)bytes, request);
}

MPIIO_EXPORT int MPI_File_iwrite_at(MPI_File fh, MPI_Offset offset, const void *buf, int count,
                       MPI_Datatype type, MPI_Request *request)
{
    int rc0;
    mpiio_file_t *f = taken_for_write(fh, count, type, 0, "MPI_File_iwrite_at", &rc0);
    if (rc0 != MPI_SUCCESS) {
        *request = MPI_REQUEST_NULL;
        return rc0;
    }
    if (!f) { /* MPI-IO's, after this process's writes through taken handles */
        mpiio_untaken_write_t w;
        int copy = mpiio_untaken_begin(fh, offset, 0, &w);
        int rc = PMPI_File_iwrite_at(fh, offset, buf, count, type, request);
        return copy ? mpiio_untaken_end(&w, rc, buf, count, type) : rc;
    }
    MPI_Status st;
    int rc = write_view(f, offset, 0, buf, count, type, &st, 0, "MPI_File_iwrite_at");
    return as_request(rc, &st, request);
}

MPIIO_EXPORT int MPI_File_iwrite_at_all(MPI_File fh, MPI_Offset offset, const void *buf, int count,
                           MPI_Datatype type, MPI_Request *request)
{
    int rc0;
    mpiio_file_t *f = taken_for_write(fh, count, type, 1, "MPI_File_iwrite_at_all", &rc0);
    if (rc0 != MPI_SUCCESS) {
        *request = MPI_REQUEST_NULL;
        return rc0;
    }
    if (!f) { /* MPI-IO's, after this process's writes through taken handles */
        mpiio_untaken_write_t w;
        int copy = mpiio_untaken_begin(fh, offset, 0, &w);
        int rc = PMPI_File_iwrite_at_all(fh, offset, buf, count, type, request);
        return copy ? mpiio_untaken_end(&w, rc, buf, count, type) : rc;
    }
    MPI_Status st;
    int rc = write_view(f, offset, 0, buf, count, type, &st, 1, "MPI_File_iwrite_at_all");
    return as_request(rc, &st, request);
}

MPIIO_EXPORT int MPI_File_iwrite(MPI_File fh, const void *buf, int count, MPI_Datatype type,
                    MPI_Request *request)
{
    int rc0;
    mpiio_file_t *f = taken_for_write(fh, count, type, 0, "MPI_File_iwrite", &rc0);
    if (rc0 != MPI_SUCCESS) {
        *request = MPI_REQUEST_NULL;
        return rc0;
    }
    if (!f) { /* MPI-IO's, after this process's writes through taken handles */
        mpiio_untaken_write_t w;
        int copy = mpiio_untaken_begin(fh, 0, 1, &w);
        int rc = PMPI_File_iwrite(fh, buf, count, type, request);
        return copy ? mpiio_untaken_end(&w, rc, buf, count, type) : rc;
    }
    MPI_Status st;
    int rc = write_view(f, 0, 1, buf, count, type, &st, 0, "MPI_File_iwrite");
    return as_request(rc, &st, request);
}

MPIIO_EXPORT int MPI_File_iwrite_all(MPI_File fh, const void *buf, int count, MPI_Datatype type,
                        MPI_Request *request)
{
    int rc0;
    mpiio_file_t *f = taken_for_write(fh, count, type, 1, "MPI_File_iwrite_all", &rc0);
    if (rc0 != MPI_SUCCESS) {
        *request = MPI_REQUEST_NULL;
        return rc0;
    }
    if (!f) { /* MPI-IO's, after this process's writes through taken handles */
        mpiio_untaken_write_t w;
        int copy = mpiio_untaken_begin(fh, 0, 1, &w);
        int rc = PMPI_File_iwrite_all(fh, buf, count, type, request);
        return copy ? mpiio_untaken_end(&w, rc, buf, count, type) : rc;
    }
    MPI_Status st;
    int rc = write_view(f, 0, 1, buf, count, type, &st, 1, "MPI_File_iwrite_all");
    return as_request(rc, &st, request);
}

/* --- reads: the file first holds what they must see ----------------------------------- */

/* One walk of a read's extents for both of its tests: this rank's bytes of
 * the current step (`own`), and the steps on their way (`flight`); it stops
 * once every test asked for has found one. */
typedef struct touch_ctx {
    const mpiio_file_t *f;
    int want_own, want_flight;
    int own, flight; /* found */
} touch_ctx_t;

static int touches(void *arg, int64_t off, int64_t len, int64_t data_pos)
{
    (void)data_pos;
    touch_ctx_t *t = arg;
    if (t->want_own && !t->own)
        t->own = mpiio_touches_unended(t->f, off, off + len);
    if (t->want_flight && !t->flight)
        t->flight = mpiio_inflight_touches(t->f, off, len);
    return t->own >= t->want_own && t->flight >= t->want_flight;
}

/* The steps the other handles of f's path in this process ended are in the
 * file (their independent writes since are in it already: access.c), so a
 * read through f sees what this process wrote through them, as in any
 * MPI-IO. */
static void settle_aliases(mpiio_file_t *f)
{
    mpiio_file_t *alias[MPIIO_ALIASES_MAX];
    size_t n = mpiio_aliases(f, alias, MPIIO_ALIASES_MAX);
    for (size_t i = 0; i < n; i++)
        mpiio_settle_quietly(alias[i]);
}

/* An independent read of `count` x `type` at data position pos: waits for the
 * ended steps. *own says whether it touches bytes this rank wrote since its
 * last collective call on the file (they may still be on their way, and only
 * a collective call can wait for them: the read lays the layer's copies of
 * them over what MPI-IO reads; bytes past FWDIO_MPIIO_READBACK were written
 * at once and are in the file). */
static int before_independent_read(mpiio_file_t *f, int64_t pos, int count, MPI_Datatype type,
                                   int *own, const char *call)
{
    int64_t n = 0;
    settle_aliases(f);
    if (mpiio_type_bytes(count, type, &n) != MPI_SUCCESS)
        n = 0;
    touch_ctx_t t = {.f = f,
                     .want_own = n > 0 && mpiio_has_unended(f),
                     .want_flight = n > 0 && !f->tier && mpiio_inflight_pending(f)};
    if (t.want_own || t.want_flight)
        (void)mpiio_view_map(&f->view, pos, n, touches, &t);
    *own = t.own;
    /* No byte of it in a step on its way (every rank's bytes of each lie
     * within the bounds its collective write agreed on): what the file
     * holds is what MPI-IO would read. In the node-local tier a step is
     * read at the path only once drained: waited for. */
    if (n > 0 && !f->tier && !t.flight)
        return MPI_SUCCESS;
    return mpiio_settle_ended(f, call);
}

/* A collective read: every earlier write of the file is in it first. One at
 * the individual file pointer sets the real handle's pointer to the layer's
 * before, and reads it back after. */
#define READ_COLLECTIVE(name, at_pointer, ...)                      \
    do {                                                            \
        int known_;                                                 \
        mpiio_file_t *f = taken_known(fh, 1, #name, &known_);       \
        if (known_ != MPI_SUCCESS)                                  \
            return known_;                                          \
        if (!f)                                                     \
            return P##name(__VA_ARGS__);                            \
        double t0_ = PMPI_Wtime();                                  \
        int rc_ = mpiio_settle_collective(f, 1, #name);             \
        settle_aliases(f);                                          \
        int read_ = rc_ == MPI_SUCCESS;                             \
        if (read_ && at_pointer)                                    \
            PMPI_File_seek(fh, f->fp, MPI_SEEK_SET);                \
        if (read_)                                                  \
            rc_ = P##name(__VA_ARGS__);                             \
        MPI_Offset at_;                                             \
        if (read_ && at_pointer && PMPI_File_get_position(fh, &at_) == MPI_SUCCESS) \
            f->fp = at_;                                            \
        f->blocked[MPIIO_T_READ] += PMPI_Wtime() - t0_;             \
        return rc_;                                                 \
    } while (0)

/* An independent read at `offset` etypes of the view, or at the individual
 * file pointer (which then advances). One that touches this rank's bytes
 * of the current step is read and patched at once (a nonblocking one
 * returns a completed request); any other goes to MPI-IO's own call. */
static int read_independent(mpiio_file_t *f, int64_t offset, int at_pointer, void *buf,
                            int count, MPI_Datatype type, MPI_Status *status,
                            MPI_Request *request, const char *call)
{
    double t0 = PMPI_Wtime();
    int64_t at = at_pointer ? f->fp : offset;
    int own;
    int rc = before_independent_read(f, at * f->view.etype_size, count, type, &own, call);
    /* Other ranks' writes since the last collective call may still be on
     * their way (the one difference from MPI-IO over POSIX, where they
     * would be in the file already): under FWDIO_VERBOSE, MPI's rule once
     * per file here, and the step's end names a read that may have missed
     * such writes where it can tell (unsynced.c). */
    int64_t n = 0;
    if (rc == MPI_SUCCESS && mpiio_verbose() && mpiio_type_bytes(count, type, &n) == MPI_SUCCESS) {
        if (!f->said_unsynced_rule) {
            f->said_unsynced_rule = 1;
            mpiio_say("%s: %s: an independent read sees other ranks' writes once they are "
                      "synced (MPI_File_sync, a barrier, MPI_File_sync: MPI's rule); their "
                      "writes since the last collective call on the file may still be on "
                      "their way to fwdio's writers, and a read of them returns what the file "
                      "held before (the call that ends the step names such a read where it "
                      "can tell; FWDIO_MPIIO_READBACK=0 writes every independent write at "
                      "once)", f->path, call);
        }
        mpiio_unsynced_read(f, at * f->view.etype_size, n, call);
    }
    if (rc == MPI_SUCCESS && own) {
        int64_t bytes = 0;
        rc = mpiio_read_own(f, at, buf, count, type, &bytes, call);
        if (rc == MPI_SUCCESS && at_pointer)
            f->fp += bytes / f->view.etype_size;
        if (request) {
            MPI_Status st;
            set_status(&st, bytes);
            rc = as_request(rc, &st, request);
        } else if (rc == MPI_SUCCESS) {
            set_status(status, bytes);
        }
    } else if (rc == MPI_SUCCESS) {
        /* The real call, at the layer's file pointer when it reads at one. */
        if (at_pointer)
            PMPI_File_seek(f->fh, f->fp, MPI_SEEK_SET);
        if (at_pointer)
            rc = request ? PMPI_File_iread(f->fh, buf, count, type, request)
                         : PMPI_File_read(f->fh, buf, count, type, status);
        else
            rc = request ? PMPI_File_iread_at(f->fh, offset, buf, count, type, request)
                         : PMPI_File_read_at(f->fh, offset, buf, count, type, status);
        MPI_Offset pos;
        if (at_pointer && PMPI_File_get_position(f->fh, &pos) == MPI_SUCCESS)
            f->fp = pos;
    } else if (request) {
        *request = MPI_REQUEST_NULL;
    }
    f->blocked[MPIIO_T_READ] += PMPI_Wtime() - t0;
    return rc;
}

MPIIO_EXPORT int MPI_File_read_at(MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype type,
                     MPI_Status *status)
{
    int known;
    mpiio_file_t *f = taken_for_read(fh, "MPI_File_read_at", &known);
    if (known != MPI_SUCCESS)
        return known;
    if (!f)
        return PMPI_File_read_at(fh, offset, buf, count, type, status);
    return read_independent(f, offset, 0, buf, count, type, status, NULL, "MPI_File_read_at");
}

MPIIO_EXPORT int MPI_File_read_at_all(MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype type,
                         MPI_Status *status)
{
    READ_COLLECTIVE(MPI_File_read_at_all, 0, fh, offset, buf, count, type, status);
}

MPIIO_EXPORT int MPI_File_iread_at(MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype type,
                      MPI_Request *request)
{
    int known;
    mpiio_file_t *f = taken_for_read(fh, "MPI_File_iread_at", &known);
    if (known != MPI_SUCCESS) {
        *request = MPI_REQUEST_NULL;
        return known;
    }
    if (!f)
        return PMPI_File_iread_at(fh, offset, buf, count, type, request);
    return read_independent(f, offset, 0, buf, count, type, MPI_STATUS_IGNORE, request,
                            "MPI_File_iread_at");
}

MPIIO_EXPORT int MPI_File_iread_at_all(MPI_File fh, MPI_Offset offset, void *buf, int count,
                          MPI_Datatype type, MPI_Request *request)
{
    READ_COLLECTIVE(MPI_File_iread_at_all, 0, fh, offset, buf, count, type, request);
}

MPIIO_EXPORT int MPI_File_read(MPI_File fh, void *buf, int count, MPI_Datatype type, MPI_Status *status)
{
    int known;
    mpiio_file_t *f = taken_for_read(fh, "MPI_File_read", &known);
    if (known != MPI_SUCCESS)
        return known;
    if (!f)
        return PMPI_File_read(fh, buf, count, type, status);
    return read_independent(f, 0, 1, buf, count, type, status, NULL, "MPI_File_read");
}

MPIIO_EXPORT int MPI_File_read_all(MPI_File fh, void *buf, int count, MPI_Datatype type, MPI_Status *status)
{
    READ_COLLECTIVE(MPI_File_read_all, 1, fh, buf, count, type, status);
}

MPIIO_EXPORT int MPI_File_iread(MPI_File fh, void *buf, int count, MPI_Datatype type, MPI_Request *request)
{
    int known;
    mpiio_file_t *f = taken_for_read(fh, "MPI_File_iread", &known);
    if (known != MPI_SUCCESS) {
        *request = MPI_REQUEST_NULL;
        return known;
    }
    if (!f)
        return PMPI_File_iread(fh, buf, count, type, request);
    return read_independent(f, 0, 1, buf, count, type, MPI_STATUS_IGNORE, request,
                            "MPI_File_iread");
}

MPIIO_EXPORT int MPI_File_iread_all(MPI_File fh, void *buf, int count, MPI_Datatype type,
                       MPI_Request *request)
{
    READ_COLLECTIVE(MPI_File_iread_all, 1, fh, buf, count, type, request);
}

/* --- shared file pointers: the real MPI-IO's ------------------------------------------- */

/* An independent call on the shared pointer may touch any byte: it waits for
 * the ended steps, and is refused while this rank has writes no collective
 * call has ended (it could overtake them). */
static int before_shared(MPI_File fh, const char *call)
{
    int rc;
    mpiio_file_t *f = taken_known(fh, 0, call, &rc);
    if (!f || rc != MPI_SUCCESS)
        return rc;
    if (mpiio_has_unended(f))
        return mpiio_refuse(f, MPI_ERR_UNSUPPORTED_OPERATION,
                            "%s after writes of this rank that no collective call on the file "
                            "has ended: call MPI_File_sync first", call);
    if (mpiio_verbose() && !f->said_shared) {
        f->said_shared = 1;
        mpiio_say("%s: %s and the other calls on the shared file pointer go to MPI-IO "
                  "(rank %d says it once)", f->path, call, f->rank);
    }
    return mpiio_settle_ended(f, call);
}

/* A collective call on the shared pointer: the file goes back to MPI-IO. */
static int release_for(MPI_File fh, const char *call)
{
    int rc;
    mpiio_file_t *f = taken_known(fh, 1, call, &rc);
    return f && rc == MPI_SUCCESS ? mpiio_release(f, call) : rc;
}

#define VIA_SHARED(before, name, ...)                          \
    do {                                                       \
        int rc_ = before(fh, #name);                           \
        return rc_ != MPI_SUCCESS ? rc_ : P##name(__VA_ARGS__); \
    } while (0)

MPIIO_EXPORT int MPI_File_write_shared(MPI_File fh, const void *buf, int count, MPI_Datatype type,
                          MPI_Status *status)
{
    VIA_SHARED(before_shared, MPI_File_write_shared, fh, buf, count, type, status);
}

MPIIO_EXPORT int MPI_File_read_shared(MPI_File fh, void *buf, int count, MPI_Datatype type,
                         MPI_Status *status)
{
    VIA_SHARED(before_shared, MPI_File_read_shared, fh, buf, count, type, status);
}

MPIIO_EXPORT int MPI_File_iwrite_shared(MPI_File fh, const void *buf, int count, MPI_Datatype type,
                           MPI_Request *request)
{
    VIA_SHARED(before_shared, MPI_File_iwrite_shared, fh, buf, count, type, request);
}

MPIIO_EXPORT int MPI_File_iread_shared(MPI_File fh, void *buf, int count, MPI_Datatype type,
                          MPI_Request *request)
{
    VIA_SHARED(before_shared, MPI_File_iread_shared, fh, buf, count, type, request);
}

MPIIO_EXPORT int MPI_File_seek_shared(MPI_File fh, MPI_Offset offset, int whence)
{
    VIA_SHARED(release_for, MPI_File_seek_shared, fh, offset, whence);
}

MPIIO_EXPORT int MPI_File_write_ordered(MPI_File fh, const void *buf, int count, MPI_Datatype type,
                           MPI_Status *status)
{
    VIA_SHARED(release_for, MPI_File_write_ordered, fh, buf, count, type, status);
}

MPIIO_EXPORT int MPI_File_read_ordered(MPI_File fh, void *buf, int count, MPI_Datatype type,
                          MPI_Status *status)
{
    VIA_SHARED(release_for, MPI_File_read_ordered, fh, buf, count, type, status);
}

MPIIO_EXPORT int MPI_File_write_ordered_begin(MPI_File fh, const void *buf, int count, MPI_Datatype type)
{
    VIA_SHARED(release_for, MPI_File_write_ordered_begin, fh, buf, count, type);
}

MPIIO_EXPORT int MPI_File_read_ordered_begin(MPI_File fh, void *buf, int count, MPI_Datatype type)
{
    VIA_SHARED(release_for, MPI_File_read_ordered_begin, fh, buf, count, type);
}

/* Split collectives the layer does not split: the file goes back to MPI-IO. */
MPIIO_EXPORT int MPI_File_write_at_all_begin(MPI_File fh, MPI_Offset offset, const void *buf, int count,
                                MPI_Datatype type)
{
    VIA_SHARED(release_for, MPI_File_write_at_all_begin, fh, offset, buf, count, type);
}

MPIIO_EXPORT int MPI_File_write_all_begin(MPI_File fh, const void *buf, int count, MPI_Datatype type)
{
    VIA_SHARED(release_for, MPI_File_write_all_begin, fh, buf, count, type);
}

MPIIO_EXPORT int MPI_File_read_at_all_begin(MPI_File fh, MPI_Offset offset, void *buf, int count,
                               MPI_Datatype type)
{
    VIA_SHARED(release_for, MPI_File_read_at_all_begin, fh, offset, buf, count, type);
}

MPIIO_EXPORT int MPI_File_read_all_begin(MPI_File fh, void *buf, int count, MPI_Datatype type)
{
    VIA_SHARED(release_for, MPI_File_read_all_begin, fh, buf, count, type);
}

/* --- the individual file pointer --------------------------------------------------------- */

static int64_t effective_size(mpiio_file_t *f)
{
    MPI_Offset real = 0;
    PMPI_File_get_size(f->fh, &real);
    return real > f->max_end ? real : f->max_end;
}

MPIIO_EXPORT int MPI_File_seek(MPI_File fh, MPI_Offset offset, int whence)
{
    mpiio_file_t *f = taken(fh);
    if (!f)
        return PMPI_File_seek(fh, offset, whence);
    int64_t to;
    if (whence == MPI_SEEK_SET)
        to = offset;
    else if (whence == MPI_SEEK_CUR)
        to = f->fp + offset;
    else if (whence == MPI_SEEK_END)
        to = mpiio_view_bytes_below(&f->view, effective_size(f)) / f->view.etype_size + offset;
    else
        return mpiio_refuse(f, MPI_ERR_ARG, "MPI_File_seek: an unknown whence %d", whence);
    if (to < 0)
        return mpiio_refuse(f, MPI_ERR_ARG, "MPI_File_seek: a position before the view");
    f->fp = to;
    return MPI_SUCCESS;
}

MPIIO_EXPORT int MPI_File_get_position(MPI_File fh, MPI_Offset *offset)
{
    mpiio_file_t *f = taken(fh);
    if (!f)
        return PMPI_File_get_position(fh, offset);
    *offset = f->fp;
    return MPI_SUCCESS;
}

MPIIO_EXPORT int MPI_File_get_byte_offset(MPI_File fh, MPI_Offset offset, MPI_Offset *disp)
{
    mpiio_file_t *f = taken(fh);
    if (!f)
        return PMPI_File_get_byte_offset(fh, offset, disp);
    if (offset < 0)
        return mpiio_refuse(f, MPI_ERR_ARG, "MPI_File_get_byte_offset: a negative offset");
    *disp = mpiio_view_byte_offset(&f->view, offset * f->view.etype_size);
    return MPI_SUCCESS;
}

/* --- sync, sizes ------------------------------------------------------------------------ */

MPIIO_EXPORT int MPI_File_sync(MPI_File fh)
{
    int known;
    mpiio_file_t *f = taken_known(fh, 1, "MPI_File_sync", &known);
    if (known != MPI_SUCCESS)
        return known;
    if (!f)
        return PMPI_File_sync(fh);
    double t0 = PMPI_Wtime();
    int rc;
    f->syncs++;
    if (mpiio_sync_async()) {
        /* Opt-in: the step ends now and the bytes are durable by the close. */
        mpiio_step_end_t end;
        rc = mpiio_end_step_agreed(f, MPI_SUCCESS, "MPI_File_sync", &end);
        f->sync_owed = 1;
    } else { /* in the node-local tier: durable in the local stores */
        rc = mpiio_settle_collective(f, 0, "MPI_File_sync");
    }
    /* Every rank returns the same (and reaches MPI-IO's collective sync or
     * none does). */
    /* Durable: fsync reaches the bytes fwdio's writers wrote too. In the
     * node-local tier the steps are durable in the local stores already
     * (every rank of the file decides alike: the tier is the file's). */
    if (rc == MPI_SUCCESS && !mpiio_sync_async() && !f->tier)
        rc = PMPI_File_sync(fh);
    /* Every rank's bytes so far are in the file (or owed to it, with
     * FWDIO_MPIIO_SYNC=async): MPI_File_get_size counts them from now on. */
    int64_t top = f->max_end;
    PMPI_Allreduce(&f->max_end, &top, 1, MPI_INT64_T, MPI_MAX, f->comm);
    if (top > f->synced_end)
        f->synced_end = top;
    f->blocked[MPIIO_T_SYNC] += PMPI_Wtime() - t0;
    return rc;
}

MPIIO_EXPORT int MPI_File_get_size(MPI_File fh, MPI_Offset *size)
{
    mpiio_file_t *f = taken(fh);
    if (!f)
        return PMPI_File_get_size(fh, size);
    /* This rank's own writes count, wherever they are on their way. */
    double t0 = PMPI_Wtime();
    int rc = PMPI_File_get_size(fh, size);
    if (rc == MPI_SUCCESS && *size < f->max_end)
        *size = f->max_end;
    /* and every rank's before the last sync (it may have returned early) */
    if (rc == MPI_SUCCESS && *size < f->synced_end)
        *size = f->synced_end;
    f->blocked[MPIIO_T_SIZE] += PMPI_Wtime() - t0;
    return rc;
}

MPIIO_EXPORT int MPI_File_set_size(MPI_File fh, MPI_Offset size)
{
    int known;
    mpiio_file_t *f = taken_known(fh, 1, "MPI_File_set_size", &known);
    if (known != MPI_SUCCESS)
        return known;
    if (!f)
        return PMPI_File_set_size(fh, size);
    /* A size at or past every byte written so far changes none of them: the
     * real call may run beside the writes. A smaller one cuts written bytes:
     * they must be in the file first. */
    double t0 = PMPI_Wtime();
    int64_t top = f->max_end;
    PMPI_Allreduce(&f->max_end, &top, 1, MPI_INT64_T, MPI_MAX, f->comm);
    int rc = size < top ? mpiio_settle_collective(f, 1, "MPI_File_set_size")
                        : mpiio_agree_error(f, MPI_SUCCESS, "MPI_File_set_size");
    if (rc == MPI_SUCCESS && size < top) {
        if (f->max_end > size)
            f->max_end = size;
        if (f->synced_end > size)
            f->synced_end = size;
    }
    if (rc == MPI_SUCCESS)
        rc = PMPI_File_set_size(fh, size);
    f->blocked[MPIIO_T_SIZE] += PMPI_Wtime() - t0;
    return rc;
}

MPIIO_EXPORT int MPI_File_preallocate(MPI_File fh, MPI_Offset size)
{
    int known;
    mpiio_file_t *f = taken_known(fh, 1, "MPI_File_preallocate", &known);
    if (known != MPI_SUCCESS)
        return known;
    if (!f)
        return PMPI_File_preallocate(fh, size);
    double t0 = PMPI_Wtime();
    int rc = mpiio_preallocate(f, size);
    f->blocked[MPIIO_T_SIZE] += PMPI_Wtime() - t0;
    return rc;
}
