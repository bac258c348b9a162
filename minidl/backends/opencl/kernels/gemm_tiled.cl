// SGEMM for GPU-like devices ("tiled" family): each work-group computes a TSM x TSN tile of C,
// staging TSK-deep slices of op(A) and B in local memory; each work-item accumulates
// WPTM x WPTN results in registers, strided by the work-group's extent so that neighbouring
// work-items touch neighbouring local-memory words. B is read from global memory in vectors of VWN.
// C (M, N) = alpha * op(A) (M, K) @ B (K, N) + beta * C.
// Any M, N, K: tiles that stick out past C load zeros for the missing rows, columns and k and
// store only what lies inside C.
// Global size: (ceil(N / TSN) * RTSN, ceil(M / TSM) * RTSM); local size (RTSN, RTSM).
// The loops over the WPTM x WPTN accumulators are unrolled so that they stay in registers.

#ifndef TSM
#define TSM 64      // rows of the C tile of a work-group
#endif
#ifndef TSN
#define TSN 64      // columns of the C tile
#endif
#ifndef TSK
#define TSK 16      // depth of the k slice held in local memory
#endif
#ifndef WPTM
#define WPTM 4      // rows of C per work-item
#endif
#ifndef WPTN
#define WPTN 4      // columns of C per work-item
#endif
#ifndef VWN
#define VWN 4       // vector width of the global B loads: 1, 2, 4, 8 or 16, dividing TSN
#endif
#ifndef TRANS_A
#define TRANS_A 0   // 1: a is stored (K, M) and op(A) = a.T
#endif

#define RTSM (TSM / WPTM)        // work-group extent along M
#define RTSN (TSN / WPTN)        // work-group extent along N
#define THREADS (RTSM * RTSN)    // work-items per work-group
#define BVECS (TSN / VWN)        // vectors per row of the B slice

// CAT, MAD and A_AT come from common.cl
#if VWN == 1
#define floatB float
#define LOAD_B(p) (*(p))
#define STORE_B(v, p) (*(p) = (v))
#else
#define floatB CAT(float, VWN)
#define LOAD_B(p) CAT(vload, VWN)(0, p)
#define STORE_B(v, p) CAT(vstore, VWN)(v, 0, p)
#endif

// c is (M, ldc); a is (M, lda) or, with TRANS_A, (K, lda); b is (K, ldb)
__kernel __attribute__((reqd_work_group_size(RTSN, RTSM, 1)))
void gemm_tiled(__global float *c, __global const float *a, __global const float *b,
                const int M, const int N, const int K, const int lda, const int ldb,
                const int ldc, const float alpha, const float beta)
{
    const int tn = get_local_id(0), tm = get_local_id(1);
    const int tid = tm * RTSN + tn;
    const int i0 = get_group_id(1) * TSM, j0 = get_group_id(0) * TSN;
    __local float a_tile[TSK][TSM];   // a_tile[kk][m] = op(A)(i0 + m, k0 + kk)
    __local float b_tile[TSK][TSN];   // b_tile[kk][n] = B(k0 + kk, j0 + n)

    float acc[WPTM][WPTN];
    #pragma unroll
    for (int wm = 0; wm < WPTM; ++wm)
        #pragma unroll
        for (int wn = 0; wn < WPTN; ++wn) acc[wm][wn] = 0.0f;

    for (int k0 = 0; k0 < K; k0 += TSK) {
        for (int l = tid; l < TSK * TSM; l += THREADS) {
#if TRANS_A
            const int m = l % TSM, kk = l / TSM;  // neighbouring work-items read along m
#else
            const int kk = l % TSK, m = l / TSK;  // neighbouring work-items read along k
#endif
            a_tile[kk][m] = (k0 + kk < K && i0 + m < M) ? A_AT(i0 + m, k0 + kk) : 0.0f;
        }
        for (int l = tid; l < TSK * BVECS; l += THREADS) {
            const int nv = l % BVECS, kk = l / BVECS;
            const int j = j0 + nv * VWN;
            __local float *dst = &b_tile[kk][nv * VWN];
            if (k0 + kk < K && j + VWN <= N) {
                STORE_B(LOAD_B(b + (k0 + kk) * ldb + j), dst);
            } else {  // past the last row or column of B: what is missing reads as zero
                for (int e = 0; e < VWN; ++e)
                    dst[e] = (k0 + kk < K && j + e < N) ? b[(k0 + kk) * ldb + j + e] : 0.0f;
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int kk = 0; kk < TSK; ++kk) {
            float b_reg[WPTN];
            #pragma unroll
            for (int wn = 0; wn < WPTN; ++wn) b_reg[wn] = b_tile[kk][tn + wn * RTSN];
            #pragma unroll
            for (int wm = 0; wm < WPTM; ++wm) {
                const float av = a_tile[kk][tm + wm * RTSM];
                #pragma unroll
                for (int wn = 0; wn < WPTN; ++wn) acc[wm][wn] = MAD(av, b_reg[wn], acc[wm][wn]);
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }

    #pragma unroll
    for (int wm = 0; wm < WPTM; ++wm) {
        const int i = i0 + tm + wm * RTSM;
        if (i >= M) break;
        __global float *crow = c + i * ldc;
        #pragma unroll
        for (int wn = 0; wn < WPTN; ++wn) {
            const int j = j0 + tn + wn * RTSN;
            if (j >= N) break;
            const float result = alpha * acc[wm][wn];
            crow[j] = beta != 0.0f ? result + beta * crow[j] : result;
        }
    }
}
