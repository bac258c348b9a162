/* The per-pixel colour changes of the Keras 3 colour augmentation layers (see
 * minidl/backends/contract/images.py for the kinds and their params). Sample s draws u0, u1 from
 * the Philox4x32-10 words of counter (s, 0) under the seed, as image_adjust.h's ops do. */
#ifndef MINIDL_IMAGE_COLOR_H
#define MINIDL_IMAGE_COLOR_H

#include <stdint.h>

/* out (n, hw, c) = the colour change `kind` of x (n, hw, c) with params (4,), pixel values in
 * [low, high]. out may alias x. The plain reference twin is minidl_random_color_reference. */
void minidl_random_color_forward(float *out, const float *x, const float *params, int kind,
                                 float low, float high, uint64_t seed, int n, int64_t hw, int c);
void minidl_random_color_reference(float *out, const float *x, const float *params, int kind,
                                   float low, float high, uint64_t seed, int n, int64_t hw, int c);

/* out (n, hw, c) = Keras's AutoContrast of x: each image's channels stretched from their
 * [min, max] to [low, high] (through 0..255 as Keras computes it); a constant channel (Keras's
 * NaN) keeps x. out may alias x. The plain reference twin is minidl_auto_contrast_reference. */
void minidl_auto_contrast_forward(float *out, const float *x, float low, float high, int n,
                                  int64_t hw, int c);
void minidl_auto_contrast_reference(float *out, const float *x, float low, float high, int n,
                                    int64_t hw, int c);

#endif
