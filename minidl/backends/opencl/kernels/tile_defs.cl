// The tunables and derived sizes of the GPU-shaped ("tiled") kernels: gemm_tiled.cl and
// conv_tiled.cl include this, then tile_body.cl inside their kernels. gemm.py passes the
// values of a parameter set (TILED_DEFAULT, the tuner's candidates) as -D defines.

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
#define WPTM 4      // rows of C per work-item (register block)
#endif
#ifndef WPTN
#define WPTN 4      // columns of C per work-item
#endif
#ifndef VWN
#define VWN 4       // vector width of the global B loads: 1, 2, 4, 8 or 16, dividing TSN
#endif

#define RTSM (TSM / WPTM)        // work-group extent along M
#define RTSN (TSN / WPTN)        // work-group extent along N
#define THREADS (RTSM * RTSN)    // work-items per work-group
#define BVECS (TSN / VWN)        // vectors per row of the B slice

// CAT comes from common.cl
#if VWN == 1
#define LOAD_B(p) (*(p))
#define STORE_B(v, p) (*(p) = (v))
#else
#define LOAD_B(p) CAT(vload, VWN)(0, p)
#define STORE_B(v, p) CAT(vstore, VWN)(v, 0, p)
#endif

// In tile_body.cl: tile[kk][e] = LOAD(origin + e, k0 + kk) for the TSK x EXTENT slice of an
// operand, spread over the work-group, neighbouring work-items walking k when K_FASTEST (a
// constant: the compiler folds the choice), else e; what lies past `limit` or g_end is 0
#define STAGE_TILE(tile, EXTENT, K_FASTEST, origin, limit, LOAD)                \
    for (int l = tid; l < TSK * EXTENT; l += THREADS) {                        \
        const int kk = (K_FASTEST) ? l % TSK : l / EXTENT;                     \
        const int e = (K_FASTEST) ? l / TSK : l % EXTENT;                      \
        const int index = (origin) + e, k = k0 + kk;                           \
        tile[kk][e] = (index < (limit) && k < g_end) ? LOAD(index, k) : 0.0f;  \
    }

// After tile_body.cl: STORE(i, j, value) for each of the work-item's WPTM x WPTN results that
// lies inside the M x N product (constant trip counts: the compiler unrolls these loops)
#define STORE_RESULTS(STORE)                                   \
    for (int wm = 0; wm < WPTM; ++wm) {                        \
        const int i_ = i0 + tm + wm * RTSM;                    \
        if (i_ >= M) break;                                    \
        for (int wn = 0; wn < WPTN; ++wn) {                    \
            const int j_ = j0 + tn + wn * RTSN;                \
            if (j_ >= N) break;                                \
            STORE(i_, j_, acc[wm][wn]);                        \
        }                                                      \
    }
