/* Histogram equalization of images (n, h, w, c): Keras 3's Equalization and
 * ContrastLimitedAdaptiveHistogramEqualization (CLAHE), in float32 in the order of
 * minidl/backends/numpy_ops/equalize.py (itself Keras 3.15's torch code). */
#ifndef MINIDL_IMAGE_EQUALIZE_H
#define MINIDL_IMAGE_EQUALIZE_H

#include <stdint.h>

/* out (pixels, c) = x (pixels, c) equalized per channel over all `pixels` (every image of the
 * batch) with `bins` bins, values in [low, high]. out may alias x. Returns a minidl_status
 * (MINIDL_OUT_OF_MEMORY when the histograms cannot be allocated). The plain reference twin
 * is minidl_equalize_reference. */
int minidl_equalize_forward(float *out, const float *x, float low, float high, int bins,
                            int64_t pixels, int c);
int minidl_equalize_reference(float *out, const float *x, float low, float high, int bins,
                              int64_t pixels, int c);

/* out (n, h, w, c) = CLAHE of x (n, h, w, c) with a (grid_h, grid_w) tile grid and
 * clip_limit (<= 0: no clipping), values in [low, high]. out must not alias x. Returns a
 * minidl_status (MINIDL_OUT_OF_MEMORY for the per-image tables). The plain reference twin is
 * minidl_clahe_reference. */
int minidl_clahe_forward(float *out, const float *x, float low, float high, float clip_limit,
                         int grid_h, int grid_w, int n, int h, int w, int c);
int minidl_clahe_reference(float *out, const float *x, float low, float high, float clip_limit,
                           int grid_h, int grid_w, int n, int h, int w, int c);

#endif
