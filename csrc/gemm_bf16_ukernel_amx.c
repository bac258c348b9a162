/* The AMX micro-kernel of the bf16 GEMM (internal/gemm_bf16_core.h) and the AVX512_BF16
 * conversions its packers use. Called only when bf16_gemm_native() holds, on CPUs that have
 * AMX-BF16 (Sapphire Rapids and later, which all have AVX512_BF16 as well). */
#pragma GCC target("amx-tile,amx-bf16,avx512f,avx512bw,avx512vl,avx512bf16")

#include <immintrin.h>
#include <string.h>

#include "internal/gemm_bf16_core.h"

/* LDTILECFG's 64-byte operand (palette 1). */
struct tile_config {
    uint8_t palette_id, start_row;
    uint8_t reserved[14];
    uint16_t colsb[16];
    uint8_t rows[16];
};

/* Tiles 0-3: the 2 x 2 float32 accumulators; 4, 5: two 16-row slices of A (16 x 32 bf16);
 * 6, 7: two VNNI panels of B (16 pairs of K rows x 16 columns). Every tile is 16 rows of 64
 * bytes, the largest palette 1 allows. */
/* A constant in memory, not a local: GCC 12 does not see that LDTILECFG reads its operand and
 * dropped the stores that filled a local one (the load then faulted). */
static const struct tile_config config __attribute__((aligned(64))) = {
    .palette_id = 1,
    .colsb = {64, 64, 64, 64, 64, 64, 64, 64},
    .rows = {16, 16, 16, 16, 16, 16, 16, 16},
};

void bf16_amx_tile_config(void)
{
    _tile_loadconfig(&config);
}

void bf16_amx_tile_release(void)
{
    _tile_release();
}

void bf16_amx_kernel_32x32(float *block, const uint16_t *a, const uint16_t *b0, const uint16_t *b1,
                           int64_t kp)
{
    _tile_zero(0);
    _tile_zero(1);
    _tile_zero(2);
    _tile_zero(3);
    const int64_t a_stride = kp * 2;   // bytes between rows of the packed A
    for (int64_t p = 0; p < kp; p += BF16_KSTEP) {
        _tile_loadd(4, a + p, a_stride);
        _tile_loadd(5, a + 16 * kp + p, a_stride);
        _tile_loadd(6, b0 + p * 16, 64);   // K rows p .. p + 32 are pair-rows p / 2 .., 32 bf16 each
        _tile_loadd(7, b1 + p * 16, 64);
        _tile_dpbf16ps(0, 4, 6);
        _tile_dpbf16ps(1, 4, 7);
        _tile_dpbf16ps(2, 5, 6);
        _tile_dpbf16ps(3, 5, 7);
    }
    _tile_stored(0, block, BF16_NR * 4);
    _tile_stored(1, block + 16, BF16_NR * 4);
    _tile_stored(2, block + 16 * BF16_NR, BF16_NR * 4);
    _tile_stored(3, block + 16 * BF16_NR + 16, BF16_NR * 4);
}

/* vcvtneps2bf16 rounds to nearest even as minidl_round_bfloat16 does (it flushes float32
 * subnormals to zero, which TDPBF16PS would do with them anyway). */
void bf16_convert_row(uint16_t *dst, const float *src, int64_t count, int64_t padded)
{
    int64_t j = 0;
    for (; j + 16 <= count; j += 16)
        _mm256_storeu_si256((__m256i *)(dst + j), (__m256i)_mm512_cvtneps_pbh(_mm512_loadu_ps(src + j)));
    if (j < count) {   // exactly count values: a packer converts runs side by side
        __mmask16 keep = (__mmask16)((1u << (count - j)) - 1);
        __m256i v = (__m256i)_mm512_cvtneps_pbh(_mm512_maskz_loadu_ps(keep, src + j));
        _mm256_mask_storeu_epi16(dst + j, keep, v);
    }
    if (padded > count)
        memset(dst + count, 0, (size_t)(padded - count) * sizeof(uint16_t));
}

void bf16_interleave_16(uint16_t *dst, const float *r0, const float *r1, int count)
{
    const __mmask16 keep = (__mmask16)((1u << count) - 1);
    const __m512i pairs = _mm512_set_epi16(31, 15, 30, 14, 29, 13, 28, 12, 27, 11, 26, 10, 25, 9, 24, 8,
                                           23, 7, 22, 6, 21, 5, 20, 4, 19, 3, 18, 2, 17, 1, 16, 0);
    __m512 v0 = _mm512_maskz_loadu_ps(keep, r0);
    __m512 v1 = r1 ? _mm512_maskz_loadu_ps(keep, r1) : _mm512_setzero_ps();
    __m512i both = (__m512i)_mm512_cvtne2ps_pbh(v1, v0);   // r0's 16 values, then r1's
    _mm512_storeu_si512(dst, _mm512_permutexvar_epi16(pairs, both));
}

/* The matrix writer's store (gemm_bf16.c): c = alpha * block + beta * c (+ bias), masked 16-float
 * vectors (the generic build's loops were SSE: 6% of a mixed keras_cnn step). */
void bf16_store_block(float *c, int64_t ldc, const float *block, int mb, int nb, float alpha, float beta,
                      const float *bias)
{
    const __m512 va = _mm512_set1_ps(alpha), vb = _mm512_set1_ps(beta);
    for (int j = 0; j < nb; j += 16) {
        const __mmask16 keep = (__mmask16)(nb - j >= 16 ? 0xffff : (1u << (nb - j)) - 1);
        const __m512 vbias = bias ? _mm512_maskz_loadu_ps(keep, bias + j) : _mm512_setzero_ps();
        for (int i = 0; i < mb; i++) {
            float *ci = c + i * ldc + j;
            __m512 v = _mm512_fmadd_ps(va, _mm512_loadu_ps(block + i * BF16_NR + j), vbias);
            if (beta != 0.0f)   // beta == 0 never reads c (it may hold NaN)
                v = _mm512_fmadd_ps(vb, _mm512_maskz_loadu_ps(keep, ci), v);
            _mm512_mask_storeu_ps(ci, keep, v);
        }
    }
}

void bf16_amx_kernel_window_32x32(float *block, const uint16_t *a0, const uint16_t *a1, int64_t pixel_stride,
                                  const int64_t *row_offsets, int64_t rows, int64_t row_len,
                                  const uint16_t *b0, const uint16_t *b1)
{
    _tile_zero(0);
    _tile_zero(1);
    _tile_zero(2);
    _tile_zero(3);
    const int64_t a_stride = pixel_stride * 2;   // bytes from one output pixel's window to the next
    for (int64_t r = 0; r < rows; r++) {
        const uint16_t *ra0 = a0 + row_offsets[r], *ra1 = a1 + row_offsets[r];
        const uint16_t *rb0 = b0 + r * row_len * 16, *rb1 = b1 + r * row_len * 16;
        for (int64_t p = 0; p < row_len; p += BF16_KSTEP) {
            _tile_loadd(4, ra0 + p, a_stride);
            _tile_loadd(5, ra1 + p, a_stride);
            _tile_loadd(6, rb0 + p * 16, 64);
            _tile_loadd(7, rb1 + p * 16, 64);
            _tile_dpbf16ps(0, 4, 6);
            _tile_dpbf16ps(1, 4, 7);
            _tile_dpbf16ps(2, 5, 6);
            _tile_dpbf16ps(3, 5, 7);
        }
    }
    _tile_stored(0, block, BF16_NR * 4);
    _tile_stored(1, block + 16, BF16_NR * 4);
    _tile_stored(2, block + 16 * BF16_NR, BF16_NR * 4);
    _tile_stored(3, block + 16 * BF16_NR + 16, BF16_NR * 4);
}

void bf16_amx_kernel_filter_32x32(float *block, const uint16_t *image_t, const uint16_t *dout_pairs,
                                  const struct bf16_filter_geometry *g, int64_t ky, int64_t kx, int64_t c0,
                                  int64_t f0, int64_t n0, int64_t n1)
{
    _tile_zero(0);
    _tile_zero(1);
    _tile_zero(2);
    _tile_zero(3);
    const int64_t plane = g->hp * g->wp;
    const int64_t a_stride = plane * 2, b_stride = g->fp * 4;   // bytes: next channel / next pixel pair
    for (int64_t n = n0; n < n1; n++) {
        const uint16_t *a = image_t + (n * g->c + c0) * plane + ky * g->dh * g->wp + kx * g->dw;
        const uint16_t *b = dout_pairs + n * (g->qp / 2) * g->fp * 2 + f0 * 2;
        for (int64_t q = 0; q < g->qp; q += 32) {
            _tile_loadd(4, a + q, a_stride);
            _tile_loadd(5, a + 16 * plane + q, a_stride);
            _tile_loadd(6, b + (q / 2) * g->fp * 2, b_stride);
            _tile_loadd(7, b + (q / 2) * g->fp * 2 + 32, b_stride);
            _tile_dpbf16ps(0, 4, 6);
            _tile_dpbf16ps(1, 4, 7);
            _tile_dpbf16ps(2, 5, 6);
            _tile_dpbf16ps(3, 5, 7);
        }
    }
    _tile_stored(0, block, BF16_NR * 4);
    _tile_stored(1, block + 16, BF16_NR * 4);
    _tile_stored(2, block + 16 * BF16_NR, BF16_NR * 4);
    _tile_stored(3, block + 16 * BF16_NR + 16, BF16_NR * 4);
}

void bf16_convert_columns(uint16_t *dst, int64_t dst_stride, const float *src, int64_t src_stride,
                          int64_t rows, int64_t cols)
{
    const __m512i lanes = _mm512_mullo_epi32(_mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0),
                                             _mm512_set1_epi32((int)src_stride));
    for (int64_t r0 = 0; r0 < rows; r0 += 16) {
        const __mmask16 keep = (__mmask16)(rows - r0 >= 16 ? 0xffff : (1u << (rows - r0)) - 1);
        for (int64_t c = 0; c < cols; c++) {
            __m512 v = _mm512_mask_i32gather_ps(_mm512_setzero_ps(), keep, lanes, src + r0 * src_stride + c, 4);
            _mm256_mask_storeu_epi16(dst + c * dst_stride + r0, keep, (__m256i)_mm512_cvtneps_pbh(v));
        }
    }
}
