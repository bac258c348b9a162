// Convolutions for GPUs (the GPU profile's): forward pass, input gradient and filter gradient as
// implicit GEMMs with the work-group tiles of tile_body.cl. No im2col matrix: each tile load
// computes which input pixel and channel (or zero, in the padding) its element is. Every
// geometry (the 3-channel first layer, 1x1, strided, padded) runs here, on the device.
// The window geometry (H, W, C, OH, OW, KH, KW, SH, SW, PT, PL) is the backend's Window2D plan;
// x is (N, H, W, C), dout (N, OH, OW, F), weight (KH, KW, C, F), all NHWC / HWIO.
// Global size: (ceil(cols / TSN) * RTSN, ceil(rows / TSM) * RTSM, slices); local (RTSN, RTSM, 1).

#include "tile_defs.cl"

// Index tables in local memory spare the tile loads their divisions: the work-group fills
// them for the pixels and the (tap, channel) columns of a tile's rows and of each k slice,
// then every load reads them. Entries past `limit` repeat the last valid one (never loaded).
#define TABLE_LANES(e, count)                                                    \
    for (int e = get_local_id(1) * get_local_size(0) + get_local_id(0); e < (count); \
         e += get_local_size(0) * get_local_size(1))

// pixel p0 + e of images (PH, PW) each `plane` floats: base, and its window origin y, x =
// (row, column) * (SY, SX) + (OY, OX)
void fill_pixel_table(__local int *base, __local int *y, __local int *x, const int p0,
                      const int count, const int limit, const int PH, const int PW,
                      const int plane, const int SY, const int SX, const int OY, const int OX)
{
    TABLE_LANES(e, count) {
        const int p = max(0, min(p0 + e, limit - 1)), column = p % PW, rest = p / PW;
        base[e] = (rest / PH) * plane;
        y[e] = (rest % PH) * SY + OY;
        x[e] = column * SX + OX;
    }
}

// column q0 + e = (ky, kx, channel) of (KH, KW, CH)
void fill_tap_table(__local int *ky, __local int *kx, __local int *ch, const int q0,
                    const int count, const int limit, const int KW, const int CH)
{
    TABLE_LANES(e, count) {
        const int q = max(0, min(q0 + e, limit - 1)), tap = q / CH;
        ky[e] = tap / KW;
        kx[e] = tap % KW;
        ch[e] = q % CH;
    }
}

#define PIXEL_TABLES(name, extent) __local int name##_base[extent], name##_y[extent], name##_x[extent]
#define TAP_TABLES(name, extent) __local int name##_ky[extent], name##_kx[extent], name##_ch[extent]

// x(b, y0 + ky, x0 + kx, channel): pixel entry p and tap entry t of the tables; 0 in the padding
#define PATCH_AT(pix, p, tap, t)                                                      \
    patch_at(x, pix##_base[p], pix##_y[p] + tap##_ky[t], pix##_x[p] + tap##_kx[t],    \
             tap##_ch[t], H, W, C)
float patch_at(__global const float *x, const int base, const int y, const int xx,
               const int c, const int H, const int W, const int C)
{
    if (y < 0 || y >= H || xx < 0 || xx >= W) return 0.0f;
    return x[(size_t)base + ((size_t)y * W + xx) * C + c];
}

// out (N*OH*OW, F) = patches (N*OH*OW, KH*KW*C) @ weight (KH*KW*C, F) + bias (when has_bias)
#define TILE_TABLES PIXEL_TABLES(row, TSM); \
    fill_pixel_table(row_base, row_y, row_x, i0, TSM, M, OH, OW, H * W * C, SH, SW, -PT, -PL);
#define SLICE_TABLES fill_tap_table(slice_ky, slice_kx, slice_ch, k0, TSK, g_end, KW, C);
#define A_AT_TILE(i, k) PATCH_AT(row, (i) - i0, slice, (k) - k0)
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
    TAP_TABLES(slice, TSK);
#include "tile_body.cl"

#define RESULT(i, j, v) out[(size_t)(i) * F + (j)] = has_bias ? (v) + bias[j] : (v)
    STORE_RESULTS(RESULT)
#undef RESULT
}
#include "tile_undef.cl"

// dout(b, oy, ox, f) for the output pixel (oy, ox) whose kernel tap puts the input pixel at
// (ty, tx) = (y + PT - ky, x + PL - kx) * 1 / (SH, SW); 0 where there is none (off the output,
// or between strides)
float dout_at(__global const float *dout, const int base, const int ty, const int tx,
              const int f, const int OH, const int OW, const int F, const int SH, const int SW)
{
    if (ty < 0 || tx < 0) return 0.0f;
    const int oy = SH == 1 ? ty : ty / SH, ox = SW == 1 ? tx : tx / SW;
    if (oy * SH != ty || ox * SW != tx || oy >= OH || ox >= OW) return 0.0f;
    return dout[(size_t)base + ((size_t)oy * OW + ox) * F + f];
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
#define TILE_TABLES PIXEL_TABLES(row, TSM); \
    fill_pixel_table(row_base, row_y, row_x, i0, TSM, M, H, W, OH * OW * F, 1, 1, PT, PL);
#define SLICE_TABLES fill_tap_table(slice_ky, slice_kx, slice_ch, k0, TSK, g_end, KW, F);
#define A_AT_TILE(i, k)                                                                     \
    dout_at(dout, row_base[(i) - i0], row_y[(i) - i0] - slice_ky[(k) - k0],                 \
            row_x[(i) - i0] - slice_kx[(k) - k0], slice_ch[(k) - k0], OH, OW, F, SH, SW)
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
    TAP_TABLES(slice, TSK);
#include "tile_body.cl"

#define RESULT(i, j, v) dx[(size_t)(i) * C + (j)] = (v)
    STORE_RESULTS(RESULT)
#undef RESULT
}
#include "tile_undef.cl"

// dweight (KH*KW*C, F) = patches^T (KH*KW*C, N*OH*OW) @ dout (N*OH*OW, F), the pixels cut into
// split-K slices: work-group z = s sums the pixels [s * rows_per_slice, (s + 1) * rows_per_slice)
// into dweight + s * slice_stride (gemm_util.cl's gemm_sum_slices adds the slices up).
#define TILE_TABLES TAP_TABLES(row, TSM); \
    fill_tap_table(row_ky, row_kx, row_ch, i0, TSM, M, KW, C);
#define SLICE_TABLES fill_pixel_table(slice_base, slice_y, slice_x, k0, TSK, g_end, OH, OW, \
                                      H * W * C, SH, SW, -PT, -PL);
#define A_AT_TILE(i, k) PATCH_AT(slice, (k) - k0, row, (i) - i0)
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
    PIXEL_TABLES(slice, TSK);
#include "tile_body.cl"

#define RESULT(i, j, v) dweight[(size_t)(i) * F + (j)] = (v)
    STORE_RESULTS(RESULT)
#undef RESULT
}
