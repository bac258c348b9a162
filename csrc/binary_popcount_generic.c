/* Plain C xor-popcount micro-kernel (internal/binary_kernels.h): __builtin_popcount per word,
 * filters in the inner loop so that b is read row by row; the counts are summed in out itself. */
#include <string.h>

#include "internal/binary_kernels.h"

void binary_popcount_generic(float *out, const uint32_t *a, const uint32_t *b, const int32_t *k_total,
                             const float *bias, int64_t rows, int64_t words, int64_t f)
{
    for (int64_t r = 0; r < rows; r++) {
        float *o = out + r * f;      /* the counts first: float sums of small integers are exact */
        memset(o, 0, (size_t)f * sizeof(float));
        for (int64_t w = 0; w < words; w++) {
            const uint32_t x = a[r * words + w];
            const uint32_t *bw = b + w * f;
            for (int64_t j = 0; j < f; j++) o[j] += (float)__builtin_popcount(x ^ bw[j]);
        }
        for (int64_t j = 0; j < f; j++)
            o[j] = (float)(k_total[r] - 2 * (int32_t)o[j]) + (bias ? bias[j] : 0.0f);
    }
}

void binary_pack_generic(uint32_t *bits, const float *x, int64_t pixels, int64_t c)
{
    const int64_t cw = (c + 31) / 32;
    for (int64_t p = 0; p < pixels; p++) {
        const float *xp = x + p * c;
        for (int64_t k = 0; k < cw; k++) {
            uint32_t word = 0;
            int64_t end = c - 32 * k < 32 ? c - 32 * k : 32;
            for (int64_t b = 0; b < end; b++) word |= (uint32_t)(xp[32 * k + b] < 0.0f) << b;
            bits[p * cw + k] = word;
        }
    }
}
