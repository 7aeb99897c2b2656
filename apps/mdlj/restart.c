/* SPDX-License-Identifier: BSD-3-Clause */
#define _POSIX_C_SOURCE 200809L
#include "restart.h"
#include "ckpt_files.h"
#include "gather.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Read exactly `len` bytes at `offset`; 0, or -1 with errno (EIO at end of file). */
static int pread_all(int fd, void *buf, size_t len, uint64_t offset)
{
    unsigned char *p = buf;
    while (len > 0) {
        ssize_t n = pread(fd, p, len, (off_t)offset);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            if (n == 0)
                errno = EIO;
            return -1;
        }
        p += n;
        len -= (size_t)n;
        offset += (uint64_t)n;
    }
    return 0;
}

/* The ids [first, first + count) this rank reads: an even share by id. */
static void my_slice(MPI_Comm comm, int64_t natoms, int64_t *first, int64_t *count)
{
    int rank, nranks;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &nranks);
    *first = natoms * rank / nranks;
    *count = natoms * (rank + 1) / nranks - *first;
}

void restart_free(md_restart_t *r)
{
    free(r->records);
    r->records = NULL;
}

/* This rank's share of r->info.natoms atoms, and room for its records; 0, or
 * -1 without memory. */
static int share_alloc(MPI_Comm comm, md_restart_t *r)
{
    restart_free(r);
    my_slice(comm, r->info.natoms, &r->first, &r->count);
    r->records = malloc((size_t)r->count * CKPT_ATOM_BYTES + 1);
    return r->records ? 0 : -1;
}

static uint64_t share_offset(const md_restart_t *r)
{
    return CKPT_HEADER_BYTES + CKPT_ATOM_BYTES * (uint64_t)r->first;
}

static size_t share_bytes(const md_restart_t *r)
{
    return (size_t)r->count * CKPT_ATOM_BYTES;
}

static uint64_t share_checksum(const md_restart_t *r)
{
    uint64_t sum = 0;
    for (int64_t k = 0; k < r->count; k++) {
        double xv[6];
        memcpy(xv, r->records + CKPT_ATOM_BYTES * (size_t)k, sizeof xv);
        sum += ckpt_atom_term(r->first + k, xv, xv + 3);
    }
    return sum;
}

/*
 * Check the header and the last CKPT_COMMIT_BYTES (`record`) of a file of
 * `size` bytes named for step `step` (bytes beyond `size` are not looked at).
 * 0 with the header in `info` and the record in `commit`, or -1 with `why`.
 */
static int check_ends(const unsigned char header[CKPT_HEADER_BYTES],
                      const unsigned char record[CKPT_COMMIT_BYTES], uint64_t size, int64_t step,
                      ckpt_info_t *info, ckpt_commit_t *commit, const char **why)
{
    if (size < CKPT_HEADER_BYTES) {
        *why = "too short for a header";
        return -1;
    }
    if (ckpt_parse_header(header, info, why) != 0)
        return -1;
    /* From here size >= the smallest checkpoint: `record` was read. */
    if (size != ckpt_file_bytes(info->natoms)) {
        *why = "file size does not match the header";
        return -1;
    }
    if (ckpt_parse_commit(record, commit, why) != 0)
        return -1;
    if (commit->step != info->step || commit->natoms != info->natoms ||
        commit->header_hash != ckpt_header_hash(header)) {
        *why = "commit record belongs to another header";
        return -1;
    }
    if (info->step != step) {
        *why = "step in the header differs from the file name";
        return -1;
    }
    return 0;
}

/*
 * Collective: whether the candidate holds: `ends_ok` (its header and commit
 * record checked on this rank), `share_failed` (this rank could not read its
 * share), and the shares' checksums add up to `checksum`. Sums `stats`
 * (n_stats counters) over the ranks on the way. Same answer on every rank;
 * `why` is set on every rank when it does not hold but the ends did.
 */
static int agree(MPI_Comm comm, const md_restart_t *r, int ends_ok, int share_failed,
                 uint64_t checksum, uint64_t *stats, int n_stats, const char **why)
{
    enum { SUM, FAILED, BAD_ENDS, STATS, MAX_STATS = 4 };
    uint64_t part[STATS + MAX_STATS] = {0}, total[STATS + MAX_STATS];
    part[SUM] = ends_ok && !share_failed ? share_checksum(r) : 0;
    part[FAILED] = ends_ok && share_failed;
    part[BAD_ENDS] = !ends_ok;
    for (int i = 0; i < n_stats && i < MAX_STATS; i++)
        part[STATS + i] = stats[i];
    MPI_Allreduce(part, total, STATS + MAX_STATS, MPI_UINT64_T, MPI_SUM, comm);
    for (int i = 0; i < n_stats && i < MAX_STATS; i++)
        stats[i] = total[STATS + i];
    if (total[BAD_ENDS]) {
        if (ends_ok) /* the same bytes read differently on two ranks */
            *why = "ranks disagree on its header";
        return 0;
    }
    if (total[FAILED]) {
        *why = "cannot read the atom records";
        return 0;
    }
    if (total[SUM] != checksum) {
        *why = "atom records do not match the commit record's checksum";
        return 0;
    }
    return 1;
}

/* --- pread: rank 0 checks header and commit record, each rank reads its share --- */

/* Rank 0: the size, header and last CKPT_COMMIT_BYTES of `path` (as far as
 * the size has them); 0, or -1 with `why`. */
static int pread_ends(const char *path, unsigned char *header, unsigned char *record,
                      uint64_t *size, const char **why)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0) {
        *why = strerror(errno);
        return -1;
    }
    struct stat st;
    int rc = -1;
    if (fstat(fd, &st) != 0) {
        *why = strerror(errno);
    } else {
        *size = (uint64_t)st.st_size;
        if (*size >= CKPT_HEADER_BYTES && pread_all(fd, header, CKPT_HEADER_BYTES, 0) != 0)
            *why = "cannot read the header";
        else if (*size >= CKPT_HEADER_BYTES + CKPT_COMMIT_BYTES &&
                 pread_all(fd, record, CKPT_COMMIT_BYTES, *size - CKPT_COMMIT_BYTES) != 0)
            *why = "cannot read the commit record";
        else
            rc = 0;
    }
    close(fd);
    return rc;
}

static int check_pread(MPI_Comm comm, int64_t step, md_restart_t *r, const char **why)
{
    int rank;
    MPI_Comm_rank(comm, &rank);
    ckpt_commit_t commit = {0};
    int ok = 1;
    if (rank == 0) {
        unsigned char header[CKPT_HEADER_BYTES] = {0}, record[CKPT_COMMIT_BYTES] = {0};
        uint64_t size = 0;
        ok = pread_ends(r->path, header, record, &size, why) == 0 &&
             check_ends(header, record, size, step, &r->info, &commit, why) == 0;
    }
    MPI_Bcast(&ok, 1, MPI_INT, 0, comm);
    if (!ok)
        return 0;
    MPI_Bcast(&r->info, (int)sizeof r->info, MPI_BYTE, 0, comm);
    MPI_Bcast(&commit.checksum, 1, MPI_UINT64_T, 0, comm);
    int failed = share_alloc(comm, r) != 0;
    if (!failed) {
        int fd = open(r->path, O_RDONLY);
        failed = fd < 0 || pread_all(fd, r->records, share_bytes(r), share_offset(r)) != 0;
        if (failed)
            fprintf(stderr, "mdlj: rank %d: cannot read %s: %s\n", rank, r->path,
                    strerror(errno));
        if (fd >= 0)
            close(fd);
    }
    return agree(comm, r, 1, failed, commit.checksum, NULL, 0, why);
}

/* --- fwdio: every rank asks for the header, the commit record and its share --- */

/* What the callbacks of one candidate report (they may run on fwdio's
 * progress thread when the configuration says so: atomics). */
struct fw_reads {
    atomic_int ready;        /* the ready callback ran */
    atomic_int ready_status;
    atomic_int pending;      /* reads issued whose done callback has not run */
    atomic_int failed;       /* status of a read that failed, or FWDIO_OK */
};

static void on_ready(fwdio_file_t *file, int status, void *user)
{
    (void)file;
    struct fw_reads *w = user;
    atomic_store(&w->ready_status, status);
    atomic_store(&w->ready, 1);
}

static void on_read(fwdio_file_t *file, void *buf, int status, void *arg)
{
    (void)file;
    (void)buf;
    struct fw_reads *w = arg;
    if (status != FWDIO_OK)
        atomic_store(&w->failed, status);
    atomic_fetch_sub(&w->pending, 1);
}

static void fw_read(fwdio_file_t *file, struct fw_reads *w, void *buf, size_t len,
                    uint64_t offset)
{
    atomic_fetch_add(&w->pending, 1);
    int rc = fwdio_read(file, buf, len, offset, on_read, w);
    if (rc != FWDIO_OK) { /* done will not run */
        atomic_store(&w->failed, rc);
        atomic_fetch_sub(&w->pending, 1);
    }
}

/* Run fwdio's callbacks until *flag reads `until`. */
static void poll_until(fwdio_runtime_t *rt, atomic_int *flag, int until)
{
    while (atomic_load(flag) != until) {
        if (fwdio_poll(rt) <= 0)
            nanosleep(&(struct timespec){.tv_nsec = 100 * 1000}, NULL);
    }
}

/* Version `step` of the set `name` (options `co`: its dir, the readers'
 * options), opened with fwdio_ckpt_open_read: every rank reads the header,
 * the commit record and its share, and the ranks agree on mdlj's own checks
 * (the set's CRC-32 was verified by fwdio_ckpt_latest_upto). */
static int check_fwdio(MPI_Comm comm, fwdio_runtime_t *rt, const char *name,
                       const fwdio_ckpt_options_t *co, int64_t step, md_restart_t *r,
                       const char **why, char *whybuf, size_t whycap)
{
    int rank;
    MPI_Comm_rank(comm, &rank);
    struct fw_reads w;
    atomic_init(&w.ready, 0);
    atomic_init(&w.ready_status, FWDIO_OK);
    atomic_init(&w.pending, 0);
    atomic_init(&w.failed, FWDIO_OK);
    fwdio_callbacks_t cbs = {.ready = on_ready, .user = &w};
    fwdio_file_t *file = NULL;
    int status = fwdio_ckpt_open_read(rt, name, (uint64_t)step, co, &cbs, &file);
    int ends_ok = 0, share_failed = 0;
    ckpt_commit_t commit = {0};
    if (status == FWDIO_OK) {
        poll_until(rt, &w.ready, 1); /* the size is known from here */
        uint64_t size = 0;
        status = atomic_load(&w.ready_status);
        if (status == FWDIO_OK)
            status = fwdio_file_size(file, &size);
        if (status == FWDIO_OK) {
            unsigned char header[CKPT_HEADER_BYTES] = {0}, record[CKPT_COMMIT_BYTES] = {0};
            if (size >= CKPT_HEADER_BYTES)
                fw_read(file, &w, header, CKPT_HEADER_BYTES, 0);
            if (size >= CKPT_HEADER_BYTES + CKPT_COMMIT_BYTES)
                fw_read(file, &w, record, CKPT_COMMIT_BYTES, size - CKPT_COMMIT_BYTES);
            poll_until(rt, &w.pending, 0);
            if (atomic_load(&w.failed) == FWDIO_OK)
                ends_ok = check_ends(header, record, size, step, &r->info, &commit, why) == 0;
        }
        if (ends_ok) {
            share_failed = share_alloc(comm, r) != 0;
            if (!share_failed)
                fw_read(file, &w, r->records, share_bytes(r), share_offset(r));
        }
        int close_rc = fwdio_close(file);
        /* Every read has ended once the file is complete; the status is the
         * same on every rank: FWDIO_OK, or the first read that failed. */
        status = fwdio_wait(file);
        if (status == FWDIO_OK)
            status = close_rc;
        if (status == FWDIO_OK)
            status = atomic_load(&w.failed);
    }
    if (status != FWDIO_OK) {
        fwdio_error_info_t einfo; /* the file's own failure, with its detail, when it failed */
        int file_failed = file && fwdio_file_error_info(file, &einfo) == FWDIO_OK &&
                          einfo.status != FWDIO_OK;
        snprintf(whybuf, whycap, "%s",
                 file_failed ? fwdio_file_error(file) : fwdio_strerror(status));
        *why = whybuf;
        share_failed = 1; /* whatever this rank holds may not be the file's */
    }
    uint64_t stats[3] = {0, 0, 0};
    fwdio_file_stats_t st;
    if (file && fwdio_file_stats(file, &st) == FWDIO_OK) {
        stats[0] = st.bytes_read;
        stats[1] = st.bytes_from_storage;
    }
    int readers = file ? fwdio_file_writers(file, NULL, 0) : 0;
    stats[2] = rank == 0 && readers > 0 ? (uint64_t)readers : 0;
    const char *agreed_why = NULL;
    int ok = agree(comm, r, ends_ok, share_failed, commit.checksum, stats, 3, &agreed_why);
    if (!ok && agreed_why && status == FWDIO_OK)
        *why = agreed_why;
    if (ok) {
        r->bytes_asked = stats[0];
        r->bytes_from_storage = stats[1];
        r->readers = (int)stats[2];
    }
    fwdio_file_free(file);
    return ok;
}

/* With fwdio: the checkpoint set <dir>/<name> of `base`. fwdio finds the
 * newest version at or below the bound whose bytes match their manifest's
 * CRC-32 (passing over damaged and incomplete ones, saying so on rank 0);
 * mdlj checks its own header, commit record and checksum while it loads
 * the atoms, and on a failure asks again below that version. */
static int find_in_set(MPI_Comm comm, fwdio_runtime_t *rt, int writers, const char *base,
                       int64_t max_step, md_restart_t *r)
{
    int rank;
    MPI_Comm_rank(comm, &rank);
    char dir[4096];
    const char *name;
    ckpt_split_base(base, dir, sizeof dir, &name);
    fwdio_options_t opts;
    fwdio_options_init(&opts);
    opts.writers = writers; /* the plan the checkpoints are written with, here readers */
    fwdio_ckpt_options_t co;
    fwdio_ckpt_options_init(&co);
    co.dir = dir;
    co.file = &opts;
    if (max_step < 0)
        return -1;
    uint64_t bound = max_step == INT64_MAX ? UINT64_MAX : (uint64_t)max_step;
    for (;;) {
        uint64_t v = 0;
        int rc = fwdio_ckpt_latest_upto(rt, name, &co, bound, &v);
        if (rc != FWDIO_OK) {
            if (rc != FWDIO_ENOCKPT && rank == 0)
                fprintf(stderr, "mdlj: restart: fwdio_ckpt_latest_upto: %s\n",
                        fwdio_strerror(rc));
            return -1;
        }
        if (v > (uint64_t)INT64_MAX ||
            fwdio_ckpt_path(name, v, &co, r->path, sizeof r->path) != FWDIO_OK)
            return -1; /* not mdlj's: it numbers versions by step */
        const char *why = NULL;
        char whybuf[600];
        if (check_fwdio(comm, rt, name, &co, (int64_t)v, r, &why, whybuf, sizeof whybuf))
            return 0;
        restart_free(r);
        if (rank == 0)
            fprintf(stderr, "mdlj: restart: ignoring %s: %s\n", r->path, why ? why : "invalid");
        if (v == 0)
            return -1;
        bound = v - 1;
    }
}

/* Without fwdio: the files <base>.<step>, newest first, each checked. */
static int find_in_files(MPI_Comm comm, const char *base, int64_t max_step, md_restart_t *r,
                         int *passed_over)
{
    int rank;
    MPI_Comm_rank(comm, &rank);
    int64_t *steps = NULL;
    long n = 0;
    if (rank == 0) {
        n = ckpt_list(base, &steps);
        if (n < 0)
            fprintf(stderr, "mdlj: restart: cannot list the directory of %s: %s\n", base,
                    strerror(errno));
    }
    MPI_Bcast(&n, 1, MPI_LONG, 0, comm);
    if (rank != 0 && n > 0) {
        steps = malloc((size_t)n * sizeof *steps);
        if (!steps)
            MPI_Abort(MPI_COMM_WORLD, 1);
    }
    if (n > 0)
        MPI_Bcast(steps, (int)n, MPI_INT64_T, 0, comm);
    int found = 0;
    for (long i = 0; i < n && !found; i++) {
        if (ckpt_path(r->path, sizeof r->path, base, steps[i]) != 0)
            continue;
        if (steps[i] > max_step) {
            (*passed_over)++;
            if (rank == 0)
                fprintf(stderr, "mdlj: restart: passing over %s: the trajectory being "
                                "continued ends before its step\n", r->path);
            continue;
        }
        const char *why = NULL;
        int ok = check_pread(comm, steps[i], r, &why);
        if (!ok) {
            restart_free(r);
            if (rank == 0)
                fprintf(stderr, "mdlj: restart: ignoring %s: %s\n", r->path,
                        why ? why : "invalid");
        }
        found = ok;
    }
    free(steps);
    return found ? 0 : -1;
}

int restart_find(MPI_Comm comm, fwdio_runtime_t *rt, int writers, const char *base,
                 int64_t max_step, md_restart_t *r)
{
    memset(r, 0, sizeof *r);
    int rank;
    MPI_Comm_rank(comm, &rank);
    /* With fwdio the set passes over versions past the bound silently: a
     * bounded search that finds nothing says the bound. */
    int passed_over = rt && max_step != INT64_MAX;
    int rc = rt ? find_in_set(comm, rt, writers, base, max_step, r)
                : find_in_files(comm, base, max_step, r, &passed_over);
    if (rc != 0) {
        const char *names = rt ? ".v<step>.ckpt" : ".<step>";
        if (rank == 0 && passed_over)
            fprintf(stderr, "mdlj: restart: no valid checkpoint %s%s of step %lld or "
                            "earlier, which the trajectory being continued reaches; move the "
                            "trajectory away to start it anew from the newest checkpoint\n",
                    base, names, (long long)max_step);
        else if (rank == 0)
            fprintf(stderr, "mdlj: restart: no valid checkpoint %s%s found\n", base, names);
        return -1;
    }
    return 0;
}

int restart_load(const md_domain_t *dom, md_restart_t *r, md_atoms_t *atoms)
{
    enum { WIDTH = 7 }; /* id, x[3], v[3] as doubles (ids are exact up to 2^53) */
    int64_t first = r->first, count = r->count;
    const unsigned char *raw = r->records;
    int nranks = dom->nranks;
    int *counts = calloc(4 * (size_t)nranks, sizeof *counts);
    double *records = malloc(((size_t)count + 1) * WIDTH * sizeof *records);
    int *dest = malloc(((size_t)count + 1) * sizeof *dest);
    int failed = !counts || !records || !dest || !raw, any_failed = 0;
    MPI_Allreduce(&failed, &any_failed, 1, MPI_INT, MPI_LOR, dom->cart);
    if (any_failed) {
        if (dom->rank == 0)
            fprintf(stderr, "mdlj: restart: out of memory distributing the atoms\n");
        free(counts);
        free(records);
        free(dest);
        restart_free(r);
        return -1;
    }
    /* Sort this share by destination rank (counting sort, stable: ids stay ascending). */
    int *send_counts = counts, *send_displs = counts + nranks;
    int *recv_counts = counts + 2 * nranks, *recv_displs = counts + 3 * nranks;
    for (int64_t k = 0; k < count; k++) {
        double xv[6];
        memcpy(xv, raw + CKPT_ATOM_BYTES * (size_t)k, sizeof xv);
        dest[k] = domain_owner(dom, xv);
        send_counts[dest[k]] += WIDTH;
    }
    for (int q = 1; q < nranks; q++)
        send_displs[q] = send_displs[q - 1] + send_counts[q - 1];
    int *cursor = recv_displs; /* borrowed until the counts arrive */
    memcpy(cursor, send_displs, (size_t)nranks * sizeof *cursor);
    for (int64_t k = 0; k < count; k++) {
        double *rec = records + cursor[dest[k]];
        cursor[dest[k]] += WIDTH;
        rec[0] = (double)(first + k);
        memcpy(rec + 1, raw + CKPT_ATOM_BYTES * (size_t)k, 6 * sizeof(double));
    }
    restart_free(r);
    free(dest);
    MPI_Alltoall(send_counts, 1, MPI_INT, recv_counts, 1, MPI_INT, dom->cart);
    long long total = 0;
    for (int q = 0; q < nranks; q++) {
        recv_displs[q] = (int)total;
        total += recv_counts[q];
    }
    double *incoming = malloc(((size_t)total + 1) * sizeof *incoming);
    failed = !incoming || atoms_reserve(atoms, (size_t)total / WIDTH) != 0;
    MPI_Allreduce(&failed, &any_failed, 1, MPI_INT, MPI_LOR, dom->cart);
    if (!any_failed) {
        MPI_Alltoallv(records, send_counts, send_displs, MPI_DOUBLE, incoming, recv_counts,
                      recv_displs, MPI_DOUBLE, dom->cart);
        atoms->n = 0;
        for (long long k = 0; k < total; k += WIDTH)
            atoms_push(atoms, (int64_t)incoming[k], incoming + k + 1, incoming + k + 4);
        failed = atoms_sort_by_id(atoms) != 0;
        MPI_Allreduce(&failed, &any_failed, 1, MPI_INT, MPI_LOR, dom->cart);
    }
    if (any_failed && dom->rank == 0)
        fprintf(stderr, "mdlj: restart: out of memory distributing the atoms\n");
    free(incoming);
    free(records);
    free(counts);
    return any_failed ? -1 : 0;
}

/* Rank 0: the gathered atoms hold every id of [0, natoms) once; 0, or -1 (message printed). */
static int ids_complete(const md_gathered_t *g, int64_t natoms)
{
    if ((int64_t)g->n != natoms) {
        fprintf(stderr, "mdlj: dump-loaded: the ranks hold %zu atoms, the checkpoint %" PRId64
                "\n", g->n, natoms);
        return -1;
    }
    unsigned char *seen = calloc((size_t)natoms, 1);
    if (!seen) {
        fprintf(stderr, "mdlj: dump-loaded: out of memory\n");
        return -1;
    }
    int rc = 0;
    for (size_t i = 0; i < g->n && rc == 0; i++) {
        int64_t id = g->id[i];
        if (id < 0 || id >= natoms || seen[id]) {
            fprintf(stderr, "mdlj: dump-loaded: atom id %" PRId64 " %s\n", id,
                    id < 0 || id >= natoms ? "out of range" : "held twice");
            rc = -1;
        } else {
            seen[id] = 1;
        }
    }
    free(seen);
    return rc;
}

int restart_dump(const md_domain_t *dom, const md_atoms_t *atoms, const ckpt_info_t *info,
                 const char *path)
{
    /* Each rank's atoms lie in its region and are in ascending id order. */
    long long local[3] = {0, (long long)atoms->n, -(long long)atoms->n}, agg[3];
    for (size_t i = 0; i < atoms->n; i++)
        if (!domain_owns(dom, atoms->x + 3 * i) || (i > 0 && atoms->id[i - 1] >= atoms->id[i]))
            local[0]++;
    MPI_Allreduce(local, agg, 1, MPI_LONG_LONG, MPI_SUM, dom->cart);
    MPI_Allreduce(local + 1, agg + 1, 2, MPI_LONG_LONG, MPI_MIN, dom->cart);
    md_snapshot_t snap = {.step = info->step, .n = atoms->n, .id = atoms->id, .x = atoms->x,
                          .v = atoms->v};
    md_gathered_t g = {0};
    int ok = gather_snapshot(dom->cart, &snap, &g) == 0 && agg[0] == 0;
    if (dom->rank == 0 && agg[0] != 0)
        fprintf(stderr, "mdlj: dump-loaded: %lld atoms are on a rank whose region does not "
                        "hold them, or out of id order\n", agg[0]);
    if (ok && dom->rank == 0) {
        ok = ids_complete(&g, info->natoms) == 0;
        uint64_t bytes = ckpt_file_bytes(info->natoms);
        unsigned char *image = ok ? calloc(bytes, 1) : NULL;
        if (ok && !image)
            fprintf(stderr, "mdlj: dump-loaded: out of memory\n");
        ok = image != NULL;
        if (ok) {
            ckpt_image(image, info, g.id, g.x, g.v, g.n);
            FILE *f = fopen(path, "wb");
            ok = f && fwrite(image, 1, bytes, f) == bytes;
            if (f && fclose(f) != 0)
                ok = 0;
            if (!ok)
                fprintf(stderr, "mdlj: dump-loaded: cannot write %s: %s\n", path,
                        strerror(errno));
        }
        free(image);
    }
    gather_free(&g);
    MPI_Bcast(&ok, 1, MPI_INT, 0, dom->cart);
    if (ok && dom->rank == 0)
        printf("mdlj: dump-loaded: %" PRId64 " atoms of step %" PRId64 " written to %s in id "
               "order; %d ranks hold %lld to %lld each, every one in its rank's region\n",
               info->natoms, info->step, path, dom->nranks, agg[1], -agg[2]);
    return ok ? 0 : -1;
}
