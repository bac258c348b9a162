// Binary (xnor-popcount) inference: the larq signs of the input and kernel packed 32 channels
// to a word (bit 1 = -1), and a convolution whose dot products are K - 2 popcount(x ^ w).
// Layouts are csrc/binary_conv.h's. One work-item per output value; FILTERS_PER_ITEM filters
// share one work-item's loads of the input window.

// Tunable: output filters one work-item computes (it reads the window's words once for them).
#ifndef FILTERS_PER_ITEM
#define FILTERS_PER_ITEM 4
#endif

// bits (pixels, cw) = signs of x (pixels, c); one work-item per word
__kernel void binary_pack_input(__global uint *bits, __global const float *x, const int c, const int cw,
                                const int total)
{
    const int i = get_global_id(0);
    if (i >= total) return;
    const int p = i / cw, k = i % cw;
    const int end = min(32, c - 32 * k);
    uint word = 0;
    for (int b = 0; b < end; b++) word |= (uint)(x[(long)p * c + 32 * k + b] < 0.0f) << b;
    bits[i] = word;
}

// bits (taps * cw, f) = signs of weight (taps, c, f); one work-item per word
__kernel void binary_pack_kernel(__global uint *bits, __global const float *weight, const int c, const int cw,
                                 const int f, const int total)
{
    const int i = get_global_id(0);
    if (i >= total) return;
    const int j = i % f, tk = i / f, t = tk / cw, k = tk % cw;
    const int end = min(32, c - 32 * k);
    uint word = 0;
    for (int b = 0; b < end; b++) word |= (uint)(weight[((long)t * c + 32 * k + b) * f + j] < 0.0f) << b;
    bits[i] = word;
}

// out (n, oh, ow, f) = integer dot products + bias; a padding tap counts as +1 (pad_value 1,
// zero words) or not at all (pad_value 0). One work-item per (output pixel, FILTERS_PER_ITEM filters).
__kernel void binary_conv2d_forward(__global float *out, __global const uint *bits, __global const uint *kbits,
                                    __global const float *bias, const int has_bias, const int pad_value,
                                    const int h, const int w, const int c, const int oh, const int ow,
                                    const int kh, const int kw, const int sh, const int sw, const int pad_top,
                                    const int pad_left, const int dh, const int dw, const int f,
                                    const int groups_of_filters, const int total)
{
    const int i = get_global_id(0);
    if (i >= total) return;
    const int group = i % groups_of_filters, pixel = i / groups_of_filters;
    const int ox = pixel % ow, oy = pixel / ow % oh, n = pixel / (ow * oh);
    const int cw = (c + 31) / 32, j0 = group * FILTERS_PER_ITEM;
    int counts[FILTERS_PER_ITEM];
    for (int q = 0; q < FILTERS_PER_ITEM; q++) counts[q] = 0;
    int counted = 0;
    for (int ky = 0; ky < kh; ky++)
        for (int kx = 0; kx < kw; kx++) {
            const int iy = oy * sh - pad_top + ky * dh, ix = ox * sw - pad_left + kx * dw;
            const int inside = iy >= 0 && iy < h && ix >= 0 && ix < w;
            if (!inside && pad_value == 0) continue;
            counted++;
            const int t = ky * kw + kx;
            for (int k = 0; k < cw; k++) {
                const uint xw = inside ? bits[((long)(n * h + iy) * w + ix) * cw + k] : 0u;
                for (int q = 0; q < FILTERS_PER_ITEM; q++)
                    if (j0 + q < f) counts[q] += popcount(xw ^ kbits[(long)(t * cw + k) * f + j0 + q]);
            }
        }
    for (int q = 0; q < FILTERS_PER_ITEM; q++) {
        const int j = j0 + q;
        if (j < f) out[(long)pixel * f + j] = (float)(counted * c - 2 * counts[q]) + (has_bias ? bias[j] : 0.0f);
    }
}
