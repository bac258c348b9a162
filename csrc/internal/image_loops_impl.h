/* The loops of image_loops.h in plain C, included once per ISA file. Those files compile
 * without trapping math: under GCC's default -ftrapping-math a comparison may raise the invalid
 * flag, so nested selects (clamps, solarize's `r < threshold ? r : 255 - r`) are not
 * if-converted and the loops stayed scalar ("control flow in loop", -fopt-info-vec-missed).
 * Nothing in minidl reads the floating-point flags; the selects become vector compares and
 * blends with the same values lane by lane, NaN included. */
#ifndef MINIDL_IMAGE_LOOPS_IMPL_H
#define MINIDL_IMAGE_LOOPS_IMPL_H

#include <string.h>

#include "image_loops.h"

static inline float clamp_select(float v, float low, float high)
{
    return v < low ? low : (v > high ? high : v);   /* NaN passes through */
}

/* The quantized value is in 0..255, so a signed conversion truncates as the unsigned one does. */
static void posterize_loop(float *dst, const float *src, int64_t n, int shift, float low, float high)
{
    const float to255 = 255.0f / (high - low), from255 = (high - low) / 255.0f;
    for (int64_t i = 0; i < n; i++) {
        int32_t q = (int32_t)clamp_select((src[i] - low) * to255, 0.0f, 255.0f);
        dst[i] = (float)((q >> shift) << shift) * from255 + low;
    }
}

static void solarize_loop(float *dst, const float *src, int64_t n, float addition, float threshold,
                          float low, float high)
{
    const float to255 = 255.0f / (high - low), from255 = (high - low) / 255.0f;
    for (int64_t i = 0; i < n; i++) {
        float r = clamp_select((src[i] - low) * to255 + addition, 0.0f, 255.0f);
        dst[i] = (r < threshold ? r : 255.0f - r) * from255 + low;
    }
}

/* bin_of of image_equalize.c as one select: the float is clamped before the cast */
#define EQUALIZE_BIN_OF(scaled, top) ((scaled) > 0.0f ? (int32_t)((scaled) < (top) ? (scaled) : (top)) : 0)

static void histogram_bins_loop(int32_t *bin, const float *x, int64_t n, float scale, float offset,
                                int bins)
{
    const float top = (float)(bins - 1);
    for (int64_t i = 0; i < n; i++) {
        float scaled = ((x[i] * scale + offset) * (float)(bins - 1)) / 255.0f;
        bin[i] = EQUALIZE_BIN_OF(scaled, top);
    }
}

static void lookup_bins_loop(int32_t *bin, const float *x, int64_t n, float scale, float offset,
                             int bins)
{
    const float top = (float)(bins - 1);
    for (int64_t i = 0; i < n; i++) {
        float scaled = ((x[i] * scale + offset) / 255.0f) * (float)(bins - 1);
        bin[i] = EQUALIZE_BIN_OF(scaled, top);
    }
}

/* Taps of a filter row kept in FILTER_MAX_TAPS (pointer, weight) pairs; larger kernels take
 * the tap-by-tap loops. FILTER_BLOCK outputs are summed in registers at a time. */
#define FILTER_MAX_TAPS 64
#define FILTER_BLOCK 16

/* dst (w, c) = filter_blend_row of image_loops.h. Each output sums its taps in the order rows
 * then columns, starting from +0, skipping the taps in the zero padding (as adding them would
 * not: a NaN or infinite kernel value times 0). Outputs whose taps all lie in the row are summed
 * FILTER_BLOCK at a time over the list of taps; the c * (kw / 2) outputs at each end, tap by
 * tap with the same order. */
static void filter_blend_row_loop(float *dst, const float *image, const float *kernel, float weight,
                                  float low, float high, int i, int h, int w, int c, int kh, int kw)
{
    const int64_t row = (int64_t)w * c;
    const int ph = kh / 2, pw = kw / 2;
    const float *xrow = image + i * row;
    const float *tap_at[FILTER_MAX_TAPS];   /* the input element under output 0 of each tap */
    float tap_weight[FILTER_MAX_TAPS];
    int64_t tap_shift[FILTER_MAX_TAPS];
    int taps = 0;
    for (int a = 0; a < kh && taps <= FILTER_MAX_TAPS; a++) {
        const int r = i + a - ph;
        if (r < 0 || r >= h) continue;   /* zero padding adds nothing */
        for (int b = 0; b < kw; b++, taps++) {
            if (taps == FILTER_MAX_TAPS) { taps++; break; }
            tap_shift[taps] = (int64_t)(b - pw) * c;
            tap_at[taps] = image + r * row + tap_shift[taps];
            tap_weight[taps] = kernel[a * kw + b];
        }
    }
    const int64_t edge = (int64_t)pw * c;
    if (taps > FILTER_MAX_TAPS || row - 2 * edge < FILTER_BLOCK) {
        memset(dst, 0, (size_t)row * sizeof(float));
        for (int a = 0; a < kh; a++) {
            const int r = i + a - ph;
            if (r < 0 || r >= h) continue;
            const float *in = image + r * row;
            for (int b = 0; b < kw; b++) {
                const float k = kernel[a * kw + b];
                const int64_t shift = (int64_t)(b - pw) * c;
                const int64_t q0 = shift < 0 ? -shift : 0, q1 = shift > 0 ? row - shift : row;
                for (int64_t q = q0; q < q1; q++) dst[q] += k * in[q + shift];
            }
        }
    } else {
        /* the last block overlaps the one before: its outputs are recomputed, the same numbers */
        for (int64_t q0 = edge; q0 < row - edge; q0 += FILTER_BLOCK) {
            const int64_t q = q0 + FILTER_BLOCK <= row - edge ? q0 : row - edge - FILTER_BLOCK;
            float sum[FILTER_BLOCK] = {0};
            for (int t = 0; t < taps; t++) {
                const float *in = tap_at[t] + q;
                const float k = tap_weight[t];
                for (int j = 0; j < FILTER_BLOCK; j++) sum[j] += k * in[j];
            }
            for (int j = 0; j < FILTER_BLOCK; j++) dst[q + j] = sum[j];
        }
        for (int64_t e = 0; e < 2 * edge; e++) {   /* the ends: the taps inside the row */
            const int64_t q = e < edge ? e : row - 2 * edge + e;
            float sum = 0.0f;
            for (int t = 0; t < taps; t++)
                if (q + tap_shift[t] >= 0 && q + tap_shift[t] < row) sum += tap_weight[t] * tap_at[t][q];
            dst[q] = sum;
        }
    }
    for (int64_t q = 0; q < row; q++)
        dst[q] = clamp_select(xrow[q] + weight * (dst[q] - xrow[q]), low, high);
}

static void extremes_loop(float *lo, float *hi, const float *x, int64_t total, int period,
                          float low, float high)
{
    const float to255 = 255.0f / (high - low);
    for (int64_t i = 0; i < total; i += period) {
        const int64_t len = total - i < period ? total - i : period;
        for (int64_t j = 0; j < len; j++) {
            float v = (x[i + j] - low) * to255;
            lo[j] = v < lo[j] ? v : lo[j];
            hi[j] = v > hi[j] ? v : hi[j];
        }
    }
}

static void stretch_loop(float *dst, const float *x, const float *scale, const float *offset,
                         int64_t total, int period, float low, float high)
{
    const float to255 = 255.0f / (high - low), from255 = (high - low) / 255.0f;
    for (int64_t i = 0; i < total; i += period) {
        const int64_t len = total - i < period ? total - i : period;
        for (int64_t j = 0; j < len; j++) {
            float v = ((x[i + j] - low) * to255) * scale[j] + offset[j];
            float result = clamp_select(v, 0.0f, 255.0f) * from255 + low;
            dst[i + j] = result != result ? x[i + j] : result;
        }
    }
}

static void period_sums_loop(double *sum, const float *x, int64_t total, int period)
{
    for (int64_t i = 0; i < total; i += period) {
        const int64_t len = total - i < period ? total - i : period;
        for (int64_t j = 0; j < len; j++) sum[j] += x[i + j];
    }
}

static void contrast_loop(float *dst, const float *x, const float *mean, float factor,
                          int64_t total, int period, float low, float high)
{
    for (int64_t i = 0; i < total; i += period) {
        const int64_t len = total - i < period ? total - i : period;
        for (int64_t j = 0; j < len; j++)
            dst[i + j] = clamp_select((x[i + j] - mean[j]) * factor + mean[j], low, high);
    }
}

static void degenerate_rgb_loop(float *dst, const float *src, int64_t pixels, float factor,
                               float low, float high)
{
    for (int64_t p = 0; p < pixels; p++) {
        const float r = src[3 * p], g = src[3 * p + 1], b = src[3 * p + 2];
        const float gray = (0.2989f * r + 0.587f * g) + 0.114f * b;
        dst[3 * p] = clamp_select(r + factor * (gray - r), low, high);
        dst[3 * p + 1] = clamp_select(g + factor * (gray - g), low, high);
        dst[3 * p + 2] = clamp_select(b + factor * (gray - b), low, high);
    }
}

static const struct image_loops isa_image_loops = {posterize_loop, solarize_loop, histogram_bins_loop,
                                                   lookup_bins_loop, filter_blend_row_loop,
                                                   extremes_loop, stretch_loop, period_sums_loop,
                                                   contrast_loop, degenerate_rgb_loop};

#endif
