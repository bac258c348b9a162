/* Portable C micro-kernel (4 x 8): the fallback on CPUs without AVX2 and off x86.
   The compiler vectorizes the j loops with whatever the base flags allow. */

#include "internal/gemm_kernels.h"

void sgemm_ukernel_generic_4x8(int kc, const float *a, ptrdiff_t rs_a, ptrdiff_t cs_a,
                               const float *b, float *c, ptrdiff_t ldc, float beta)
{
    enum { MR = SGEMM_GENERIC_MR, NR = SGEMM_GENERIC_NR };
    float acc[MR][NR] = {{0}};
    for (int p = 0; p < kc; p++) {
        const float *bp = b + p * NR; // bp is (NR,)
        for (int i = 0; i < MR; i++) {
            float aip = a[i * rs_a + p * cs_a];
            for (int j = 0; j < NR; j++)
                acc[i][j] += aip * bp[j];
        }
    }
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
