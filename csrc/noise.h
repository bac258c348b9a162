/* The ops of the noise layers: Gaussian noise from a counter-based generator, and the
 * per-sample channel mask of spatial dropout. */
#ifndef MINIDL_NOISE_H
#define MINIDL_NOISE_H

#include <stdint.h>

/* out (n) = x + stddev * z, z ~ N(0, 1) by Box-Muller on Philox4x32-10 words keyed by seed:
 * counter t gives elements 4t .. 4t+3 (the same seed gives the same noise). out may alias x. */
void minidl_gaussian_noise(float *out, const float *x, float stddev, uint64_t seed, int64_t n);

/* out (n, k, c) = x (n, k, c) * mask (n, c) broadcast over k. out may alias x. */
void minidl_channel_mask_multiply(float *out, const float *x, const float *mask, int64_t n, int64_t k,
                                  int64_t c);

#endif
