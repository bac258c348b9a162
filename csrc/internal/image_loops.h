/* The flat loops of the image ops (solarize, posterize, equalize's bins, the filter of
 * RandomSharpness), written once in plain C (image_loops_impl.h) and compiled for each
 * instruction set (image_loops_generic.c, _avx2.c, _avx512.c), the table picked from cpuid.
 * Every loop does the same float32 operations in the same order whatever the vector width (no
 * reductions, no FMA contraction): results are bitwise those of the generic build. */
#ifndef MINIDL_IMAGE_LOOPS_H
#define MINIDL_IMAGE_LOOPS_H

#include <stdint.h>

struct image_loops {
    /* dst (n) = src (n) posterized: its 0..255 value truncated, the low `shift` bits dropped */
    void (*posterize)(float *dst, const float *src, int64_t n, int shift, float low, float high);
    /* dst (n) = src (n) solarized: r = clamp(0..255 value + addition), r < threshold ? r : 255 - r */
    void (*solarize)(float *dst, const float *src, int64_t n, float addition, float threshold,
                     float low, float high);
    /* bin (n) = equalize's histogram bin (v (bins - 1)) / 255 of v = x * scale + offset, clamped
     * to [0, bins - 1], a NaN in bin 0; lookup_bins the look-up index (v / 255) (bins - 1) */
    void (*histogram_bins)(int32_t *bin, const float *x, int64_t n, float scale, float offset, int bins);
    void (*lookup_bins)(int32_t *bin, const float *x, int64_t n, float scale, float offset, int bins);
    /* dst (w, c) = clamp(xrow + weight (f - xrow), low, high), f row i of the correlation of image
     * (h, w, c) with kernel (kh, kw) over the zero-padded image, xrow its row i */
    void (*filter_blend_row)(float *dst, const float *image, const float *kernel, float weight,
                             float low, float high, int i, int h, int w, int c, int kh, int kw);
    /* AutoContrast's channel-periodic rows (channel_period.h) of x (total): lo, hi (period) =
     * the running min / max of each lane's (x - low) 255 / (high - low) */
    void (*extremes)(float *lo, float *hi, const float *x, int64_t total, int period, float low,
                     float high);
    /* dst (total) = stretch of image_color.c for each lane's scale = 255 / (hi - lo) and
     * offset = -lo scale (period each): clamp(((x - low) 255 / (high - low)) scale + offset,
     * 0, 255) back in [low, high], x itself where that is NaN */
    void (*stretch)(float *dst, const float *x, const float *scale, const float *offset,
                    int64_t total, int period, float low, float high);
    /* RandomContrast's channel-periodic rows of x (total): sum (period) += each lane's values,
     * summed in double row after row; dst (total) = clamp((x - mean) factor + mean, low, high)
     * for each lane's mean (period) */
    void (*period_sums)(double *sum, const float *x, int64_t total, int period);
    void (*contrast)(float *dst, const float *x, const float *mean, float factor, int64_t total,
                     int period, float low, float high);
    /* dst (pixels, 3) = RandomColorDegeneration of RGB src (pixels, 3): each value v moved by
     * factor towards the pixel's gray (0.2989 r + 0.587 g) + 0.114 b, clamped to [low, high] */
    void (*degenerate_rgb)(float *dst, const float *src, int64_t pixels, float factor, float low,
                           float high);
};

const struct image_loops *minidl_image_loops_generic(void);
const struct image_loops *minidl_image_loops_avx2(void);
const struct image_loops *minidl_image_loops_avx512(void);
/* The table of the active ISA (cpu_features.h) */
const struct image_loops *minidl_image_loops(void);

#endif
