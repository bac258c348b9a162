/* Depthwise 2-D convolution, channels-last, with the geometry win of window.h, where
 * win->f = C * M (M, the depth multiplier, is win->f / win->c):
 *   x (N, H, W, C) with weight (KH, KW, C, M) -> out (N, OH, OW, C * M),
 *   out[n, oy, ox, c * M + m] = bias[c * M + m] + sum over ky, kx of
 *       x[n, oy * SH - pad_top + ky, ox * SW - pad_left + kx, c] * weight[ky, kx, c, m]
 * (input positions outside the image are padding and take no part). The fast kernels are
 * vectorized over the C * M output channels (contiguous in NHWC and in the weight) and run on
 * minidl_num_threads() threads; each returns MINIDL_OK or MINIDL_OUT_OF_MEMORY (status.h). */
#ifndef MINIDL_DEPTHWISE_H
#define MINIDL_DEPTHWISE_H

#include <stdint.h>

#include "window.h"

/* bias (C * M,) may be NULL. */
int minidl_depthwise_conv2d_forward(float *out, const float *x, const float *weight, const float *bias,
                                    const struct minidl_window *win);
/* dx (N, H, W, C) = gradient of the loss w.r.t. x, from dout (N, OH, OW, C * M). */
int minidl_depthwise_conv2d_backward_data(float *dx, const float *dout, const float *weight,
                                          const struct minidl_window *win);
/* dweight (KH, KW, C, M) and dbias (C * M,) (may be NULL), overwritten. */
int minidl_depthwise_conv2d_backward_filter(float *dweight, float *dbias, const float *dout, const float *x,
                                            const struct minidl_window *win);

/* Reference twins: the definition above as plain loops, single-threaded, summing in double. */
void minidl_depthwise_conv2d_forward_ref(float *out, const float *x, const float *weight, const float *bias,
                                         const struct minidl_window *win);
void minidl_depthwise_conv2d_backward_data_ref(float *dx, const float *dout, const float *weight,
                                               const struct minidl_window *win);
void minidl_depthwise_conv2d_backward_filter_ref(float *dweight, float *dbias, const float *dout,
                                                 const float *x, const struct minidl_window *win);

#endif
