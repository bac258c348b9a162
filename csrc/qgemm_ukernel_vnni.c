/* AVX512_VNNI int8 micro-kernel, 6 rows x 16 columns: vpdpbusd multiplies the 4 u8 activations
 * of a k-group (broadcast) by the 4 s8 weights of each of 16 columns and adds the four products
 * into the int32 accumulator, with no int16 step. Chosen at run time only on CPUs with
 * AVX512_VNNI (csrc/qgemm.c); compiled everywhere by its target pragma. */
#if defined(__x86_64__) || defined(__i386__)
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni"))), apply_to = function)
#else
#pragma GCC target("avx512f,avx512bw,avx512vl,avx512vnni")
#endif
#include <immintrin.h>

#include "internal/qgemm_kernels.h"

static inline void store16(const struct qgemm_epilogue *e, int64_t r, __m512i acc)
{
    __m512i off = _mm512_loadu_si512((const void *)e->column_offset);
    __m512 v = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_add_epi32(acc, off)),
                             _mm512_loadu_ps(e->multiplier));
    if (e->out_u8) {
        __m512 lo = _mm512_set1_ps(e->relu ? 0.0f : (float)-e->zero_point);
        __m512 hi = _mm512_set1_ps((float)(255 - e->zero_point));
        __m512i q = _mm512_add_epi32(_mm512_cvtps_epi32(_mm512_min_ps(_mm512_max_ps(v, lo), hi)),
                                     _mm512_set1_epi32(e->zero_point));
        _mm_storeu_si128((__m128i *)(e->out_u8 + r * e->ldo), _mm512_cvtepi32_epi8(q));
    } else {
        if (e->relu)
            v = _mm512_max_ps(v, _mm512_setzero_ps());
        _mm512_storeu_ps(e->out_f32 + r * e->ldo, v);
    }
}

void qgemm_ukernel_vnni(const struct qgemm_epilogue *e, int64_t row0, int rows, int cols,
                        const uint8_t *a, int64_t lda, const int8_t *w, int64_t k, int64_t np)
{
    __m512i acc[QGEMM_MR];
    for (int i = 0; i < QGEMM_MR; i++)
        acc[i] = _mm512_setzero_si512();
    int64_t groups = (k + 3) / 4, full = k / 4;
    for (int64_t g = 0; g < groups; g++) {
        __m512i wv = _mm512_loadu_si512((const void *)(w + g * np * 4));
#pragma GCC unroll 6
        for (int i = 0; i < QGEMM_MR; i++) {
            if (i >= rows)
                break;
            int32_t four = qgemm_row_group(a + i * lda, g, full, k);
            acc[i] = _mm512_dpbusd_epi32(acc[i], _mm512_set1_epi32(four), wv);
        }
    }
    if (cols == 16) {
        for (int i = 0; i < rows; i++)
            store16(e, row0 + i, acc[i]);
        return;
    }
    int32_t spill[QGEMM_MR * 16];
    for (int i = 0; i < rows; i++)
        _mm512_storeu_si512((void *)(spill + i * 16), acc[i]);
    qgemm_store_block(e, row0, rows, cols, spill);
}
#endif
