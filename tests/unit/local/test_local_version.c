/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The version record of a local copy and the rule a restart applies
 * (local_version.c): what is encoded decodes the same, any damage is
 * refused, and a copy is taken only when the target is exactly what the
 * record says (the drained target, or before the drain ended the
 * predecessor): a target written later, removed after a drain, or changed
 * in size, times or inode wins. And the choice of kept copies to evict
 * (local_evict.c): the fewest oldest that cover the shortfall, none when
 * all of them would not.
 */
#include "local/local_evict.h"
#include "local/local_version.h"
#include "unit_check.h"

#include <string.h>

static const fwdioi_target_id_t old_target = {1, 4096, 1000, 1001, 77};
static const fwdioi_target_id_t drained_target = {1, 8192, 2000, 2001, 78};
static const fwdioi_target_id_t absent = {0, 0, 0, 0, 0};

static void test_roundtrip(void)
{
    fwdioi_local_version_t v = {.version = 0x1234567890abcdefull, .writer = 3,
                                .before = old_target};
    uint8_t buf[FWDIOI_LOCAL_VERSION_LEN];
    fwdioi_local_version_encode(&v, buf);
    fwdioi_local_version_t back;
    CHECK(fwdioi_local_version_decode(buf, sizeof buf, &back) == 0);
    CHECK(back.version == v.version && back.writer == 3 && !back.drained);
    CHECK(fwdioi_target_id_same(&back.before, &old_target));
    v.drained = 1;
    v.after = drained_target;
    fwdioi_local_version_encode(&v, buf);
    CHECK(fwdioi_local_version_decode(buf, sizeof buf, &back) == 0 && back.drained);
    CHECK(fwdioi_target_id_same(&back.after, &drained_target));
    /* any byte flipped, a cut record or a longer one: refused */
    for (size_t i = 0; i < sizeof buf; i++) {
        buf[i] ^= 0x10;
        CHECK(fwdioi_local_version_decode(buf, sizeof buf, &back) == -1);
        buf[i] ^= 0x10;
    }
    CHECK(fwdioi_local_version_decode(buf, sizeof buf - 1, &back) == -1);
    CHECK(fwdioi_local_version_decode(buf, sizeof buf, &back) == 0);
}

static void test_same(void)
{
    CHECK(fwdioi_target_id_same(&absent, &absent));
    CHECK(!fwdioi_target_id_same(&absent, &old_target));
    CHECK(!fwdioi_target_id_same(&old_target, &absent));
    fwdioi_target_id_t t = old_target;
    CHECK(fwdioi_target_id_same(&t, &old_target));
    t.size++;
    CHECK(!fwdioi_target_id_same(&t, &old_target));
    t = old_target;
    t.mtime_ns++;
    CHECK(!fwdioi_target_id_same(&t, &old_target));
    t = old_target;
    t.ctime_ns++;
    CHECK(!fwdioi_target_id_same(&t, &old_target));
    t = old_target;
    t.ino++;
    CHECK(!fwdioi_target_id_same(&t, &old_target));
}

static void test_rule(void)
{
    fwdioi_local_version_t v = {.version = 9, .before = old_target};
    /* not drained: newer than the target while the target is its
     * predecessor (or both absent) */
    CHECK(fwdioi_local_version_usable(&v, &old_target));
    CHECK(!fwdioi_local_version_usable(&v, &drained_target)); /* the target moved on */
    CHECK(!fwdioi_local_version_usable(&v, &absent));         /* removed since */
    v.before = absent; /* the first version of the path */
    CHECK(fwdioi_local_version_usable(&v, &absent));
    CHECK(!fwdioi_local_version_usable(&v, &old_target)); /* written by someone else since */
    /* drained: the same bytes as the target while it is what the drain left */
    v.before = old_target;
    v.drained = 1;
    v.after = drained_target;
    CHECK(fwdioi_local_version_usable(&v, &drained_target));
    CHECK(!fwdioi_local_version_usable(&v, &old_target));
    CHECK(!fwdioi_local_version_usable(&v, &absent)); /* the version was removed */
    fwdioi_target_id_t later = drained_target;
    later.mtime_ns += 1; /* rewritten in place */
    CHECK(!fwdioi_local_version_usable(&v, &later));
}

static void test_evict(void)
{
    const uint64_t b[4] = {100, 50, 200, 10}; /* oldest first */
    CHECK(fwdioi_local_evict_choose(b, 4, 0) == 0);   /* nothing lacks */
    CHECK(fwdioi_local_evict_choose(b, 4, 1) == 1);   /* the oldest covers it */
    CHECK(fwdioi_local_evict_choose(b, 4, 100) == 1);
    CHECK(fwdioi_local_evict_choose(b, 4, 101) == 2); /* oldest first, not the biggest */
    CHECK(fwdioi_local_evict_choose(b, 4, 350) == 3);
    CHECK(fwdioi_local_evict_choose(b, 4, 360) == 4);
    CHECK(fwdioi_local_evict_choose(b, 4, 361) == 0); /* would not fit: keep them all */
    CHECK(fwdioi_local_evict_choose(b, 0, 1) == 0);
    CHECK(fwdioi_local_evict_choose(NULL, 0, 0) == 0);
}

int main(void)
{
    test_evict();
    test_roundtrip();
    test_same();
    test_rule();
    return unit_result("test_local_version");
}
