/* Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC 2011):
 * a counter-based generator, so any element's random word is a pure function of (key, counter). */
#ifndef MINIDL_PHILOX_H
#define MINIDL_PHILOX_H

#include <stdint.h>

#define PHILOX_M0 0xD2511F53u
#define PHILOX_M1 0xCD9E8D57u
#define PHILOX_W0 0x9E3779B9u /* key increments between rounds */
#define PHILOX_W1 0xBB67AE85u

/* The four random words of counter (ctr0, ctr1, 0, 0) under key (key0, key1). */
static inline void philox4x32_10(uint32_t out[4], uint32_t ctr0, uint32_t ctr1, uint32_t key0, uint32_t key1)
{
    uint32_t c0 = ctr0, c1 = ctr1, c2 = 0, c3 = 0;
    for (int round = 0; round < 10; round++) {
        uint64_t p0 = (uint64_t)PHILOX_M0 * c0;
        uint64_t p1 = (uint64_t)PHILOX_M1 * c2;
        uint32_t n0 = (uint32_t)(p1 >> 32) ^ c1 ^ key0;
        uint32_t n2 = (uint32_t)(p0 >> 32) ^ c3 ^ key1;
        c1 = (uint32_t)p1;
        c3 = (uint32_t)p0;
        c0 = n0;
        c2 = n2;
        key0 += PHILOX_W0;
        key1 += PHILOX_W1;
    }
    out[0] = c0;
    out[1] = c1;
    out[2] = c2;
    out[3] = c3;
}

/* Dropout on elements [lo, hi) of block `block` (elements block * 64 ... block * 64 + 63), with
 * the word layout dropout.c describes; the plain C reference of the vector kernels. */
static inline void philox_dropout_block(float *out, float *mask, const float *x, uint32_t threshold,
                                        float keep_scale, uint64_t seed, int64_t block, int64_t lo, int64_t hi)
{
    for (int lane = 0; lane < 16; lane++) {
        uint64_t counter = (uint64_t)block * 16 + (uint64_t)lane;
        uint32_t words[4];
        philox4x32_10(words, (uint32_t)counter, (uint32_t)(counter >> 32), (uint32_t)seed,
                      (uint32_t)(seed >> 32));
        for (int j = 0; j < 4; j++) {
            int64_t e = block * 64 + j * 16 + lane;
            if (e < lo || e >= hi) continue;
            float m = (words[j] >> 8) < threshold ? keep_scale : 0.0f;
            mask[e] = m;
            out[e] = x[e] * m;
        }
    }
}

#endif
