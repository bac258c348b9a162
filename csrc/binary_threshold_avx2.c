/* AVX2 row kernel of the threshold packing (internal/binary_threshold_kernels.h): 8 channels
 * per compare pair and movemask, the last channels of a word one at a time. */
#if defined(__x86_64__) || defined(__i386__)
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx2"))), apply_to = function)
#else
#pragma GCC target("avx2")
#endif
#include <immintrin.h>

#include "internal/binary_threshold_kernels.h"

void binary_threshold_rows_avx2(uint32_t *bits, const float *z, const float *lo, const float *hi, int64_t p0,
                                int64_t p1, int64_t c)
{
    const int64_t cw = (c + 31) / 32;
    for (int64_t p = p0; p < p1; p++) {
        const float *row = z + p * c;
        for (int64_t k = 0; k < cw; k++) {
            const int64_t base = 32 * k, end = c - base < 32 ? c - base : 32;
            int64_t b = 0;
            uint32_t word = 0;
            for (; b + 8 <= end; b += 8) {
                __m256 v = _mm256_loadu_ps(row + base + b);
                __m256 inside = _mm256_and_ps(_mm256_cmp_ps(_mm256_loadu_ps(lo + base + b), v, _CMP_LE_OQ),
                                              _mm256_cmp_ps(v, _mm256_loadu_ps(hi + base + b), _CMP_LE_OQ));
                word |= (uint32_t)(~_mm256_movemask_ps(inside) & 0xFF) << b;
            }
            for (; b < end; b++) {
                const float v = row[base + b];
                word |= (uint32_t)!(lo[base + b] <= v && v <= hi[base + b]) << b;
            }
            bits[p * cw + k] = word;
        }
    }
}

#if defined(__clang__)
#pragma clang attribute pop
#endif
#endif
