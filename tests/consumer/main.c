/*
 * Consumer of an installed fwdio: compiles against the installed header, links
 * the installed library and calls two functions that need no MPI job.
 * Exit status 0 when the defaults and error texts look right.
 */
#include <fwdio.h>

#include <stdio.h>
#include <string.h>

int main(void)
{
    fwdio_options_t opts;
    memset(&opts, 0xff, sizeof opts);
    fwdio_options_init(&opts);
    /* The header allows either the explicit default or 0 ("default") for sizes. */
    int write_size_ok = opts.write_size == FWDIO_DEFAULT_WRITE_SIZE || opts.write_size == 0;
    if (!write_size_ok || opts.layout != FWDIO_LAYOUT_BLOCK || opts.first_writer != 0 ||
        opts.durable != 0) {
        fprintf(stderr, "fwdio_options_init did not fill in the documented defaults\n");
        return 1;
    }
    const char *ok = fwdio_strerror(FWDIO_OK);
    const char *bad = fwdio_strerror(FWDIO_EWRITE);
    if (ok == NULL || bad == NULL || strcmp(ok, bad) == 0) {
        fprintf(stderr, "fwdio_strerror gave no distinct texts\n");
        return 1;
    }
    printf("fwdio %d.%d.%d consumer: FWDIO_EWRITE is \"%s\"\n", FWDIO_VERSION_MAJOR,
           FWDIO_VERSION_MINOR, FWDIO_VERSION_PATCH, bad);
    return 0;
}
