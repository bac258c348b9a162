/* Dropout masks from a counter-based generator: the same seed gives the same mask. */
#ifndef MINIDL_DROPOUT_H
#define MINIDL_DROPOUT_H

#include <stdint.h>

/* mask (n) = keep / (1 - rate), keep ~ Bernoulli(1 - rate) from Philox4x32-10 keyed by seed;
 * out = x * mask. out may alias x. */
void minidl_dropout_forward(float *out, float *mask, const float *x, float rate, uint64_t seed, int64_t n);

#endif
