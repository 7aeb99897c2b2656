#define _POSIX_C_SOURCE 200809L
#include "restart.h"
#include "ckpt_files.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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

/* Rank 0: check header and commit record of `path`; 0, or -1 with `why`. */
static int check_header_and_commit(const char *path, ckpt_info_t *info, ckpt_commit_t *commit,
                       const char **why)
{
    unsigned char header[CKPT_HEADER_BYTES], record[CKPT_COMMIT_BYTES];
    int fd = open(path, O_RDONLY);
    if (fd < 0) {
        *why = strerror(errno);
        return -1;
    }
    struct stat st;
    int rc = -1;
    if (fstat(fd, &st) != 0 || st.st_size < (off_t)CKPT_HEADER_BYTES ||
        pread_all(fd, header, sizeof header, 0) != 0)
        *why = "too short for a header";
    else if (ckpt_parse_header(header, info, why) != 0)
        ;
    else if ((uint64_t)st.st_size != ckpt_file_bytes(info->natoms))
        *why = "file size does not match the header";
    else if (pread_all(fd, record, sizeof record, ckpt_commit_offset(info->natoms)) != 0)
        *why = "cannot read the commit record";
    else if (ckpt_parse_commit(record, commit, why) != 0)
        ;
    else if (commit->step != info->step || commit->natoms != info->natoms ||
             commit->header_hash != ckpt_header_hash(header))
        *why = "commit record belongs to another header";
    else
        rc = 0;
    close(fd);
    return rc;
}

/*
 * Collective: checksum of the atom records, each rank over its slice. Returns
 * 0 with the sum in *sum, or -1 when a rank could not read its slice.
 */
static int checksum_atoms(MPI_Comm comm, const char *path, const ckpt_info_t *info,
                          uint64_t *sum)
{
    int64_t first, count;
    my_slice(comm, info->natoms, &first, &count);
    uint64_t part[2] = {0, 0};
    int fd = open(path, O_RDONLY);
    enum { CHUNK = 4096 };
    unsigned char *buf = malloc((size_t)CHUNK * CKPT_ATOM_BYTES);
    if (fd < 0 || !buf) {
        part[1] = 1;
    } else {
        for (int64_t at = 0; at < count && !part[1]; at += CHUNK) {
            int64_t n = count - at < CHUNK ? count - at : CHUNK;
            if (pread_all(fd, buf, (size_t)n * CKPT_ATOM_BYTES,
                          CKPT_HEADER_BYTES + CKPT_ATOM_BYTES * (uint64_t)(first + at)) != 0) {
                part[1] = 1;
                break;
            }
            for (int64_t k = 0; k < n; k++) {
                double xv[6];
                memcpy(xv, buf + CKPT_ATOM_BYTES * (size_t)k, sizeof xv);
                part[0] += ckpt_atom_term(first + at + k, xv, xv + 3);
            }
        }
    }
    if (fd >= 0)
        close(fd);
    free(buf);
    uint64_t total[2];
    MPI_Allreduce(part, total, 2, MPI_UINT64_T, MPI_SUM, comm);
    *sum = total[0];
    return total[1] ? -1 : 0;
}

int restart_find(MPI_Comm comm, const char *base, int64_t max_step, ckpt_info_t *info,
                 char *path, size_t cap)
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
    int found = 0, passed_over = 0;
    for (long i = 0; i < n && !found; i++) {
        if (ckpt_path(path, cap, base, steps[i]) != 0)
            continue;
        if (steps[i] > max_step) {
            passed_over++;
            if (rank == 0)
                fprintf(stderr, "mdlj: restart: passing over %s: the trajectory being "
                                "continued ends before its step\n", path);
            continue;
        }
        /* Rank 0 checks header and commit record; all ranks then check the data. */
        ckpt_commit_t commit = {0};
        const char *why = NULL;
        int ok = 1;
        if (rank == 0)
            ok = check_header_and_commit(path, info, &commit, &why) == 0 && info->step == steps[i];
        if (rank == 0 && ok == 0 && !why)
            why = "step in the header differs from the file name";
        MPI_Bcast(&ok, 1, MPI_INT, 0, comm);
        if (ok) {
            MPI_Bcast(info, (int)sizeof *info, MPI_BYTE, 0, comm);
            MPI_Bcast(&commit.checksum, 1, MPI_UINT64_T, 0, comm);
            uint64_t sum = 0;
            if (checksum_atoms(comm, path, info, &sum) != 0) {
                ok = 0;
                why = "cannot read the atom records";
            } else if (sum != commit.checksum) {
                ok = 0;
                why = "atom records do not match the commit record's checksum";
            }
        }
        if (rank == 0 && !ok)
            fprintf(stderr, "mdlj: restart: ignoring %s: %s\n", path, why);
        found = ok;
    }
    free(steps);
    if (!found) {
        if (rank == 0 && passed_over)
            fprintf(stderr, "mdlj: restart: no valid checkpoint %s.<step> of step %lld or "
                            "earlier, which the trajectory being continued reaches; move the "
                            "trajectory away to start it anew from the newest checkpoint\n",
                    base, (long long)max_step);
        else if (rank == 0)
            fprintf(stderr, "mdlj: restart: no valid checkpoint %s.<step> found\n", base);
        return -1;
    }
    return 0;
}

int restart_load(const md_domain_t *dom, const char *path, const ckpt_info_t *info,
                 md_atoms_t *atoms)
{
    enum { WIDTH = 7 }; /* id, x[3], v[3] as doubles (ids are exact up to 2^53) */
    int64_t first, count;
    my_slice(dom->cart, info->natoms, &first, &count);
    int nranks = dom->nranks;
    int *counts = calloc(4 * (size_t)nranks, sizeof *counts);
    double *records = malloc(((size_t)count + 1) * WIDTH * sizeof *records);
    int *dest = malloc(((size_t)count + 1) * sizeof *dest);
    unsigned char *raw = malloc(((size_t)count + 1) * CKPT_ATOM_BYTES);
    int failed = !counts || !records || !dest || !raw;
    int fd = failed ? -1 : open(path, O_RDONLY);
    if (!failed && (fd < 0 || pread_all(fd, raw, (size_t)count * CKPT_ATOM_BYTES,
                                        CKPT_HEADER_BYTES + CKPT_ATOM_BYTES * (uint64_t)first) != 0)) {
        fprintf(stderr, "mdlj: rank %d: cannot read %s: %s\n", dom->rank, path, strerror(errno));
        failed = 1;
    }
    if (fd >= 0)
        close(fd);
    int any_failed = 0;
    MPI_Allreduce(&failed, &any_failed, 1, MPI_INT, MPI_LOR, dom->cart);
    if (any_failed) {
        free(counts);
        free(records);
        free(dest);
        free(raw);
        return -1;
    }
    /* Sort this slice by destination rank (counting sort, stable: ids stay ascending). */
    int *send_counts = counts, *send_displs = counts + nranks;
    int *recv_counts = counts + 2 * nranks, *recv_displs = counts + 3 * nranks;
    for (int64_t k = 0; k < count; k++) {
        double xv[6];
        memcpy(xv, raw + CKPT_ATOM_BYTES * (size_t)k, sizeof xv);
        dest[k] = domain_owner(dom, xv);
        send_counts[dest[k]] += WIDTH;
    }
    for (int r = 1; r < nranks; r++)
        send_displs[r] = send_displs[r - 1] + send_counts[r - 1];
    int *cursor = recv_displs; /* borrowed until the counts arrive */
    memcpy(cursor, send_displs, (size_t)nranks * sizeof *cursor);
    for (int64_t k = 0; k < count; k++) {
        double *rec = records + cursor[dest[k]];
        cursor[dest[k]] += WIDTH;
        rec[0] = (double)(first + k);
        memcpy(rec + 1, raw + CKPT_ATOM_BYTES * (size_t)k, 6 * sizeof(double));
    }
    free(raw);
    free(dest);
    MPI_Alltoall(send_counts, 1, MPI_INT, recv_counts, 1, MPI_INT, dom->cart);
    long long total = 0;
    for (int r = 0; r < nranks; r++) {
        recv_displs[r] = (int)total;
        total += recv_counts[r];
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
