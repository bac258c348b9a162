// SGEMM for CPU-like devices ("direct" family): no local memory. Each work-item accumulates an
// RM x (VW * VN) block of C in vector registers, reading RM scalars of op(A) and VN vectors of B
// per step along k. C (M, N) = alpha * op(A) (M, K) @ B (K, N) + beta * C.
// B is read packed in column panels, (ceil(N / RN), K, RN) zero-padded (pack_b_panels below), so
// that each work-item streams its panel from consecutive addresses (measured +20% on PoCL over
// reading rows of B, which lie ldb floats apart); a B of exactly RN columns is already packed.
// Rows: the backend launches it on the first (M / RM) * RM rows, then once more built with
// RM = 1 on the leftover rows (from row0). Columns: the last block may stick out past the N
// columns of C; its extra columns (zeros in the padded panel) are not stored.
// Global size: (ceil(N / RN), rows / RM, slices); any local size.
// Every loop over the RM x VN accumulators is unrolled so that they live in registers: left
// rolled, PoCL keeps them in memory and runs 3x slower (measured).
// Split-K: work-items with global id z = s only sum k in [s * k_slice, (s + 1) * k_slice) and
// write to c + s * c_slice_stride; gemm_util.cl's gemm_sum_slices adds the slices up. Without a
// split, k_slice = K, c_slice_stride = 0 and the launch is two-dimensional.

#ifndef RM
#define RM 8        // rows of C per work-item
#endif
#ifndef VW
#define VW 16       // vector width of the B loads and of the accumulators: 2, 4, 8 or 16
#endif
#ifndef VN
#define VN 2        // vectors per row of the block
#endif
#ifndef TRANS_A
#define TRANS_A 0   // 1: a is stored (K, M) and op(A) = a.T
#endif

#define RN (VW * VN)  // columns of C per work-item
// floatV, vloadV, vstoreV (width VW), MAD and A_AT come from common.cl

// c is (M, ldc) with N valid columns; a is (M, lda) or, with TRANS_A, (K, lda);
// b_panels is (ceil(N / RN), K, RN)
__kernel void gemm_direct(__global float * restrict c, __global const float * restrict a,
                          __global const float * restrict b_panels, const int row0, const int N,
                          const int K, const int lda, const int ldc, const float alpha,
                          const float beta,
                          const int k_slice, const int c_slice_stride)
{
    const int j0 = get_global_id(0) * RN;
    const int i0 = row0 + get_global_id(1) * RM;
    const int k_begin = get_global_id(2) * k_slice;
    const int k_end = min(K, k_begin + k_slice);
    c += get_global_id(2) * c_slice_stride;
    floatV acc[RM][VN];
    #pragma unroll
    for (int r = 0; r < RM; ++r)
        #pragma unroll
        for (int v = 0; v < VN; ++v) acc[r][v] = (floatV)(0.0f);

    const __global float *brow = b_panels + ((size_t)get_global_id(0) * K + k_begin) * RN;
    for (int k = k_begin; k < k_end; ++k, brow += RN) {
        floatV bv[VN];
        #pragma unroll
        for (int v = 0; v < VN; ++v) bv[v] = vloadV(v, brow);
        #pragma unroll
        for (int r = 0; r < RM; ++r) {
            const floatV av = (floatV)(A_AT(i0 + r, k));
            #pragma unroll
            for (int v = 0; v < VN; ++v) acc[r][v] = MAD(av, bv[v], acc[r][v]);
        }
    }

    // C is not read when beta == 0 (it may hold garbage, NaN included)
    #pragma unroll
    for (int r = 0; r < RM; ++r) {
        __global float *crow = c + (size_t)(i0 + r) * ldc + j0;
        #pragma unroll
        for (int v = 0; v < VN; ++v) {
            const floatV result = alpha * acc[r][v];
            if (j0 + (v + 1) * VW <= N) {
                vstoreV(beta != 0.0f ? result + beta * vloadV(v, crow) : result, v, crow);
            } else {  // the block sticks out past column N: store lane by lane
                float lanes[VW];
                vstoreV(result, 0, lanes);
                for (int l = 0; l < VW && j0 + v * VW + l < N; ++l) {
                    __global float *cp = crow + v * VW + l;
                    *cp = beta != 0.0f ? lanes[l] + beta * *cp : lanes[l];
                }
            }
        }
    }
}

// b_panels (ceil(n / RN), k, RN) = b (k, n) cut into panels of RN columns, the last one
// zero-padded; one work-item per row of b
__kernel void pack_b_panels(__global float * restrict b_panels, __global const float * restrict b,
                            const int k, const int n)
{
    const int row = get_global_id(0);
    if (row >= k) return;
    const int panels = (n + RN - 1) / RN;
    __global const float *src = b + (size_t)row * n;
    for (int p = 0; p < panels; ++p) {
        __global float *dst = b_panels + ((size_t)p * k + row) * RN;
        for (int j = 0; j < RN; ++j) dst[j] = p * RN + j < n ? src[p * RN + j] : 0.0f;
    }
}
