// Direct tiled filter gradient for GPUs (the GPU profile's): dweight (KH, KW, C, F) = the sum
// over images and output pixels of x (N, H, W, C) patches times dout (N, OH, OW, F), NHWC.
// A work-group owns CK input channels x TF filters of dweight (all TAPS taps: TAPS CK TF
// results) and walks `positions_per_slice` pixel tiles (image, TOH x TOW output pixels); for
// each it stages the tile's input patch with the halo (conv_patch.cl) and its TOH x TOW x TF
// block of dout in local memory once, then every result reads them there: an input element is
// loaded about once per filter tile instead of once per tap and filter tile, a dout element
// once per channel chunk instead of once per tap and channel tile.
// Each work-item accumulates WPQ (tap, channel) rows x WPF filters in registers, its rows
// strided by RQ, its filters by RTF (neighbouring work-items: neighbouring filters, coalesced).
// Split-K: work-group z = s sums the positions [s * positions_per_slice, ...) into
// dweight + s * slice_stride (gemm_util.cl's gemm_sum_slices adds the slices up).
// Launch: local (RTF, RQ, 1); groups (ceil(F / TF), ceil(C / CK), slices).
// Local memory: 4 (PH PW CK + PIX TF) bytes (conv_direct.py checks it against the device).

#include "conv_patch.cl"

#ifndef WPQ
#define WPQ 3       // (tap, channel) rows of dweight per work-item (register block)
#endif
#define QS (TAPS * CK)                 // (tap, channel) rows of a work-group
#define RQ ((QS + WPQ - 1) / WPQ)      // work-group extent along them (local id 1)
#define THREADS (RTF * RQ)

__kernel __attribute__((reqd_work_group_size(RTF, RQ, 1)))
void conv2d_backward_filter_direct(__global float *dweight, __global const float *dout,
                                   __global const float *x, const int H, const int W,
                                   const int C, const int OH, const int OW, const int PT,
                                   const int PL, const int F, const int tiles_x,
                                   const int tiles, const int positions,
                                   const int positions_per_slice, const int slice_stride)
{
    const int tf = get_local_id(0), tq = get_local_id(1);
    const int tid = tq * RTF + tf;
    const int f0 = get_group_id(0) * TF, c0 = get_group_id(1) * CK;
    const int first = get_group_id(2) * positions_per_slice;
    const int last = min(positions, first + positions_per_slice);
    dweight += get_group_id(2) * (size_t)slice_stride;
    __local float patch[PH * PW * CK];
    __local float d_tile[PIX * TF];

    int origin[WPQ];   // patch index of each of the work-item's (tap, channel) rows at pixel (0, 0)
    float acc[WPQ][WPF];
    #pragma unroll
    for (int wq = 0; wq < WPQ; ++wq) {
        const int q = min(tq + wq * RQ, QS - 1);   // a row past QS computes a copy, never stored
        const int tap = q / CK;
        origin[wq] = ((tap / KW) * PW + tap % KW) * CK + q % CK;
        #pragma unroll
        for (int wf = 0; wf < WPF; ++wf) acc[wq][wf] = 0.0f;
    }

    for (int position = first; position < last; ++position) {
        const int b = position / tiles, tile = position % tiles;
        const int oy0 = (tile / tiles_x) * TOH, ox0 = (tile % tiles_x) * TOW;
        const int valid_rows = min(TOH, OH - oy0), valid_cols = min(TOW, OW - ox0);
        STAGE_PATCH(patch, x, b, oy0 * SH - PT, ox0 * SW - PL, (valid_rows - 1) * SH + KH,
                    (valid_cols - 1) * SW + KW, c0, H, W, C)
        {   // d_tile[(py * TOW + px) * TF + f] = dout(b, oy0 + py, ox0 + px, f0 + f), 0 outside
            BOX_START(TOW, TF, py_, px_, f_)
            for (int l_ = tid; l_ < PIX * TF; l_ += THREADS) {
                d_tile[l_] = (py_ < valid_rows && px_ < valid_cols && f0 + f_ < F)
                    ? dout[(((size_t)b * OH + oy0 + py_) * OW + ox0 + px_) * F + f0 + f_] : 0.0f;
                BOX_STEP(TOW, TF, py_, px_, f_)
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        // only the valid pixels: a ragged tile's others would multiply real inputs by zeros
        for (int py = 0; py < valid_rows; ++py) {
            for (int px = 0; px < valid_cols; ++px) {
                const int shift = (py * SH * PW + px * SW) * CK;
                __local const float *d_pixel = d_tile + (py * TOW + px) * TF + tf;
                float d_reg[WPF];
                #pragma unroll
                for (int wf = 0; wf < WPF; ++wf) d_reg[wf] = d_pixel[wf * RTF];
                #pragma unroll
                for (int wq = 0; wq < WPQ; ++wq) {
                    const float a = patch[origin[wq] + shift];
                    #pragma unroll
                    for (int wf = 0; wf < WPF; ++wf) acc[wq][wf] = MAD(a, d_reg[wf], acc[wq][wf]);
                }
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }

    #pragma unroll
    for (int wq = 0; wq < WPQ; ++wq) {
        const int q = tq + wq * RQ, c = c0 + q % CK;
        if (q >= QS || c >= C) continue;
        __global float *row = dweight + ((size_t)(q / CK) * C + c) * F;
        #pragma unroll
        for (int wf = 0; wf < WPF; ++wf) {
            const int f = f0 + tf + wf * RTF;
            if (f < F) row[f] = acc[wq][wf];
        }
    }
}
