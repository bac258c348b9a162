/* Pooling, padding and global average pooling on channels-last (N, H, W, C) float tensors. */
#ifndef MINIDL_POOL_H
#define MINIDL_POOL_H

#include <stdint.h>

#include "window.h" /* the window's geometry; for a pooling f == c */

/* argmax holds each winner's index ky * kw + kx inside its window; padding never wins and
 * the first (lowest index) maximum wins ties. As in numpy, a window holding NaN gives NaN and
 * the argmax of its first NaN. */
void minidl_max_pool2d_forward(float *out, int32_t *argmax, const float *x, const struct minidl_window *win);
void minidl_max_pool2d_backward(float *dx, const float *dout, const int32_t *argmax,
                                const struct minidl_window *win);
/* Means over the real (unpadded) positions of each window. */
void minidl_avg_pool2d_forward(float *out, const float *x, const struct minidl_window *win);
void minidl_avg_pool2d_backward(float *dx, const float *dout, const struct minidl_window *win);

/* out (n, c) = mean of x (n, hw, c) over its hw positions, and the backward broadcast. */
void minidl_global_avg_pool_forward(float *out, const float *x, int64_t n, int64_t hw, int64_t c);
void minidl_global_avg_pool_backward(float *dx, const float *dout, int64_t n, int64_t hw, int64_t c);

/* out (n, h + top + bottom, w + left + right, c) = x (n, h, w, c) zero-padded; backward crops. */
void minidl_pad2d_forward(float *out, const float *x, int64_t n, int64_t h, int64_t w, int64_t c,
                          int64_t top, int64_t bottom, int64_t left, int64_t right);
void minidl_pad2d_backward(float *dx, const float *dout, int64_t n, int64_t h, int64_t w, int64_t c,
                           int64_t top, int64_t bottom, int64_t left, int64_t right);

#endif
