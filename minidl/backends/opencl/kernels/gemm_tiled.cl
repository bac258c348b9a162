// SGEMM for GPUs ("tiled" family, the GPU profile's): C (M, N) = alpha * op(A) @ op(B) + beta * C
// with the work-group tiles of tile_body.cl (local-memory staging, WPTM x WPTN register blocks
// per work-item, B loaded in vectors of VWN when it is not transposed). Both operands may be
// transposed in place, so that no training step runs an explicit transpose.
// Any M, N, K: tiles that stick out past C load zeros and store only what lies inside C.
// Global size: (ceil(N / TSN) * RTSN, ceil(M / TSM) * RTSM, slices); local (RTSN, RTSM, 1).
// Split-K: work-group z = s sums k in [s * k_slice, (s + 1) * k_slice) into c + s * c_slice_stride
// (gemm_util.cl's gemm_sum_slices adds the slices); without a split, k_slice = K and z = 0.

#include "tile_defs.cl"

#ifndef TRANS_A
#define TRANS_A 0   // 1: a is stored (K, M) and op(A) = a.T
#endif
#ifndef TRANS_B
#define TRANS_B 0   // 1: b is stored (N, K) and op(B) = b.T
#endif

#define A_AT_TILE(i, k) A_AT(i, k)      // A_AT comes from common.cl
#define A_K_FASTEST (!TRANS_A)
#if TRANS_B
#define B_AT_TILE(k, j) b[(size_t)(j) * ldb + (k)]
#define B_K_FASTEST 1
#else
#define B_ROW(k) (b + (size_t)(k) * ldb)
#endif

// c is (M, ldc); a is (M, lda) or, with TRANS_A, (K, lda); b is (K, ldb) or, with TRANS_B, (N, ldb)
__kernel __attribute__((reqd_work_group_size(RTSN, RTSM, 1)))
void gemm_tiled(__global float *c, __global const float *a, __global const float *b,
                const int M, const int N, const int K, const int lda, const int ldb,
                const int ldc, const float alpha, const float beta, const int k_slice,
                const int c_slice_stride)
{
    const int k_begin = get_group_id(2) * k_slice;
    const int k_end = min(K, k_begin + k_slice);
    c += get_group_id(2) * (size_t)c_slice_stride;
#include "tile_body.cl"

    // C is not read when beta == 0 (it may hold garbage, NaN included)
#define C_AT(i, j) c[(size_t)(i) * ldc + (j)]
#define RESULT(i, j, v) C_AT(i, j) = beta != 0.0f ? alpha * (v) + beta * C_AT(i, j) : alpha * (v)
    STORE_RESULTS(RESULT)
#undef RESULT
}
