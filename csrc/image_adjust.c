/* Random transforms, contrast, brightness and per-channel scale/shift (see image_adjust.h).
 * The transform formulas are Keras 3's (RandomRotation, RandomTranslation, RandomZoom,
 * RandomFlip, RandomCrop), in float32 in the order of minidl/backends/numpy_ops/images.py. */
#include <math.h>

#include "image_adjust.h"
#include "internal/channel_period.h"
#include "internal/image_loops.h"
#include "internal/parallel.h"
#include "internal/philox.h"

enum { KIND_FLIP, KIND_ROTATION, KIND_TRANSLATION, KIND_ZOOM, KIND_ZOOM_TIED, KIND_CROP, KIND_SHEAR };

static void sample_uniforms(float u[4], int64_t sample, uint64_t seed)
{
    uint32_t words[4];
    philox4x32_10(words, (uint32_t)sample, (uint32_t)((uint64_t)sample >> 32), (uint32_t)seed,
                  (uint32_t)(seed >> 32));
    for (int j = 0; j < 4; j++)
        u[j] = (float)(words[j] >> 8) * (1.0f / 16777216.0f);
}

static inline float clampf(float v, float low, float high)
{
    return v < low ? low : (v > high ? high : v);   /* NaN passes through */
}

void minidl_image_random_transforms(float *transforms, const float *ranges, int kind, uint64_t seed,
                                    int n, int height, int width)
{
    const float r0 = ranges[0], r1 = ranges[1], r2 = ranges[2], r3 = ranges[3];
    const float h1 = (float)(height - 1), w1 = (float)(width - 1);
    float first[4];
    sample_uniforms(first, 0, seed);
    for (int s = 0; s < n; s++) {
        float u[4], *t = transforms + (int64_t)s * 8;   /* t is (8,) */
        sample_uniforms(u, s, seed);
        for (int j = 0; j < 8; j++) t[j] = 0.0f;
        t[0] = t[4] = 1.0f;
        switch (kind) {
        case KIND_FLIP:
            if (r0 != 0.0f && u[0] < 0.5f) { t[0] = -1.0f; t[2] = w1; }
            if (r1 != 0.0f && u[1] < 0.5f) { t[4] = -1.0f; t[5] = h1; }
            break;
        case KIND_ROTATION: {
            float angle = 6.2831855f * (r0 + (r1 - r0) * u[0]);   /* float32(2 pi) */
            float cs = cosf(angle), sn = sinf(angle);
            t[0] = cs; t[1] = -sn; t[3] = sn; t[4] = cs;
            t[2] = (w1 - (cs * w1 - sn * h1)) / 2.0f;
            t[5] = (h1 - (sn * w1 + cs * h1)) / 2.0f;
            break;
        }
        case KIND_TRANSLATION:
            t[5] = -((r0 + (r1 - r0) * u[0]) * (float)height);
            t[2] = -((r2 + (r3 - r2) * u[1]) * (float)width);
            break;
        case KIND_ZOOM:
        case KIND_ZOOM_TIED: {
            float zh = 1.0f + r0 + (r1 - r0) * u[0];
            float zw = kind == KIND_ZOOM_TIED ? zh : 1.0f + r2 + (r3 - r2) * u[1];
            t[0] = zw; t[4] = zh;
            t[2] = w1 / 2.0f * (1.0f - zw);
            t[5] = h1 / 2.0f * (1.0f - zh);
            break;
        }
        case KIND_CROP:
            t[5] = fminf(floorf(first[0] * (r0 + 1.0f)), r0);
            t[2] = fminf(floorf(first[1] * (r1 + 1.0f)), r1);
            break;
        case KIND_SHEAR: {   /* Keras's RandomShear: both shears take one random sign */
            float sign = u[0] > 0.5f ? -1.0f : 1.0f;
            t[1] = (r0 + (r1 - r0) * u[1]) * sign;
            t[3] = (r2 + (r3 - r2) * u[2]) * sign;
            break;
        }
        }
    }
}

/* One image's contrast change with c < CHANNEL_PERIOD_MAX_C, in channel-periodic rows (see
 * channel_period.h): the channel sums in double lanes, folded in lane order. */
static void contrast_periodic(float *dst, const float *image, float factor, float low, float high,
                              int64_t hw, int c)
{
    const struct image_loops *loops = minidl_image_loops();   /* the active ISA's vector loops */
    const int period = channel_period(c);
    const int64_t total = hw * c;
    double sum[CHANNEL_PERIOD_MAX] = {0};
    loops->period_sums(sum, image, total, period);
    double channel_sum[CHANNEL_PERIOD_MAX_C] = {0};
    for (int j = 0; j < period; j++) channel_sum[j % c] += sum[j];
    float channel_mean[CHANNEL_PERIOD_MAX_C], mean[CHANNEL_PERIOD_MAX];
    for (int k = 0; k < c; k++) channel_mean[k] = (float)(channel_sum[k] / (double)hw);
    channel_period_spread(mean, channel_mean, c, period);
    loops->contrast(dst, image, mean, factor, total, period, low, high);
}

void minidl_random_contrast_forward(float *out, const float *x, float lower, float upper,
                                    float low, float high, uint64_t seed, int n, int64_t hw, int c)
{
    int threaded = (int64_t)n * hw * c >= MINIDL_STREAM_PARALLEL_MIN && n > 1;
#pragma omp parallel for schedule(static) if (threaded) num_threads(minidl_num_threads())
    for (int s = 0; s < n; s++) {
        float u[4];
        sample_uniforms(u, s, seed);
        float factor = (1.0f - lower) + (upper + lower) * u[0];
        const float *image = x + (int64_t)s * hw * c;   /* image is (hw, c) */
        float *dst = out + (int64_t)s * hw * c;
        if (c < CHANNEL_PERIOD_MAX_C) {
            contrast_periodic(dst, image, factor, low, high, hw, c);
            continue;
        }
        for (int c0 = 0; c0 < c; c0 += 64) {           /* 64 channels' sums at a time */
            int cn = c - c0 < 64 ? c - c0 : 64;
            double sum[64] = {0};
            float mean[64];
            for (int64_t p = 0; p < hw; p++)
                for (int k = 0; k < cn; k++) sum[k] += image[p * c + c0 + k];
            for (int k = 0; k < cn; k++) mean[k] = (float)(sum[k] / (double)hw);
            for (int64_t p = 0; p < hw; p++)
                for (int k = 0; k < cn; k++) {
                    float v = image[p * c + c0 + k];
                    dst[p * c + c0 + k] = clampf((v - mean[k]) * factor + mean[k], low, high);
                }
        }
    }
}

void minidl_random_brightness_forward(float *out, const float *x, float lower, float upper,
                                      float low, float high, uint64_t seed, int n, int64_t size)
{
    int threaded = (int64_t)n * size >= MINIDL_STREAM_PARALLEL_MIN && n > 1;
#pragma omp parallel for schedule(static) if (threaded) num_threads(minidl_num_threads())
    for (int s = 0; s < n; s++) {
        float u[4];
        sample_uniforms(u, s, seed);
        float delta = (lower + (upper - lower) * u[0]) * (high - low);
        const float *src = x + (int64_t)s * size;
        float *dst = out + (int64_t)s * size;
#pragma omp simd
        for (int64_t k = 0; k < size; k++) dst[k] = clampf(src[k] + delta, low, high);
    }
}

void minidl_channel_scale_shift(float *out, const float *x, const float *scale, const float *shift,
                                int64_t rows, int c)
{
    int threaded = rows * c >= MINIDL_PARALLEL_MIN;
#pragma omp parallel for schedule(static) if (threaded) num_threads(minidl_num_threads())
    for (int64_t r = 0; r < rows; r++) {
        const float *src = x + r * c;
        float *dst = out + r * c;
#pragma omp simd
        for (int k = 0; k < c; k++) dst[k] = src[k] * scale[k] + shift[k];
    }
}
