// Convolution forward as an implicit GEMM on CPU-like devices, with the register blocking of
// gemm_direct.cl (same RM, VW, VN): out (N*OH*OW, F) = patches (N*OH*OW, KH*KW*C) @ weight
// (KH*KW*C, F) + bias, where the patch rows are read straight from x instead of from an im2col
// matrix. Each work-item takes RM consecutive output pixels and RN filters; for every kernel tap
// it points each pixel's row at the C input channels under that tap (or at a zero run when the
// tap falls in the padding), then steps through the channels like gemm_direct steps through k.
// x is (N, H, W, C); w_panels is the weight packed by gemm_direct.cl's pack_b_panels,
// (ceil(F / RN), KH*KW*C, RN); out is (N, OH, OW, F); zeros holds C zeros.
// Global size: (ceil(F / RN), ceil(N*OH*OW / RM)); any local size.
// Every loop over the RM x VN accumulators is unrolled so that they live in registers.

#ifndef RM
#define RM 8        // output pixels per work-item
#endif
#ifndef VW
#define VW 16       // vector width along the filters: 2, 4, 8 or 16
#endif
#ifndef VN
#define VN 2        // vectors per pixel: a work-item computes RN = VW * VN filters
#endif

#define RN (VW * VN)

#define CAT_(x, y) x##y
#define CAT(x, y) CAT_(x, y)
#define floatV CAT(float, VW)
#define vloadV CAT(vload, VW)
#define vstoreV CAT(vstore, VW)

// fma where the device says it is fast (every FMA-capable CPU and GPU), else mad
#ifdef FP_FAST_FMAF
#define MAD(a, b, c) fma(a, b, c)
#else
#define MAD(a, b, c) mad(a, b, c)
#endif

__kernel void conv_direct(__global float * restrict out, __global const float * restrict x,
                          __global const float * restrict w_panels,
                          __global const float * restrict bias, const int has_bias,
                          __global const float * restrict zeros, const int H, const int W,
                          const int C, const int OH, const int OW, const int KH, const int KW,
                          const int SH, const int SW, const int PT, const int PL, const int rows,
                          const int F)
{
    const int panel = get_global_id(0);
    const int j0 = panel * RN;
    const int i0 = get_global_id(1) * RM;
    const int kkc = KH * KW * C;

    int y0[RM], x0[RM];              // top-left input position of each pixel's window
    __global const float *image[RM];  // each pixel's input image
    #pragma unroll
    for (int r = 0; r < RM; ++r) {
        const int row = min(i0 + r, rows - 1);  // a ragged last block recomputes the last pixel
        const int ox = row % OW, oy = (row / OW) % OH, b = row / (OW * OH);
        y0[r] = oy * SH - PT;
        x0[r] = ox * SW - PL;
        image[r] = x + (size_t)b * H * W * C;
    }

    floatV acc[RM][VN];
    #pragma unroll
    for (int r = 0; r < RM; ++r)
        #pragma unroll
        for (int v = 0; v < VN; ++v) acc[r][v] = (floatV)(0.0f);

    const __global float *wrow = w_panels + (size_t)panel * kkc * RN;
    for (int ky = 0; ky < KH; ++ky) {
        for (int kx = 0; kx < KW; ++kx) {
            __global const float *src[RM];
            #pragma unroll
            for (int r = 0; r < RM; ++r) {
                const int y = y0[r] + ky, xx = x0[r] + kx;
                src[r] = (y >= 0 && y < H && xx >= 0 && xx < W)
                         ? image[r] + ((size_t)y * W + xx) * C : zeros;
            }
            for (int c = 0; c < C; ++c, wrow += RN) {
                floatV wv[VN];
                #pragma unroll
                for (int v = 0; v < VN; ++v) wv[v] = vloadV(v, wrow);
                #pragma unroll
                for (int r = 0; r < RM; ++r) {
                    const floatV av = (floatV)(src[r][c]);
                    #pragma unroll
                    for (int v = 0; v < VN; ++v) acc[r][v] = MAD(av, wv[v], acc[r][v]);
                }
            }
        }
    }

    #pragma unroll
    for (int r = 0; r < RM; ++r) {
        if (i0 + r >= rows) break;
        __global float *orow = out + (size_t)(i0 + r) * F + j0;
        #pragma unroll
        for (int v = 0; v < VN; ++v) {
            const int j = j0 + v * VW;
            if (j + VW <= F) {
                vstoreV(has_bias ? acc[r][v] + vloadV(0, bias + j) : acc[r][v], v, orow);
            } else {  // the block sticks out past filter F: store lane by lane
                float lanes[VW];
                vstoreV(acc[r][v], 0, lanes);
                for (int l = 0; l < VW && j + l < F; ++l)
                    orow[v * VW + l] = lanes[l] + (has_bias ? bias[j + l] : 0.0f);
            }
        }
    }
}
