// Pooling over channels-last images. The window geometry comes from the backend's Window2D plan:
// x, dx are (N, H, W, C); out, dout, argmax are (N, OH, OW, C); the window is KH x KW with
// strides SH, SW and top/left padding PT, PL. Backward kernels gather (one work-item per input
// element, looping over the windows that cover it) so that no two work-items write one address.

// First and last output index along one axis whose window covers input index `i`.
int first_window(const int i, const int pad, const int k, const int s)
{
    const int num = i + pad - k + 1;  // window o covers i when o*s - pad <= i <= o*s - pad + k - 1
    return num <= 0 ? 0 : (num + s - 1) / s;
}

int last_window(const int i, const int pad, const int s, const int out_len)
{
    return min((i + pad) / s, out_len - 1);
}

// argmax holds the winner's flat spatial index y * W + x in the input image (padding never wins).
__kernel void max_pool_forward(__global float *out, __global int *argmax, __global const float *x,
                               const int H, const int W, const int C, const int OH, const int OW,
                               const int KH, const int KW, const int SH, const int SW,
                               const int PT, const int PL, const int n)
{
    const int i = get_global_id(0);
    if (i >= n) return;
    const int c = i % C;
    const int ox = (i / C) % OW;
    const int oy = (i / (C * OW)) % OH;
    const int b = i / (C * OW * OH);
    const int y0 = oy * SH - PT, x0 = ox * SW - PL;
    float best = -INFINITY;
    int where = -1;
    for (int ky = max(0, -y0); ky < KH && y0 + ky < H; ++ky) {
        for (int kx = max(0, -x0); kx < KW && x0 + kx < W; ++kx) {
            const int pos = (y0 + ky) * W + x0 + kx;
            const float v = x[(b * H * W + pos) * C + c];
            if (v > best || where < 0) { best = v; where = pos; }
        }
    }
    out[i] = best;
    argmax[i] = where;
}

__kernel void max_pool_backward(__global float *dx, __global const float *dout,
                                __global const int *argmax, const int H, const int W, const int C,
                                const int OH, const int OW, const int KH, const int KW,
                                const int SH, const int SW, const int PT, const int PL, const int n)
{
    const int i = get_global_id(0);
    if (i >= n) return;
    const int c = i % C;
    const int xx = (i / C) % W;
    const int y = (i / (C * W)) % H;
    const int b = i / (C * W * H);
    const int pos = y * W + xx;
    const int oy_end = last_window(y, PT, SH, OH), ox_end = last_window(xx, PL, SW, OW);
    float g = 0.0f;
    for (int oy = first_window(y, PT, KH, SH); oy <= oy_end; ++oy) {
        for (int ox = first_window(xx, PL, KW, SW); ox <= ox_end; ++ox) {
            const int o = ((b * OH + oy) * OW + ox) * C + c;
            if (argmax[o] == pos) g += dout[o];
        }
    }
    dx[i] = g;
}

// number of unpadded input positions under window (oy, ox)
float window_count(const int oy, const int ox, const int H, const int W, const int KH,
                   const int KW, const int SH, const int SW, const int PT, const int PL)
{
    const int y0 = oy * SH - PT, x0 = ox * SW - PL;
    const int rows = min(y0 + KH, H) - max(y0, 0);
    const int cols = min(x0 + KW, W) - max(x0, 0);
    return (float)(rows * cols);
}

__kernel void avg_pool_forward(__global float *out, __global const float *x, const int H,
                               const int W, const int C, const int OH, const int OW, const int KH,
                               const int KW, const int SH, const int SW, const int PT,
                               const int PL, const int n)
{
    const int i = get_global_id(0);
    if (i >= n) return;
    const int c = i % C;
    const int ox = (i / C) % OW;
    const int oy = (i / (C * OW)) % OH;
    const int b = i / (C * OW * OH);
    const int y0 = oy * SH - PT, x0 = ox * SW - PL;
    float s = 0.0f;
    for (int y = max(y0, 0); y < min(y0 + KH, H); ++y)
        for (int xx = max(x0, 0); xx < min(x0 + KW, W); ++xx)
            s += x[((b * H + y) * W + xx) * C + c];
    out[i] = s / window_count(oy, ox, H, W, KH, KW, SH, SW, PT, PL);
}

__kernel void avg_pool_backward(__global float *dx, __global const float *dout, const int H,
                                const int W, const int C, const int OH, const int OW, const int KH,
                                const int KW, const int SH, const int SW, const int PT,
                                const int PL, const int n)
{
    const int i = get_global_id(0);
    if (i >= n) return;
    const int c = i % C;
    const int xx = (i / C) % W;
    const int y = (i / (C * W)) % H;
    const int b = i / (C * W * H);
    const int oy_end = last_window(y, PT, SH, OH), ox_end = last_window(xx, PL, SW, OW);
    float g = 0.0f;
    for (int oy = first_window(y, PT, KH, SH); oy <= oy_end; ++oy)
        for (int ox = first_window(xx, PL, KW, SW); ox <= ox_end; ++ox)
            g += dout[((b * OH + oy) * OW + ox) * C + c]
                 / window_count(oy, ox, H, W, KH, KW, SH, SW, PT, PL);
    dx[i] = g;
}

// out (N, C) = mean of x (N, HW, C) over its HW positions; n = N * C
__kernel void global_avg_pool_forward(__global float *out, __global const float *x, const int HW,
                                      const int C, const int n)
{
    const int i = get_global_id(0);
    if (i >= n) return;
    const int c = i % C, b = i / C;
    float s = 0.0f;
    for (int p = 0; p < HW; ++p) s += x[(b * HW + p) * C + c];
    out[i] = s / (float)HW;
}

// dx (N, HW, C) = dout (N, C) / HW; n = N * HW * C
__kernel void global_avg_pool_backward(__global float *dx, __global const float *dout, const int HW,
                                       const int C, const int n)
{
    const int i = get_global_id(0);
    if (i >= n) return;
    dx[i] = dout[(i / (HW * C)) * C + i % C] / (float)HW;
}
