// im2col / col2im for channels-last convolution, so that a convolution is one GEMM:
// cols (N*OH*OW, KH*KW*C) @ weight (KH*KW*C, F) = out (N*OH*OW, F).
// x, dx are (N, H, W, C); cols, dcols are (N*OH*OW, KH*KW*C) with column index (ky*KW + kx)*C + c.
// The geometry comes from the backend's Window2D plan (TensorFlow asymmetric "same" padding).

// one work-item per element of cols; padded positions read as zero
__kernel void im2col(__global float *cols, __global const float *x, const int H, const int W,
                     const int C, const int OH, const int OW, const int KH, const int KW,
                     const int SH, const int SW, const int PT, const int PL, const int n)
{
    const int i = get_global_id(0);
    if (i >= n) return;
    const int kkc = KH * KW * C;
    const int col = i % kkc, row = i / kkc;
    const int c = col % C;
    const int kx = (col / C) % KW;
    const int ky = col / (C * KW);
    const int ox = row % OW;
    const int oy = (row / OW) % OH;
    const int b = row / (OW * OH);
    const int y = oy * SH - PT + ky, xx = ox * SW - PL + kx;
    cols[i] = (y >= 0 && y < H && xx >= 0 && xx < W) ? x[((b * H + y) * W + xx) * C + c] : 0.0f;
}

// dx = the sum, over every (output position, kernel tap) that read x[b, y, xx, c], of dcols;
// one work-item per element of dx (a gather, so no two work-items write one address)
__kernel void col2im(__global float *dx, __global const float *dcols, const int H, const int W,
                     const int C, const int OH, const int OW, const int KH, const int KW,
                     const int SH, const int SW, const int PT, const int PL, const int n)
{
    const int i = get_global_id(0);
    if (i >= n) return;
    const int kkc = KH * KW * C;
    const int c = i % C;
    const int xx = (i / C) % W;
    const int y = (i / (C * W)) % H;
    const int b = i / (C * W * H);
    float g = 0.0f;
    for (int ky = 0; ky < KH; ++ky) {
        const int ty = y + PT - ky;  // = oy * SH
        if (ty < 0 || ty % SH != 0 || ty / SH >= OH) continue;
        const int oy = ty / SH;
        for (int kx = 0; kx < KW; ++kx) {
            const int tx = xx + PL - kx;
            if (tx < 0 || tx % SW != 0 || tx / SW >= OW) continue;
            const int row = (b * OH + oy) * OW + tx / SW;
            g += dcols[row * kkc + (ky * KW + kx) * C + c];
        }
    }
    dx[i] = g;
}
