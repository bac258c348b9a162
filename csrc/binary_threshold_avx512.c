/* AVX-512 row kernel of the threshold packing (internal/binary_threshold_kernels.h): per word,
 * two masked compares of 16 channels against lo and hi give 16 bits each; channels past c are
 * masked off, so their bits stay 0. NaN compares false: outside, -1 (as the generic kernel). */
#if defined(__x86_64__) || defined(__i386__)
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx512f"))), apply_to = function)
#else
#pragma GCC target("avx512f")
#endif
#include <immintrin.h>

#include "internal/binary_threshold_kernels.h"

/* the channels of half-word `half` (16 channels) that exist when `left` channels remain */
static __mmask16 half_mask(int64_t left)
{
    if (left >= 16) return (__mmask16)0xFFFF;
    return left <= 0 ? (__mmask16)0 : (__mmask16)((1u << left) - 1);
}

static __mmask16 outside(const float *z, const float *lo, const float *hi, __mmask16 m)
{
    __m512 v = _mm512_maskz_loadu_ps(m, z);
    __mmask16 above_lo = _mm512_mask_cmp_ps_mask(m, _mm512_maskz_loadu_ps(m, lo), v, _CMP_LE_OQ);
    __mmask16 inside = _mm512_mask_cmp_ps_mask(above_lo, v, _mm512_maskz_loadu_ps(m, hi), _CMP_LE_OQ);
    return (__mmask16)(m & ~inside);
}

void binary_threshold_rows_avx512(uint32_t *bits, const float *z, const float *lo, const float *hi, int64_t p0,
                                  int64_t p1, int64_t c)
{
    const int64_t cw = (c + 31) / 32;
    for (int64_t p = p0; p < p1; p++) {
        const float *row = z + p * c;
        for (int64_t k = 0; k < cw; k++) {
            const int64_t base = 32 * k, left = c - base;
            __mmask16 m0 = half_mask(left), m1 = half_mask(left - 16);
            uint32_t low = outside(row + base, lo + base, hi + base, m0);
            uint32_t high = m1 ? outside(row + base + 16, lo + base + 16, hi + base + 16, m1) : 0;
            bits[p * cw + k] = low | (high << 16);
        }
    }
}

#if defined(__clang__)
#pragma clang attribute pop
#endif
#endif
