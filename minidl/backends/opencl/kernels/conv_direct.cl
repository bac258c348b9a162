// Direct tiled convolution for GPUs (the GPU profile's forward pass, and the input gradient of
// a stride-1 convolution): out (N, OH, OW, F) = conv(in (N, H, W, C), filters) (+ bias), NHWC.
// Each work-group computes a TOH x TOW x TF block of out (conv_patch.cl stages its input patch
// with the halo, per chunk of CK channels, and the TAPS x CK x TF slice of the filters, in local
// memory); each work-item accumulates WPP pixels x WPF filters in registers, its pixels strided
// by RP and its filters by RTF so that neighbouring work-items read neighbouring local words
// and store neighbouring filters of out (coalesced).
//
// FLIP 0: the forward pass, filters (KH, KW, C, F) read as filt(ky, kx, c, f) = w[ky][kx][c][f].
// FLIP 1: dx of a stride-1 convolution as a convolution of dout with the filters rotated by
// 180 degrees and their channels swapped, read in place (no flipped copy): here `in` is dout
// (its F filters are this product's C input channels), out is dx, and
// filt(ky, kx, c, f) = w[KH-1-ky][KW-1-kx][f][c]. A tap that falls in the padding of this
// product adds nothing at all (col2im's rule: not even 0 * inf = NaN reaches dx).
// Launch: local (RTF, RP, 1); groups (ceil(F / TF), tiles_y * tiles_x, N), tiles_x = ceil(OW / TOW).
// Local memory: 4 (PH PW CK + TAPS CK (TF + 1)) bytes (conv_direct.py checks it against the device).

#include "conv_patch.cl"

#ifndef WPP
#define WPP 4       // output pixels per work-item (register block), dividing TOH * TOW
#endif
#ifndef FLIP
#define FLIP 0
#endif
#define RP (PIX / WPP)             // work-group extent along the pixels (local id 1)
#define THREADS (RTF * RP)
#define WROW (TF + 1)              // +1: FLIP stages walk c, which then hits other banks

#if FLIP
// w_slice[(tap * CK + c) * WROW + f] = w[TAPS-1-tap][f0 + f][c0 + c]; w is (TAPS, F, C) here
#define STAGE_FILTERS(w_slice, w, c0, f0, C, F)                                             \
    {                                                                                       \
        BOX_START(TF, CK, t_, f_, c_)                                                       \
        for (int l_ = tid; l_ < TAPS * TF * CK; l_ += THREADS) {                            \
            w_slice[(t_ * CK + c_) * WROW + f_] = ((c0) + c_ < (C) && (f0) + f_ < (F))      \
                ? w[((size_t)(TAPS - 1 - t_) * (F) + (f0) + f_) * (C) + (c0) + c_] : 0.0f;  \
            BOX_STEP(TF, CK, t_, f_, c_)                                                    \
        }                                                                                   \
    }
#else
// w_slice[(tap * CK + c) * WROW + f] = w[tap][c0 + c][f0 + f]; w is (TAPS, C, F)
#define STAGE_FILTERS(w_slice, w, c0, f0, C, F)                                             \
    {                                                                                       \
        BOX_START(CK, TF, t_, c_, f_)                                                       \
        for (int l_ = tid; l_ < TAPS * CK * TF; l_ += THREADS) {                            \
            w_slice[(t_ * CK + c_) * WROW + f_] = ((c0) + c_ < (C) && (f0) + f_ < (F))      \
                ? w[((size_t)t_ * (C) + (c0) + c_) * (F) + (f0) + f_] : 0.0f;               \
            BOX_STEP(CK, TF, t_, c_, f_)                                                    \
        }                                                                                   \
    }
#endif

// in (N, H, W, C); w (KH, KW, C, F), or with FLIP (KH, KW, F, C); out (N, OH, OW, F);
// bias (F,) read when has_bias; PT, PL: the padding before the first row and column
__kernel __attribute__((reqd_work_group_size(RTF, RP, 1)))
void conv2d_direct(__global float *out, __global const float *in, __global const float *w,
                   __global const float *bias, const int has_bias, const int H, const int W,
                   const int C, const int OH, const int OW, const int PT, const int PL,
                   const int F, const int tiles_x)
{
    const int tf = get_local_id(0), tp = get_local_id(1);
    const int tid = tp * RTF + tf;
    const int f0 = get_group_id(0) * TF, b = get_group_id(2);
    const int oy0 = (get_group_id(1) / tiles_x) * TOH, ox0 = (get_group_id(1) % tiles_x) * TOW;
    const int y0 = oy0 * SH - PT, x0 = ox0 * SW - PL;
    // the rows and columns of the patch that the tile's valid pixels read
    const int rows = (min(TOH, OH - oy0) - 1) * SH + KH, cols = (min(TOW, OW - ox0) - 1) * SW + KW;
    __local float patch[PH * PW * CK];
    __local float w_slice[TAPS * CK * WROW];

    int origin[WPP];     // patch index of each of the work-item's pixels' first tap, channel 0
    float acc[WPP][WPF];
    #pragma unroll
    for (int wp = 0; wp < WPP; ++wp) {
        const int p = tp + wp * RP;
        origin[wp] = ((p / TOW) * SH * PW + (p % TOW) * SW) * CK;
        #pragma unroll
        for (int wf = 0; wf < WPF; ++wf) acc[wp][wf] = 0.0f;
    }

    for (int c0 = 0; c0 < C; c0 += CK) {
        STAGE_PATCH(patch, in, b, y0, x0, rows, cols, c0, H, W, C)
        STAGE_FILTERS(w_slice, w, c0, f0, C, F)
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int ky = 0; ky < KH; ++ky) {
            for (int kx = 0; kx < KW; ++kx) {
#if FLIP
                int used[WPP];   // the tap lies on the input (dout), not in its padding
                #pragma unroll
                for (int wp = 0; wp < WPP; ++wp) {
                    const int p = tp + wp * RP;
                    const int y = y0 + (p / TOW) + ky, x = x0 + (p % TOW) + kx;
                    used[wp] = y >= 0 && y < H && x >= 0 && x < W;
                }
#endif
                const int tap_origin = (ky * PW + kx) * CK;
                __local const float *w_tap = w_slice + (ky * KW + kx) * CK * WROW + tf;
                for (int c = 0; c < CK; ++c) {
                    float w_reg[WPF];
                    #pragma unroll
                    for (int wf = 0; wf < WPF; ++wf) w_reg[wf] = w_tap[c * WROW + wf * RTF];
                    #pragma unroll
                    for (int wp = 0; wp < WPP; ++wp) {
#if FLIP
                        if (!used[wp]) continue;
#endif
                        const float a = patch[origin[wp] + tap_origin + c];
                        #pragma unroll
                        for (int wf = 0; wf < WPF; ++wf) acc[wp][wf] = MAD(a, w_reg[wf], acc[wp][wf]);
                    }
                }
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }

    #pragma unroll
    for (int wp = 0; wp < WPP; ++wp) {
        const int p = tp + wp * RP;
        const int oy = oy0 + p / TOW, ox = ox0 + p % TOW;
        if (oy >= OH || ox >= OW) continue;
        __global float *row = out + (((size_t)b * OH + oy) * OW + ox) * F;
        #pragma unroll
        for (int wf = 0; wf < WPF; ++wf) {
            const int f = f0 + tf + wf * RTF;
            if (f < F) row[f] = has_bias ? acc[wp][wf] + bias[f] : acc[wp][wf];
        }
    }
}
