/* Layer normalization over the last axis: x is viewed as (rows, c), statistics are per row
 * (Keras LayerNormalization with axis=-1); gamma / beta are per column (c). */
#ifndef MINIDL_LAYERNORM_H
#define MINIDL_LAYERNORM_H

#include <stdint.h>

/* out = (x - mean) * invstd * gamma + beta with each row's mean and biased variance;
 * mean and invstd = 1 / sqrt(var + epsilon) (rows) are saved for backward. centered 0 leaves
 * out x * invstd * gamma + beta (Keras's rms_scaling, which divides by the variance too). */
void minidl_layernorm_forward(float *out, float *mean, float *invstd, const float *x, const float *gamma,
                              const float *beta, float epsilon, int centered, int64_t rows, int64_t c);

/* dx (rows, c), dgamma and dbeta (c): the gradients of minidl_layernorm_forward. scratch holds
 * minidl_column_scratch_floats(c) floats (elementwise.h); dx must not alias dout or x. */
void minidl_layernorm_backward(float *dx, float *dgamma, float *dbeta, const float *dout, const float *x,
                               const float *mean, const float *invstd, const float *gamma, int centered,
                               int64_t rows, int64_t c, float *scratch);

#endif
