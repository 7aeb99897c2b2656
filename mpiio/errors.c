/* SPDX-License-Identifier: BSD-3-Clause */
/* fwdio's failures as MPI error codes: a code of the MPI error class that
 * fits, whose MPI_Error_string is fwdio's detail, returned through the
 * file's error handler as MPI-IO would. */
#include "layer.h"

#include <errno.h>
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

int mpiio_error_code(int status, int sys_errno, const char *text)
{
    int cls = error_class(status, sys_errno), code;
    /* A code of its own carries the text; if MPI cannot make one, the class
     * still says what kind of failure it was. */
    if (PMPI_Add_error_code(cls, &code) != MPI_SUCCESS)
        return cls;
    PMPI_Add_error_string(code, text);
    return code;
}

static int through_handler(mpiio_file_t *f, int code)
{
    PMPI_File_call_errhandler(f->fh, code);
    return code;
}

int mpiio_file_error(mpiio_file_t *f, int status, const char *call)
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
        mpiio_error_text(text, sizeof text, f->path, "%s: %s", call, detail);
        if (mpiio_verbose())
            mpiio_say("%s", text + strlen("fwdio-mpiio: "));
        f->error_code = mpiio_error_code(status, info.sys_errno, text);
    }
    return through_handler(f, f->error_code);
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
    int code;
    if (PMPI_Add_error_code(cls, &code) != MPI_SUCCESS)
        code = cls;
    else
        PMPI_Add_error_string(code, text);
    return through_handler(f, code);
}

static int agree(mpiio_file_t *f, int code, const char *call, int *flag);

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
    return mpiio_agree_error_flag(f, code, call, NULL);
}

int mpiio_agree_error_flag(mpiio_file_t *f, int code, const char *call, int *flag)
{
    if (code == MPI_SUCCESS) /* this rank's own failure since the last collective call */
        code = f->local_code;
    f->local_code = MPI_SUCCESS;
    code = agree(f, code, call, flag);
    if (code != MPI_SUCCESS && f->error_code == MPI_SUCCESS)
        f->error_code = code; /* failed on every rank alike from now on */
    return code;
}

static int agree(mpiio_file_t *f, int code, const char *call, int *flag)
{
    int size = 1;
    PMPI_Comm_size(f->comm, &size);
    /* the lowest failing rank (size: none), and whether no rank set the flag */
    int mine[2] = {code != MPI_SUCCESS ? f->rank : size, !(flag && *flag)};
    int all[2] = {size, 1};
    int rc = PMPI_Allreduce(mine, all, 2, MPI_INT, MPI_MIN, f->comm);
    int first = all[0];
    if (flag)
        *flag = rc == MPI_SUCCESS ? !all[1] : *flag;
    if (rc != MPI_SUCCESS || first == size)
        return code;
    /* The lowest failing rank's class and text go to every rank. */
    struct {
        int cls;
        char text[MPI_MAX_ERROR_STRING];
    } e = {MPI_ERR_IO, ""};
    if (f->rank == first) {
        int len = 0;
        PMPI_Error_class(code, &e.cls);
        PMPI_Error_string(code, e.text, &len);
    }
    PMPI_Bcast(&e, (int)sizeof e, MPI_BYTE, first, f->comm);
    if (code != MPI_SUCCESS)
        return code; /* this rank's own failure says the most about it */
    char text[MPI_MAX_ERROR_STRING + 64];
    snprintf(text, sizeof(text), "%s (rank %d; %s failed there)", e.text, first, call);
    text[MPI_MAX_ERROR_STRING - 1] = '\0';
    int agreed;
    if (PMPI_Add_error_code(e.cls, &agreed) != MPI_SUCCESS)
        return through_handler(f, e.cls);
    PMPI_Add_error_string(agreed, text);
    return through_handler(f, agreed);
}
