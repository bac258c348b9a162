/* larq's quantizers (minidl.larq.quantizers) as elementwise kernels: the forward quantization
 * and its straight-through (pseudo-)gradient. `op` is the position of the quantizer's name in
 * minidl.backends.base.QUANTIZERS:
 *   0 ste_sign, 1 approx_sign, 2 swish_sign: +1 for x >= 0, -1 below (larq's sign maps 0 to +1)
 *   3 ste_heaviside: 1 for x > 0, else 0
 *   4 ste_tern: sign(sign(x + t) + sign(x - t)) with t = param, or, when stat is not NULL,
 *     t = 0.7 * stat[0] / n (stat[0] = sum |x|: Ternary Weight Networks' threshold)
 *   5 dorefa_activations: round(clip(x, 0, 1) * param) / param (param = 2^k_bit - 1)
 *   6 dorefa_weights: 2 * round((tanh(x) / (2 M) + 0.5) * param) / param - 1, M = tanh(stat[0]),
 *     stat[0] = max |x| (0 where M is 0, TensorFlow's divide_no_nan)
 * Backward params: the clip value for 0, 3, 4 (INFINITY: no clipping), beta for 2; 1 and 5 take
 * none; 6 takes stat as the forward does. NaN inputs stay NaN forward and get a 0 gradient. */
#ifndef MINIDL_QUANTIZE_H
#define MINIDL_QUANTIZE_H

#include <stdint.h>

/* out (n) = q(x); out may alias x. */
void minidl_quantize_forward(float *out, const float *x, const float *stat, int op, float param, int64_t n);

/* dx (n) = dout * q'(x) as larq's custom gradient defines it; dx may alias dout. */
void minidl_quantize_backward(float *dx, const float *dout, const float *x, const float *stat, int op,
                              float param, int64_t n);

/* Plain one-element-at-a-time twins of the two above, for tests. */
void minidl_quantize_forward_reference(float *out, const float *x, const float *stat, int op, float param,
                                       int64_t n);
void minidl_quantize_backward_reference(float *dx, const float *dout, const float *x, const float *stat,
                                        int op, float param, int64_t n);

#endif
