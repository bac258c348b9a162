/* AVX-512 VPOPCNTDQ xor-popcount micro-kernel (internal/binary_kernels.h): 16 filters per zmm
 * (32-bit words), BINARY_MR rows x 4 zmm = 16 accumulators; per word one broadcast of each
 * row's word, 4 loads of the kernel row, 16 xor + vpopcntd + add; the counts become the float
 * dot products in registers. A filter tail runs masked. */
#if defined(__x86_64__) || defined(__i386__)
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx512f,avx512vl,avx512bw,avx512vpopcntdq"))), apply_to = function)
#else
#pragma GCC target("avx512f,avx512vl,avx512bw,avx512vpopcntdq")
#endif
#include <immintrin.h>

#include "internal/binary_kernels.h"

#define VECS 4     /* zmm per row: 64 filters per pass */

/* ROWS rows (a compile-time constant, so the 4 x ROWS accumulators stay in registers) against
 * the 64 filters from j0 on; mask[v] covers the filters of zmm v that exist. */
static inline __attribute__((always_inline)) void block(float *out, const uint32_t *a, const uint32_t *b,
                                                        const int32_t *k_total, const float *bias,
                                                        int64_t words, int64_t f, int64_t j0,
                                                        const __mmask16 mask[VECS], const int ROWS)
{
    __m512i acc[BINARY_MR][VECS];
    for (int r = 0; r < ROWS; r++)
        for (int v = 0; v < VECS; v++) acc[r][v] = _mm512_setzero_si512();
    for (int64_t w = 0; w < words; w++) {
        const uint32_t *bw = b + w * f + j0;
        __m512i kv[VECS];
        for (int v = 0; v < VECS; v++) kv[v] = _mm512_maskz_loadu_epi32(mask[v], bw + 16 * v);
        for (int r = 0; r < ROWS; r++) {
            const __m512i x = _mm512_set1_epi32((int)a[r * words + w]);
            for (int v = 0; v < VECS; v++)
                acc[r][v] = _mm512_add_epi32(acc[r][v], _mm512_popcnt_epi32(_mm512_xor_si512(x, kv[v])));
        }
    }
    for (int r = 0; r < ROWS; r++) {
        const __m512i k = _mm512_set1_epi32(k_total[r]);
        for (int v = 0; v < VECS; v++) {
            __m512 dots = _mm512_cvtepi32_ps(_mm512_sub_epi32(k, _mm512_add_epi32(acc[r][v], acc[r][v])));
            if (bias)
                dots = _mm512_add_ps(dots, _mm512_maskz_loadu_ps(mask[v], bias + j0 + 16 * v));
            _mm512_mask_storeu_ps(out + r * f + j0 + 16 * v, mask[v], dots);
        }
    }
}

void binary_popcount_avx512(float *out, const uint32_t *a, const uint32_t *b, const int32_t *k_total,
                            const float *bias, int64_t rows, int64_t words, int64_t f)
{
    for (int64_t j0 = 0; j0 < f; j0 += 16 * VECS) {
        __mmask16 mask[VECS];
        for (int v = 0; v < VECS; v++) {
            int64_t left = f - j0 - 16 * v;
            mask[v] = left >= 16 ? (__mmask16)0xFFFF : (left <= 0 ? 0 : (__mmask16)((1u << left) - 1));
        }
        switch (rows) {     /* one specialized body per row count */
        case 4: block(out, a, b, k_total, bias, words, f, j0, mask, 4); break;
        case 3: block(out, a, b, k_total, bias, words, f, j0, mask, 3); break;
        case 2: block(out, a, b, k_total, bias, words, f, j0, mask, 2); break;
        default: block(out, a, b, k_total, bias, words, f, j0, mask, 1); break;
        }
    }
}

/* bits (pixels, cw) of x (pixels, c): 16 comparisons per mask instruction; -0.0 is not < 0. */
void binary_pack_avx512(uint32_t *bits, const float *x, int64_t pixels, int64_t c)
{
    const int64_t cw = (c + 31) / 32;
    const __m512 zero = _mm512_setzero_ps();
    for (int64_t p = 0; p < pixels; p++) {
        const float *xp = x + p * c;
        for (int64_t k = 0; k < cw; k++) {
            int64_t left = c - 32 * k;
            __mmask16 m0 = left >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << left) - 1);
            __mmask16 m1 = left >= 32 ? (__mmask16)0xFFFF : (left <= 16 ? 0 : (__mmask16)((1u << (left - 16)) - 1));
            __mmask16 lo = _mm512_mask_cmp_ps_mask(m0, _mm512_maskz_loadu_ps(m0, xp + 32 * k), zero, _CMP_LT_OQ);
            __mmask16 hi = _mm512_mask_cmp_ps_mask(m1, _mm512_maskz_loadu_ps(m1, xp + 32 * k + 16), zero, _CMP_LT_OQ);
            bits[p * cw + k] = (uint32_t)lo | ((uint32_t)hi << 16);
        }
    }
}

#if defined(__clang__)
#pragma clang attribute pop
#endif
#endif
