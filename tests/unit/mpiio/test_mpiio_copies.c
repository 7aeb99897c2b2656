/* SPDX-License-Identifier: BSD-3-Clause */
/* mpiio/copies.c: bytes kept with their file offsets, in call order, within
 * a limit. The MPI-IO layer keeps its readback copies so, and the log of the
 * bytes it hands to a stream whose open is not known yet (opening.c), which
 * it writes back in this order if the open fails. */
#include "copies.h"
#include "unit_check.h"

#include <stdlib.h>
#include <string.h>

/* The bytes of copy i. */
static const char *bytes_of(const mpiio_copies_t *k, size_t i)
{
    return k->data + k->c[i].at;
}

/* Kept in call order, each with its offset and length, its bytes apart
 * from the caller's buffer; overlapping offsets are kept as they come (the
 * later one is written later). */
static void test_order(void)
{
    mpiio_copies_t k = {0};
    char a[100], b[7], c[40];
    memset(a, 'a', sizeof a);
    memset(b, 'b', sizeof b);
    memset(c, 'c', sizeof c);
    CHECK(mpiio_copies_keep(&k, a, sizeof a, 1000, 1 << 20) == 0);
    CHECK(mpiio_copies_keep(&k, b, sizeof b, 0, 1 << 20) == 0);
    CHECK(mpiio_copies_keep(&k, c, sizeof c, 1010, 1 << 20) == 0);
    memset(a, 'x', sizeof a); /* the caller reuses its buffer */
    CHECK(k.n == 3);
    CHECK(k.used == sizeof a + sizeof b + sizeof c);
    CHECK(k.c[0].off == 1000 && k.c[0].len == 100);
    CHECK(k.c[1].off == 0 && k.c[1].len == 7);
    CHECK(k.c[2].off == 1010 && k.c[2].len == 40);
    CHECK(bytes_of(&k, 0)[0] == 'a' && bytes_of(&k, 0)[99] == 'a');
    CHECK(bytes_of(&k, 1)[0] == 'b' && bytes_of(&k, 1)[6] == 'b');
    CHECK(bytes_of(&k, 2)[0] == 'c' && bytes_of(&k, 2)[39] == 'c');
    mpiio_copies_free(&k);
    CHECK(k.n == 0 && k.used == 0 && k.data == NULL && k.c == NULL);
}

/* The limit counts every byte kept: a copy that would pass it is refused
 * whole and changes nothing; fit says so beforehand. */
static void test_limit(void)
{
    mpiio_copies_t k = {0};
    char buf[64];
    memset(buf, 1, sizeof buf);
    CHECK(mpiio_copies_fit(&k, 100, 100));
    CHECK(!mpiio_copies_fit(&k, 101, 100));
    CHECK(!mpiio_copies_fit(&k, -1, 100));
    CHECK(mpiio_copies_keep(&k, buf, 60, 0, 100) == 0);
    CHECK(mpiio_copies_fit(&k, 40, 100));
    CHECK(!mpiio_copies_fit(&k, 41, 100));
    CHECK(mpiio_copies_keep(&k, buf, 41, 60, 100) == -1);
    CHECK(k.n == 1 && k.used == 60);
    CHECK(mpiio_copies_keep(&k, buf, 40, 60, 100) == 0);
    CHECK(k.n == 2 && k.used == 100);
    CHECK(!mpiio_copies_fit(&k, 1, 100));
    CHECK(mpiio_copies_fit(&k, 0, 100));
    /* a limit of 0 keeps nothing (FWDIO_MPIIO_READBACK=0) */
    mpiio_copies_t none = {0};
    CHECK(mpiio_copies_keep(&none, buf, 1, 0, 0) == -1);
    CHECK(none.n == 0 && none.data == NULL);
    mpiio_copies_free(&k);
}

/* Cleared, the copies start over in the memory they had. */
static void test_clear(void)
{
    mpiio_copies_t k = {0};
    char *big = malloc(5000);
    memset(big, 7, 5000);
    for (int i = 0; i < 200; i++) /* grows past its first capacity */
        CHECK(mpiio_copies_keep(&k, big, 25, i * 25, 1 << 20) == 0);
    CHECK(k.n == 200 && k.used == 5000);
    CHECK(k.c[199].off == 199 * 25 && k.c[199].at == 199 * 25);
    char *data = k.data;
    mpiio_copies_clear(&k);
    CHECK(k.n == 0 && k.used == 0 && k.data == data);
    CHECK(mpiio_copies_keep(&k, big, 5000, 9, 5000) == 0);
    CHECK(k.n == 1 && k.c[0].at == 0 && k.c[0].off == 9 && k.data == data);
    CHECK(memcmp(k.data, big, 5000) == 0);
    free(big);
    mpiio_copies_free(&k);
}

int main(void)
{
    test_order();
    test_limit();
    test_clear();
    return unit_result("test_mpiio_copies");
}
