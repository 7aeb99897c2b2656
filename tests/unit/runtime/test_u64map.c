/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The u64 -> pointer map against an array oracle: random puts, replacements
 * and removals over a small key space (long probe runs, removals in their
 * middle), then consecutive keys as the sessions use them (sequence numbers
 * opened and finished in a sliding window), checked after every change; a
 * visit of the entries sees each once.
 */
#include "u64map.h"

#include <stdio.h>
#include <stdlib.h>

enum { KEYS = 600, ROUNDS = 200000 };

static int check_all(const fwdioi_u64map_t *m, void *const *oracle, const uint64_t *keys)
{
    size_t n = 0;
    for (int k = 0; k < KEYS; k++) {
        if (fwdioi_u64map_get(m, keys[k]) != oracle[k]) {
            fprintf(stderr, "key %llu: wrong value\n", (unsigned long long)keys[k]);
            return 1;
        }
        n += oracle[k] != NULL;
    }
    if (m->n != n) {
        fprintf(stderr, "count %zu, expected %zu\n", m->n, n);
        return 1;
    }
    return 0;
}

/* A visit of every entry: each present key once, with its value. */
static int check_visit(const fwdioi_u64map_t *m, void *const *oracle, const uint64_t *keys)
{
    size_t n = 0;
    for (int k = 0; k < KEYS; k++)
        n += oracle[k] != NULL;
    size_t pos = 0, seen = 0;
    uint64_t key;
    void *value;
    while (fwdioi_u64map_next(m, &pos, &key, &value)) {
        int k = 0;
        while (k < KEYS && keys[k] != key)
            k++;
        if (k == KEYS || oracle[k] != value) {
            fprintf(stderr, "visit: key %llu not in the map, or its value wrong\n",
                    (unsigned long long)key);
            return 1;
        }
        seen++;
    }
    if (seen != n || fwdioi_u64map_bytes(m) != m->cap * 16) {
        fprintf(stderr, "visited %zu of %zu keys\n", seen, n);
        return 1;
    }
    return 0;
}

int main(void)
{
    static char values[KEYS];
    static void *oracle[KEYS];
    static uint64_t keys[KEYS];
    fwdioi_u64map_t m = {0};
    if (fwdioi_u64map_get(&m, 7) || fwdioi_u64map_remove(&m, 7)) {
        fprintf(stderr, "an empty map has a key\n");
        return 1;
    }
    srand(12345);
    for (int k = 0; k < KEYS; k++) /* key 0 and the largest key included */
        keys[k] = k == 0 ? 0 : k == 1 ? UINT64_MAX : ((uint64_t)rand() << 32) ^ (uint64_t)rand();
    for (int r = 0; r < ROUNDS; r++) {
        int k = rand() % KEYS;
        if (rand() % 3 == 0) {
            void *was = fwdioi_u64map_remove(&m, keys[k]);
            if (was != oracle[k]) {
                fprintf(stderr, "remove %d: wrong value\n", k);
                return 1;
            }
            oracle[k] = NULL;
        } else {
            void *v = &values[rand() % KEYS];
            if (fwdioi_u64map_put(&m, keys[k], v) != 0) {
                fprintf(stderr, "put: no memory\n");
                return 1;
            }
            oracle[k] = v;
        }
        if (r % 97 == 0 && check_all(&m, oracle, keys))
            return 1;
        if (r % 20011 == 0 && check_visit(&m, oracle, keys))
            return 1;
    }
    if (check_all(&m, oracle, keys) || check_visit(&m, oracle, keys))
        return 1;
    fwdioi_u64map_free(&m);

    /* sequence numbers: a window of 1000 in flight slides over 100000 */
    if (fwdioi_u64map_reserve(&m, 1000) != 0)
        return 1;
    size_t cap = m.cap;
    for (uint64_t seq = 0; seq < 100000; seq++) {
        if (fwdioi_u64map_put(&m, seq, &values[seq % KEYS]) != 0)
            return 1;
        if (seq >= 1000 && fwdioi_u64map_remove(&m, seq - 1000) != &values[(seq - 1000) % KEYS]) {
            fprintf(stderr, "seq %llu lost\n", (unsigned long long)(seq - 1000));
            return 1;
        }
        if (seq % 1013 == 0)
            for (uint64_t s = seq >= 999 ? seq - 999 : 0; s <= seq; s++)
                if (fwdioi_u64map_get(&m, s) != &values[s % KEYS]) {
                    fprintf(stderr, "seq %llu missing\n", (unsigned long long)s);
                    return 1;
                }
    }
    if (m.n != 1000 || (m.cap != cap * 2 && m.cap != cap)) {
        fprintf(stderr, "%zu keys in %zu slots (reserved %zu)\n", m.n, m.cap, cap);
        return 1;
    }
    fwdioi_u64map_free(&m);
    printf("u64map: ok\n");
    return 0;
}
