// UpSampling2D, channels-last: out (N, H*SH, W*SW, C) from x (N, H, W, C). Along each axis,
// output o reads inputs i0, i1 with weights 1 - t, t (csrc/upsample.h): nearest takes
// i0 = i1 = o / s; bilinear Keras's half-pixel centers, src = max((o + 0.5) / s - 0.5, 0),
// i0 = floor(src), i1 = min(i0 + 1, L - 1), t = src - i0. The backward pass is a gather: input
// i is read only by outputs in [(i - 1) * s, (i + 2) * s), so one work-item per input pixel
// sums them and no two work-items write one address.

void axis_taps(const int o, const int s, const int len, const int bilinear, int *i0, int *i1,
               float *t)
{
    if (!bilinear) {
        *i0 = *i1 = o / s;
        *t = 0.0f;
        return;
    }
    const float src = fmax(((float)o + 0.5f) / (float)s - 0.5f, 0.0f);
    *i0 = (int)src;
    *i1 = min(*i0 + 1, len - 1);
    *t = src - (float)*i0;
}

float axis_weight(const int o, const int i, const int s, const int len, const int bilinear)
{
    int i0, i1;
    float t;
    axis_taps(o, s, len, bilinear, &i0, &i1, &t);
    return (i0 == i ? 1.0f - t : 0.0f) + (i1 == i ? t : 0.0f);
}

// one work-item per output pixel (b, oy, ox), n = N*OH*OW
__kernel void upsample2d_forward(__global float *out, __global const float *x, const int SH,
                                 const int SW, const int bilinear, const int N, const int H,
                                 const int W, const int C, const int n)
{
    const int p = get_global_id(0);
    if (p >= n) return;
    const int OW = W * SW, OH = H * SH;
    const int ox = p % OW, oy = (p / OW) % OH, b = p / (OW * OH);
    int y0, y1, x0, x1;
    float ty, tx;
    axis_taps(oy, SH, H, bilinear, &y0, &y1, &ty);
    axis_taps(ox, SW, W, bilinear, &x0, &x1, &tx);
    __global const float *a = x + ((size_t)(b * H + y0) * W + x0) * C;
    __global const float *bb = x + ((size_t)(b * H + y0) * W + x1) * C;
    __global const float *d = x + ((size_t)(b * H + y1) * W + x0) * C;
    __global const float *e = x + ((size_t)(b * H + y1) * W + x1) * C;
    const float wa = (1.0f - ty) * (1.0f - tx), wb = (1.0f - ty) * tx;
    const float wd = ty * (1.0f - tx), we = ty * tx;
    __global float *dst = out + (size_t)p * C;
    if (!bilinear) {
        for (int c = 0; c < C; ++c) dst[c] = a[c];
        return;
    }
    for (int c = 0; c < C; ++c) dst[c] = wa * a[c] + wb * bb[c] + wd * d[c] + we * e[c];
}

// one work-item per input pixel (b, iy, ix), n = N*H*W
__kernel void upsample2d_backward(__global float *dx, __global const float *dout, const int SH,
                                  const int SW, const int bilinear, const int N, const int H,
                                  const int W, const int C, const int n)
{
    const int p = get_global_id(0);
    if (p >= n) return;
    const int OW = W * SW, OH = H * SH;
    const int ix = p % W, iy = (p / W) % H, b = p / (W * H);
    __global float *dst = dx + (size_t)p * C;
    for (int c = 0; c < C; ++c) dst[c] = 0.0f;
    for (int oy = max((iy - 1) * SH, 0); oy < min((iy + 2) * SH, OH); ++oy) {
        const float wy = axis_weight(oy, iy, SH, H, bilinear);
        if (wy == 0.0f) continue;
        for (int ox = max((ix - 1) * SW, 0); ox < min((ix + 2) * SW, OW); ++ox) {
            const float wgt = wy * axis_weight(ox, ix, SW, W, bilinear);
            if (wgt == 0.0f) continue;
            __global const float *src = dout + ((size_t)(b * OH + oy) * OW + ox) * C;
            for (int c = 0; c < C; ++c) dst[c] += wgt * src[c];
        }
    }
}
