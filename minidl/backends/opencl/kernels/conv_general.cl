// Direct (no GEMM) convolution kernels for the geometries the GEMM paths do not take: dilated
// (DH, DW > 1) and grouped (G > 1) convolutions, channels-last. Tap (ky, kx) of output (oy, ox)
// reads input (oy*SH - PT + ky*DH, ox*SW - PL + kx*DW); input channels and filters are split
// into G equal slices, slice g of the output reads slice g of the input only, and the weight is
// (KH, KW, C/G, F). Each work-item computes one element with a plain loop (a gather, so no two
// work-items write one address): simple and correct on any device, never the fast path.

#define WINDOW_ARGS const int H, const int W, const int C, const int OH, const int OW, \
    const int KH, const int KW, const int SH, const int SW, const int PT, const int PL, \
    const int DH, const int DW, const int G, const int F

// out (N, OH, OW, F) = conv(x, weight) + bias (has_bias); one work-item per output element
__kernel void conv2d_forward_general(__global float *out, __global const float *x,
                                     __global const float *weight, __global const float *bias,
                                     const int has_bias, WINDOW_ARGS, const int n)
{
    const int i = get_global_id(0);   // n = N*OH*OW*F
    if (i >= n) return;
    const int f = i % F, pixel = i / F;
    const int ox = pixel % OW, oy = (pixel / OW) % OH, b = pixel / (OW * OH);
    const int cg = C / G, c0 = f / (F / G) * cg;
    float acc = has_bias ? bias[f] : 0.0f;
    for (int ky = 0; ky < KH; ++ky) {
        const int y = oy * SH - PT + ky * DH;
        if (y < 0 || y >= H) continue;
        for (int kx = 0; kx < KW; ++kx) {
            const int xx = ox * SW - PL + kx * DW;
            if (xx < 0 || xx >= W) continue;
            __global const float *src = x + ((size_t)(b * H + y) * W + xx) * C + c0;
            __global const float *w = weight + (size_t)(ky * KW + kx) * cg * F + f;
            for (int c = 0; c < cg; ++c) acc += src[c] * w[c * F];
        }
    }
    out[i] = acc;
}

// dx (N, H, W, C) = the input gradient from dout (N, OH, OW, F); one work-item per dx element
__kernel void conv2d_backward_data_general(__global float *dx, __global const float *dout,
                                           __global const float *weight, WINDOW_ARGS, const int n)
{
    const int i = get_global_id(0);   // n = N*H*W*C
    if (i >= n) return;
    const int c = i % C, pixel = i / C;
    const int xx = pixel % W, y = (pixel / W) % H, b = pixel / (W * H);
    const int cg = C / G, fg = F / G, f0 = c / cg * fg;
    float acc = 0.0f;
    for (int ky = 0; ky < KH; ++ky) {
        const int ty = y + PT - ky * DH;   // = oy * SH
        if (ty < 0 || ty % SH != 0 || ty / SH >= OH) continue;
        for (int kx = 0; kx < KW; ++kx) {
            const int tx = xx + PL - kx * DW;
            if (tx < 0 || tx % SW != 0 || tx / SW >= OW) continue;
            __global const float *d = dout + ((size_t)(b * OH + ty / SH) * OW + tx / SW) * F + f0;
            __global const float *w = weight + ((size_t)(ky * KW + kx) * cg + c % cg) * F + f0;
            for (int f = 0; f < fg; ++f) acc += d[f] * w[f];
        }
    }
    dx[i] = acc;
}

// dweight (KH, KW, C/G, F) = the filter gradient, summed over the N*OH*OW output pixels;
// one work-item per weight element
__kernel void conv2d_backward_filter_general(__global float *dweight, __global const float *dout,
                                             __global const float *x, const int N, WINDOW_ARGS,
                                             const int n)
{
    const int i = get_global_id(0);   // n = KH*KW*(C/G)*F
    if (i >= n) return;
    const int cg = C / G;
    const int f = i % F, row = i / F;
    const int c = f / (F / G) * cg + row % cg, tap = row / cg;
    const int kx = tap % KW, ky = tap / KW;
    float acc = 0.0f;
    for (int b = 0; b < N; ++b)
        for (int oy = 0; oy < OH; ++oy) {
            const int y = oy * SH - PT + ky * DH;
            if (y < 0 || y >= H) continue;
            for (int ox = 0; ox < OW; ++ox) {
                const int xx = ox * SW - PL + kx * DW;
                if (xx < 0 || xx >= W) continue;
                acc += x[((size_t)(b * H + y) * W + xx) * C + c] *
                       dout[((size_t)(b * OH + oy) * OW + ox) * F + f];
            }
        }
    dweight[i] = acc;
}
