#ifndef MINIDL_CONV_H
#define MINIDL_CONV_H

#include <stddef.h>

#include "window.h"

/* 2-D convolution, channels-last, with the geometry s of window.h (shown for groups == 1; a
 * grouped one is `groups` such convolutions on channel and filter slices, see window.h):
 *   x (N, H, W, C) * weight (KH, KW, C, F) -> out (N, OH, OW, F)
 * with out[n, oy, ox, f] = sum over ky, kx, c of
 *   x[n, oy * SH - pad_top + ky * DH, ox * SW - pad_left + kx * DW, c] * weight[ky, kx, c, f]
 * (input positions outside the image read as zero). */

/* Floats of scratch the fast kernels need for this shape with minidl_num_threads()
 * threads; allocate it once per layer and pass it to every call. A smaller scratch
 * makes them use fewer threads (at least one thread's worth is required). It must be
 * 64-byte aligned: packed weights in it are read with aligned vector loads. */
size_t minidl_conv2d_scratch_floats(const struct minidl_window *s);

/* Each fast kernel returns a status (status.h): MINIDL_OK; MINIDL_SCRATCH_TOO_SMALL when the
 * scratch cannot hold one thread's work (nothing is written); MINIDL_OUT_OF_MEMORY.
 * bias (F,) may be NULL. */
int minidl_conv2d_forward(float *out, const float *x, const float *weight, const float *bias,
                          const struct minidl_window *s, float *scratch, size_t scratch_floats);
/* dx (N, H, W, C) = gradient of the loss w.r.t. x, from dout (N, OH, OW, F). */
int minidl_conv2d_backward_data(float *dx, const float *dout, const float *weight,
                                const struct minidl_window *s, float *scratch, size_t scratch_floats);
/* dweight (KH, KW, C, F) and dbias (F,) (may be NULL), overwritten. */
int minidl_conv2d_backward_filter(float *dweight, float *dbias, const float *dout, const float *x,
                                  const struct minidl_window *s, float *scratch, size_t scratch_floats);

/* Reference twins: the definition above as plain loops, single-threaded. */
void minidl_conv2d_forward_ref(float *out, const float *x, const float *weight, const float *bias,
                               const struct minidl_window *s);
void minidl_conv2d_backward_data_ref(float *dx, const float *dout, const float *weight,
                                     const struct minidl_window *s);
void minidl_conv2d_backward_filter_ref(float *dweight, float *dbias, const float *dout, const float *x,
                                       const struct minidl_window *s);

#endif
