/* AVX-512 micro-kernel, 12 x 32: 24 zmm accumulators, 2 for the B row and one
   broadcast of A, out of the 32 zmm registers. 24 independent FMA chains hide
   the FMA latency on two FMA pipes. */

#if defined(__x86_64__) || defined(__i386__)
#if defined(__clang__) // clang ignores GCC's pragma; its own applies to every function below
#pragma clang attribute push(__attribute__((target("avx512f,avx512vl,avx512dq,avx512bw"))), apply_to = function)
#else
#pragma GCC target("avx512f,avx512vl,avx512dq,avx512bw")
#endif
#include <immintrin.h>

#include "internal/gemm_kernels.h"

enum { MR = SGEMM_AVX512_MR, NR = SGEMM_AVX512_NR };

/* acc[i] += a_i * b row p, for the MR values a_i of column p of A. */
static inline __attribute__((always_inline)) void rank1_update(__m512 acc[MR][2], const float *bp,
                                                                const float a_col[MR])
{
    __m512 b0 = _mm512_load_ps(bp);
    __m512 b1 = _mm512_load_ps(bp + 16);
#pragma GCC unroll 12
    for (int i = 0; i < MR; i++) {
        __m512 ai = _mm512_set1_ps(a_col[i]);
        acc[i][0] = _mm512_fmadd_ps(ai, b0, acc[i][0]);
        acc[i][1] = _mm512_fmadd_ps(ai, b1, acc[i][1]);
    }
}

void sgemm_ukernel_avx512_12x32(int kc, const float *a, ptrdiff_t rs_a, ptrdiff_t cs_a,
                                const float *b, float *c, ptrdiff_t ldc, float beta)
{
    __m512 acc[MR][2];
#pragma GCC unroll 12
    for (int i = 0; i < MR; i++) {
        acc[i][0] = _mm512_setzero_ps();
        acc[i][1] = _mm512_setzero_ps();
    }
    for (int i = 0; i < MR; i++) { // the C tile is touched last: fetch it while we compute
        _mm_prefetch((const char *)(c + i * ldc), _MM_HINT_T0);
        _mm_prefetch((const char *)(c + i * ldc + 16), _MM_HINT_T0);
    }
    if (rs_a == 1) { // columns of A are contiguous (packed: cs_a == MR)
#pragma GCC unroll 2
        for (int p = 0; p < kc; p++)
            rank1_update(acc, b + p * NR, a + p * cs_a);
    } else { // rows of A are contiguous (cs_a == 1): gather column p from MR rows
        const float *a0 = a, *a4 = a + 4 * rs_a, *a8 = a + 8 * rs_a;
        const ptrdiff_t r = rs_a, r3 = 3 * rs_a;
        for (int p = 0; p < kc; p++, a0++, a4++, a8++) {
            const float a_col[MR] = {a0[0], a0[r], a0[2 * r], a0[r3], a4[0], a4[r],
                                     a4[2 * r], a4[r3], a8[0], a8[r], a8[2 * r], a8[r3]};
            rank1_update(acc, b + p * NR, a_col);
        }
    }
    if (beta == 0.0f) {
#pragma GCC unroll 12
        for (int i = 0; i < MR; i++) {
            _mm512_storeu_ps(c + i * ldc, acc[i][0]);
            _mm512_storeu_ps(c + i * ldc + 16, acc[i][1]);
        }
    } else {
        __m512 vb = _mm512_set1_ps(beta);
#pragma GCC unroll 12
        for (int i = 0; i < MR; i++) {
            float *ci = c + i * ldc; // ci is (NR,)
            _mm512_storeu_ps(ci, _mm512_fmadd_ps(vb, _mm512_loadu_ps(ci), acc[i][0]));
            _mm512_storeu_ps(ci + 16, _mm512_fmadd_ps(vb, _mm512_loadu_ps(ci + 16), acc[i][1]));
        }
    }
}
#if defined(__clang__)
#pragma clang attribute pop
#endif
#endif
