/* SPDX-License-Identifier: BSD-3-Clause */
/* Restart from the nearest copy (local_restart.h). */
#include "local/local_restart.h"

#include "local/local_index.h"
#include "local/local_name.h"
#include "local/local_record.h"
#include "local/local_state.h"
#include "log.h"
#include "plan/plan.h"
#include "agreement/agreements.h"
#include "agreement/outcome.h"
#include "storage/storage.h"
#include "storage/sysio.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Largest index read from a local file's tail (runs of 16 bytes each). */
enum { MAX_INDEX = 64 << 20 };

/* One local file found in this host's store. */
typedef struct found {
    int fd;
    fwdioi_local_index_t ix; /* runs owned; path not kept (points into a freed buffer) */
    uint8_t *raw;            /* the index's bytes (ix.path points into them) */
} found_t;

struct fwdioi_restart {
    fwdioi_io_job_t io;
    fwdio_file_t *file;
    void (*then)(fwdio_file_t *f);
    /* the look's inputs (copies: the job touches nothing of the file) */
    char *dir, *prefix, *target;
    const char *path_key;
    fwdioi_plan_t plan; /* the read plan, its size set per version looked at */
    int reader;
    /* the look's result: this host's files of the chosen version */
    found_t *files;
    size_t nfiles;
    uint64_t version, size;
    const char *why; /* why this reader found no copy to read, for the log */
    /* the agreement: [version, ~version], MPI_MAX */
    uint64_t vote[2], agreed[2];
    int chosen; /* every reader chose `version`: read the local files */
};

static void found_free(found_t *x)
{
    if (x->fd >= 0)
        close(x->fd);
    fwdioi_local_index_free(&x->ix);
    free(x->raw);
    x->fd = -1;
    x->raw = NULL;
}

/* Read the index that ends the local file open as `fd`; 0 or -1. */
static int read_index(int fd, found_t *x)
{
    struct stat st;
    uint8_t foot[16];
    uint64_t failed;
    if (fstat(fd, &st) != 0 || st.st_size < 16 ||
        fwdioi_pread_all(fd, foot, sizeof foot, (uint64_t)st.st_size - 16, &failed) != 0)
        return -1;
    uint64_t ilen = 0;
    for (int i = 7; i >= 0; i--)
        ilen = ilen << 8 | foot[i];
    if (ilen < 16 || ilen > MAX_INDEX || ilen > (uint64_t)st.st_size)
        return -1;
    x->raw = malloc((size_t)ilen);
    if (!x->raw || fwdioi_pread_all(fd, x->raw, ilen, (uint64_t)st.st_size - ilen, &failed) != 0)
        return -1;
    /* the index starts where the writer put it: a file cut short or grown
     * is not the copy it describes */
    if (fwdioi_local_index_decode(x->raw, (size_t)ilen, &x->ix) != 0)
        return -1;
    if ((uint64_t)st.st_size - ilen != fwdioi_local_index_offset(x->ix.size))
        return -1;
    return 0;
}

/* Read and check the version record beside local file `name`. */
static int record_ok(const char *name, const found_t *x, const fwdioi_target_id_t *now)
{
    char path[PATH_MAX];
    uint8_t buf[FWDIOI_LOCAL_VERSION_LEN + 1];
    if (fwdioi_local_record_path(name, path, sizeof path) != 0)
        return 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, buf, sizeof buf);
    close(fd);
    fwdioi_local_version_t v;
    return n == FWDIOI_LOCAL_VERSION_LEN &&
           fwdioi_local_version_decode(buf, (size_t)n, &v) == 0 &&
           v.version == x->ix.created_ns && v.writer == x->ix.writer &&
           fwdioi_local_version_usable(&v, now);
}

/* The file and run of `files` (those of one version) that hold [base, base
 * + len) whole, or NULL. */
static const found_t *holder(const found_t *files, size_t n, uint64_t base, uint64_t len)
{
    for (size_t i = 0; i < n; i++) {
        const fwdioi_local_index_t *ix = &files[i].ix;
        size_t lo = 0, hi = ix->nruns; /* the last run starting at or before base */
        while (lo < hi) {
            size_t mid = (lo + hi) / 2;
            if (ix->runs[mid].offset <= base)
                lo = mid + 1;
            else
                hi = mid;
        }
        if (lo > 0 && base + len <= ix->runs[lo - 1].offset + ix->runs[lo - 1].len)
            return &files[i];
    }
    return NULL;
}

/* Whether `files` (one version, all of one size) hold every unit this
 * reader reads. */
static int covers(struct fwdioi_restart *r, const found_t *files, size_t n)
{
    fwdioi_plan_t *p = &r->plan;
    fwdioi_plan_set_size(p, files[0].ix.size);
    const uint64_t ss = p->stripe_size, ws = p->write_size, size = p->size;
    uint64_t ns = fwdioi_plan_writer_stripes(p, r->reader);
    for (uint64_t i = 0; i < ns; i++) {
        uint64_t s = fwdioi_plan_writer_stripe_at(p, r->reader, i);
        uint64_t end = (s + 1) * ss < size ? (s + 1) * ss : size;
        for (uint64_t base = s * ss; base < end; base += ws) {
            uint64_t len = size - base < ws ? size - base : ws;
            if (!holder(files, n, base, len))
                return 0;
        }
    }
    return 1;
}

static int by_version_desc(const void *a, const void *b)
{
    const found_t *x = a, *y = b;
    if (x->ix.created_ns != y->ix.created_ns)
        return x->ix.created_ns > y->ix.created_ns ? -1 : 1;
    return 0;
}

/* I/O pool thread: find this host's local files of the path whose version
 * the target does not contradict, and the newest version among them that
 * holds every unit this reader reads. */
static void run_look(fwdioi_io_job_t *io)
{
    struct fwdioi_restart *r = (struct fwdioi_restart *)io;
    fwdioi_target_id_t now;
    fwdioi_target_id_of(r->target, &now);
    r->why = "no local copy of it in this host's store";
    DIR *d = opendir(r->dir);
    if (!d)
        return;
    size_t cap = 0, n = 0, plen = strlen(r->prefix);
    found_t *all = NULL;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        static const char suffix[] = ".fwdio-local";
        if (len <= plen + sizeof suffix - 1 || strncmp(e->d_name, r->prefix, plen) != 0 ||
            strcmp(e->d_name + len - (sizeof suffix - 1), suffix) != 0)
            continue;
        char name[PATH_MAX];
        if ((size_t)snprintf(name, sizeof name, "%s/%s", r->dir, e->d_name) >= sizeof name)
            continue;
        if (n == cap) {
            found_t *grown = realloc(all, (cap = cap ? 2 * cap : 8) * sizeof *all);
            if (!grown)
                break;
            all = grown;
        }
        found_t x = {.fd = open(name, O_RDONLY | O_CLOEXEC)};
        if (x.fd < 0)
            continue;
        if (read_index(x.fd, &x) != 0 || strcmp(x.ix.path, r->path_key) != 0) {
            r->why = "a local copy without an intact index (incomplete, cut short or another "
                     "path's)";
            found_free(&x);
            continue;
        }
        if (!record_ok(name, &x, &now)) {
            r->why = "a local copy older than the target (or without its version record)";
            found_free(&x);
            continue;
        }
        all[n++] = x;
    }
    closedir(d);
    if (n > 1)
        qsort(all, n, sizeof *all, by_version_desc);
    /* Versions newest first; one whose files agree on the layout and hold
     * this reader's units is taken. */
    size_t chosen_at = n, chosen_n = 0;
    for (size_t i = 0, j; i < n && chosen_at == n; i = j) {
        int same = 1;
        for (j = i + 1; j < n && all[j].ix.created_ns == all[i].ix.created_ns; j++)
            same &= all[j].ix.size == all[i].ix.size;
        if (same && covers(r, all + i, j - i)) {
            chosen_at = i;
            chosen_n = j - i;
        } else {
            r->why = "the local copies in this host's store do not hold every unit this reader "
                     "reads";
        }
    }
    for (size_t i = 0; i < n; i++)
        if (i < chosen_at || i >= chosen_at + chosen_n)
            found_free(&all[i]);
    if (chosen_at < n) {
        memmove(all, all + chosen_at, chosen_n * sizeof *all);
        r->files = all;
        r->nfiles = chosen_n;
        r->version = all[0].ix.created_ns;
        r->size = all[0].ix.size;
        r->why = NULL;
    } else {
        free(all);
    }
}

static void restart_closed(struct fwdioi_restart *r)
{
    for (size_t i = 0; i < r->nfiles; i++)
        found_free(&r->files[i]);
    free(r->files);
    r->files = NULL;
    r->nfiles = 0;
}

static void on_agreed(void *arg, const MPI_Status *st)
{
    FWDIOI_ASSERT_PROGRESS();
    fwdio_file_t *f = arg;
    struct fwdioi_restart *r = f->local->restart;
    if (!fwdioi_session_agreement_ok(f, FWDIOI_MPI_AGREE_LOCAL_COPY, st))
        return;
    r->chosen = r->agreed[0] != 0 && ~r->agreed[1] == r->agreed[0];
    if (r->chosen && f->my_writer >= 0 && r->version != r->agreed[0])
        r->chosen = 0; /* cannot be: every reader voted; kept safe */
    if (!r->chosen)
        restart_closed(r);
    if (f->my_writer >= 0)
        fwdioi_log(FWDIOI_LOG_INFO, "rank %d: %s: read from %s%s%s", f->rank, f->path,
                   r->chosen ? "the local copies" : "the target",
                   !r->chosen && r->why ? " (here: " : "",
                   !r->chosen && r->why ? r->why : "");
    r->then(f);
}

static void vote(fwdio_file_t *f)
{
    struct fwdioi_restart *r = f->local->restart;
    /* a reader votes for the version it can read here (0: none); the
     * others say nothing: [0, 0] loses to every reader's vote */
    if (f->my_writer >= 0) {
        r->vote[0] = r->version;
        r->vote[1] = ~r->version;
    }
    fwdioi_session_agree(f, FWDIOI_MPI_AGREE_LOCAL_COPY, r->vote, r->agreed, 2, MPI_UINT64_T,
                         MPI_MAX, on_agreed);
}

static void look_done(fwdioi_io_job_t *io)
{
    FWDIOI_ASSERT_PROGRESS();
    struct fwdioi_restart *r = (struct fwdioi_restart *)io;
    fwdio_file_t *f = r->file;
    f->s.io_pending--;
    if (f->s.outcome.aborted) {
        fwdioi_outcome_finish_if_aborted(f);
        return;
    }
    vote(f);
}

int fwdioi_local_restart_look(fwdio_file_t *f, void (*then)(fwdio_file_t *f))
{
    FWDIOI_ASSERT_PROGRESS();
    struct fwdioi_local *l = f->local;
    if (!l || !f->reading)
        return 0;
    struct fwdioi_restart *r = calloc(1, sizeof *r);
    char name[PATH_MAX];
    if (r && fwdioi_local_file_name(l->dir, f->path_key, 0, name, sizeof name) == 0) {
        /* "<dir>/<name>.<hash>.w0.fwdio-local": the files are "<name>.<hash>.w*" */
        static const char tail[] = ".w0.fwdio-local";
        char *slash = strrchr(name, '/');
        char *base = slash ? slash + 1 : name;
        size_t bl = strlen(base), tl = sizeof tail - 1;
        if (bl > tl && !strcmp(base + bl - tl, tail)) {
            base[bl - tl + 2] = '\0'; /* keep ".w" */
            r->prefix = strdup(base);
        }
    }
    if (r) {
        r->dir = strdup(l->dir);
        r->target = strdup(f->path);
    }
    l->restart = r;
    l->drop_restart = fwdioi_local_restart_free;
    if (!r || !r->prefix || !r->dir || !r->target) {
        /* no memory to look: this reader reads the target (it votes 0) */
        if (r)
            r->why = "no memory to look";
        else
            l->restart = r = calloc(1, sizeof *r);
        if (!r) {
            fwdioi_outcome_nomem(f, 0);
            return 1;
        }
        r->then = then;
        vote(f);
        return 1;
    }
    r->file = f;
    r->then = then;
    r->path_key = f->path_key;
    r->plan = f->plan;
    r->reader = f->my_writer;
    if (f->my_writer < 0) {
        vote(f);
        return 1;
    }
    r->io.run = run_look;
    r->io.done = look_done;
    f->s.io_pending++;
    fwdioi_rt_io_submit_any(f->engine, &r->io);
    return 1;
}

int fwdioi_local_restart_open(fwdio_file_t *f)
{
    FWDIOI_ASSERT_PROGRESS();
    struct fwdioi_restart *r = f->local ? f->local->restart : NULL;
    if (!r || !r->chosen)
        return 0;
    f->s.phase = FWDIOI_PHASE_OPENING;
    /* the open's agreement compares the readers' sizes (session.c) */
    f->s.outcome.open_local.offset = (int64_t)r->size;
    f->s.outcome.open_local.other_value = -(int64_t)r->size;
    fwdioi_outcome_opened(f);
    return 1;
}

int fwdioi_local_restart_fd(const fwdio_file_t *f, uint64_t base, uint64_t len, int target_fd)
{
    FWDIOI_ASSERT_PROGRESS();
    const struct fwdioi_restart *r = f->local ? f->local->restart : NULL;
    if (!r || !r->chosen)
        return target_fd;
    const found_t *x = holder(r->files, r->nfiles, base, len);
    return x ? x->fd : -1; /* the look made sure each unit has one */
}

void fwdioi_local_restart_free(struct fwdioi_restart *r)
{
    if (!r)
        return;
    restart_closed(r);
    free(r->dir);
    free(r->prefix);
    free(r->target);
    free(r);
}
