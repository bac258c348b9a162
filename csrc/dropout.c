/* Dropout with Philox4x32-10 random words.
 *
 * Element e's word: the elements are cut into blocks of 64; counter b * 16 + lane (lane < 16)
 * of block b yields four words, word j going to element b * 64 + j * 16 + lane. This layout
 * lets a vector of 16 (or 8) counters fill whole vectors of consecutive elements, and makes
 * every element's decision independent of how the work is split. An element is kept when
 * the top 24 bits of its word, read as u in [0, 1), satisfy u < 1 - rate.
 */
#include <math.h>

#include "dropout.h"
#include "internal/parallel.h"
#include "internal/philox.h"

#define DROPOUT_BLOCK 64 /* elements per block of 16 counters */

/* Elements [lo, hi) of block `block`, whose first element is block * 64. */
static void dropout_block(float *out, float *mask, const float *x, uint32_t threshold, float keep_scale,
                          uint64_t seed, int64_t block, int64_t lo, int64_t hi)
{
    uint32_t key0 = (uint32_t)seed, key1 = (uint32_t)(seed >> 32);
    for (int lane = 0; lane < 16; lane++) {
        uint64_t counter = (uint64_t)block * 16 + (uint64_t)lane;
        uint32_t words[4];
        philox4x32_10(words, (uint32_t)counter, (uint32_t)(counter >> 32), key0, key1);
        for (int j = 0; j < 4; j++) {
            int64_t e = block * DROPOUT_BLOCK + j * 16 + lane;
            if (e < lo || e >= hi) continue;
            float m = (words[j] >> 8) < threshold ? keep_scale : 0.0f;
            mask[e] = m;
            out[e] = x[e] * m;
        }
    }
}

void minidl_dropout_forward(float *out, float *mask, const float *x, float rate, uint64_t seed, int64_t n)
{
    double keep = 1.0 - (double)rate;
    /* u = k / 2^24 < keep  <=>  k < ceil(keep * 2^24) for the integer k = word >> 8 */
    uint32_t threshold = (uint32_t)ceil(keep * 16777216.0);
    float keep_scale = (float)(1.0 / keep);
    int64_t blocks = (n + DROPOUT_BLOCK - 1) / DROPOUT_BLOCK;
#pragma omp parallel for schedule(static) if (n >= MINIDL_PARALLEL_MIN / 8) num_threads(minidl_num_threads())
    for (int64_t b = 0; b < blocks; b++) {
        int64_t hi = (b + 1) * DROPOUT_BLOCK < n ? (b + 1) * DROPOUT_BLOCK : n;
        dropout_block(out, mask, x, threshold, keep_scale, seed, b, b * DROPOUT_BLOCK, hi);
    }
}
