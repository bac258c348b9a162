/* Batch normalization over the last axis: x is viewed as (rows, c), statistics are per channel.
 * gamma / beta (and dgamma / dbeta) may be NULL (scale / center off). scratch holds
 * minidl_column_scratch_floats(c) floats. */
#ifndef MINIDL_BATCHNORM_H
#define MINIDL_BATCHNORM_H

#include <stdint.h>

/* out = gamma * (x - mean) * invstd + beta with the batch mean / biased variance; mean and
 * invstd (c) are saved for backward; moving = moving * momentum + batch * (1 - momentum). */
void minidl_batchnorm_forward_train(float *out, float *mean, float *invstd, float *moving_mean,
                                    float *moving_var, const float *x, const float *gamma, const float *beta,
                                    float momentum, float epsilon, int64_t rows, int64_t c, float *scratch);

void minidl_batchnorm_forward_infer(float *out, const float *x, const float *gamma, const float *beta,
                                    const float *moving_mean, const float *moving_var, float epsilon,
                                    int64_t rows, int64_t c, float *scratch);

void minidl_batchnorm_backward(float *dx, float *dgamma, float *dbeta, const float *dout, const float *x,
                               const float *mean, const float *invstd, const float *gamma, int64_t rows,
                               int64_t c, float *scratch);

#endif
