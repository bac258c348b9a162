/* Images sampled under per-image projective transforms (the preprocessing layers' affine ops).
 * Codes: interpolation 0 nearest, 1 bilinear; fill_mode 0 constant, 1 nearest, 2 wrap,
 * 3 reflect (minidl/backends/contract/images.py holds the table). */
#ifndef MINIDL_IMAGE_TRANSFORM_H
#define MINIDL_IMAGE_TRANSFORM_H

#include <stdint.h>

/* out (n, oh, ow, c) = x (n, h, w, c) read at each output pixel's input point under
 * transforms (transform_rows, 8), transform_rows 1 (shared) or n. Returns MINIDL_OK, or
 * MINIDL_INVALID_SIZE (status.h) writing nothing unless h, w, oh, ow >= 1 (every tap, even a
 * filled one, is mapped into the image, so an empty one has no pixel to read) and n, c >= 0. */
int minidl_image_transform_forward(float *out, const float *x, const float *transforms,
                                   int interpolation, int fill_mode, float fill_value,
                                   int n, int h, int w, int c, int oh, int ow, int transform_rows);

/* dx (n, h, w, c) = the adjoint of the forward applied to dout (n, oh, ow, c); the same
 * sizes are refused. */
int minidl_image_transform_backward(float *dx, const float *dout, const float *transforms,
                                    int interpolation, int fill_mode,
                                    int n, int h, int w, int c, int oh, int ow, int transform_rows);

#endif
