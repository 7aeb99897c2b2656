/* SPDX-License-Identifier: BSD-3-Clause */
/* Which of an open's MPI_Info hints reach fwdio. MPI ignores the hints it
 * cannot honour, and so does the layer: fwdio_options_set_info refuses (and
 * prints) a hint it cannot use, which would leave the file not taken. */
#include "layer.h"
#include "parse_size.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* The integers fwdio_options_set_info takes (settings.c, K_INT): decimal,
 * 0 to 2^30, trailing blanks allowed. -1 if `v` is not one. */
static long hint_int(const char *v)
{
    errno = 0;
    char *end;
    long n = strtol(v, &end, 10);
    while (isspace((unsigned char)*end))
        end++;
    return errno || end == v || *end || n < 0 || n > 1L << 30 ? -1 : n;
}

/* Why fwdio cannot honour hint `key` = `value`, or NULL if it can (or
 * ignores the key itself). The rules are those fwdio_options_set_info
 * applies to the MPI-IO hints it maps, so a hint that passes here is not
 * refused there. */
static const char *unusable(const char *key, const char *value)
{
    uint64_t bytes;
    if (!strcmp(key, "fwdio_mpiio"))
        return "the layer's own report of a file (MPI_File_get_info)";
    /* A stream drains its steps one by one: the layer's own copy count */
    if (!strcmp(key, "fwdio_local_copies"))
        return "the MPI-IO layer's files keep one copy in the node-local tier";
    if (!strcmp(key, "cb_config_list") &&
        (strncmp(value, "*:", 2) != 0 || hint_int(value + 2) <= 0))
        return "only \"*:N\" (N writers on every node) is used";
    if ((!strcmp(key, "cb_nodes") || !strcmp(key, "striping_factor")) && hint_int(value) < 0)
        return "not a number";
    if (!strcmp(key, "striping_unit") && (fwdioi_parse_size(value, &bytes) != 0 || bytes == 0))
        return "not a size";
    return NULL;
}

MPI_Info mpiio_hints_for_fwdio(MPI_Info info, const char *path)
{
    int nkeys = 0;
    MPI_Info out = MPI_INFO_NULL;
    if (info == MPI_INFO_NULL || PMPI_Info_get_nkeys(info, &nkeys) != MPI_SUCCESS ||
        PMPI_Info_create(&out) != MPI_SUCCESS)
        return MPI_INFO_NULL;
    for (int i = 0; i < nkeys; i++) {
        char key[MPI_MAX_INFO_KEY + 1], value[MPI_MAX_INFO_VAL + 1];
        int flag = 0;
        if (PMPI_Info_get_nthkey(info, i, key) != MPI_SUCCESS ||
            PMPI_Info_get(info, key, MPI_MAX_INFO_VAL, value, &flag) != MPI_SUCCESS || !flag)
            continue;
        const char *why = unusable(key, value);
        if (why) {
            if (mpiio_verbose())
                mpiio_say("%s: hint %s=\"%s\" ignored: %s", path, key, value, why);
            continue;
        }
        PMPI_Info_set(out, key, value);
    }
    return out;
}
