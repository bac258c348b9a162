// Image ops of the preprocessing layers: sampling under per-image transforms (Keras's
// projective layout, see minidl/backends/base.py "images"), the layers' random transforms,
// contrast, brightness and per-channel scale/shift. Formulas and float32 order follow the
// numpy reference (minidl/backends/numpy_ops/images.py) and csrc/image_*.c.
// Codes: interpolation 0 nearest, 1 bilinear; fill_mode 0 constant, 1 nearest, 2 wrap,
// 3 reflect; kind 0 flip, 1 rotation, 2 translation, 3 zoom, 4 zoom_tied, 5 crop, 6 shear.

#define TAP_CAP 1e9f   // coordinates are capped here before becoming integer tap indices

// Tap index i along an axis of `size` pixels mapped inside by the fill mode; -1 reads the
// constant. In int: a tap is capped at TAP_CAP (fits), and an image side is far below 2^30
// (the 64-bit arithmetic this used cost PoCL's vectorized work-items dearly).
int fix_index(const int i, const int size, const int fill_mode)
{
    if (i >= 0 && i < size) return i;
    if (fill_mode == 1) return i < 0 ? 0 : size - 1;
    // one period out (the common case under shear, translation, rotation): no division
    if (fill_mode == 2 && i >= -size && i < 2 * size) return i < 0 ? i + size : i - size;
    if (fill_mode == 3 && i >= -size && i < 2 * size) return i < 0 ? -1 - i : 2 * size - 1 - i;
    if (fill_mode == 2) { const int m = i % size; return m < 0 ? m + size : m; }
    if (fill_mode == 3) {           // d c b a | a b c d | d c b a
        const long period = 2 * (long)size;
        long m = i % period;
        if (m < 0) m += period;
        return (int)(m >= size ? period - 1 - m : m);
    }
    return -1;
}

int tap_index(const float p) { return (int)clamp(p, -TAP_CAP, TAP_CAP); }

// Up to four taps (pixel offsets y * w + x, -1 for the constant) and weights of output pixel (ox, oy).
int find_taps(float weight[4], long offset[4], __global const float *t, const float ox,
              const float oy, const int h, const int w, const int interpolation, const int fill_mode)
{
    const float k = t[6] * ox + t[7] * oy + 1.0f;
    const float px = (t[0] * ox + t[1] * oy + t[2]) / k;
    const float py = (t[3] * ox + t[4] * oy + t[5]) / k;
    if (interpolation == 0) {
        const int iy = fix_index(tap_index(floor(py + 0.5f)), h, fill_mode);
        const int ix = fix_index(tap_index(floor(px + 0.5f)), w, fill_mode);
        weight[0] = 1.0f;
        offset[0] = iy < 0 || ix < 0 ? -1 : (long)iy * w + ix;
        return 1;
    }
    const float x0 = floor(px), y0 = floor(py);
    const float fx = px - x0, fy = py - y0;
    const int ty = tap_index(y0), tx = tap_index(x0);
    const int ys[2] = {fix_index(ty, h, fill_mode), fix_index(ty + 1, h, fill_mode)};
    const int xs[2] = {fix_index(tx, w, fill_mode), fix_index(tx + 1, w, fill_mode)};
    const float wy[2] = {1.0f - fy, fy}, wx[2] = {1.0f - fx, fx};
    for (int a = 0; a < 2; ++a)
        for (int b = 0; b < 2; ++b) {
            weight[2 * a + b] = wy[a] * wx[b];
            offset[2 * a + b] = ys[a] < 0 || xs[b] < 0 ? -1 : (long)ys[a] * w + xs[b];
        }
    return 4;
}

// out (n, oh, ow, c) from x (n, h, w, c): one work-item per output pixel.
__kernel void image_transform_forward(__global float *out, __global const float *x,
                                      __global const float *transforms, const int interpolation,
                                      const int fill_mode, const float fill_value, const int n,
                                      const int h, const int w, const int c, const int oh,
                                      const int ow, const int transform_rows)
{
    const long pixel = get_global_id(0);
    if (pixel >= (long)n * oh * ow) return;
    long b;
    int oy, ox;
    if ((long)n * oh * ow <= INT_MAX) {   // 32-bit divisions: several times cheaper on a CPU
        const int p = (int)pixel, row = p / ow;
        b = row / oh;
        oy = row - (int)b * oh;
        ox = p - row * ow;
    } else {
        b = pixel / ((long)oh * ow);
        oy = (int)(pixel / ow % oh);
        ox = (int)(pixel % ow);
    }
    __global const float *t = transforms + (transform_rows == 1 ? 0 : b) * 8;
    __global const float *image = x + b * h * w * c;
    __global float *dst = out + pixel * c;
    if (t[6] == 0.0f && t[7] == 0.0f) {   // affine, every tap inside: no fill mode to apply
        const float px = t[0] * (float)ox + t[1] * (float)oy + t[2];
        const float py = t[3] * (float)ox + t[4] * (float)oy + t[5];
        if (interpolation == 0) {
            const float qx = px + 0.5f, qy = py + 0.5f;
            if (qx >= 0.0f && qy >= 0.0f && qx < (float)w && qy < (float)h) {
                __global const float *src = image + ((long)(int)qy * w + (int)qx) * c;
                for (int ch = 0; ch < c; ++ch) dst[ch] = src[ch];
                return;
            }
        } else if (px >= 0.0f && py >= 0.0f && px < (float)(w - 1) && py < (float)(h - 1)) {
            const int x0 = (int)px, y0 = (int)py;
            const float fx = px - (float)x0, fy = py - (float)y0;
            const float w00 = (1.0f - fy) * (1.0f - fx), w01 = (1.0f - fy) * fx;
            const float w10 = fy * (1.0f - fx), w11 = fy * fx;
            __global const float *a = image + ((long)y0 * w + x0) * c;
            __global const float *below = a + (long)w * c;
            for (int ch = 0; ch < c; ++ch)
                dst[ch] = ((w00 * a[ch] + w01 * a[c + ch]) + w10 * below[ch]) + w11 * below[c + ch];
            return;
        }
    }
    float weight[4];
    long offset[4];
    const int count = find_taps(weight, offset, t, (float)ox, (float)oy, h, w, interpolation,
                                fill_mode);
    for (int ch = 0; ch < c; ++ch) {
        float sum = 0.0f;
        for (int k = 0; k < count; ++k) {
            const float v = offset[k] < 0 ? fill_value : image[offset[k] * c + ch];
            sum = count == 1 ? v : sum + weight[k] * v;
        }
        dst[ch] = sum;
    }
}

// dx (n, h, w, c) = the adjoint applied to dout (n, oh, ow, c): one work-item per (image,
// channel) plane, which it zeroes and then scatters into alone (no two items share an element).
__kernel void image_transform_backward(__global float *dx, __global const float *dout,
                                       __global const float *transforms, const int interpolation,
                                       const int fill_mode, const int n, const int h, const int w,
                                       const int c, const int oh, const int ow,
                                       const int transform_rows)
{
    const long plane = get_global_id(0);
    if (plane >= (long)n * c) return;
    const long b = plane / c;
    const int ch = (int)(plane % c);
    __global float *image = dx + b * h * w * c + ch;
    for (long p = 0; p < (long)h * w; ++p) image[p * c] = 0.0f;
    __global const float *t = transforms + (transform_rows == 1 ? 0 : b) * 8;
    for (int oy = 0; oy < oh; ++oy)
        for (int ox = 0; ox < ow; ++ox) {
            float weight[4];
            long offset[4];
            const int count = find_taps(weight, offset, t, (float)ox, (float)oy, h, w,
                                        interpolation, fill_mode);
            const float g = dout[((b * oh + oy) * ow + ox) * c + ch];
            for (int k = 0; k < count; ++k)
                if (offset[k] >= 0) image[offset[k] * c] += weight[k] * g;
        }
}

// The four uniforms (word >> 8) / 2^24 of sample s under the seed.
float4 sample_uniforms(const long s, const uint seed_lo, const uint seed_hi)
{
    const uint4 bits = philox4x32((uint4)((uint)s, (uint)(s >> 32), 0u, 0u), (uint2)(seed_lo, seed_hi));
    return convert_float4(bits >> 8) * (1.0f / 16777216.0f);
}

// transforms (n, 8): one work-item per sample.
__kernel void image_random_transforms(__global float *transforms, const float r0, const float r1,
                                      const float r2, const float r3, const int kind,
                                      const uint seed_lo, const uint seed_hi, const int n,
                                      const int height, const int width)
{
    const int s = get_global_id(0);
    if (s >= n) return;
    const float4 u = sample_uniforms(s, seed_lo, seed_hi);
    const float h1 = (float)(height - 1), w1 = (float)(width - 1);
    float t[8] = {1.0f, 0.0f, 0.0f, 0.0f, 1.0f, 0.0f, 0.0f, 0.0f};
    if (kind == 0) {
        if (r0 != 0.0f && u.x < 0.5f) { t[0] = -1.0f; t[2] = w1; }
        if (r1 != 0.0f && u.y < 0.5f) { t[4] = -1.0f; t[5] = h1; }
    } else if (kind == 1) {
        const float angle = 6.2831855f * (r0 + (r1 - r0) * u.x);   // float32(2 pi)
        const float cs = cos(angle), sn = sin(angle);
        t[0] = cs; t[1] = -sn; t[3] = sn; t[4] = cs;
        t[2] = (w1 - (cs * w1 - sn * h1)) / 2.0f;
        t[5] = (h1 - (sn * w1 + cs * h1)) / 2.0f;
    } else if (kind == 2) {
        t[5] = -((r0 + (r1 - r0) * u.x) * (float)height);
        t[2] = -((r2 + (r3 - r2) * u.y) * (float)width);
    } else if (kind == 3 || kind == 4) {
        const float zh = 1.0f + r0 + (r1 - r0) * u.x;
        const float zw = kind == 4 ? zh : 1.0f + r2 + (r3 - r2) * u.y;
        t[0] = zw; t[4] = zh;
        t[2] = w1 / 2.0f * (1.0f - zw);
        t[5] = h1 / 2.0f * (1.0f - zh);
    } else if (kind == 5) {        // one corner for the batch, from sample 0's draws
        const float4 first = sample_uniforms(0, seed_lo, seed_hi);
        t[5] = fmin(floor(first.x * (r0 + 1.0f)), r0);
        t[2] = fmin(floor(first.y * (r1 + 1.0f)), r1);
    } else if (kind == 6) {        // Keras's RandomShear: both shears take one random sign
        const float sign = u.x > 0.5f ? -1.0f : 1.0f;
        t[1] = (r0 + (r1 - r0) * u.y) * sign;
        t[3] = (r2 + (r3 - r2) * u.z) * sign;
    }
    for (int j = 0; j < 8; ++j) transforms[s * 8 + j] = t[j];
}

// out (n, hw, c): one work-item per (image, channel): its mean, then its pixels.
__kernel void random_contrast_forward(__global float *out, __global const float *x,
                                      const float lower, const float upper, const float low,
                                      const float high, const uint seed_lo, const uint seed_hi,
                                      const int n, const int hw, const int c)
{
    const long plane = get_global_id(0);
    if (plane >= (long)n * c) return;
    const long s = plane / c;
    const float factor = (1.0f - lower) + (upper + lower) * sample_uniforms(s, seed_lo, seed_hi).x;
    const long base = s * hw * c + plane % c;
    float sum = 0.0f, carry = 0.0f;     // Kahan summation: the mean of a large image in float32
    for (long p = 0; p < hw; ++p) {
        const float y = x[base + p * c] - carry, next = sum + y;
        carry = (next - sum) - y;
        sum = next;
    }
    const float mean = sum / (float)hw;
    for (long p = 0; p < hw; ++p)
        out[base + p * c] = clip_nan((x[base + p * c] - mean) * factor + mean, low, high);
}

// out (n, size) = clip(x + delta of the sample): one work-item per run of BRIGHTNESS_RUN
// elements of one sample, so that each draws its sample's uniform (ten Philox rounds) once.
#define BRIGHTNESS_RUN 256
__kernel void random_brightness_forward(__global float *out, __global const float *x,
                                        const float lower, const float upper, const float low,
                                        const float high, const uint seed_lo, const uint seed_hi,
                                        const int n, const int size)
{
    const int runs = (size + BRIGHTNESS_RUN - 1) / BRIGHTNESS_RUN;
    const long item = get_global_id(0);
    if (item >= (long)n * runs) return;
    const long s = item / runs;
    const float delta = (lower + (upper - lower) * sample_uniforms(s, seed_lo, seed_hi).x) * (high - low);
    const long first = s * size + (item % runs) * BRIGHTNESS_RUN;
    const long last = min(first + BRIGHTNESS_RUN, (s + 1) * size);
    for (long i = first; i < last; ++i) out[i] = clip_nan(x[i] + delta, low, high);
}

// out (rows, c) = x * scale + shift: one work-item per element.
__kernel void channel_scale_shift(__global float *out, __global const float *x,
                                  __global const float *scale, __global const float *shift,
                                  const int size, const int c)
{
    const int i = get_global_id(0);
    if (i >= size) return;
    out[i] = x[i] * scale[i % c] + shift[i % c];
}
