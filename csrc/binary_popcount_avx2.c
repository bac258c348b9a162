/* AVX2 xor-popcount micro-kernel (internal/binary_kernels.h): no vector popcount, so each
 * byte's bits are counted with two vpshufb look-ups of its nibbles; byte counts accumulate for
 * up to 31 words (31 * 8 < 256) before maddubs + madd widen them to one count per 32-bit
 * lane. 8 filters per ymm, BINARY_MR rows x 2 ymm; filters beyond a multiple of 8 run scalar. */
#if defined(__x86_64__) || defined(__i386__)
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx2"))), apply_to = function)
#else
#pragma GCC target("avx2")
#endif
#include <immintrin.h>

#include "internal/binary_kernels.h"

#define VECS 2
#define FLUSH 31

static inline __m256i byte_popcount(__m256i v, __m256i lut, __m256i low)
{
    __m256i lo = _mm256_and_si256(v, low), hi = _mm256_and_si256(_mm256_srli_epi16(v, 4), low);
    return _mm256_add_epi8(_mm256_shuffle_epi8(lut, lo), _mm256_shuffle_epi8(lut, hi));
}

static inline __m256i widen(__m256i bytes)
{
    __m256i pairs = _mm256_maddubs_epi16(bytes, _mm256_set1_epi8(1));
    return _mm256_madd_epi16(pairs, _mm256_set1_epi16(1));
}

/* out (8 floats) = k_total - 2 counts (+ the 8 biases at bias, when not NULL) */
static inline void store_dots(float *out, __m256i counts, int32_t k_total, const float *bias)
{
    __m256 dots = _mm256_cvtepi32_ps(_mm256_sub_epi32(_mm256_set1_epi32(k_total), _mm256_add_epi32(counts, counts)));
    if (bias)
        dots = _mm256_add_ps(dots, _mm256_loadu_ps(bias));
    _mm256_storeu_ps(out, dots);
}

void binary_popcount_avx2(float *out, const uint32_t *a, const uint32_t *b, const int32_t *k_total,
                          const float *bias, int64_t rows, int64_t words, int64_t f)
{
    const __m256i lut = _mm256_setr_epi8(0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4,
                                         0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4);
    const __m256i low = _mm256_set1_epi8(0x0f);
    const int64_t vector_f = f / (8 * VECS) * (8 * VECS);
    for (int64_t j0 = 0; j0 < vector_f; j0 += 8 * VECS) {
        __m256i acc[BINARY_MR][VECS], bytes[BINARY_MR][VECS];
        for (int r = 0; r < BINARY_MR; r++)
            for (int v = 0; v < VECS; v++) acc[r][v] = bytes[r][v] = _mm256_setzero_si256();
        for (int64_t w0 = 0; w0 < words; w0 += FLUSH) {
            int64_t w1 = w0 + FLUSH < words ? w0 + FLUSH : words;
            for (int64_t w = w0; w < w1; w++) {
                const uint32_t *bw = b + w * f + j0;
                __m256i kv[VECS];
                for (int v = 0; v < VECS; v++) kv[v] = _mm256_loadu_si256((const __m256i *)(bw + 8 * v));
                for (int r = 0; r < BINARY_MR; r++) {
                    if (r >= rows) break;
                    __m256i x = _mm256_set1_epi32((int)a[r * words + w]);
                    for (int v = 0; v < VECS; v++)
                        bytes[r][v] = _mm256_add_epi8(bytes[r][v], byte_popcount(_mm256_xor_si256(x, kv[v]), lut, low));
                }
            }
            for (int r = 0; r < BINARY_MR; r++)
                for (int v = 0; v < VECS; v++) {
                    acc[r][v] = _mm256_add_epi32(acc[r][v], widen(bytes[r][v]));
                    bytes[r][v] = _mm256_setzero_si256();
                }
        }
        for (int r = 0; r < rows; r++)
            for (int v = 0; v < VECS; v++)
                store_dots(out + r * f + j0 + 8 * v, acc[r][v], k_total[r], bias ? bias + j0 + 8 * v : NULL);
    }
    for (int r = 0; r < rows; r++)          /* the filters past the last whole vector pair */
        for (int64_t j = vector_f; j < f; j++) {
            int32_t s = 0;
            for (int64_t w = 0; w < words; w++) s += __builtin_popcount(a[r * words + w] ^ b[w * f + j]);
            out[r * f + j] = (float)(k_total[r] - 2 * s) + (bias ? bias[j] : 0.0f);
        }
}

/* bits of x: 8 comparisons per movemask; a partial word's tail runs scalar. */
void binary_pack_avx2(uint32_t *bits, const float *x, int64_t pixels, int64_t c)
{
    const int64_t cw = (c + 31) / 32;
    const __m256 zero = _mm256_setzero_ps();
    for (int64_t p = 0; p < pixels; p++) {
        const float *xp = x + p * c;
        for (int64_t k = 0; k < cw; k++) {
            int64_t end = c - 32 * k < 32 ? c - 32 * k : 32, b = 0;
            uint32_t word = 0;
            for (; b + 8 <= end; b += 8)
                word |= (uint32_t)_mm256_movemask_ps(_mm256_cmp_ps(_mm256_loadu_ps(xp + 32 * k + b), zero,
                                                                   _CMP_LT_OQ)) << b;
            for (; b < end; b++) word |= (uint32_t)(xp[32 * k + b] < 0.0f) << b;
            bits[p * cw + k] = word;
        }
    }
}

#if defined(__clang__)
#pragma clang attribute pop
#endif
#endif
