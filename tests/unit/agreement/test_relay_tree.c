/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The relay tree of aborts (forwarder/agreement/relay_tree.c): for every size
 * up to 300 and a few large ones (floods from every rank up to 64 ranks,
 * from three above), neighbourhood is symmetric, each rank but
 * 0 has exactly one parent, a flood from any rank that passes the news on
 * only where it is new reaches every rank, within 2 ceil(log2 P) hops and
 * with at most ceil(log2 P) + 1 messages sent by any rank; floods from
 * several ranks at once reach every rank too.
 */
#include "agreement/relay_tree.h"
#include "unit_check.h"

#include <stdlib.h>

/* a check that says what it found */
#define EXPECT(cond, ...)                                                                          \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: ", __FILE__, __LINE__);                                        \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
            unit_failures++;                                                                       \
        }                                                                                          \
    } while (0)

static int log2_ceil(int n)
{
    int k = 0;
    while ((1L << k) < n)
        k++;
    return k;
}

static int is_neighbour(int a, int b, int size)
{
    int nb[FWDIOI_RELAY_MAX];
    int n = fwdioi_relay_neighbours(a, size, nb);
    for (int i = 0; i < n; i++)
        if (nb[i] == b)
            return 1;
    return 0;
}

/* A flood from the `norigins` ranks in `origins`, all knowing at hop 0, as
 * abort.c passes it on: a rank that learns first sends to every neighbour
 * but the sender. Checks coverage, hops and messages per rank. */
static void flood(int size, const int *origins, int norigins)
{
    int *hop = calloc((size_t)size, sizeof *hop); /* zeroed: GCC 12 at -O3 sees no init in the loop below */
    int *sent = calloc((size_t)size, sizeof *sent);
    int *from = malloc((size_t)size * sizeof *from);
    int *queue = malloc((size_t)size * sizeof *queue);
    for (int r = 0; r < size; r++)
        hop[r] = -1;
    int head = 0, tail = 0;
    for (int i = 0; i < norigins; i++) {
        if (hop[origins[i]] < 0) {
            hop[origins[i]] = 0;
            from[origins[i]] = -1;
            queue[tail++] = origins[i];
        }
    }
    while (head < tail) {
        int r = queue[head++], nb[FWDIOI_RELAY_MAX];
        int n = fwdioi_relay_neighbours(r, size, nb);
        for (int i = 0; i < n; i++) {
            if (nb[i] == from[r])
                continue;
            sent[r]++;
            if (hop[nb[i]] < 0) {
                hop[nb[i]] = hop[r] + 1;
                from[nb[i]] = r;
                queue[tail++] = nb[i];
            }
        }
    }
    const int bound = 2 * log2_ceil(size);
    for (int r = 0; r < size; r++) {
        EXPECT(hop[r] >= 0, "size %d: rank %d never hears a flood from rank %d", size, r, origins[0]);
        EXPECT(hop[r] <= bound, "size %d: rank %d hears after %d hops (> %d)", size, r, hop[r], bound);
        EXPECT(sent[r] <= log2_ceil(size) + 1, "size %d: rank %d sends %d messages", size, r,
              sent[r]);
    }
    free(hop);
    free(sent);
    free(from);
    free(queue);
}

static void check_size(int size, int every_origin)
{
    int parents0 = 0;
    for (int r = 0; r < size; r++) {
        int nb[FWDIOI_RELAY_MAX];
        int n = fwdioi_relay_neighbours(r, size, nb);
        EXPECT(n <= log2_ceil(size) + 1, "size %d: rank %d has %d neighbours", size, r, n);
        int parents = 0;
        for (int i = 0; i < n; i++) {
            EXPECT(nb[i] >= 0 && nb[i] < size && nb[i] != r, "size %d: rank %d: bad neighbour %d",
                  size, r, nb[i]);
            EXPECT(is_neighbour(nb[i], r, size), "size %d: %d -> %d but not back", size, r, nb[i]);
            parents += nb[i] < r;
        }
        EXPECT(parents == (r == 0 ? 0 : 1), "size %d: rank %d has %d parents", size, r, parents);
        parents0 += parents;
    }
    EXPECT(parents0 == size - 1, "size %d: %d edges, not a tree", size, parents0);
    if (every_origin)
        for (int r = 0; r < size; r++)
            flood(size, &r, 1);
    else {
        int some[3] = {size - 1, size / 2, 0};
        for (int i = 0; i < 3; i++)
            flood(size, &some[i], 1);
    }
}

int main(void)
{
    int nb[FWDIOI_RELAY_MAX];
    EXPECT(fwdioi_relay_neighbours(0, 1, nb) == 0, "one rank has neighbours");
    EXPECT(fwdioi_relay_neighbours(3, 3, nb) == 0, "a rank outside the size has neighbours");
    EXPECT(fwdioi_relay_neighbours(-1, 3, nb) == 0, "a negative rank has neighbours");
    int n = fwdioi_relay_neighbours(6, 8, nb);
    EXPECT(n == 2 && nb[0] == 4 && nb[1] == 7, "rank 6 of 8: %d neighbours", n);
    n = fwdioi_relay_neighbours(0, 8, nb);
    EXPECT(n == 3 && nb[0] == 1 && nb[1] == 2 && nb[2] == 4, "rank 0 of 8: %d neighbours", n);
    for (int size = 1; size <= 300; size++)
        check_size(size, size <= 64);
    const int large[] = {1 << 12, 100000, 131072};
    for (int i = 0; i < 3; i++)
        check_size(large[i], 0);
    /* every rank failing at once: still everyone, each sending a few */
    for (int size = 2; size <= 64; size++) {
        int *all = malloc((size_t)size * sizeof *all);
        for (int r = 0; r < size; r++)
            all[r] = size - 1 - r;
        flood(size, all, size);
        free(all);
    }
    n = fwdioi_relay_neighbours(0x40000000, 0x7fffffff, nb);
    EXPECT(n == FWDIOI_RELAY_MAX - 1 && nb[0] == 0, "rank 2^30 of 2^31-1: %d neighbours", n);
    return unit_result("relay_tree");
}
