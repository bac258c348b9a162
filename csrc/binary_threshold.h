/* BatchNormalization + sign folded into an integer threshold (larq compute engine's trick):
 * after a binary layer whose integer sums z feed a BatchNormalization and then the sign input
 * quantizer of the next binary layer, the next layer's packed input bits come straight from z.
 * For each channel the BN + sign is +1 exactly on an interval [lo, hi] of z (BN is monotonic
 * in z: increasing for gamma > 0, decreasing for gamma < 0, constant for gamma == 0), so
 *     bit b of word k = 1 (-1)  where  !(lo[32 k + b] <= z[..., 32 k + b] <= hi[32 k + b])
 * in binary_pack_input's layout (csrc/binary_conv.h). lo / hi may be -inf / +inf; lo > hi
 * makes the channel -1 everywhere. */
#ifndef MINIDL_BINARY_THRESHOLD_H
#define MINIDL_BINARY_THRESHOLD_H

#include <stdint.h>

/* bits (pixels, ceil(c / 32)) from z (pixels, c) and bounds (2, c): lo then hi. */
void minidl_binary_pack_thresholds(int32_t *bits, const float *z, const float *bounds, int64_t pixels,
                                   int64_t c);

/* The plain twin, one bit at a time, for tests. */
void minidl_binary_pack_thresholds_reference(int32_t *bits, const float *z, const float *bounds,
                                             int64_t pixels, int64_t c);

#endif
