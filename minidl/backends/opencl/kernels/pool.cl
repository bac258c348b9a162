// Pooling over channels-last images. The window geometry comes from the backend's Window2D plan:
// x, dx are (N, H, W, C); out, dout, argmax are (N, OH, OW, C); the window is KH x KW with
// strides SH, SW and top/left padding PT, PL. One work-item handles one pixel's run of C channels
// (contiguous in memory). Backward kernels gather: one work-item per input pixel, looping over
// the windows that cover it, so that no two work-items write one address.

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

// number of unpadded input positions under window (oy, ox)
float window_count(const int oy, const int ox, const int H, const int W, const int KH,
                   const int KW, const int SH, const int SW, const int PT, const int PL)
{
    const int y0 = oy * SH - PT, x0 = ox * SW - PL;
    const int rows = min(y0 + KH, H) - max(y0, 0);
    const int cols = min(x0 + KW, W) - max(x0, 0);
    return (float)(rows * cols);
}

// One work-item of a forward kernel: output pixel p (C channels) from its window, as max
// pooling (argmax not 0) or average pooling (argmax 0); each kernel passes its argmax buffer or
// a literal 0, so the compiler keeps only one branch.
void pool_forward_pixel(__global float *out, __global int *argmax, __global const float *x, const int H,
                        const int W, const int C, const int OH, const int OW, const int KH, const int KW,
                        const int SH, const int SW, const int PT, const int PL, const int p)
{
    const int ox = p % OW;
    const int oy = (p / OW) % OH;
    const int b = p / (OW * OH);
    const int y0 = oy * SH - PT, x0 = ox * SW - PL;
    __global float *dst = out + (size_t)p * C;
    __global int *where = argmax ? argmax + (size_t)p * C : 0;
    for (int c = 0; c < C; ++c) {
        dst[c] = argmax ? -INFINITY : 0.0f;
        if (argmax) where[c] = -1;
    }
    for (int y = max(y0, 0); y < min(y0 + KH, H); ++y) {
        for (int xx = max(x0, 0); xx < min(x0 + KW, W); ++xx) {
            const int pos = y * W + xx;
            __global const float *src = x + ((size_t)b * H * W + pos) * C;
            for (int c = 0; c < C; ++c) {
                const float v = src[c];
                if (!argmax) {
                    dst[c] += v;
                } else if (where[c] < 0 || v > dst[c] || (is_nan(v) && !is_nan(dst[c]))) {
                    dst[c] = v;
                    where[c] = pos;
                }
            }
        }
    }
    if (!argmax) {
        const float inv = 1.0f / window_count(oy, ox, H, W, KH, KW, SH, SW, PT, PL);
        for (int c = 0; c < C; ++c) dst[c] *= inv;
    }
}

// One work-item of a backward kernel: dx pixel p (C channels) gathers from every window that
// covers it, through argmax (max pooling) or spread evenly (argmax 0: average pooling).
void pool_backward_pixel(__global float *dx, __global const float *dout, __global const int *argmax,
                         const int H, const int W, const int C, const int OH, const int OW, const int KH,
                         const int KW, const int SH, const int SW, const int PT, const int PL, const int p)
{
    const int xx = p % W;
    const int y = (p / W) % H;
    const int b = p / (W * H);
    const int pos = y * W + xx;
    __global float *dst = dx + (size_t)p * C;
    for (int c = 0; c < C; ++c) dst[c] = 0.0f;
    const int oy_end = last_window(y, PT, SH, OH), ox_end = last_window(xx, PL, SW, OW);
    for (int oy = first_window(y, PT, KH, SH); oy <= oy_end; ++oy) {
        for (int ox = first_window(xx, PL, KW, SW); ox <= ox_end; ++ox) {
            const size_t o = (size_t)((b * OH + oy) * OW + ox) * C;
            if (argmax) {
                for (int c = 0; c < C; ++c) dst[c] += argmax[o + c] == pos ? dout[o + c] : 0.0f;
            } else {
                const float inv = 1.0f / window_count(oy, ox, H, W, KH, KW, SH, SW, PT, PL);
                for (int c = 0; c < C; ++c) dst[c] += dout[o + c] * inv;
            }
        }
    }
}

// argmax holds the winner's flat spatial index y * W + x in the input image (padding never wins;
// the first maximum in row-major window order wins ties, and the first NaN wins over any
// number, as numpy's max and argmax). n = N*OH*OW output pixels.
__kernel void max_pool2d_forward(__global float *out, __global int *argmax, __global const float *x,
                               const int H, const int W, const int C, const int OH, const int OW,
                               const int KH, const int KW, const int SH, const int SW,
                               const int PT, const int PL, const int n)
{
    const int p = get_global_id(0);
    if (p < n) pool_forward_pixel(out, argmax, x, H, W, C, OH, OW, KH, KW, SH, SW, PT, PL, p);
}

// n = N*H*W input pixels
__kernel void max_pool2d_backward(__global float *dx, __global const float *dout,
                                __global const int *argmax, const int H, const int W, const int C,
                                const int OH, const int OW, const int KH, const int KW,
                                const int SH, const int SW, const int PT, const int PL, const int n)
{
    const int p = get_global_id(0);
    if (p < n) pool_backward_pixel(dx, dout, argmax, H, W, C, OH, OW, KH, KW, SH, SW, PT, PL, p);
}

// n = N*OH*OW output pixels
__kernel void avg_pool2d_forward(__global float *out, __global const float *x, const int H,
                               const int W, const int C, const int OH, const int OW, const int KH,
                               const int KW, const int SH, const int SW, const int PT,
                               const int PL, const int n)
{
    const int p = get_global_id(0);
    if (p < n) pool_forward_pixel(out, 0, x, H, W, C, OH, OW, KH, KW, SH, SW, PT, PL, p);
}

// n = N*H*W input pixels
__kernel void avg_pool2d_backward(__global float *dx, __global const float *dout, const int H,
                                const int W, const int C, const int OH, const int OW, const int KH,
                                const int KW, const int SH, const int SW, const int PT,
                                const int PL, const int n)
{
    const int p = get_global_id(0);
    if (p < n) pool_backward_pixel(dx, dout, 0, H, W, C, OH, OW, KH, KW, SH, SW, PT, PL, p);
}

// out (N, C) = mean of x (N, HW, C) over its HW positions; one work-item per image, n = N
__kernel void global_avg_pool_forward(__global float *out, __global const float *x, const int HW,
                                      const int C, const int n)
{
    const int b = get_global_id(0);
    if (b >= n) return;
    __global float *dst = out + (size_t)b * C;
    for (int c = 0; c < C; ++c) dst[c] = 0.0f;
    for (int p = 0; p < HW; ++p) {
        __global const float *src = x + ((size_t)b * HW + p) * C;
        for (int c = 0; c < C; ++c) dst[c] += src[c];
    }
    const float inv = 1.0f / (float)HW;
    for (int c = 0; c < C; ++c) dst[c] *= inv;
}

// dx (N, HW, C) = dout (N, C) / HW; one work-item per pixel, n = N * HW
__kernel void global_avg_pool_backward(__global float *dx, __global const float *dout, const int HW,
                                       const int C, const int n)
{
    const int p = get_global_id(0);
    if (p >= n) return;
    __global const float *src = dout + (size_t)(p / HW) * C;
    __global float *dst = dx + (size_t)p * C;
    const float inv = 1.0f / (float)HW;
    for (int c = 0; c < C; ++c) dst[c] = src[c] * inv;
}
