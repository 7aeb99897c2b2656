/* Which of an open's MPI_Info hints reach fwdio. MPI ignores the hints it
 * cannot honour, and so does the layer: fwdio_options_set_info refuses (and
 * prints) a hint it cannot use, which would leave the file not taken. */
#include "layer.h"

#include <stdlib.h>
#include <string.h>

/* A positive integer in decimal, and nothing else. */
static int positive_int(const char *v)
{
    char *end = NULL;
    long n = strtol(v, &end, 10);
    return end != v && *end == '\0' && n > 0 && n <= 1L << 30;
}

/* Why fwdio cannot honour hint `key` = `value`, or NULL if it can (or
 * ignores the key itself). */
static const char *unusable(const char *key, const char *value)
{
    if (!strcmp(key, "fwdio_mpiio"))
        return "the layer's own report of a file (MPI_File_get_info)";
    if (!strcmp(key, "cb_config_list") &&
        (strncmp(value, "*:", 2) != 0 || !positive_int(value + 2)))
        return "only \"*:N\" (N writers on every node) is used";
    if ((!strcmp(key, "cb_nodes") || !strcmp(key, "striping_unit") ||
         !strcmp(key, "striping_factor")) &&
        !positive_int(value))
        return "not a positive number";
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
