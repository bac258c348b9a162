/* Portable C micro-kernel (4 x 8): the fallback on CPUs without AVX2 and off x86.
   Each row of the tile has its own accumulator array, so the compiler keeps them in
   registers and vectorizes along j with whatever the base flags allow (one array of
   MR x NR led it to vectorize along p with emulated gathers, 3x slower). */

#include "internal/gemm_kernels.h"

enum { MR = SGEMM_GENERIC_MR, NR = SGEMM_GENERIC_NR };

/* acc (NR,) += a_ip * b row p (NR,) */
static inline void axpy_row(float acc[NR], float a_ip, const float *bp)
{
    for (int j = 0; j < NR; j++)
        acc[j] += a_ip * bp[j];
}

void sgemm_ukernel_generic_4x8(int kc, const float *a, ptrdiff_t rs_a, ptrdiff_t cs_a,
                               const float *b, float *c, ptrdiff_t ldc, float beta)
{
    float acc0[NR] = {0}, acc1[NR] = {0}, acc2[NR] = {0}, acc3[NR] = {0};
    const float *a0 = a, *a1 = a + rs_a, *a2 = a + 2 * rs_a, *a3 = a + 3 * rs_a; // rows of A
    for (int p = 0; p < kc; p++) {
        const float *bp = b + p * NR; // bp is (NR,)
        const ptrdiff_t o = p * cs_a;
        axpy_row(acc0, a0[o], bp);
        axpy_row(acc1, a1[o], bp);
        axpy_row(acc2, a2[o], bp);
        axpy_row(acc3, a3[o], bp);
    }
    float *const acc[MR] = {acc0, acc1, acc2, acc3};
    for (int i = 0; i < MR; i++) {
        float *ci = c + i * ldc; // ci is (NR,)
        if (beta == 0.0f)
            for (int j = 0; j < NR; j++)
                ci[j] = acc[i][j];
        else
            for (int j = 0; j < NR; j++)
                ci[j] = beta * ci[j] + acc[i][j];
    }
}
