/* Per-pixel colour changes with one random draw per sample (see image_color.h). The fast
 * version hoists the per-sample decision out of the pixel loop (an image left unchanged is one
 * memcpy) and threads over samples; the reference applies pixel_color to every pixel. Both
 * compute in float32 in the order of minidl/backends/numpy_ops/images.py. */
#include <math.h>
#include <string.h>

#include "image_color.h"
#include "internal/channel_period.h"
#include "internal/image_loops.h"
#include "internal/parallel.h"
#include "internal/philox.h"

enum { KIND_GRAYSCALE, KIND_INVERT, KIND_POSTERIZE, KIND_SOLARIZE, KIND_DEGENERATE, KIND_SATURATION,
       KIND_HUE };

/* What one sample does: apply (0 leaves it as it is) and its drawn numbers. */
typedef struct { int apply; float a, b; int shift; } sample_color;

static sample_color draw_sample(const float *p, int kind, uint64_t seed, int64_t s)
{
    uint32_t words[4];
    philox4x32_10(words, (uint32_t)s, (uint32_t)((uint64_t)s >> 32), (uint32_t)seed,
                  (uint32_t)(seed >> 32));
    float u0 = (float)(words[0] >> 8) * (1.0f / 16777216.0f);
    float u1 = (float)(words[1] >> 8) * (1.0f / 16777216.0f);
    sample_color d = {1, 0.0f, 0.0f, 0};
    switch (kind) {
    case KIND_GRAYSCALE: d.apply = u0 < p[0]; break;
    case KIND_INVERT: d.apply = u1 < p[0] + (p[1] - p[0]) * u0; break;
    case KIND_POSTERIZE: {
        float bits = p[0] == p[1] ? p[0] : fminf(floorf(p[0] + (p[1] - p[0]) * u0), p[1] - 1.0f);
        d.shift = (int)(8.0f - bits);
        break;
    }
    case KIND_SOLARIZE:
        d.a = p[0] + (p[1] * 255.0f - p[0]) * u0;   /* addition, Keras's bounds */
        d.b = p[2] + (p[3] * 255.0f - p[2]) * u1;   /* threshold */
        break;
    case KIND_DEGENERATE: d.a = p[0] + (p[1] - p[0]) * u0; break;
    case KIND_SATURATION: {
        float f = p[0] + (p[1] - p[0]) * u0;
        d.a = f / (1.0f - f + 1e-7f);   /* Keras's f / (1 - f + epsilon) */
        break;
    }
    case KIND_HUE: d.a = (u0 > 0.5f ? -1.0f : 1.0f) * (p[0] + (p[1] - p[0]) * u1) * 0.5f; break;
    }
    return d;
}

static inline float clampf(float v, float low, float high)
{
    return v < low ? low : (v > high ? high : v);   /* NaN passes through */
}

/* Keras's rgb_to_hsv (its torch backend's formulas and selection order). */
static inline void rgb_to_hsv(float hsv[3], float r, float g, float b)
{
    const float eps = 1.1920929e-07f;   /* float32 epsilon: tiny values read as 0 */
    r = fabsf(r) < eps ? 0.0f : r;
    g = fabsf(g) < eps ? 0.0f : g;
    b = fabsf(b) < eps ? 0.0f : b;
    float value = fmaxf(fmaxf(r, g), b), minimum = fminf(fminf(r, g), b);
    float range = value - minimum;
    float norm = 1.0f / (6.0f * (range > 0.0f ? range : 1.0f));
    float hue = value == g ? norm * (b - r) + 2.0f / 6.0f : norm * (r - g) + 4.0f / 6.0f;
    if (value == r) hue = norm * (g - b);
    hsv[0] = (range > 0.0f ? hue : 0.0f) + (hue < 0.0f ? 1.0f : 0.0f);
    hsv[1] = value > 0.0f ? range / value : 0.0f;
    hsv[2] = value;
}

static inline void hsv_to_rgb(float rgb[3], float h, float s, float v)
{
    float dh = (h - floorf(h)) * 6.0f;
    float dr = clampf(fabsf(dh - 3.0f) - 1.0f, 0.0f, 1.0f);
    float dg = clampf(2.0f - fabsf(dh - 2.0f), 0.0f, 1.0f);
    float db = clampf(2.0f - fabsf(dh - 4.0f), 0.0f, 1.0f);
    rgb[0] = v * ((1.0f - s) + s * dr);
    rgb[1] = v * ((1.0f - s) + s * dg);
    rgb[2] = v * ((1.0f - s) + s * db);
}

/* dst (3,) = the saturation or hue change of one RGB pixel src (3,) (Keras's RandomSaturation
 * works on the raw values and clips s to value_range; RandomHue on values scaled to 0..1). */
static inline void pixel_hsv(float *dst, const float *src, const sample_color *d, int kind,
                             float low, float high)
{
    float hsv[3], rgb[3];
    if (kind == KIND_SATURATION) {
        rgb_to_hsv(hsv, src[0], src[1], src[2]);
        hsv_to_rgb(rgb, hsv[0], clampf(hsv[1] * d->a, low, high), hsv[2]);
        dst[0] = rgb[0]; dst[1] = rgb[1]; dst[2] = rgb[2];
        return;
    }
    const float scale = high - low;
    rgb_to_hsv(hsv, (src[0] - low) / scale, (src[1] - low) / scale, (src[2] - low) / scale);
    float h = hsv[0] + d->a;
    h = h > 1.0f ? h - 1.0f : h;
    h = h < 0.0f ? h + 1.0f : h;
    hsv_to_rgb(rgb, h, hsv[1], hsv[2]);
    for (int k = 0; k < 3; k++) dst[k] = clampf(rgb[k], 0.0f, 1.0f) * scale + low;
}

/* dst (c,) = the change of one pixel src (c,) under the sample's draw d. */
static inline __attribute__((always_inline)) void pixel_color(float *dst, const float *src,
                                                              const sample_color *d, int kind,
                                                              float low, float high, int c)
{
    if (kind == KIND_SATURATION || kind == KIND_HUE) {
        pixel_hsv(dst, src, d, kind, low, high);
        return;
    }
    const float to255 = 255.0f / (high - low), from255 = (high - low) / 255.0f;
    float gray = c == 3 ? (0.2989f * src[0] + 0.587f * src[1]) + 0.114f * src[2] : src[0];
    for (int k = 0; k < c; k++) {
        float v = src[k];
        switch (kind) {
        case KIND_GRAYSCALE: v = d->apply ? gray : v; break;
        case KIND_INVERT: v = d->apply ? high - v : v; break;
        case KIND_POSTERIZE: {
            uint32_t q = (uint32_t)clampf((v - low) * to255, 0.0f, 255.0f);   /* truncates */
            v = (float)((q >> d->shift) << d->shift) * from255 + low;
            break;
        }
        case KIND_SOLARIZE: {
            float r = clampf((v - low) * to255 + d->a, 0.0f, 255.0f);
            v = (r < d->b ? r : 255.0f - r) * from255 + low;
            break;
        }
        case KIND_DEGENERATE: v = clampf(v + d->a * (gray - v), low, high); break;
        }
        dst[k] = v;
    }
}

/* dst (hw, c) = pixel_color of each pixel of src (hw, c); inlined with a constant kind. */
static inline __attribute__((always_inline)) void pixels_color(float *dst, const float *src,
                                                               const sample_color *d, int kind,
                                                               float low, float high, int64_t hw,
                                                               int c)
{
    for (int64_t p = 0; p < hw; p++)
        pixel_color(dst + p * c, src + p * c, d, kind, low, high, c);
}

void minidl_random_color_reference(float *out, const float *x, const float *params, int kind,
                                   float low, float high, uint64_t seed, int n, int64_t hw, int c)
{
    for (int s = 0; s < n; s++) {
        sample_color d = draw_sample(params, kind, seed, s);
        for (int64_t p = 0; p < hw; p++) {
            int64_t i = ((int64_t)s * hw + p) * c;
            pixel_color(out + i, x + i, &d, kind, low, high, c);
        }
    }
}

void minidl_random_color_forward(float *out, const float *x, const float *params, int kind,
                                 float low, float high, uint64_t seed, int n, int64_t hw, int c)
{
    /* hue and saturation convert every pixel to HSV and back: enough work for the threads */
    const int64_t enough = kind == KIND_SATURATION || kind == KIND_HUE ? MINIDL_PARALLEL_MIN
                                                                       : MINIDL_STREAM_PARALLEL_MIN;
    int threaded = (int64_t)n * hw * c >= enough && n > 1;
#pragma omp parallel for schedule(static) if (threaded) num_threads(minidl_num_threads())
    for (int s = 0; s < n; s++) {
        sample_color d = draw_sample(params, kind, seed, s);
        const float *src = x + (int64_t)s * hw * c;   /* src is (hw, c) */
        float *dst = out + (int64_t)s * hw * c;
        if (!d.apply) {   /* grayscale / invert left this sample unchanged */
            if (dst != src) memcpy(dst, src, (size_t)(hw * c) * sizeof(float));
            continue;
        }
        if (kind == KIND_INVERT) {   /* the common whole-image case, vectorized */
#pragma omp simd
            for (int64_t k = 0; k < hw * c; k++) dst[k] = high - src[k];
            continue;
        }
        switch (kind) {   /* a literal kind each: the compiler drops the per-pixel switch */
        /* posterize and solarize touch each value alone: one flat loop over hw * c values,
         * vectorized for the active ISA (internal/image_loops.h: pixel_color's operations in
         * its order; a pixel loop with a runtime c of 3 inside did not vectorize) */
        case KIND_POSTERIZE: minidl_image_loops()->posterize(dst, src, hw * c, d.shift, low, high); break;
        case KIND_SOLARIZE:
            minidl_image_loops()->solarize(dst, src, hw * c, d.a, d.b, low, high);
            break;
        case KIND_DEGENERATE:   /* reads the pixel's gray: RGB in the ISA's vector loop */
            if (c == 3)
                minidl_image_loops()->degenerate_rgb(dst, src, hw, d.a, low, high);
            else
                pixels_color(dst, src, &d, KIND_DEGENERATE, low, high, hw, c);
            break;
        case KIND_SATURATION: pixels_color(dst, src, &d, KIND_SATURATION, low, high, hw, c); break;
        case KIND_HUE: pixels_color(dst, src, &d, KIND_HUE, low, high, hw, c); break;
        default: pixels_color(dst, src, &d, kind, low, high, hw, c); break;
        }
    }
}

/* One value of AutoContrast: v (0..255) of a channel spanning [lo, hi] (0..255), back in
 * [low, high]; Keras's inf / NaN of a constant channel is the input itself. */
static inline float stretch(float x, float lo, float hi, float low, float high)
{
    const float to255 = 255.0f / (high - low);
    float scale = 255.0f / (hi - lo), offset = -lo * scale;
    float v = ((x - low) * to255) * scale + offset;
    float result = clampf(v, 0.0f, 255.0f) * ((high - low) / 255.0f) + low;
    return result != result ? x : result;
}

void minidl_auto_contrast_reference(float *out, const float *x, float low, float high, int n,
                                    int64_t hw, int c)
{
    const float to255 = 255.0f / (high - low);
    for (int s = 0; s < n; s++)
        for (int k = 0; k < c; k++) {
            const float *src = x + (int64_t)s * hw * c + k;   /* channel k, stride c */
            float lo = INFINITY, hi = -INFINITY;
            for (int64_t p = 0; p < hw; p++) {
                float v = (src[p * c] - low) * to255;
                lo = v < lo ? v : lo;
                hi = v > hi ? v : hi;
            }
            for (int64_t p = 0; p < hw; p++)
                out[(int64_t)s * hw * c + p * c + k] = stretch(src[p * c], lo, hi, low, high);
        }
}

/* One image's AutoContrast with c < CHANNEL_PERIOD_MAX_C, in channel-periodic rows (see
 * channel_period.h) run by the active ISA's loops (internal/image_loops.h); the same numbers
 * as the channel-blocked loop below (stretch's scale and offset computed once per lane). */
static void auto_contrast_periodic(float *dst, const float *image, float low, float high,
                                   int64_t hw, int c)
{
    const struct image_loops *loops = minidl_image_loops();
    const int period = channel_period(c);
    const int64_t total = hw * c;
    float lo[CHANNEL_PERIOD_MAX], hi[CHANNEL_PERIOD_MAX];
    for (int j = 0; j < period; j++) { lo[j] = INFINITY; hi[j] = -INFINITY; }
    loops->extremes(lo, hi, image, total, period, low, high);
    float channel_lo[CHANNEL_PERIOD_MAX_C], channel_hi[CHANNEL_PERIOD_MAX_C];
    for (int k = 0; k < c; k++) { channel_lo[k] = INFINITY; channel_hi[k] = -INFINITY; }
    for (int j = 0; j < period; j++) {   /* min / max do not depend on the order: exact */
        int k = j % c;
        channel_lo[k] = lo[j] < channel_lo[k] ? lo[j] : channel_lo[k];
        channel_hi[k] = hi[j] > channel_hi[k] ? hi[j] : channel_hi[k];
    }
    float scale[CHANNEL_PERIOD_MAX], offset[CHANNEL_PERIOD_MAX];
    for (int j = 0; j < period; j++) {   /* stretch's first two lines */
        int k = j % c;
        scale[j] = 255.0f / (channel_hi[k] - channel_lo[k]);
        offset[j] = -channel_lo[k] * scale[j];
    }
    loops->stretch(dst, image, scale, offset, total, period, low, high);
}

void minidl_auto_contrast_forward(float *out, const float *x, float low, float high, int n,
                                  int64_t hw, int c)
{
    const float to255 = 255.0f / (high - low);
    int threaded = (int64_t)n * hw * c >= MINIDL_STREAM_PARALLEL_MIN && n > 1;
#pragma omp parallel for schedule(static) if (threaded) num_threads(minidl_num_threads())
    for (int s = 0; s < n; s++) {
        const float *image = x + (int64_t)s * hw * c;   /* image is (hw, c) */
        float *dst = out + (int64_t)s * hw * c;
        if (c < CHANNEL_PERIOD_MAX_C) {
            auto_contrast_periodic(dst, image, low, high, hw, c);
            continue;
        }
        for (int c0 = 0; c0 < c; c0 += 64) {            /* 64 channels' extremes at a time */
            int cn = c - c0 < 64 ? c - c0 : 64;
            float lo[64], hi[64];
            for (int k = 0; k < cn; k++) { lo[k] = INFINITY; hi[k] = -INFINITY; }
            for (int64_t p = 0; p < hw; p++)             /* pixel-major: one pass over memory */
                for (int k = 0; k < cn; k++) {
                    float v = (image[p * c + c0 + k] - low) * to255;
                    lo[k] = v < lo[k] ? v : lo[k];
                    hi[k] = v > hi[k] ? v : hi[k];
                }
            for (int64_t p = 0; p < hw; p++)
                for (int k = 0; k < cn; k++)
                    dst[p * c + c0 + k] = stretch(image[p * c + c0 + k], lo[k], hi[k], low, high);
        }
    }
}
