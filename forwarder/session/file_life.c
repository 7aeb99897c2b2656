/* SPDX-License-Identifier: BSD-3-Clause */
/* A file's lifetime: the names it is written under, what every rank must
 * agree on for it, and its release. */
#include "session/file_life.h"

#include "local/local_life.h"
#include "stream/stream.h"
#include "write/combine.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void fwdioi_file_unlink_locked(fwdio_file_t *f)
{
    FWDIOI_ASSERT_LOCKED(f->engine);
    LIST_REMOVE(f, live_link);
}

/* Files whose agreements were given up (s.outcome.abandoned; a drain's too): Open
 * MPI may still progress the other ranks' parts and write into the
 * agreements' buffers, which live in the file and its arrays, so such a file
 * is kept, whole and reachable, for the process's life. Only MPI failures
 * make them, one file each. */
static pthread_mutex_t g_kept_lock = PTHREAD_MUTEX_INITIALIZER;
static fwdio_file_t **g_kept;
static size_t g_nkept, g_kept_cap;

/* Keep `f`; 0, or -1 without memory for it (then it is freed after all). */
static int keep_for_mpi(fwdio_file_t *f)
{
    pthread_mutex_lock(&g_kept_lock);
    int rc = 0;
    if (g_nkept == g_kept_cap) {
        size_t cap = g_kept_cap ? 2 * g_kept_cap : 8;
        fwdio_file_t **grown = realloc(g_kept, cap * sizeof *grown);
        if (grown) {
            g_kept = grown;
            g_kept_cap = cap;
        } else {
            rc = -1;
        }
    }
    if (rc == 0)
        g_kept[g_nkept++] = f;
    pthread_mutex_unlock(&g_kept_lock);
    return rc;
}

void fwdioi_file_release(fwdio_file_t *f)
{
    if ((f->s.outcome.abandoned || fwdioi_local_abandoned(f)) && keep_for_mpi(f) == 0) {
        fwdioi_local_room_release(f); /* the node's room is no MPI buffer */
        return;
    }
    if (f->refused) { /* a stand-in owns nothing but itself (refused.c) */
        free(f);
        return;
    }
    fwdioi_combine_free(f);
    fwdioi_local_free(f);
    free(f->writer_ranks);
    free(f->writer_bytes_agreed);
    free(f->s.sent_bytes);
    free(f->s.expected_bytes);
    fwdioi_stream_free(f);
    fwdioi_commit_set_free(&f->commit);
    free(f->write_path);
    free(f->path_key);
    free(f->path);
    free(f);
}

/* The path with its directory resolved ("./a", "a" and "/cwd/a" name one
 * file); the path as given when the directory does not resolve (the open
 * will say why). */
char *fwdioi_path_key(const char *path)
{
    const char *slash = strrchr(path, '/');
    const char *name = slash ? slash + 1 : path;
    char *dir = slash == path ? strdup("/") : slash ? strndup(path, (size_t)(slash - path)) : strdup(".");
    char *real = dir ? realpath(dir, NULL) : NULL;
    free(dir);
    if (!real)
        return strdup(path);
    size_t len = strlen(real) + strlen(name) + 2;
    char *key = malloc(len);
    if (key)
        snprintf(key, len, "%s/%s", strcmp(real, "/") ? real : "", name);
    free(real);
    return key;
}

/* What every rank must agree on (open_check.h). */
void fwdioi_file_fill_check(fwdio_file_t *f)
{
    int64_t *c = f->check_fields;
    c[FWDIOI_FIELD_PATH] = (int64_t)fwdioi_hash(FWDIOI_HASH_INIT, f->path, strlen(f->path));
    c[FWDIOI_FIELD_ACCESS] = f->reading;
    c[FWDIOI_FIELD_SIZE] = (int64_t)f->size; /* a read file's: 0, found at the open */
    c[FWDIOI_FIELD_WRITE_SIZE] = (int64_t)f->opts.write_size;
    c[FWDIOI_FIELD_STRIPE_SIZE] = (int64_t)f->opts.stripe_size;
    c[FWDIOI_FIELD_WRITERS] = f->plan.nwriters;
    c[FWDIOI_FIELD_WRITER_RANKS] = (int64_t)fwdioi_hash(
        FWDIOI_HASH_INIT, f->writer_ranks, (size_t)f->plan.nwriters * sizeof *f->writer_ranks);
    c[FWDIOI_FIELD_LAYOUT] = f->opts.layout;
    c[FWDIOI_FIELD_TARGETS] = f->opts.targets;
    c[FWDIOI_FIELD_DURABLE] = f->opts.durable;
    c[FWDIOI_FIELD_ATOMIC_REPLACE] = f->opts.atomic_replace;
    c[FWDIOI_FIELD_APPEND_START] = (int64_t)f->opts.append_start;
    c[FWDIOI_FIELD_REWRITES] = f->opts.rewrites;
    c[FWDIOI_FIELD_OVERLAPS] = f->opts.overlaps;
    c[FWDIOI_FIELD_KEEP_CONTENTS] = f->opts.keep_contents;
    c[FWDIOI_FIELD_OFFSETS_ONLY] = f->opts.offsets_only;
    c[FWDIOI_FIELD_LOCAL_DIR] = fwdioi_local_check_value(f);
    c[FWDIOI_FIELD_LOCAL_CAPACITY] = (int64_t)fwdioi_local_capacity(f);
    c[FWDIOI_FIELD_LOCAL_COPIES] = fwdioi_local_copies(f);
    c[FWDIOI_FIELD_MUST_EXIST] = f->opts.must_exist;
}

/* "dir/name" -> "dir/.name.fwdio-tmp": beside the target, so the rename stays
 * within one file system, and the same on every rank and every run, so a
 * temporary left by a killed job is reused, not piled up. */
char *fwdioi_temporary_path(const char *path)
{
    const char *slash = strrchr(path, '/');
    size_t dir_len = slash ? (size_t)(slash - path) + 1 : 0;
    const char *name = path + dir_len;
    size_t len = strlen(path) + sizeof "..fwdio-tmp";
    char *tmp = malloc(len);
    if (tmp)
        snprintf(tmp, len, "%.*s.%s.fwdio-tmp", (int)dir_len, path, name);
    return tmp;
}
