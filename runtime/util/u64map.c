/* SPDX-License-Identifier: BSD-3-Clause */
#include "u64map.h"

#include <stdlib.h>

struct fwdioi_u64map_slot {
    uint64_t key;
    void *value; /* NULL: empty */
};

/* splitmix64's finaliser: consecutive keys land far apart */
static uint64_t mix(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    x ^= x >> 31;
    return x;
}

static size_t home(const fwdioi_u64map_t *m, uint64_t key) { return (size_t)mix(key) & (m->cap - 1); }

void *fwdioi_u64map_get(const fwdioi_u64map_t *m, uint64_t key)
{
    if (m->n == 0)
        return NULL;
    for (size_t i = home(m, key);; i = (i + 1) & (m->cap - 1)) {
        if (!m->slots[i].value)
            return NULL;
        if (m->slots[i].key == key)
            return m->slots[i].value;
    }
}

/* Into a table known to have room, `key` known absent. */
static void place(fwdioi_u64map_t *m, uint64_t key, void *value)
{
    size_t i = home(m, key);
    while (m->slots[i].value)
        i = (i + 1) & (m->cap - 1);
    m->slots[i].key = key;
    m->slots[i].value = value;
    m->n++;
}

static int grow(fwdioi_u64map_t *m, size_t cap)
{
    struct fwdioi_u64map_slot *slots = calloc(cap, sizeof *slots);
    if (!slots)
        return -1;
    fwdioi_u64map_t old = *m;
    m->slots = slots;
    m->cap = cap;
    m->n = 0;
    for (size_t i = 0; i < old.cap; i++)
        if (old.slots[i].value)
            place(m, old.slots[i].key, old.slots[i].value);
    free(old.slots);
    return 0;
}

int fwdioi_u64map_reserve(fwdioi_u64map_t *m, size_t n)
{
    if (n <= m->cap / 2)
        return 0;
    size_t cap = m->cap ? m->cap : 16;
    while (n > cap / 2) {
        if (cap > SIZE_MAX / 4 / sizeof(struct fwdioi_u64map_slot))
            return -1;
        cap *= 2;
    }
    return grow(m, cap);
}

int fwdioi_u64map_put(fwdioi_u64map_t *m, uint64_t key, void *value)
{
    if (m->n > 0) {
        for (size_t i = home(m, key); m->slots[i].value; i = (i + 1) & (m->cap - 1))
            if (m->slots[i].key == key) {
                m->slots[i].value = value;
                return 0;
            }
    }
    if (fwdioi_u64map_reserve(m, m->n + 1) != 0)
        return -1;
    place(m, key, value);
    return 0;
}

void *fwdioi_u64map_remove(fwdioi_u64map_t *m, uint64_t key)
{
    if (m->n == 0)
        return NULL;
    size_t mask = m->cap - 1, i = home(m, key);
    while (m->slots[i].key != key || !m->slots[i].value) {
        if (!m->slots[i].value)
            return NULL;
        i = (i + 1) & mask;
    }
    void *value = m->slots[i].value;
    /* Backward shift: move later entries of the probe run into the hole
     * unless that would put them before their home slot. */
    for (size_t j = (i + 1) & mask; m->slots[j].value; j = (j + 1) & mask) {
        size_t h = home(m, m->slots[j].key);
        if (((j - h) & mask) >= ((j - i) & mask)) {
            m->slots[i] = m->slots[j];
            i = j;
        }
    }
    m->slots[i].value = NULL;
    m->n--;
    return value;
}

int fwdioi_u64map_next(const fwdioi_u64map_t *m, size_t *pos, uint64_t *key, void **value)
{
    for (; *pos < m->cap; (*pos)++)
        if (m->slots[*pos].value) {
            *key = m->slots[*pos].key;
            *value = m->slots[*pos].value;
            (*pos)++;
            return 1;
        }
    return 0;
}

size_t fwdioi_u64map_bytes(const fwdioi_u64map_t *m) { return m->cap * sizeof *m->slots; }

void fwdioi_u64map_free(fwdioi_u64map_t *m)
{
    free(m->slots);
    m->slots = NULL;
    m->cap = m->n = 0;
}
