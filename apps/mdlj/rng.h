/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Counter-based random numbers for mdlj: every value is a pure function of
 * (seed, atom id, stream), so the initial state does not depend on how atoms
 * are spread over ranks or in which order they are visited.
 */
#ifndef MDLJ_RNG_H
#define MDLJ_RNG_H

#include <math.h>
#include <stdint.h>

/* The splitmix64 finaliser: a bijective 64-bit mix with good avalanche. */
static inline uint64_t rng_mix64(uint64_t z)
{
    z += 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* A 64-bit value for (seed, id, stream). */
static inline uint64_t rng_bits(uint64_t seed, uint64_t id, uint64_t stream)
{
    return rng_mix64(rng_mix64(seed ^ rng_mix64(id)) + stream);
}

/* Uniform in (0, 1]: never 0, so log() below is finite. */
static inline double rng_uniform(uint64_t seed, uint64_t id, uint64_t stream)
{
    return ((double)(rng_bits(seed, id, stream) >> 11) + 1.0) * 0x1.0p-53;
}

/* A standard normal deviate (Box-Muller on two uniforms of the same atom). */
static inline double rng_gaussian(uint64_t seed, uint64_t id, uint64_t stream)
{
    double u1 = rng_uniform(seed, id, 2 * stream);
    double u2 = rng_uniform(seed, id, 2 * stream + 1);
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

#endif
