/* SPDX-License-Identifier: BSD-3-Clause */
/* fwdio's failures as MPI error codes: a code of the MPI error class that
 * fits, whose MPI_Error_string is fwdio's detail, returned through the
 * file's error handler as MPI-IO would. */
#include "layer.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static int error_class(int status, int sys_errno)
{
    switch (sys_errno) {
    case ENOSPC:
        return MPI_ERR_NO_SPACE;
    case EDQUOT:
        return MPI_ERR_QUOTA;
    case EACCES:
    case EPERM:
        return MPI_ERR_ACCESS;
    case EROFS:
        return MPI_ERR_READ_ONLY;
    default:
        break;
    }
    switch (status) {
    case FWDIO_ENOMEM:
        return MPI_ERR_NO_MEM;
    case FWDIO_EINVAL:
    case FWDIO_ERANGE:
        return MPI_ERR_ARG;
    default:
        return MPI_ERR_IO;
    }
}

void mpiio_error_text(char *out, size_t len, const char *path, const char *fmt, ...)
{
    char msg[MPI_MAX_ERROR_STRING];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    /* "fwdio-mpiio: " + msg + " (" + path + ")": the path gives way first,
     * keeping its end (the file's name). */
    size_t room = len, fixed = strlen("fwdio-mpiio: ") + strlen(msg) + strlen(" ()") + 1;
    size_t plen = path ? strlen(path) : 0;
    if (!path || fixed + 4 > room) {
        snprintf(out, len, "fwdio-mpiio: %s", msg);
        return;
    }
    if (fixed + plen <= room)
        snprintf(out, len, "fwdio-mpiio: %s (%s)", msg, path);
    else
        snprintf(out, len, "fwdio-mpiio: %s (...%s)", msg, path + plen - (room - fixed - 3));
}

/* The texts of the last codes made, for code_text where MPI loses them. */
#define TEXTS_KEPT 16
static struct {
    int code;
    char text[MPI_MAX_ERROR_STRING];
} texts[TEXTS_KEPT];
static unsigned texts_next;
static pthread_mutex_t texts_lock = PTHREAD_MUTEX_INITIALIZER;

/* The text of code: the layer's own when it made the code, else MPI's. */
static void code_text(int code, char *out, size_t len)
{
    int found = 0;
    pthread_mutex_lock(&texts_lock);
    for (unsigned i = 0; i < TEXTS_KEPT && !found; i++)
        if (texts[i].text[0] && texts[i].code == code) {
            snprintf(out, len, "%s", texts[i].text);
            found = 1;
        }
    pthread_mutex_unlock(&texts_lock);
    if (!found) {
        int n = 0;
        out[0] = '\0';
        PMPI_Error_string(code, out, &n);
    }
}

/*
 * A code of class cls whose MPI_Error_string is text ("fwdio-mpiio: ..."); if
 * MPI cannot make one, the class, which still says what kind of failure it
 * was. MPICH 4.0 makes the code but its MPI_Error_string ignores the string
 * added to a code of a predefined class (it returns one of its own messages):
 * whether this MPI keeps the string is checked on the first code, and where
 * it does not, the text is said on stderr, the only place left for it, unless
 * FWDIO_VERBOSE has said it already.
 */
static int text_code(int cls, const char *text, int said)
{
    static int kept = -1; /* unknown yet; set once, by the first code (texts_lock) */
    int code;
    if (PMPI_Add_error_code(cls, &code) != MPI_SUCCESS) {
        code = cls;
    } else {
        PMPI_Add_error_string(code, text);
        pthread_mutex_lock(&texts_lock);
        texts[texts_next].code = code;
        snprintf(texts[texts_next].text, sizeof texts[texts_next].text, "%s", text);
        texts_next = (texts_next + 1) % TEXTS_KEPT;
        pthread_mutex_unlock(&texts_lock);
    }
    pthread_mutex_lock(&texts_lock);
    if (kept < 0 && code != cls) {
        char back[MPI_MAX_ERROR_STRING] = "";
        int len = 0;
        PMPI_Error_string(code, back, &len);
        kept = strcmp(back, text) == 0;
    }
    int lost = kept == 0 || code == cls;
    pthread_mutex_unlock(&texts_lock);
    if (lost && !said)
        mpiio_say("%s", text + strlen("fwdio-mpiio: "));
    return code;
}

int mpiio_error_code(int status, int sys_errno, const char *text)
{
    return text_code(error_class(status, sys_errno), text, mpiio_verbose());
}

/* A file whose handle MPI-IO has closed already (mpiio_close) had
 * MPI_ERRORS_RETURN: the code is all there is to report. */
static int through_handler(mpiio_file_t *f, int code)
{
    if (f->fh != MPI_FILE_NULL)
        PMPI_File_call_errhandler(f->fh, code);
    return code;
}

/* The file's sticky error for `status`, its text "<call>: <what><detail>". */
static int stream_error(mpiio_file_t *f, int status, const char *call, const char *what)
{
    if (f->error_code == MPI_SUCCESS) {
        char text[MPI_MAX_ERROR_STRING];
        fwdio_error_info_t info = {0};
        const char *detail = fwdio_strerror(status);
        if (f->stream && status == FWDIO_EFAILED) {
            fwdio_file_error_info(f->stream, &info);
            detail = fwdio_file_error(f->stream);
            status = info.status;
        } else if (f->stream && fwdio_file_error_info(f->stream, &info) == FWDIO_OK &&
                   info.status == status) {
            detail = fwdio_file_error(f->stream);
        }
        mpiio_error_text(text, sizeof text, f->path, "%s: %s%s", call, what, detail);
        if (mpiio_verbose())
            mpiio_say("%s", text + strlen("fwdio-mpiio: "));
        f->error_code = mpiio_error_code(status, info.sys_errno, text);
    }
    return through_handler(f, f->error_code);
}

int mpiio_file_error(mpiio_file_t *f, int status, const char *call)
{
    return stream_error(f, status, call, "");
}

int mpiio_drain_error(mpiio_file_t *f, int status, const char *call)
{
    return stream_error(f, status, call, MPIIO_DRAIN_FAILED ": ");
}

int mpiio_refuse(mpiio_file_t *f, int cls, const char *fmt, ...)
{
    char text[MPI_MAX_ERROR_STRING], msg[MPI_MAX_ERROR_STRING];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    mpiio_error_text(text, sizeof text, f->path, "%s", msg);
    if (mpiio_verbose())
        mpiio_say("%s", text + strlen("fwdio-mpiio: "));
    return through_handler(f, text_code(cls, text, mpiio_verbose()));
}

static int agree(mpiio_file_t *f, int code, const char *call, int *flags, int nflags,
                 int *failed, int64_t *words, int nwords);
static int round_failed(mpiio_file_t *f, int rc, int code, const char *call,
                        const char *mpi_call, int *flags, int nflags);
static int round_outcome(mpiio_file_t *f, int code, const char *call, const int *all,
                         int *flags, int nflags);

int mpiio_local_error(mpiio_file_t *f, int status, int sys_errno, const char *text)
{
    int code = mpiio_error_code(status, sys_errno, text);
    if (mpiio_verbose())
        mpiio_say("%s", text + strlen("fwdio-mpiio: "));
    if (f->local_code == MPI_SUCCESS)
        f->local_code = code;
    return through_handler(f, code);
}

int mpiio_agree_error(mpiio_file_t *f, int code, const char *call)
{
    return mpiio_agree_error_flags(f, code, call, NULL, 0);
}

int mpiio_agree_error_flag(mpiio_file_t *f, int code, const char *call, int *flag)
{
    return mpiio_agree_error_flags(f, code, call, flag, flag ? 1 : 0);
}

/* mpiio_agree_error_flags, and *failed: whether the round's MPI call itself
 * failed on this rank (its flags are then taken as set); with `words`
 * (NULL: none), nwords 64-bit words reduced by MIN in the same round (left
 * as they are where the round failed here). */
static int agree_error(mpiio_file_t *f, int code, const char *call, int *flags, int nflags,
                       int *failed, int64_t *words, int nwords)
{
    if (code == MPI_SUCCESS) /* this rank's own failure since the last collective call */
        code = f->local_code;
    f->local_code = MPI_SUCCESS;
    code = agree(f, code, call, flags, nflags, failed, words, nwords);
    if (code != MPI_SUCCESS && f->error_code == MPI_SUCCESS)
        f->error_code = code; /* failed on every rank alike from now on */
    return code;
}

int mpiio_agree_error_flags(mpiio_file_t *f, int code, const char *call, int *flags, int nflags)
{
    int failed;
    return agree_error(f, code, call, flags, nflags, &failed, NULL, 0);
}

int mpiio_agree_error_round(mpiio_file_t *f, int code, const char *call, int *flag,
                            int *failed)
{
    return agree_error(f, code, call, flag, 1, failed, NULL, 0);
}

/* The step's end as MIN words: the bounds as lo and -hi, the ranks that
 * wrote independently as first and -last. */
enum { END_LO, END_NHI, END_IND_LO, END_IND_NHI, END_FIRST, END_NLAST, END_WORDS };

int mpiio_agree_step_end(mpiio_file_t *f, int code, const char *call, int *flags, int nflags,
                         int *failed, mpiio_step_end_t *e)
{
    int64_t w[END_WORDS] = {e->lo, -e->hi, e->ind_lo, -e->ind_hi, e->first, -e->last};
    code = agree_error(f, code, call, flags, nflags, failed, w, END_WORDS);
    if (*failed) { /* every byte may be on its way; nothing to say of reads */
        e->lo = 0;
        e->hi = INT64_MAX;
        e->ind_lo = INT64_MAX;
        e->ind_hi = 0;
        return code;
    }
    e->lo = w[END_LO];
    e->hi = -w[END_NHI];
    e->ind_lo = w[END_IND_LO];
    e->ind_hi = -w[END_IND_NHI];
    e->first = w[END_FIRST];
    e->last = -w[END_NLAST];
    return code;
}

/* This rank's part of a round (mine) and the identity to reduce into (all):
 * the lowest failing rank (the communicator's size: none), and for each
 * flag whether no rank set it (one slot at least: every call sends as
 * many). The number of ints. */
static int round_fill(const mpiio_file_t *f, int code, const int *flags, int nflags, int *mine,
                      int *all)
{
    int size = 1;
    PMPI_Comm_size(f->comm, &size);
    int slots = nflags > 0 ? nflags : 1;
    mine[0] = code != MPI_SUCCESS ? f->rank : size;
    all[0] = size;
    for (int i = 0; i < slots; i++) {
        mine[1 + i] = !(i < nflags && flags[i]);
        all[1 + i] = 1;
    }
    return 1 + slots;
}

static int agree(mpiio_file_t *f, int code, const char *call, int *flags, int nflags,
                 int *failed, int64_t *words, int nwords)
{
    if (nflags > MPIIO_AGREE_FLAGS_MAX)
        nflags = MPIIO_AGREE_FLAGS_MAX;
    int mine[1 + MPIIO_AGREE_FLAGS_MAX], all[1 + MPIIO_AGREE_FLAGS_MAX];
    int n = round_fill(f, code, flags, nflags, mine, all);
    int rc;
    if (!words) {
        rc = PMPI_Allreduce(mine, all, n, MPI_INT, MPI_MIN, f->comm);
    } else { /* the ints as 64-bit words, then the caller's: one MIN */
        enum { MAX64 = 1 + MPIIO_AGREE_FLAGS_MAX + MPIIO_AGREE_WORDS_MAX };
        int64_t mine64[MAX64], all64[MAX64];
        if (nwords > MPIIO_AGREE_WORDS_MAX)
            nwords = MPIIO_AGREE_WORDS_MAX;
        for (int i = 0; i < n; i++)
            mine64[i] = mine[i];
        for (int i = 0; i < nwords; i++)
            mine64[n + i] = words[i];
        rc = PMPI_Allreduce(mine64, all64, n + nwords, MPI_INT64_T, MPI_MIN, f->comm);
        for (int i = 0; rc == MPI_SUCCESS && i < n; i++)
            all[i] = (int)all64[i];
        for (int i = 0; rc == MPI_SUCCESS && i < nwords; i++)
            words[i] = all64[n + i];
    }
    *failed = rc != MPI_SUCCESS;
    if (rc != MPI_SUCCESS)
        return round_failed(f, rc, code, call, "MPI_Allreduce", flags, nflags);
    return round_outcome(f, code, call, all, flags, nflags);
}

/* The round's MPI call failed on this rank. */
static int round_failed(mpiio_file_t *f, int rc, int code, const char *call,
                        const char *mpi_call, int *flags, int nflags)
{
    /* The agreement itself failed: this rank cannot know what the others
     * decided. It never reports success over it, and it takes the flags as
     * set: a rank with a flag set makes the same calls whatever the others
     * chose (mpiio_close: a last step, whose disagreement fwdio's close then
     * reports on every rank, and the second agreement, which every rank
     * makes). */
    for (int i = 0; i < nflags; i++)
        flags[i] = 1;
    if (code != MPI_SUCCESS)
        return code;
    char why[MPI_MAX_ERROR_STRING];
    int cls = MPI_ERR_OTHER;
    PMPI_Error_class(rc, &cls);
    code_text(rc, why, sizeof why);
    return mpiio_refuse(f, cls, "%s: the ranks' agreement on the outcome (%s) "
                                "failed on rank %d: %s",
                        call, mpi_call, f->rank, why);
}

/* What the round's reduction `all` says, the same on every rank. */
static int round_outcome(mpiio_file_t *f, int code, const char *call, const int *all,
                         int *flags, int nflags)
{
    int size = 1;
    PMPI_Comm_size(f->comm, &size);
    int first = all[0];
    for (int i = 0; i < nflags; i++)
        flags[i] = !all[1 + i];
    if (first == size)
        return code;
    /* The lowest failing rank's class and text go to every rank. */
    struct {
        int cls;
        char text[MPI_MAX_ERROR_STRING];
    } e = {MPI_ERR_IO, ""};
    if (f->rank == first) {
        PMPI_Error_class(code, &e.cls);
        code_text(code, e.text, sizeof e.text);
    }
    PMPI_Bcast(&e, (int)sizeof e, MPI_BYTE, first, f->comm);
    if (code != MPI_SUCCESS)
        return code; /* this rank's own failure says the most about it */
    char text[MPI_MAX_ERROR_STRING + 64];
    snprintf(text, sizeof(text), "%s (rank %d; %s failed there)", e.text, first, call);
    text[MPI_MAX_ERROR_STRING - 1] = '\0';
    /* said already on the failing rank when this MPI loses the text */
    return through_handler(f, text_code(e.cls, text, 1));
}

int mpiio_agreement_failed(mpiio_file_t *f, int rc, const char *call, const char *mpi_call)
{
    return round_failed(f, rc, MPI_SUCCESS, call, mpi_call, NULL, 0);
}

int mpiio_agree_error_start(mpiio_file_t *f, int code, mpiio_agreement_t *a)
{
    if (code == MPI_SUCCESS) /* this rank's own failure since the last collective call */
        code = f->local_code;
    f->local_code = MPI_SUCCESS;
    a->code = code;
    int n = round_fill(f, code, NULL, 0, a->mine, a->all); /* 2: what a->mine holds */
    a->rc = PMPI_Iallreduce(a->mine, a->all, n, MPI_INT, MPI_MIN, f->comm, &a->req);
    return a->rc;
}

int mpiio_agreement_clean(const mpiio_file_t *f, const mpiio_agreement_t *a)
{
    if (a->rc != MPI_SUCCESS) /* this rank cannot know: what it put in */
        return a->code == MPI_SUCCESS;
    int size = 1;
    PMPI_Comm_size(f->comm, &size);
    return a->all[0] == size; /* the lowest failing rank: none */
}

int mpiio_agree_error_finish(mpiio_file_t *f, mpiio_agreement_t *a, const char *call)
{
    int rc = a->rc == MPI_SUCCESS ? PMPI_Wait(&a->req, MPI_STATUS_IGNORE) : a->rc;
    a->rc = rc; /* for mpiio_agreement_clean */
    int code = rc != MPI_SUCCESS ? round_failed(f, rc, a->code, call, "MPI_Iallreduce", NULL, 0)
                                 : round_outcome(f, a->code, call, a->all, NULL, 0);
    if (code != MPI_SUCCESS && f->error_code == MPI_SUCCESS)
        f->error_code = code; /* failed on every rank alike from now on */
    return code;
}
