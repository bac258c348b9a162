// random_color_forward: the per-pixel colour changes of the Keras 3 colour augmentation layers
// (kinds and params: minidl/backends/contract/images.py). Formulas and float32 order follow the numpy
// reference (minidl/backends/numpy_ops/images.py) and csrc/image_color.c. One work-item per
// run of COLOR_RUN pixels of one image, so that each draws its sample's two uniforms (ten
// Philox rounds) once: per pixel, the draws cost PoCL more than the pixels themselves.
#define COLOR_RUN 64   // pixels per work-item of random_color_forward (tunable)
// COLOR_KIND: the backend builds random_color_forward once per kind with -DCOLOR_KIND=<code>,
// so that the per-pixel tests of the kind fold away, and posterize and solarize run one flat
// loop over the values; without it the kind is read at run time.
#ifdef COLOR_KIND
#define KIND COLOR_KIND
#else
#define KIND kind
#endif

// Kind codes: 0 grayscale, 1 invert, 2 posterize, 3 solarize, 4 degenerate, 5 saturation, 6 hue.

// Keras's rgb_to_hsv (its torch backend's formulas and selection order).
float3 rgb_to_hsv(float r, float g, float b)
{
    const float eps = 1.1920929e-07f;   // float32 epsilon: tiny values read as 0
    r = fabs(r) < eps ? 0.0f : r;
    g = fabs(g) < eps ? 0.0f : g;
    b = fabs(b) < eps ? 0.0f : b;
    const float value = fmax(fmax(r, g), b), range = value - fmin(fmin(r, g), b);
    const float norm = 1.0f / (6.0f * (range > 0.0f ? range : 1.0f));
    float hue = value == g ? norm * (b - r) + 2.0f / 6.0f : norm * (r - g) + 4.0f / 6.0f;
    if (value == r) hue = norm * (g - b);
    return (float3)((range > 0.0f ? hue : 0.0f) + (hue < 0.0f ? 1.0f : 0.0f),
                    value > 0.0f ? range / value : 0.0f, value);
}

float3 hsv_to_rgb(const float h, const float s, const float v)
{
    const float dh = (h - floor(h)) * 6.0f;
    const float3 d = (float3)(clip_nan(fabs(dh - 3.0f) - 1.0f, 0.0f, 1.0f),
                              clip_nan(2.0f - fabs(dh - 2.0f), 0.0f, 1.0f),
                              clip_nan(2.0f - fabs(dh - 4.0f), 0.0f, 1.0f));
    return (float3)(v * ((1.0f - s) + s * d.x), v * ((1.0f - s) + s * d.y), v * ((1.0f - s) + s * d.z));
}

__kernel void random_color_forward(__global float *out, __global const float *x,
                                   const float p0, const float p1, const float p2, const float p3,
                                   const int kind, const float low, const float high,
                                   const uint seed_lo, const uint seed_hi, const int n,
                                   const int hw, const int c)
{
    const int runs = (hw + COLOR_RUN - 1) / COLOR_RUN;   // runs of pixels per image
    const long item = get_global_id(0);
    if (item >= (long)n * runs) return;
    const long s = item / runs;   // the sample
    const uint4 bits = philox4x32((uint4)((uint)s, (uint)(s >> 32), 0u, 0u), (uint2)(seed_lo, seed_hi));
    const float u0 = (float)(bits.x >> 8) * (1.0f / 16777216.0f);
    const float u1 = (float)(bits.y >> 8) * (1.0f / 16777216.0f);
    const long first = s * hw + (item % runs) * COLOR_RUN;
    const long last = min(first + COLOR_RUN, (s + 1) * hw);
    int apply = 1, shift = 0;
    float a = 0.0f, b = 0.0f;
    if (KIND == 0) apply = u0 < p0;
    else if (KIND == 1) apply = u1 < p0 + (p1 - p0) * u0;
    else if (KIND == 2) shift = (int)(8.0f - (p0 == p1 ? p0 : fmin(floor(p0 + (p1 - p0) * u0), p1 - 1.0f)));
    else if (KIND == 3) { a = p0 + (p1 * 255.0f - p0) * u0; b = p2 + (p3 * 255.0f - p2) * u1; }
    else if (KIND == 4) a = p0 + (p1 - p0) * u0;
    else if (KIND == 5) { const float f = p0 + (p1 - p0) * u0; a = f / (1.0f - f + 1e-7f); }
    else a = (u0 > 0.5f ? -1.0f : 1.0f) * (p0 + (p1 - p0) * u1) * 0.5f;
#if defined(COLOR_KIND) && (COLOR_KIND == 2 || COLOR_KIND == 3)
    {   // posterize and solarize touch each value alone: one flat loop over the run's values
        const float to255 = 255.0f / (high - low), from255 = (high - low) / 255.0f;
        for (long q = first * c; q < last * c; ++q) {
            float v = x[q];
#if COLOR_KIND == 2
            const uint level = (uint)clip_nan((v - low) * to255, 0.0f, 255.0f);   // as uint8
            v = (float)((level >> shift) << shift) * from255 + low;
#else
            const float r = clip_nan((v - low) * to255 + a, 0.0f, 255.0f);
            v = (r < b ? r : 255.0f - r) * from255 + low;
#endif
            out[q] = v;
        }
        return;
    }
#endif
    for (long pixel = first; pixel < last; ++pixel) {
        __global const float *src = x + pixel * c;
        __global float *dst = out + pixel * c;
        const float to255 = 255.0f / (high - low), from255 = (high - low) / 255.0f;
        const float gray = c == 3 ? (0.2989f * src[0] + 0.587f * src[1]) + 0.114f * src[2] : src[0];
        if (KIND == 5) {   // Keras's RandomSaturation: raw values, s clipped to value_range
            const float3 hsv = rgb_to_hsv(src[0], src[1], src[2]);
            const float3 rgb = hsv_to_rgb(hsv.x, clip_nan(hsv.y * a, low, high), hsv.z);
            dst[0] = rgb.x; dst[1] = rgb.y; dst[2] = rgb.z;
            continue;
        }
        if (KIND == 6) {   // Keras's RandomHue: values scaled to 0..1
            const float scale = high - low;
            const float3 hsv = rgb_to_hsv((src[0] - low) / scale, (src[1] - low) / scale, (src[2] - low) / scale);
            float h = hsv.x + a;
            h = h > 1.0f ? h - 1.0f : h;
            h = h < 0.0f ? h + 1.0f : h;
            const float3 rgb = hsv_to_rgb(h, hsv.y, hsv.z);
            dst[0] = clip_nan(rgb.x, 0.0f, 1.0f) * scale + low;
            dst[1] = clip_nan(rgb.y, 0.0f, 1.0f) * scale + low;
            dst[2] = clip_nan(rgb.z, 0.0f, 1.0f) * scale + low;
            continue;
        }
        for (int k = 0; k < c; ++k) {
            float v = src[k];
            if (KIND == 0) v = apply ? gray : v;
            else if (KIND == 1) v = apply ? high - v : v;
            else if (KIND == 2) {
                const uint q = (uint)clip_nan((v - low) * to255, 0.0f, 255.0f);   // truncates, as uint8
                v = (float)((q >> shift) << shift) * from255 + low;
            } else if (KIND == 3) {
                const float r = clip_nan((v - low) * to255 + a, 0.0f, 255.0f);
                v = (r < b ? r : 255.0f - r) * from255 + low;
            } else v = clip_nan(v + a * (gray - v), low, high);
            dst[k] = v;
        }
    }
}

// out (n, hw, c) = Keras's AutoContrast of x (see csrc/image_color.c): one work-item per
// (image, channel), which finds the channel's extremes and then writes it (images are small).
__kernel void auto_contrast_forward(__global float *out, __global const float *x, const float low,
                                    const float high, const int n, const int hw, const int c)
{
    const int item = get_global_id(0);
    if (item >= n * c) return;
    const long base = (long)(item / c) * hw * c + item % c;
    const float to255 = 255.0f / (high - low);
    float lo = INFINITY, hi = -INFINITY;
    for (long p = 0; p < hw; ++p) {
        const float v = (x[base + p * c] - low) * to255;
        lo = v < lo ? v : lo;
        hi = v > hi ? v : hi;
    }
    const float scale = 255.0f / (hi - lo), offset = -lo * scale;
    for (long p = 0; p < hw; ++p) {
        const float v0 = x[base + p * c];
        const float result = clip_nan(((v0 - low) * to255) * scale + offset, 0.0f, 255.0f) * ((high - low) / 255.0f) + low;
        out[base + p * c] = result != result ? v0 : result;
    }
}
