/* AVX2 + FMA micro-kernel, 6 x 16: 12 ymm accumulators, 2 for the B row and one
   broadcast of A, out of the 16 ymm registers. */

#if defined(__x86_64__) || defined(__i386__)
#pragma GCC target("avx2,fma")
#include <immintrin.h>

#include "internal/gemm_kernels.h"

void sgemm_ukernel_avx2_6x16(int kc, const float *a, const float *b, float *c, ptrdiff_t ldc, float beta)
{
    enum { MR = SGEMM_AVX2_MR, NR = SGEMM_AVX2_NR };
    __m256 acc[MR][2];
#pragma GCC unroll 6
    for (int i = 0; i < MR; i++) {
        acc[i][0] = _mm256_setzero_ps();
        acc[i][1] = _mm256_setzero_ps();
    }
#pragma GCC unroll 2
    for (int p = 0; p < kc; p++) {
        __m256 b0 = _mm256_load_ps(b + p * NR);
        __m256 b1 = _mm256_load_ps(b + p * NR + 8);
        const float *ap = a + p * MR; // ap is (MR,)
#pragma GCC unroll 6
        for (int i = 0; i < MR; i++) {
            __m256 ai = _mm256_broadcast_ss(ap + i);
            acc[i][0] = _mm256_fmadd_ps(ai, b0, acc[i][0]);
            acc[i][1] = _mm256_fmadd_ps(ai, b1, acc[i][1]);
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
#endif
