// Resampling images along a per-pixel displacement field (Keras 3's RandomElasticTransform):
// image_displace_forward / _backward. The tap rules (Keras's map_coordinates: nearest rounds
// half to even; bilinear taps (y0, x0), (y0, x1), (y1, x0), (y1, x1); taps of weight 0
// skipped; a NaN coordinate gives NaN) and the float32 order are those of csrc/image_displace.c
// and minidl/backends/numpy_ops/displace.py. Codes: interpolation 0 nearest, 1 bilinear;
// fill_mode 0 constant, 1 nearest, 2 wrap, 3 reflect, 4 mirror. No tunables: one work-item per
// output pixel (forward) or per (image, channel) plane (backward, a scatter no two items share).

#define DISPLACE_TAP_CAP 1e9f   // coordinates are capped here before becoming integer tap indices

// Tap index i along an axis of `size` pixels mapped inside by the fill mode; -1: the constant.
long displace_fix(const long i, const long size, const int fill_mode)
{
    if (i >= 0 && i < size) return i;
    if (fill_mode == 0) return -1;
    if (fill_mode == 1) return i < 0 ? 0 : size - 1;
    if (fill_mode == 2) { const long m = i % size; return m < 0 ? m + size : m; }
    if (fill_mode == 3) {           // d c b a | a b c d | d c b a
        long m = i % (2 * size);
        if (m < 0) m += 2 * size;
        return m >= size ? 2 * size - 1 - m : m;
    }
    if (size == 1) return 0;        // mirror: c d c b | a b c d | c b a b
    long m = (i + size - 1) % (2 * (size - 1));
    if (m < 0) m += 2 * (size - 1);
    m -= size - 1;
    return m < 0 ? -m : m;
}

long displace_index(const float p) { return (long)clamp(p, -DISPLACE_TAP_CAP, DISPLACE_TAP_CAP); }

// Up to four taps (pixel offsets, -1 for the constant) and weights of output pixel (i, j);
// returns the count, or -1 for a NaN coordinate.
int displace_taps(float weight[4], long offset[4], __global const float *d, const int i,
                  const int j, const int h, const int w, const int interpolation,
                  const int fill_mode)
{
    const float py = (float)i + d[0], px = (float)j + d[1];
    if (isnan(py) || isnan(px)) return -1;
    if (interpolation == 0) {
        const long iy = displace_fix(displace_index(rint(py)), h, fill_mode);
        const long ix = displace_fix(displace_index(rint(px)), w, fill_mode);
        weight[0] = 1.0f;
        offset[0] = iy < 0 || ix < 0 ? -1 : iy * w + ix;
        return 1;
    }
    const float y0 = floor(py), x0 = floor(px);
    const float fy = py - y0, fx = px - x0;
    const long ty = displace_index(y0), tx = displace_index(x0);
    const long ys[2] = {displace_fix(ty, h, fill_mode), displace_fix(ty + 1, h, fill_mode)};
    const long xs[2] = {displace_fix(tx, w, fill_mode), displace_fix(tx + 1, w, fill_mode)};
    const float wy[2] = {1.0f - fy, fy}, wx[2] = {1.0f - fx, fx};
    for (int a = 0; a < 2; ++a)
        for (int b = 0; b < 2; ++b) {
            weight[2 * a + b] = wy[a] * wx[b];
            offset[2 * a + b] = ys[a] < 0 || xs[b] < 0 ? -1 : ys[a] * w + xs[b];
        }
    return 4;
}

// out (n, h, w, c), clipped to [low, high]: one work-item per output pixel.
__kernel void image_displace_forward(__global float *out, __global const float *x,
                                     __global const float *field, const int interpolation,
                                     const int fill_mode, const float fill_value, const float low,
                                     const float high, const int n, const int h, const int w,
                                     const int c)
{
    const long pixel = get_global_id(0);
    if (pixel >= (long)n * h * w) return;
    const long s = pixel / ((long)h * w);
    const int i = (int)(pixel / w % h), j = (int)(pixel % w);
    __global const float *image = x + s * h * w * c;
    float weight[4];
    long offset[4];
    const int count = displace_taps(weight, offset, field + 2 * pixel, i, j, h, w, interpolation,
                                    fill_mode);
    for (int ch = 0; ch < c; ++ch) {
        float sum = 0.0f;
        for (int k = 0; k < count; ++k) {
            if (weight[k] == 0.0f) continue;
            const float v = offset[k] < 0 ? fill_value : image[offset[k] * c + ch];
            sum += weight[k] * v;
        }
        // NaN passes through the clip; a NaN coordinate gives NaN
        out[pixel * c + ch] = count < 0 ? NAN : (sum < low ? low : (sum > high ? high : sum));
    }
}

// dx (n, h, w, c) = the adjoint applied to dout: one work-item per (image, channel) plane,
// which it zeroes and then scatters into alone.
__kernel void image_displace_backward(__global float *dx, __global const float *dout,
                                      __global const float *field, const int interpolation,
                                      const int fill_mode, const int n, const int h, const int w,
                                      const int c)
{
    const long plane = get_global_id(0);
    if (plane >= (long)n * c) return;
    const long s = plane / c;
    const int ch = (int)(plane % c);
    __global float *image = dx + s * h * w * c + ch;
    for (long p = 0; p < (long)h * w; ++p) image[p * c] = 0.0f;
    for (int i = 0; i < h; ++i)
        for (int j = 0; j < w; ++j) {
            const long pixel = (s * h + i) * w + j;
            float weight[4];
            long offset[4];
            const int count = displace_taps(weight, offset, field + 2 * pixel, i, j, h, w,
                                            interpolation, fill_mode);
            const float g = dout[pixel * c + ch];
            for (int k = 0; k < count; ++k)
                if (offset[k] >= 0 && weight[k] != 0.0f) image[offset[k] * c] += weight[k] * g;
        }
}
