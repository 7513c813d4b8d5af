/* A small seeded random number generator for host code that must repeat
 * itself from a seed (RANSAC, descriptor patterns, training order,
 * densification): splitmix64 (Steele, Lea and Flood 2014), its uniform
 * doubles and Box-Muller normals. Not for cryptography. */
#ifndef GT_COMMON_RNG_H
#define GT_COMMON_RNG_H

#include <math.h>
#include <stdint.h>

/* The next 64 random bits of the state *s (advanced). */
static inline uint64_t gt_splitmix64(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Uniform in (0, 1): never 0, so that log() of it is finite. */
static inline double gt_rng_open01(uint64_t *s)
{
    return ((double)(gt_splitmix64(s) >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}

/* Uniform in [0, 1). */
static inline double gt_rng_unit(uint64_t *s)
{
    return (double)(gt_splitmix64(s) >> 11) * (1.0 / 9007199254740992.0);
}

/* One standard normal (Box-Muller, the cosine branch; two draws). */
static inline double gt_rng_normal(uint64_t *s)
{
    double u1 = gt_rng_open01(s), u2 = gt_rng_unit(s);
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586476925 * u2);
}

#endif
