/* Resampling images along a per-pixel displacement field (Keras 3's RandomElasticTransform;
 * minidl/backends/image_displace_args.py). Output pixel (i, j) of image s reads x[s] at the
 * point (i + field[s, i, j, 0], j + field[s, i, j, 1]) as Keras's map_coordinates does:
 * interpolation 0 nearest (the point rounded half to even), 1 bilinear (taps in the order
 * (y0, x0), (y0, x1), (y1, x0), (y1, x1)); a tap outside the image is read by fill_mode
 * 0 constant (fill_value), 1 nearest, 2 wrap, 3 reflect (d c b a | a b c d | d c b a),
 * 4 mirror (c d c b | a b c d | c b a b). Taps of weight 0 are skipped (a zero field gives x
 * exactly); a NaN coordinate gives NaN and no gradient. The forward clips to [low, high]. Each
 * op has a plain reference twin (*_reference) that a test compares it with. No aliasing. */
#ifndef MINIDL_IMAGE_DISPLACE_H
#define MINIDL_IMAGE_DISPLACE_H

#include <stdint.h>

void minidl_image_displace_forward(float *out, const float *x, const float *field,
                                   int interpolation, int fill_mode, float fill_value, float low,
                                   float high, int n, int h, int w, int c);
void minidl_image_displace_forward_reference(float *out, const float *x, const float *field,
                                             int interpolation, int fill_mode, float fill_value,
                                             float low, float high, int n, int h, int w, int c);
/* dx (n, h, w, c) = the adjoint of the forward (without its clip) applied to dout; taps that
 * read the constant fill contribute nothing. */
void minidl_image_displace_backward(float *dx, const float *dout, const float *field,
                                    int interpolation, int fill_mode, int n, int h, int w, int c);
void minidl_image_displace_backward_reference(float *dx, const float *dout, const float *field,
                                              int interpolation, int fill_mode, int n, int h,
                                              int w, int c);

#endif
