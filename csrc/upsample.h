/* UpSampling2D on channels-last (N, H, W, C) float tensors: out (N, H * SH, W * SW, C).
 *
 * Along each axis, output o of an input of length L upsampled by s reads inputs i0 and i1 with
 * weights 1 - t and t: nearest takes i0 = i1 = o / s (Keras's repeat); bilinear takes Keras's
 * resize with half-pixel centers (torch's align_corners=False, TensorFlow's half_pixel_centers):
 * src = max((o + 0.5) / s - 0.5, 0), i0 = floor(src), i1 = min(i0 + 1, L - 1), t = src - i0.
 * A pixel's weight is the product of its row's and its column's; backward routes dout back
 * along the same weights (the adjoint). bilinear is 0 (nearest) or 1. */
#ifndef MINIDL_UPSAMPLE_H
#define MINIDL_UPSAMPLE_H

#include <stdint.h>

void minidl_upsample2d_forward(float *out, const float *x, int64_t sh, int64_t sw, int bilinear,
                               int64_t n, int64_t h, int64_t w, int64_t c);
/* dx (N, H, W, C) from dout (N, H * SH, W * SW, C), overwritten. */
void minidl_upsample2d_backward(float *dx, const float *dout, int64_t sh, int64_t sw, int bilinear,
                                int64_t n, int64_t h, int64_t w, int64_t c);

/* Reference twins: the definition as plain loops over every (output, input) pair, one thread. */
void minidl_upsample2d_forward_ref(float *out, const float *x, int64_t sh, int64_t sw, int bilinear,
                                   int64_t n, int64_t h, int64_t w, int64_t c);
void minidl_upsample2d_backward_ref(float *dx, const float *dout, int64_t sh, int64_t sw, int bilinear,
                                    int64_t n, int64_t h, int64_t w, int64_t c);

#endif
