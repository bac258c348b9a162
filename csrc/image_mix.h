/* The pixel work of Keras 3's mixing augmentation layers (MixUp, CutMix, RandomErasing,
 * RandomGaussianBlur, RandomSharpness; minidl/backends/image_mix_args.py). The layers draw
 * their per-sample numbers on the host and pass them as small float32 tables; a source index
 * in a table is clamped to the valid range. Each op has a plain reference twin (*_reference)
 * that a test compares it with. No op lets out alias an input. */
#ifndef MINIDL_IMAGE_MIX_H
#define MINIDL_IMAGE_MIX_H

#include <stdint.h>

/* out (n, size) = mix[s, 0] * x[s] + mix[s, 1] * x[(int)mix[s, 2]]; mix is (n, 3). */
void minidl_batch_mix_forward(float *out, const float *x, const float *mix, int n, int64_t size);
void minidl_batch_mix_reference(float *out, const float *x, const float *mix, int n, int64_t size);

/* out (n, h, w, c) = x, but pixel (i, j) of image s inside boxes[s] = (x0, x1, y0, y1, k, dx,
 * dy) (x0 <= j < x1, y0 <= i < y1 as floats) = source[k, i + dy, j + dx] clipped to [low, high];
 * source is (m, sh, sw, c), its coordinates clamped into it. */
void minidl_image_paste_forward(float *out, const float *x, const float *boxes, const float *source,
                                float low, float high, int n, int h, int w, int c, int m, int sh,
                                int sw);
void minidl_image_paste_reference(float *out, const float *x, const float *boxes,
                                  const float *source, float low, float high, int n, int h, int w,
                                  int c, int m, int sh, int sw);

/* out (n, h, w, c) = clip(x + weights[s] * (f - x), low, high), f the correlation of each
 * channel of x with kernel (kh, kw) (odd sizes) over the zero-padded image; an image whose
 * weight is 0 is only clipped. */
void minidl_image_filter_blend_forward(float *out, const float *x, const float *kernel,
                                       const float *weights, float low, float high, int n, int h,
                                       int w, int c, int kh, int kw);
void minidl_image_filter_blend_reference(float *out, const float *x, const float *kernel,
                                         const float *weights, float low, float high, int n,
                                         int h, int w, int c, int kh, int kw);

#endif
