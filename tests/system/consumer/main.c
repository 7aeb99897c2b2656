/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Consumer of fwdio, built against an installed fwdio (find_package or
 * pkg-config) or with fwdio as a subproject (add_subdirectory): compiles
 * against the header, links the library and calls the functions that need no
 * MPI job. Exit status 0 when the versions, defaults and error texts look
 * right.
 */
#include <fwdio.h>

#include <stdio.h>
#include <string.h>

int main(void)
{
    /* The library is the one the header describes. */
    char numbers[64];
    snprintf(numbers, sizeof numbers, "%d.%d.%d", FWDIO_VERSION_MAJOR, FWDIO_VERSION_MINOR,
             FWDIO_VERSION_PATCH);
    const char *version = fwdio_version();
    if (!version || strcmp(version, FWDIO_VERSION_STRING) ||
        strcmp(numbers, FWDIO_VERSION_STRING) || fwdio_version_number() != FWDIO_VERSION_NUMBER ||
        FWDIO_VERSION_NUMBER !=
            FWDIO_VERSION_MAJOR * 1000000 + FWDIO_VERSION_MINOR * 1000 + FWDIO_VERSION_PATCH) {
        fprintf(stderr, "fwdio_version() %s (%d), header %s (%d, numbers %s)\n",
                version ? version : "NULL", fwdio_version_number(), FWDIO_VERSION_STRING,
                FWDIO_VERSION_NUMBER, numbers);
        return 1;
    }

    fwdio_options_t opts;
    memset(&opts, 0xff, sizeof opts);
    fwdio_options_init(&opts);
    fwdio_options_t zeros;
    memset(&zeros, 0, sizeof zeros);
    /* The header allows either the explicit default or 0 ("default") for sizes. */
    int write_size_ok = opts.write_size == FWDIO_DEFAULT_WRITE_SIZE || opts.write_size == 0;
    if (!write_size_ok || opts.layout != FWDIO_LAYOUT_BLOCK || opts.first_writer != 0 ||
        opts.durable != 0 || opts.pinned != 0 ||
        memcmp(opts.reserved, zeros.reserved, sizeof zeros.reserved)) {
        fprintf(stderr, "fwdio_options_init did not fill in the documented defaults\n");
        return 1;
    }
    fwdio_config_t cfg, cfg_zeros;
    memset(&cfg, 0xff, sizeof cfg);
    memset(&cfg_zeros, 0, sizeof cfg_zeros);
    fwdio_config_init(&cfg);
    if (memcmp(&cfg, &cfg_zeros, sizeof cfg)) {
        fprintf(stderr, "fwdio_config_init did not zero the config\n");
        return 1;
    }
    const char *ok = fwdio_strerror(FWDIO_OK);
    const char *bad = fwdio_strerror(FWDIO_EWRITE);
    if (ok == NULL || bad == NULL || strcmp(ok, bad) == 0) {
        fprintf(stderr, "fwdio_strerror gave no distinct texts\n");
        return 1;
    }
    printf("fwdio %s consumer: FWDIO_EWRITE is \"%s\"\n", fwdio_version(), bad);
    return 0;
}
