/* AMX int8 path of csrc/qgemm.c: TDPBUSD (u8 activations x s8 weights -> int32) on tiles.
 *
 * The packed weights of csrc/qgemm.h, (kp / 4, np, 4), already are AMX's B layout: a B tile row
 * holds the 4 consecutive k values of each of 16 columns, so a (16 k-groups, 16 columns) tile is
 * read in place with a row stride of np * 4 bytes. Only the last k block, when kp is not a
 * multiple of 64, comes from a zero-padded copy (qgemm_amx_weights_tail), made once per call.
 *
 * Activations are read by A tiles 64 bytes of k at a time, so each row must be readable and zero
 * from k up to k64 (k rounded up to 64), and the rows up to the end of the last 32-row block
 * readable. The convolution's im2col writes that layout directly (qgemm.c); other activations
 * are copied 32 rows at a time into a zero-padded (32, k64) block (apack), which costs one pass
 * over a against the n / 32 passes of the tiles.
 *
 * Register blocking: 32 rows x 32 columns = 4 int32 accumulator tiles (tmm0-3), 2 A tiles
 * (tmm4-5) and 2 B tiles (tmm6-7), all 16 rows x 64 bytes: per 64-deep k step 4 tile loads feed
 * 4 TDPBUSD of 16 x 16 x 64 products each. The accumulators are stored to memory and the
 * requantization of csrc/qgemm.h (the same float math as the VNNI path, so equal bit for bit)
 * runs on them with AVX-512.
 *
 * Each thread that runs tiles loads the config first (qgemm_amx_begin) and releases the tile
 * state after (qgemm_amx_end). Chosen only when minidl_amx_active(). */
#if defined(__x86_64__) && !defined(__clang__)
#pragma GCC target("amx-tile,amx-int8,avx512f,avx512bw,avx512vl")
#include <immintrin.h>
#include <stdlib.h>
#include <string.h>

#include "internal/checked_alloc.h"
#include "internal/qgemm_kernels.h"

enum { TILE_ROWS = 16, TILE_BYTES = 64, BLOCK = 32 };

/* palette 1: tmm0-3 the int32 accumulators (16 x 16), tmm4-5 A (16 rows x 64 u8), tmm6-7 B
 * (16 k-groups x 16 columns x 4 s8); every tile is 16 rows of 64 bytes. */
struct tile_config {
    uint8_t palette_id, start_row, reserved[14];
    uint16_t colsb[16];
    uint8_t rows[16];
};

void qgemm_amx_begin(void)
{
    struct tile_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.palette_id = 1;
    for (int t = 0; t < 8; t++) {
        cfg.colsb[t] = TILE_BYTES;
        cfg.rows[t] = TILE_ROWS;
    }
    /* GCC 12 does not see that ldtilecfg reads cfg and drops the stores above it (the #GP of
       a zero config): the barrier says the memory is used */
    __asm__ volatile("" : : "r"(&cfg) : "memory");
    _tile_loadconfig(&cfg);
}

void qgemm_amx_end(void) { _tile_release(); }

int64_t qgemm_amx_k64(int64_t k) { return (k + 63) / 64 * 64; }

int8_t *qgemm_amx_weights_tail(const int8_t *w, int64_t k, int64_t np)
{
    int64_t kp = (k + 3) / 4 * 4, k64 = qgemm_amx_k64(k);
    if (kp == k64)
        return NULL;                       /* every k block is read in place */
    int8_t *tail = (int8_t *)minidl_alloc((size_t)(TILE_ROWS * np * 4));
    if (!tail)
        return NULL;
    memset(tail, 0, (size_t)(TILE_ROWS * np * 4));
    int64_t g0 = (k64 - 64) / 4, groups = kp / 4 - g0;
    memcpy(tail, w + g0 * np * 4, (size_t)(groups * np * 4));
    return tail;
}

/* The epilogue of a (rows, cols) corner of acc (32 x 32 int32), its row 0 at out row r0 and
 * its column 0 at out column j0; whole 16-column groups with AVX-512, the same float math as
 * qgemm_ukernel_vnni's store16 (so equal bit for bit). The per-column vectors are loaded once
 * per group into locals: the uint8 stores may alias anything, so the compiler would otherwise
 * reload them from e at every row. */
static void store_block(const struct qgemm_epilogue *e, int64_t r0, int64_t j0, int rows, int cols,
                        const int32_t *acc)
{
    const int64_t ldo = e->ldo;
    const int relu = e->relu;
    int j = 0;
    for (; j + 16 <= cols; j += 16) {
        const __m512i off = _mm512_loadu_si512((const void *)(e->column_offset + j0 + j));
        const __m512 mult = _mm512_loadu_ps(e->multiplier + j0 + j);
        if (e->out_u8) {
            const __m512 lo = _mm512_set1_ps(relu ? 0.0f : (float)-e->zero_point);
            const __m512 hi = _mm512_set1_ps((float)(255 - e->zero_point));
            const __m512i zp = _mm512_set1_epi32(e->zero_point);
            uint8_t *out = e->out_u8 + r0 * ldo + j0 + j;
            for (int i = 0; i < rows; i++) {
                __m512i a = _mm512_loadu_si512((const void *)(acc + i * BLOCK + j));
                __m512 v = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_add_epi32(a, off)), mult);
                __m512i q = _mm512_add_epi32(_mm512_cvtps_epi32(_mm512_min_ps(_mm512_max_ps(v, lo), hi)), zp);
                _mm_storeu_si128((__m128i *)(out + i * ldo), _mm512_cvtepi32_epi8(q));
            }
        } else {
            float *out = e->out_f32 + r0 * ldo + j0 + j;
            for (int i = 0; i < rows; i++) {
                __m512i a = _mm512_loadu_si512((const void *)(acc + i * BLOCK + j));
                __m512 v = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_add_epi32(a, off)), mult);
                if (relu)
                    v = _mm512_max_ps(v, _mm512_setzero_ps());
                _mm512_storeu_ps(out + i * ldo, v);
            }
        }
    }
    if (j < cols) {
        struct qgemm_epilogue shifted = *e;
        shifted.column_offset += j0;
        shifted.multiplier += j0;
        if (shifted.out_u8)
            shifted.out_u8 += j0;
        else
            shifted.out_f32 += j0;
        for (int i = 0; i < rows; i++)
            for (int jj = j; jj < cols; jj++)
                qgemm_store_one(&shifted, r0 + i, jj, acc[i * BLOCK + jj]);
    }
}

/* acc (32 x 32 int32) = ablock (two 16-row tiles when two_rows, row stride lda) @ the 32 (or
 * 16) columns at wcol, k64 / 64 k blocks; the last from wtail_col when it is not NULL. */
static inline __attribute__((always_inline)) void tiles_2x2(int32_t *acc, const uint8_t *ablock, int64_t lda,
                                                             int64_t k64,
                                                             const int8_t *wcol, const int8_t *wtail_col,
                                                             int64_t ldw, int two_rows, int two_cols)
{
    _tile_zero(0);
    _tile_zero(1);
    _tile_zero(2);
    _tile_zero(3);
    int64_t blocks = k64 / 64;
    for (int64_t kb = 0; kb < blocks; kb++) {
        const int8_t *b = (kb == blocks - 1 && wtail_col) ? wtail_col : wcol + kb * 16 * ldw;
        const uint8_t *a = ablock + kb * 64;
        _tile_loadd(4, a, lda);
        _tile_loadd(6, b, ldw);
        _tile_dpbusd(0, 4, 6);
        if (two_cols) {
            _tile_loadd(7, b + 64, ldw);
            _tile_dpbusd(1, 4, 7);
        }
        if (two_rows) {
            _tile_loadd(5, a + 16 * lda, lda);
            _tile_dpbusd(2, 5, 6);
            if (two_cols)
                _tile_dpbusd(3, 5, 7);
        }
    }
    _tile_stored(0, acc, BLOCK * 4);
    _tile_stored(1, acc + 16, BLOCK * 4);
    _tile_stored(2, acc + 16 * BLOCK, BLOCK * 4);
    _tile_stored(3, acc + 16 * BLOCK + 16, BLOCK * 4);
}

void qgemm_amx_rows(const struct qgemm_epilogue *e, int64_t r0, int64_t r1, const uint8_t *a, int64_t lda,
                    const int8_t *w, const int8_t *wtail, int64_t k, int64_t n, int64_t np, uint8_t *apack)
{
    int64_t k64 = qgemm_amx_k64(k), ldw = np * 4;
    int32_t acc[BLOCK * BLOCK] __attribute__((aligned(64)));
    for (int64_t r = r0; r < r1; r += BLOCK) {
        int rows = r1 - r < BLOCK ? (int)(r1 - r) : BLOCK;
        const uint8_t *ablock = a + r * lda;
        int64_t ld = lda;
        if (apack) {
            /* apack (32, k64) = the block's rows, zero past k and past `rows` (rows past the
               block's end feed only outputs that are not stored) */
            for (int i = 0; i < rows; i++) {
                memcpy(apack + i * k64, a + (r + i) * lda, (size_t)k);
                memset(apack + i * k64 + k, 0, (size_t)(k64 - k));
            }
            if (rows < BLOCK)
                memset(apack + rows * k64, 0, (size_t)((BLOCK - rows) * k64));
            ablock = apack;
            ld = k64;
        }
        for (int64_t j = 0; j < n; j += BLOCK) {
            int cols = n - j < BLOCK ? (int)(n - j) : BLOCK;
            const int8_t *wcol = w + j * 4, *tcol = wtail ? wtail + j * 4 : NULL;
            int two_rows = rows > 16, two_cols = cols > 16;
            if (two_rows && two_cols)
                tiles_2x2(acc, ablock, ld, k64, wcol, tcol, ldw, 1, 1);
            else if (two_rows)
                tiles_2x2(acc, ablock, ld, k64, wcol, tcol, ldw, 1, 0);
            else if (two_cols)
                tiles_2x2(acc, ablock, ld, k64, wcol, tcol, ldw, 0, 1);
            else
                tiles_2x2(acc, ablock, ld, k64, wcol, tcol, ldw, 0, 0);
            store_block(e, r, j, rows, cols, acc);
        }
    }
}
#endif
