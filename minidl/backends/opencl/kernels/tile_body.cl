// The work-group tile product of the GPU-shaped ("tiled") kernels, included (runtime.py's
// expand_includes) inside the body of gemm_tiled.cl's and conv_tiled.cl's kernels.
// Each work-group computes a TSM x TSN tile of a product C (M, N) = op(A) (M, K) @ op(B) (K, N)
// over k in [k_begin, k_end), staging TSK-deep slices of A and B in local memory; each
// work-item accumulates WPTM x WPTN results in registers, strided by the work-group's extent
// (RTSM, RTSN) so that neighbouring work-items read neighbouring local words and store
// neighbouring columns of C (coalesced). A tile's loads are spread over all its work-items, in
// the order that makes neighbouring work-items read neighbouring global addresses.
// Global memory per k slice: TSK * (TSM + TSN) floats for 2 * TSM * TSN * TSK flops, so
// 2 (TSM + TSN) / (TSM TSN) bytes per flop (1/16 at 64 x 64; traffic.py holds the formulas).
// Local memory: 4 * TSK * (TSM + TSN + 2) bytes (gemm.check_params checks it against the device).
//
// What the including kernel provides:
//   variables  M, N (the product's extent), k_begin, k_end (the k range it sums)
//   A_AT_TILE(i, k)  op(A)(i, k), called only for i < M and k_begin <= k < g_end
//   A_K_FASTEST      1 when A is contiguous along k (tile loads walk k first), 0 along i
//   B_AT_TILE(k, j)  op(B)(k, j), called only for j < N, k in range (when B_ROW is undefined)
//   B_K_FASTEST      as A_K_FASTEST, for B (used when B_ROW is undefined)
//   B_ROW(k)         optional: a pointer to row k of a row-major B, loaded in vectors of VWN
//   K_GROUP, ROW_SKIPS(i, g)  optional: k runs in groups of K_GROUP (each slice within one
//                    group), and row i leaves out group g (its first k) entirely when
//                    ROW_SKIPS(i, g): not even 0 * inf = NaN reaches it (the input gradient of
//                    a convolution, where a tap that misses every output pixel adds nothing)
// What it leaves: acc[WPTM][WPTN] (acc[wm][wn] is C(i0 + tm + wm * RTSM, j0 + tn + wn * RTSN)),
// and i0, j0, tm, tn. Launch: local size (RTSN, RTSM, 1), one work-group per tile, the
// group's id (1, 0) its tile row and column; the kernels use id 2 for split-K slices.

#define A_AT_TILE_IK(i, k) A_AT_TILE(i, k)
#define B_AT_TILE_JK(j, k) B_AT_TILE(k, j)
    const int tn = get_local_id(0), tm = get_local_id(1);
    const int tid = tm * RTSN + tn;
    const int i0 = get_group_id(1) * TSM, j0 = get_group_id(0) * TSN;
    // +1: a column walk (k fastest) then hits a different bank for each neighbouring work-item
    __local float a_tile[TSK][TSM + 1];   // a_tile[kk][m] = op(A)(i0 + m, k0 + kk)
    __local float b_tile[TSK][TSN + 1];   // b_tile[kk][n] = op(B)(k0 + kk, j0 + n)

    float acc[WPTM][WPTN];
    #pragma unroll
    for (int wm = 0; wm < WPTM; ++wm)
        #pragma unroll
        for (int wn = 0; wn < WPTN; ++wn) acc[wm][wn] = 0.0f;

#ifndef K_GROUP
#define K_GROUP (k_end - k_begin)   // one group: the whole k range
#define TILE_BODY_GROUP_DEFAULT
#endif
    for (int g0 = k_begin; g0 < k_end; g0 += K_GROUP) {
      const int g_end = min(k_end, g0 + K_GROUP);
#ifdef ROW_SKIPS
      int row_used[WPTM];
      #pragma unroll
      for (int wm = 0; wm < WPTM; ++wm) row_used[wm] = !ROW_SKIPS(i0 + tm + wm * RTSM, g0);
#endif
      for (int k0 = g0; k0 < g_end; k0 += TSK) {
        STAGE_TILE(a_tile, TSM, A_K_FASTEST, i0, M, A_AT_TILE_IK)
#ifdef B_ROW
        for (int l = tid; l < TSK * BVECS; l += THREADS) {
            const int nv = l % BVECS, kk = l / BVECS;
            const int j = j0 + nv * VWN, k = k0 + kk;
            __local float *dst = &b_tile[kk][nv * VWN];
            if (k < g_end && j + VWN <= N) {
                STORE_B(LOAD_B(B_ROW(k) + j), dst);
            } else {  // past the last row or column of B: what is missing reads as zero
                for (int e = 0; e < VWN; ++e)
                    dst[e] = (k < g_end && j + e < N) ? B_ROW(k)[j + e] : 0.0f;
            }
        }
#else
        STAGE_TILE(b_tile, TSN, B_K_FASTEST, j0, N, B_AT_TILE_JK)
#endif
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int kk = 0; kk < TSK; ++kk) {
            float b_reg[WPTN];
            #pragma unroll
            for (int wn = 0; wn < WPTN; ++wn) b_reg[wn] = b_tile[kk][tn + wn * RTSN];
            #pragma unroll
            for (int wm = 0; wm < WPTM; ++wm) {
#ifdef ROW_SKIPS
                if (!row_used[wm]) continue;
#endif
                const float av = a_tile[kk][tm + wm * RTSM];
                #pragma unroll
                for (int wn = 0; wn < WPTN; ++wn) acc[wm][wn] = MAD(av, b_reg[wn], acc[wm][wn]);
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
      }
    }
#undef A_AT_TILE_IK
#undef B_AT_TILE_JK
#ifdef TILE_BODY_GROUP_DEFAULT
#undef K_GROUP
#undef TILE_BODY_GROUP_DEFAULT
#endif
