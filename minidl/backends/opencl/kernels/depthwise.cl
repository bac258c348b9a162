// Depthwise convolution over channels-last images (minidl/backends/depthwise_geometry.py).
// x, dx are (N, H, W, C); out, dout are (N, OH, OW, F) with F = C * M, M the depth multiplier;
// weight, dweight are (KH, KW, C, M), read as (KH, KW, F); bias, dbias are (F). Output channel
// f = c * M + m is input channel c convolved with weight[:, :, c, m]. The window geometry comes
// from the backend's Window2D plan (window_args: H, W, C, OH, OW, KH, KW, SH, SW, PT, PL).
// Positions outside the input are padding and take no part in any product.
//
// Forward: one work-item per output pixel and run of RUN consecutive channels. Backward-data:
// one work-item per input pixel and run of RUN channels of dx, gathering over the windows that
// cover it, so that no two work-items write one address. Backward-filter: one work-item per
// weight (or bias) element and slice of output rows, then one per element to sum the slices.
// Consecutive work-items take consecutive channels: their loads and stores are contiguous.

// Tunable: the channels one forward / backward-data work-item computes (its accumulators stay
// in registers). The host sets it per profile (minidl/backends/opencl/depthwise.py): 1 on GPUs
// (one work-item per element), a vector's worth or more on CPU devices, where the index
// arithmetic of a work-item costs more than its multiply-adds.
#ifndef RUN
#define RUN 1
#endif

// the first output index along one axis whose window covers input index i (window o covers i
// when o*s - pad <= i <= o*s - pad + k - 1)
int depthwise_first(const int i, const int pad, const int k, const int s)
{
    const int num = i + pad - k + 1;
    return num <= 0 ? 0 : (num + s - 1) / s;
}

__kernel void depthwise_conv2d_forward(__global float *out, __global const float *x,
                                       __global const float *weight, __global const float *bias,
                                       const int has_bias, const int H, const int W, const int C,
                                       const int OH, const int OW, const int KH, const int KW,
                                       const int SH, const int SW, const int PT, const int PL,
                                       const int M, const int n)
{
    const int i = get_global_id(0);   // n = N*OH*OW*runs, runs = ceil(F / RUN)
    if (i >= n) return;
    const int F = C * M, runs = (F + RUN - 1) / RUN;
    const int f0 = i % runs * RUN, p = i / runs, len = min(RUN, F - f0);
    const int ox = p % OW, oy = (p / OW) % OH, b = p / (OW * OH);
    const int y0 = oy * SH - PT, x0 = ox * SW - PL;
    float acc[RUN];
    int channel[RUN];   // the input channel of output channel f0 + j (divided once, not per tap)
    for (int j = 0; j < RUN; ++j) {
        acc[j] = has_bias && j < len ? bias[f0 + j] : 0.0f;
        channel[j] = (f0 + j) / M;
    }
    for (int ky = max(0, -y0); ky < min(KH, H - y0); ++ky) {
        for (int kx = max(0, -x0); kx < min(KW, W - x0); ++kx) {
            __global const float *xp = x + ((size_t)(b * H + y0 + ky) * W + x0 + kx) * C;
            __global const float *wp = weight + (ky * KW + kx) * F + f0;
            for (int j = 0; j < RUN; ++j)
                if (j < len) acc[j] = fma(xp[channel[j]], wp[j], acc[j]);
        }
    }
    __global float *dst = out + (size_t)p * F + f0;
    for (int j = 0; j < RUN; ++j)
        if (j < len) dst[j] = acc[j];
}

__kernel void depthwise_conv2d_backward_data(__global float *dx, __global const float *dout,
                                             __global const float *weight, const int H, const int W,
                                             const int C, const int OH, const int OW, const int KH,
                                             const int KW, const int SH, const int SW, const int PT,
                                             const int PL, const int M, const int n)
{
    const int i = get_global_id(0);   // n = N*H*W*runs, runs = ceil(C / RUN)
    if (i >= n) return;
    const int F = C * M, runs = (C + RUN - 1) / RUN;
    const int c0 = i % runs * RUN, p = i / runs, len = min(RUN, C - c0);
    const int ix = p % W, iy = (p / W) % H, b = p / (W * H);
    const int oy1 = min((iy + PT) / SH, OH - 1), ox1 = min((ix + PL) / SW, OW - 1);
    float acc[RUN];
    for (int j = 0; j < RUN; ++j)
        acc[j] = 0.0f;
    for (int oy = depthwise_first(iy, PT, KH, SH); oy <= oy1; ++oy) {
        const int ky = iy + PT - oy * SH;
        for (int ox = depthwise_first(ix, PL, KW, SW); ox <= ox1; ++ox) {
            const int kx = ix + PL - ox * SW;
            __global const float *d = dout + ((size_t)(b * OH + oy) * OW + ox) * F + c0 * M;
            __global const float *w = weight + (ky * KW + kx) * F + c0 * M;
            for (int j = 0; j < RUN; ++j)
                for (int m = 0; m < M; ++m)
                    if (j < len) acc[j] = fma(d[j * M + m], w[j * M + m], acc[j]);
        }
    }
    __global float *dst = dx + (size_t)p * C + c0;
    for (int j = 0; j < RUN; ++j)
        if (j < len) dst[j] = acc[j];
}

// partials (slices, KH*KW*F + F): slice s's sums over output rows [s*slice_rows, +slice_rows)
// of the N*OH rows; element e < KH*KW*F is weight element e's gradient, the last F the bias's
__kernel void depthwise_conv2d_filter_partial(__global float *partials, __global const float *dout,
                                              __global const float *x, const int H, const int W,
                                              const int C, const int OH, const int OW, const int KH,
                                              const int KW, const int SH, const int SW, const int PT,
                                              const int PL, const int M, const int slice_rows,
                                              const int rows, const int n)
{
    const int i = get_global_id(0);   // n = slices * (KH*KW*F + F), rows = N*OH
    if (i >= n) return;
    const int F = C * M, taps = KH * KW * F, part = taps + F;
    const int e = i % part, s = i / part;
    const int r0 = s * slice_rows, r1 = min(r0 + slice_rows, rows);
    float acc = 0.0f;
    if (e >= taps) {             // the bias: every output element of channel f
        __global const float *d = dout + e - taps;
        for (int q = r0 * OW; q < r1 * OW; ++q)
            acc += d[(size_t)q * F];
        partials[i] = acc;
        return;
    }
    const int f = e % F, tap = e / F, ky = tap / KW, kx = tap % KW, c = f / M;
    // the outputs ox whose tap kx reads a real column: 0 <= ox*SW - PL + kx < W
    const int lo = PL - kx, hi = W - 1 + PL - kx;
    const int ox0 = lo <= 0 ? 0 : (lo + SW - 1) / SW, ox1 = hi < 0 ? -1 : min(hi / SW, OW - 1);
    for (int r = r0; r < r1; ++r) {
        const int oy = r % OH, b = r / OH, iy = oy * SH - PT + ky;
        if (iy < 0 || iy >= H) continue;
        __global const float *xr = x + ((size_t)(b * H + iy) * W) * C + c;
        __global const float *d = dout + (size_t)r * OW * F + f;
        for (int ox = ox0; ox <= ox1; ++ox)
            acc = fma(xr[(size_t)(ox * SW - PL + kx) * C], d[(size_t)ox * F], acc);
    }
    partials[i] = acc;
}

// dweight (KH*KW*F) and dbias (F, written when has_bias) = the sums of the slices' partials
__kernel void depthwise_conv2d_filter_sum(__global float *dweight, __global float *dbias, const int has_bias,
                                          __global const float *partials, const int slices,
                                          const int taps, const int n)
{
    const int e = get_global_id(0);   // n = KH*KW*F + F, taps = KH*KW*F
    if (e >= n) return;
    float acc = 0.0f;
    for (int s = 0; s < slices; ++s)
        acc += partials[(size_t)s * n + e];
    if (e < taps)
        dweight[e] = acc;
    else if (has_bias)
        dbias[e - taps] = acc;
}
