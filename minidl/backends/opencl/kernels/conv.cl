// im2col / col2im for channels-last convolution, so that a convolution is one GEMM:
// cols (N*OH*OW, KH*KW*C) @ weight (KH*KW*C, F) = out (N*OH*OW, F).
// x, dx are (N, H, W, C); cols, dcols are (N*OH*OW, KH*KW*CG) with column index (ky*KW + kx)*CG + c:
// the patches of channels C0 .. C0 + CG (one group of a grouped convolution; C0 = 0, CG = C
// otherwise), tap (ky, kx) of output (oy, ox) at input (oy*SH - PT + ky*DH, ox*SW - PL + kx*DW).
// The geometry comes from the backend's Window2D plan (TensorFlow asymmetric "same" padding).
// Each work-item moves whole contiguous channel runs: on CPU devices an index computation per
// element (divisions included) costs far more than the copy itself.

// one work-item per (cols row, ky): the KW*C run of cols that comes from one input row y
__kernel void im2col(__global float *cols, __global const float *x, const int H, const int W,
                     const int C, const int OH, const int OW, const int KH, const int KW,
                     const int SH, const int SW, const int PT, const int PL, const int DH,
                     const int DW, const int C0, const int CG, const int n)
{
    const int i = get_global_id(0);   // n = N*OH*OW*KH
    if (i >= n) return;
    const int ky = i % KH, row = i / KH;
    const int ox = row % OW;
    const int oy = (row / OW) % OH;
    const int b = row / (OW * OH);
    const int y = oy * SH - PT + ky * DH;
    const int x0 = ox * SW - PL;
    __global float *dst = cols + (size_t)i * KW * CG;
    __global const float *src = x + (size_t)(b * H + y) * W * C + C0;
    for (int kx = 0; kx < KW; ++kx, dst += CG) {
        const int xx = x0 + kx * DW;
        if (y < 0 || y >= H || xx < 0 || xx >= W) {
            for (int c = 0; c < CG; ++c) dst[c] = 0.0f;
        } else {
            for (int c = 0; c < CG; ++c) dst[c] = src[xx * C + c];
        }
    }
}

// dx channels C0 .. C0 + CG = the sum, over every (output position, kernel tap) that read
// x[b, y, xx, C0 ..], of dcols; one work-item per input pixel (b, y, xx), a gather, so no two
// work-items write one address
__kernel void col2im(__global float *dx, __global const float *dcols, const int H, const int W,
                     const int C, const int OH, const int OW, const int KH, const int KW,
                     const int SH, const int SW, const int PT, const int PL, const int DH,
                     const int DW, const int C0, const int CG, const int n)
{
    const int p = get_global_id(0);   // n = N*H*W
    if (p >= n) return;
    const int xx = p % W;
    const int y = (p / W) % H;
    const int b = p / (W * H);
    const int kkc = KH * KW * CG;
    __global float *dst = dx + (size_t)p * C + C0;
    for (int c = 0; c < CG; ++c) dst[c] = 0.0f;
    for (int ky = 0; ky < KH; ++ky) {
        const int ty = y + PT - ky * DH;  // = oy * SH
        if (ty < 0 || ty % SH != 0 || ty / SH >= OH) continue;
        const int oy = ty / SH;
        for (int kx = 0; kx < KW; ++kx) {
            const int tx = xx + PL - kx * DW;
            if (tx < 0 || tx % SW != 0 || tx / SW >= OW) continue;
            __global const float *src = dcols + (size_t)((b * OH + oy) * OW + tx / SW) * kkc
                                        + (ky * KW + kx) * CG;
            for (int c = 0; c < CG; ++c) dst[c] += src[c];
        }
    }
}

// flipped (KH, KW, F, C) = weight (KH, KW, C, F) rotated by 180 degrees with C and F swapped:
// the filters of the convolution whose output is the input gradient of a stride-1 convolution.
// One work-item per (ky, kx, f) of flipped, n = KH*KW*F.
__kernel void flip_filters(__global float *flipped, __global const float *weight, const int KH,
                           const int KW, const int C, const int F, const int n)
{
    const int i = get_global_id(0);
    if (i >= n) return;
    const int f = i % F, tap = i / F;
    const int kx = tap % KW, ky = tap / KW;
    __global const float *src = weight + (size_t)((KH - 1 - ky) * KW + (KW - 1 - kx)) * C * F + f;
    __global float *dst = flipped + (size_t)i * C;
    for (int c = 0; c < C; ++c) dst[c] = src[c * F];
}
