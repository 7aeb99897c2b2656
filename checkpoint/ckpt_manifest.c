/* SPDX-License-Identifier: BSD-3-Clause */
#include "ckpt_manifest.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "ckpt_name.h"

#define MAGIC "fwdio-ckpt 1\n"

static uint32_t crc_of(const char *p, size_t len)
{
    return (uint32_t)crc32(crc32(0L, Z_NULL, 0), (const unsigned char *)p, (uInt)len);
}

size_t fwdioi_ckpt_manifest_format(const fwdioi_ckpt_manifest_t *m, char *out, size_t cap)
{
    if (fwdioi_ckpt_name_check(m->name))
        return 0;
    int body = snprintf(out, cap,
                        MAGIC "name %s\nversion %" PRIu64 "\nsize %" PRIu64 "\ncrc32 %08" PRIx32
                              "\n",
                        m->name, m->version, m->size, m->crc);
    if (body < 0 || (size_t)body >= cap)
        return 0;
    int tail = snprintf(out + body, cap - (size_t)body, "end %08" PRIx32 "\n",
                        crc_of(out, (size_t)body));
    if (tail < 0 || (size_t)tail >= cap - (size_t)body)
        return 0;
    return (size_t)body + (size_t)tail;
}

/* The value of line "<key> <value>\n" at *p (not past end), into buf; moves
 * *p past the line. 0 when the line is not that key or too long. */
static int take_line(const char **p, const char *end, const char *key, char *buf, size_t cap)
{
    size_t klen = strlen(key);
    const char *nl = memchr(*p, '\n', (size_t)(end - *p));
    if (!nl || (size_t)(nl - *p) < klen + 2 || memcmp(*p, key, klen) != 0 || (*p)[klen] != ' ')
        return 0;
    size_t vlen = (size_t)(nl - (*p + klen + 1));
    if (vlen >= cap)
        return 0;
    memcpy(buf, *p + klen + 1, vlen);
    buf[vlen] = '\0';
    *p = nl + 1;
    return 1;
}

/* A canonical decimal uint64 (no sign, no leading zeros, no spaces). */
static int parse_u64(const char *s, uint64_t *out)
{
    size_t len = strlen(s);
    if (len == 0 || len > 20 || (len > 1 && s[0] == '0') || strspn(s, "0123456789") != len)
        return 0;
    uint64_t v = 0;
    for (size_t i = 0; i < len; i++) {
        unsigned d = (unsigned)(s[i] - '0');
        if (v > (UINT64_MAX - d) / 10)
            return 0;
        v = v * 10 + d;
    }
    *out = v;
    return 1;
}

/* Exactly eight lower-case hex digits. */
static int parse_hex32(const char *s, uint32_t *out)
{
    if (strlen(s) != 8 || strspn(s, "0123456789abcdef") != 8)
        return 0;
    *out = (uint32_t)strtoul(s, NULL, 16);
    return 1;
}

const char *fwdioi_ckpt_manifest_parse(const char *text, size_t len, fwdioi_ckpt_manifest_t *m)
{
    const char *p = text, *end = text + len;
    char value[FWDIO_CKPT_NAME_MAX + 2];
    size_t mlen = strlen(MAGIC);
    if (len < mlen || memcmp(text, MAGIC, mlen) != 0)
        return "not a fwdio checkpoint manifest (first line)";
    p += mlen;
    if (!take_line(&p, end, "name", value, sizeof value) || fwdioi_ckpt_name_check(value))
        return "bad name line";
    memcpy(m->name, value, strlen(value) + 1); /* checked: at most FWDIO_CKPT_NAME_MAX */
    if (!take_line(&p, end, "version", value, sizeof value) || !parse_u64(value, &m->version))
        return "bad version line";
    if (!take_line(&p, end, "size", value, sizeof value) || !parse_u64(value, &m->size))
        return "bad size line";
    if (!take_line(&p, end, "crc32", value, sizeof value) || !parse_hex32(value, &m->crc))
        return "bad crc32 line";
    size_t body = (size_t)(p - text);
    uint32_t self;
    if (!take_line(&p, end, "end", value, sizeof value) || !parse_hex32(value, &self))
        return "bad or missing end line (truncated?)";
    if (p != end)
        return "bytes after the end line";
    if (self != crc_of(text, body))
        return "the manifest's own checksum does not match (damaged)";
    return NULL;
}
