/* The random draws of the preprocessing layers and the per-pixel image adjustments.
 * Sample s draws its uniforms u0..u3 = (word >> 8) / 2^24 from the four Philox4x32-10 words of
 * counter (s, 0) under the seed: the same numbers as the numpy and OpenCL backends. */
#ifndef MINIDL_IMAGE_ADJUST_H
#define MINIDL_IMAGE_ADJUST_H

#include <stdint.h>

/* transforms (n, 8) = each sample's random transform of `kind` (0 flip, 1 rotation,
 * 2 translation, 3 zoom, 4 zoom_tied, 5 crop, 6 shear) for images of height x width; ranges (4,) as
 * minidl/backends/contract/images.py describes. */
void minidl_image_random_transforms(float *transforms, const float *ranges, int kind, uint64_t seed,
                                    int n, int height, int width);

/* out (n, hw, c) = clip((x - mean) * f + mean, low, high), mean per image and channel,
 * f = 1 - lower + (upper + lower) * u0. out may alias x. */
void minidl_random_contrast_forward(float *out, const float *x, float lower, float upper,
                                    float low, float high, uint64_t seed, int n, int64_t hw, int c);

/* out (n, size) = clip(x + (lower + (upper - lower) * u0) * (high - low), low, high).
 * out may alias x. */
void minidl_random_brightness_forward(float *out, const float *x, float lower, float upper,
                                      float low, float high, uint64_t seed, int n, int64_t size);

/* out (rows, c) = x * scale + shift, scale and shift (c,). out may alias x. */
void minidl_channel_scale_shift(float *out, const float *x, const float *scale, const float *shift,
                                int64_t rows, int c);

#endif
