// Convolutions for GPUs (the GPU profile's): forward pass, input gradient and filter gradient as
// implicit GEMMs with the work-group tiles of tile_body.cl. No im2col matrix: each tile load
// computes which input pixel and channel (or zero, in the padding) its element is. Every
// geometry (the 3-channel first layer, 1x1, strided, padded) runs here, on the device.
// The window geometry (H, W, C, OH, OW, KH, KW, SH, SW, PT, PL) is the backend's Window2D plan;
// x is (N, H, W, C), dout (N, OH, OW, F), weight (KH, KW, C, F), all NHWC / HWIO.
// Global size: (ceil(cols / TSN) * RTSN, ceil(rows / TSM) * RTSM, slices); local (RTSN, RTSM, 1).

#include "tile_defs.cl"

// x(b, oy * SH - PT + ky, ox * SW - PL + kx, c) for output pixel p = (b, oy, ox) and patch
// column q = (ky, kx, c) of the im2col matrix that is never built; 0 in the padding
float patch_at(__global const float *x, const int p, const int q, const int H, const int W,
               const int C, const int OH, const int OW, const int KW, const int SH,
               const int SW, const int PT, const int PL)
{
    const int c = q % C, tap = q / C;
    const int ox = p % OW, rest = p / OW;
    const int y = (rest % OH) * SH - PT + tap / KW, xx = ox * SW - PL + tap % KW;
    if (y < 0 || y >= H || xx < 0 || xx >= W) return 0.0f;
    return x[(((size_t)(rest / OH) * H + y) * W + xx) * C + c];
}

// out (N*OH*OW, F) = patches (N*OH*OW, KH*KW*C) @ weight (KH*KW*C, F) + bias (when has_bias)
#define A_AT_TILE(i, k) patch_at(x, i, k, H, W, C, OH, OW, KW, SH, SW, PT, PL)
#define A_K_FASTEST 1                     // channels are contiguous in x
#define B_ROW(k) (weight + (size_t)(k) * F)
__kernel __attribute__((reqd_work_group_size(RTSN, RTSM, 1)))
void conv2d_forward_tiled(__global float *out, __global const float *x,
                          __global const float *weight, __global const float *bias,
                          const int has_bias, const int H, const int W, const int C,
                          const int OH, const int OW, const int KH, const int KW, const int SH,
                          const int SW, const int PT, const int PL, const int rows, const int F)
{
    const int M = rows, N = F, k_begin = 0, k_end = KH * KW * C;
#include "tile_body.cl"

#define RESULT(i, j, v) out[(size_t)(i) * F + (j)] = has_bias ? (v) + bias[j] : (v)
    STORE_RESULTS(RESULT)
#undef RESULT
}
#include "tile_undef.cl"

// dout(b, oy, ox, f) where input pixel p = (b, y, x) lies under kernel tap (ky, kx) of output
// pixel (oy, ox), for column q = (ky, kx, f) of the input gradient's product; 0 where no
// output pixel puts that tap on p (off the output, or between strides)
float dout_at(__global const float *dout, const int p, const int q, const int H, const int W,
              const int F, const int OH, const int OW, const int KW, const int SH,
              const int SW, const int PT, const int PL)
{
    const int f = q % F, tap = q / F;
    const int xx = p % W, rest = p / W;
    const int ty = rest % H + PT - tap / KW, tx = xx + PL - tap % KW;
    if (ty < 0 || tx < 0 || ty % SH || tx % SW) return 0.0f;
    const int oy = ty / SH, ox = tx / SW;
    if (oy >= OH || ox >= OW) return 0.0f;
    return dout[(((size_t)(rest / H) * OH + oy) * OW + ox) * F + f];
}

// whether kernel tap `tap` of some output pixel lies on input pixel p = (b, y, x)
int tap_reaches(const int p, const int tap, const int H, const int W, const int OH,
                const int OW, const int KW, const int SH, const int SW, const int PT,
                const int PL)
{
    const int ty = (p / W) % H + PT - tap / KW, tx = p % W + PL - tap % KW;
    return ty >= 0 && tx >= 0 && ty % SH == 0 && tx % SW == 0 && ty / SH < OH && tx / SW < OW;
}

// dx (N*H*W, C) = scattered dout (N*H*W, KH*KW*F) @ weight rearranged (KH*KW*F, C):
// op(B)(q = (ky, kx, f), c) = weight(ky, kx, c, f), read in place (no flipped copy).
#define A_AT_TILE(i, k) dout_at(dout, i, k, H, W, F, OH, OW, KW, SH, SW, PT, PL)
#define A_K_FASTEST 1                     // filters are contiguous in dout
#define B_AT_TILE(k, j) weight[((size_t)((k) / F) * C + (j)) * F + (k) % F]
#define B_K_FASTEST 1                     // ... and in weight
#define K_GROUP F                         // one kernel tap: F filters
#define ROW_SKIPS(i, k) !tap_reaches(i, (k) / F, H, W, OH, OW, KW, SH, SW, PT, PL)
__kernel __attribute__((reqd_work_group_size(RTSN, RTSM, 1)))
void conv2d_backward_data_tiled(__global float *dx, __global const float *dout,
                                __global const float *weight, const int H, const int W,
                                const int C, const int OH, const int OW, const int KH,
                                const int KW, const int SH, const int SW, const int PT,
                                const int PL, const int pixels, const int F)
{
    const int M = pixels, N = C, k_begin = 0, k_end = KH * KW * F;
#include "tile_body.cl"

#define RESULT(i, j, v) dx[(size_t)(i) * C + (j)] = (v)
    STORE_RESULTS(RESULT)
#undef RESULT
}
#include "tile_undef.cl"

// dweight (KH*KW*C, F) = patches^T (KH*KW*C, N*OH*OW) @ dout (N*OH*OW, F), the pixels cut into
// split-K slices: work-group z = s sums the pixels [s * rows_per_slice, (s + 1) * rows_per_slice)
// into dweight + s * slice_stride (gemm_util.cl's gemm_sum_slices adds the slices up).
#define A_AT_TILE(i, k) patch_at(x, k, i, H, W, C, OH, OW, KW, SH, SW, PT, PL)
#define A_K_FASTEST 0                     // rows (tap, channel) are contiguous in x
#define B_ROW(k) (dout + (size_t)(k) * F)
__kernel __attribute__((reqd_work_group_size(RTSN, RTSM, 1)))
void conv2d_backward_filter_tiled(__global float *dweight, __global const float *dout,
                                  __global const float *x, const int H, const int W,
                                  const int C, const int OH, const int OW, const int KH,
                                  const int KW, const int SH, const int SW, const int PT,
                                  const int PL, const int rows, const int F,
                                  const int rows_per_slice, const int slice_stride)
{
    const int M = KH * KW * C, N = F;
    const int k_begin = get_group_id(2) * rows_per_slice;
    const int k_end = min(rows, k_begin + rows_per_slice);
    dweight += get_group_id(2) * (size_t)slice_stride;
#include "tile_body.cl"

#define RESULT(i, j, v) dweight[(size_t)(i) * F + (j)] = (v)
    STORE_RESULTS(RESULT)
#undef RESULT
}
