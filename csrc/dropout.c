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
#include "internal/vector_kernels.h"

#define DROPOUT_BLOCK 64 /* elements per block of 16 counters */

void minidl_dropout_forward(float *out, float *mask, const float *x, float rate, uint64_t seed, int64_t n)
{
    const struct vector_kernels *vk = minidl_active_kernels();
    double keep = 1.0 - (double)rate;
    /* u = k / 2^24 < keep  <=>  k < ceil(keep * 2^24) for the integer k = word >> 8 */
    uint32_t threshold = (uint32_t)ceil(keep * 16777216.0);
    float keep_scale = (float)(1.0 / keep);
    int64_t full = n / DROPOUT_BLOCK;
    int64_t step = MINIDL_BLOCK / DROPOUT_BLOCK;
#pragma omp parallel for schedule(static) if (n >= MINIDL_PARALLEL_MIN / 8) num_threads(minidl_num_threads())
    for (int64_t b = 0; b < full; b += step)
        vk->dropout_blocks(out, mask, x, threshold, keep_scale, seed, b, full - b < step ? full - b : step);
    if (full * DROPOUT_BLOCK < n)
        philox_dropout_block(out, mask, x, threshold, keep_scale, seed, full, full * DROPOUT_BLOCK, n);
}
