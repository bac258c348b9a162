/* AVX2 int8 micro-kernel, 6 rows x 16 columns: vpmaddubsw multiplies the 4 u8 activations of a
 * k-group (broadcast) by the 4 s8 weights of each column and adds adjacent pairs into int16;
 * vpmaddwd by ones adds the two pairs into int32. The int16 step cannot saturate because the
 * weights are 7-bit (csrc/qgemm.h): this is oneDNN's choice for CPUs without VNNI; FBGEMM and
 * PyTorch instead keep 8-bit weights and quantize activations to 7 bits (reduce_range). We
 * keep the full 8 bits for the activations, whose one per-tensor scale is the coarser one. */
#if defined(__x86_64__) || defined(__i386__)
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx2,fma"))), apply_to = function)
#else
#pragma GCC target("avx2,fma")
#endif
#include <immintrin.h>

#include "internal/qgemm_kernels.h"

/* The epilogue on 8 columns of one row, equal to qgemm_store_one element by element. */
static inline void store8(const struct qgemm_epilogue *e, int64_t r, int j, __m256i acc)
{
    __m256i off = _mm256_loadu_si256((const __m256i *)(e->column_offset + j));
    __m256 v = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_add_epi32(acc, off)),
                             _mm256_loadu_ps(e->multiplier + j));
    if (e->out_u8) {
        __m256 lo = _mm256_set1_ps(e->relu ? 0.0f : (float)-e->zero_point);
        __m256 hi = _mm256_set1_ps((float)(255 - e->zero_point));
        __m256i q = _mm256_add_epi32(_mm256_cvtps_epi32(_mm256_min_ps(_mm256_max_ps(v, lo), hi)),
                                     _mm256_set1_epi32(e->zero_point));
        /* 8 int32 in [0, 255] -> 8 bytes */
        __m128i q16 = _mm_packs_epi32(_mm256_castsi256_si128(q), _mm256_extracti128_si256(q, 1));
        __m128i q8 = _mm_packus_epi16(q16, q16);
        _mm_storel_epi64((__m128i *)(e->out_u8 + r * e->ldo + j), q8);
    } else {
        if (e->relu)
            v = _mm256_max_ps(v, _mm256_setzero_ps());
        _mm256_storeu_ps(e->out_f32 + r * e->ldo + j, v);
    }
}

void qgemm_ukernel_avx2(const struct qgemm_epilogue *e, int64_t row0, int rows, int cols,
                        const uint8_t *a, int64_t lda, const int8_t *w, int64_t k, int64_t np)
{
    const __m256i ones = _mm256_set1_epi16(1);
    __m256i acc[QGEMM_MR][2];
    for (int i = 0; i < QGEMM_MR; i++)
        acc[i][0] = acc[i][1] = _mm256_setzero_si256();
    int64_t groups = (k + 3) / 4, full = k / 4;
    for (int64_t g = 0; g < groups; g++) {
        const int8_t *wg = w + g * np * 4;
        __m256i w0 = _mm256_loadu_si256((const __m256i *)wg);
        __m256i w1 = _mm256_loadu_si256((const __m256i *)(wg + 32));
#pragma GCC unroll 6
        for (int i = 0; i < QGEMM_MR; i++) {
            if (i >= rows)
                break;
            int32_t four = qgemm_row_group(a + i * lda, g, full, k);
            __m256i av = _mm256_set1_epi32(four);
            acc[i][0] = _mm256_add_epi32(acc[i][0], _mm256_madd_epi16(_mm256_maddubs_epi16(av, w0), ones));
            acc[i][1] = _mm256_add_epi32(acc[i][1], _mm256_madd_epi16(_mm256_maddubs_epi16(av, w1), ones));
        }
    }
    if (cols == 16) {
        for (int i = 0; i < rows; i++) {
            store8(e, row0 + i, 0, acc[i][0]);
            store8(e, row0 + i, 8, acc[i][1]);
        }
        return;
    }
    int32_t spill[QGEMM_MR * 16];
    for (int i = 0; i < rows; i++) {
        _mm256_storeu_si256((__m256i *)(spill + i * 16), acc[i][0]);
        _mm256_storeu_si256((__m256i *)(spill + i * 16 + 8), acc[i][1]);
    }
    qgemm_store_block(e, row0, rows, cols, spill);
}
#endif
