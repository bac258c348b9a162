/* AVX2 + FMA micro-kernel, 6 x 16: 12 ymm accumulators, 2 for the B row and one
   broadcast of A, out of the 16 ymm registers. */

#if defined(__x86_64__) || defined(__i386__)
#if defined(__clang__) // clang ignores GCC's pragma; its own applies to every function below
#pragma clang attribute push(__attribute__((target("avx2,fma"))), apply_to = function)
#else
#pragma GCC target("avx2,fma")
#endif
#include <immintrin.h>

#include "internal/gemm_kernels.h"

enum { MR = SGEMM_AVX2_MR, NR = SGEMM_AVX2_NR };

/* acc[i] += a_i * b row p, for the MR values a_i of column p of A. */
static inline __attribute__((always_inline)) void rank1_update(__m256 acc[MR][2], const float *bp,
                                                                const float a_col[MR])
{
    __m256 b0 = _mm256_load_ps(bp);
    __m256 b1 = _mm256_load_ps(bp + 8);
#pragma GCC unroll 6
    for (int i = 0; i < MR; i++) {
        __m256 ai = _mm256_broadcast_ss(a_col + i);
        acc[i][0] = _mm256_fmadd_ps(ai, b0, acc[i][0]);
        acc[i][1] = _mm256_fmadd_ps(ai, b1, acc[i][1]);
    }
}

void sgemm_ukernel_avx2_6x16(int kc, const float *a, ptrdiff_t rs_a, ptrdiff_t cs_a,
                             const float *b, float *c, ptrdiff_t ldc, float beta)
{
    __m256 acc[MR][2];
#pragma GCC unroll 6
    for (int i = 0; i < MR; i++) {
        acc[i][0] = _mm256_setzero_ps();
        acc[i][1] = _mm256_setzero_ps();
    }
    if (rs_a == 1) { // columns of A are contiguous (packed: cs_a == MR)
#pragma GCC unroll 2
        for (int p = 0; p < kc; p++)
            rank1_update(acc, b + p * NR, a + p * cs_a);
    } else { // rows of A are contiguous (cs_a == 1): gather column p from MR rows
        const float *a0 = a, *a3 = a + 3 * rs_a;
        const ptrdiff_t r = rs_a;
        for (int p = 0; p < kc; p++, a0++, a3++) {
            const float a_col[MR] = {a0[0], a0[r], a0[2 * r], a3[0], a3[r], a3[2 * r]};
            rank1_update(acc, b + p * NR, a_col);
        }
    }
    if (beta == 0.0f) {
#pragma GCC unroll 6
        for (int i = 0; i < MR; i++) {
            _mm256_storeu_ps(c + i * ldc, acc[i][0]);
            _mm256_storeu_ps(c + i * ldc + 8, acc[i][1]);
        }
    } else {
        __m256 vb = _mm256_set1_ps(beta);
#pragma GCC unroll 6
        for (int i = 0; i < MR; i++) {
            float *ci = c + i * ldc; // ci is (NR,)
            _mm256_storeu_ps(ci, _mm256_fmadd_ps(vb, _mm256_loadu_ps(ci), acc[i][0]));
            _mm256_storeu_ps(ci + 8, _mm256_fmadd_ps(vb, _mm256_loadu_ps(ci + 8), acc[i][1]));
        }
    }
}
#if defined(__clang__)
#pragma clang attribute pop
#endif
#endif
