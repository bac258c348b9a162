// Convolution forward pass and filter gradient as implicit GEMMs ("implicit" algorithm), with
// the register blocking of the direct GEMM family, gemm_direct.cl: out (N*OH*OW, F) = patches
// (N*OH*OW, KH*KW*C) @ weight (KH*KW*C, F) + bias, where the patch rows are read straight from
// x instead of from an im2col matrix. Each work-item of the forward pass takes RM consecutive
// output pixels and RN filters; for every kernel tap it points each pixel's row at the C input
// channels under that tap (or at a zero run when the tap falls in the padding), then steps
// through the channels like gemm_direct steps through k.
// Every loop over the RM x VN accumulators is unrolled so that they live in registers.
// The window geometry (H, W, C, OH, OW, KH, KW, SH, SW, PT, PL) is the backend's Window2D plan.

// The tunables are the direct GEMM family's, documented in gemm_direct.cl and passed with the
// same values (conv.py builds this file with Gemm.direct_defines()).
#if !defined(RM) || !defined(VW) || !defined(VN)
#error "conv_implicit.cl needs RM, VW and VN: the direct GEMM family's register blocks"
#endif

#define RN (VW * VN)  // filters per work-item
// floatV, vloadV, vstoreV (width VW) and MAD come from common.cl

// out (N, OH, OW, F); x (N, H, W, C); w_panels is the weight (KH*KW*C, F) packed by
// gemm_direct.cl's pack_b_panels, (ceil(F / RN), KH*KW*C, RN); bias (F,) when has_bias;
// zeros holds C zeros. Global size: (ceil(F / RN), ceil(N*OH*OW / RM)); any local size.
__kernel void conv2d_forward_implicit(__global float * restrict out,
                                      __global const float * restrict x,
                                      __global const float * restrict w_panels,
                                      __global const float * restrict bias, const int has_bias,
                                      __global const float * restrict zeros, const int H,
                                      const int W, const int C, const int OH, const int OW,
                                      const int KH, const int KW, const int SH, const int SW,
                                      const int PT, const int PL, const int rows, const int F)
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

// Filter gradient: dweight (KH*KW*C, F) = patches^T @ dout, summed over the N*OH*OW output
// pixels, the patches read straight from x. Each work-item takes RM consecutive rows (kernel
// tap, channel) of dweight and RN filters, and sums over the pixels
// [slice * rows_per_slice, (slice + 1) * rows_per_slice) of its slice z into
// dweight + z * slice_stride (gemm_util.cl's gemm_sum_slices adds the slices up).
// dout(pixel, j) = b[panel * b_panel_stride + pixel * ldb + j - panel * RN]: dout itself
// (ldb = F, b_panel_stride = RN) when F is a multiple of RN, else dout packed by pack_b_panels.
// x is (N, H, W, C); zeros holds at least RM zeros; kkc = KH*KW*C. KH is not passed: an unused
// argument measurably slowed this kernel on PoCL (2%), as did a store helper shared with the
// forward pass, so the two keep their own stores.
// Global size: (ceil(F / RN), ceil(KH*KW*C / RM), slices).
__kernel void conv2d_backward_filter_implicit(__global float * restrict dweight,
                                              __global const float * restrict b, const int ldb,
                                              const int b_panel_stride,
                                              __global const float * restrict x,
                                              __global const float * restrict zeros,
                                              const int H, const int W, const int C,
                                              const int OH, const int OW, const int KW,
                                              const int SH, const int SW, const int PT,
                                              const int PL, const int kkc,
                                              const int F, const int rows,
                                              const int rows_per_slice, const int slice_stride)
{
    const int panel = get_global_id(0);
    const int j0 = panel * RN;
    const int i0 = get_global_id(1) * RM;
    const int first = get_global_id(2) * rows_per_slice;
    const int last = min(rows, first + rows_per_slice);
    dweight += get_global_id(2) * slice_stride;

    // each dweight row's kernel tap (ky, kx) and channel; a ragged last block repeats row kkc-1
    int ky[RM], kx[RM], offset[RM];
    #pragma unroll
    for (int r = 0; r < RM; ++r) {
        const int i = min(i0 + r, kkc - 1);
        const int tap = i / C;
        ky[r] = tap / KW;
        kx[r] = tap % KW;
        offset[r] = (ky[r] * W + kx[r]) * C + i % C;  // from the window's top-left element
    }
    // the fast case: all RM rows under one tap, so one bounds check per pixel
    const int one_tap = ky[0] == ky[RM - 1] && kx[0] == kx[RM - 1] && i0 + RM <= kkc;

    floatV acc[RM][VN];
    #pragma unroll
    for (int r = 0; r < RM; ++r)
        #pragma unroll
        for (int v = 0; v < VN; ++v) acc[r][v] = (floatV)(0.0f);

    int ox = first % OW, oy = (first / OW) % OH, n = first / (OW * OH);
    const __global float *brow = b + (size_t)panel * b_panel_stride + (size_t)first * ldb;
    for (int pixel = first; pixel < last; ++pixel, brow += ldb) {
        const int y0 = oy * SH - PT, x0 = ox * SW - PL;
        // window origin; may lie outside the image, only in-bounds taps are read
        const __global float *window = x + ((long)(n * H + y0) * W + x0) * C;
        floatV bv[VN];
        #pragma unroll
        for (int v = 0; v < VN; ++v) bv[v] = vloadV(v, brow);
        if (one_tap) {
            const int y = y0 + ky[0], xx = x0 + kx[0];
            const __global float *ap = (y >= 0 && y < H && xx >= 0 && xx < W)
                                       ? window + offset[0] : zeros;
            #pragma unroll
            for (int r = 0; r < RM; ++r) {
                const floatV av = (floatV)(ap[r]);
                #pragma unroll
                for (int v = 0; v < VN; ++v) acc[r][v] = MAD(av, bv[v], acc[r][v]);
            }
        } else {
            #pragma unroll
            for (int r = 0; r < RM; ++r) {
                const int y = y0 + ky[r], xx = x0 + kx[r];
                const float a = (y >= 0 && y < H && xx >= 0 && xx < W) ? window[offset[r]] : 0.0f;
                const floatV av = (floatV)(a);
                #pragma unroll
                for (int v = 0; v < VN; ++v) acc[r][v] = MAD(av, bv[v], acc[r][v]);
            }
        }
        if (++ox == OW) {
            ox = 0;
            if (++oy == OH) {
                oy = 0;
                ++n;
            }
        }
    }

    #pragma unroll
    for (int r = 0; r < RM; ++r) {
        if (i0 + r >= kkc) break;
        __global float *drow = dweight + (size_t)(i0 + r) * F + j0;
        #pragma unroll
        for (int v = 0; v < VN; ++v) {
            const int j = j0 + v * VW;
            if (j + VW <= F) {
                vstoreV(acc[r][v], v, drow);
            } else {  // the block sticks out past filter F: store lane by lane
                float lanes[VW];
                vstoreV(acc[r][v], 0, lanes);
                for (int l = 0; l < VW && j + l < F; ++l) drow[v * VW + l] = lanes[l];
            }
        }
    }
}
