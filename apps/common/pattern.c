/* SPDX-License-Identifier: BSD-3-Clause */
#define _GNU_SOURCE
#include "pattern.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

void pattern_fill(void *buf, size_t len, uint64_t offset, uint64_t seed)
{
    uint8_t *p = buf;
    for (size_t i = 0; i < len; i++)
        p[i] = pattern_byte(seed, offset + i);
}

int pattern_check_fd(int fd, uint64_t offset, uint64_t len, uint64_t seed, int expect_zero,
                     uint64_t *bad_offset)
{
    enum { CHUNK = 1 << 20 };
    /* Sized to the range: the tiny-write tests check tens of thousands of
     * ranges of a few bytes, and a 1 MiB allocation for each (which ASan
     * fills and quarantines on every free) made their check take minutes. */
    size_t cap = len < CHUNK ? (size_t)(len ? len : 1) : CHUNK;
    uint8_t *buf = malloc(cap);
    if (!buf) {
        *bad_offset = offset;
        return -1;
    }
    uint64_t done = 0;
    int rc = 0;
    while (done < len) {
        size_t want = len - done < cap ? (size_t)(len - done) : cap;
        ssize_t got = pread(fd, buf, want, (off_t)(offset + done));
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0) {
            *bad_offset = offset + done;
            rc = -1;
            break;
        }
        for (ssize_t i = 0; i < got; i++) {
            uint8_t want_byte = expect_zero ? 0 : pattern_byte(seed, offset + done + (uint64_t)i);
            if (buf[i] != want_byte) {
                *bad_offset = offset + done + (uint64_t)i;
                rc = -1;
                break;
            }
        }
        if (rc)
            break;
        done += (uint64_t)got;
    }
    free(buf);
    return rc;
}

int pattern_check_file(const char *path, uint64_t file_size, uint64_t offset, uint64_t len,
                       uint64_t seed, int expect_zero, uint64_t *bad_offset)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0) {
        *bad_offset = offset;
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || (uint64_t)st.st_size != file_size) {
        *bad_offset = (uint64_t)st.st_size;
        close(fd);
        return -1;
    }
    int rc = pattern_check_fd(fd, offset, len, seed, expect_zero, bad_offset);
    close(fd);
    return rc;
}
