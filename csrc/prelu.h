/* PReLU: x is viewed as (rows, k), alpha (k) holds one learned slope per column. */
#ifndef MINIDL_PRELU_H
#define MINIDL_PRELU_H

#include <stdint.h>

/* out = x > 0 ? x : alpha * x. out may alias x. */
void minidl_prelu_forward(float *out, const float *x, const float *alpha, int64_t rows, int64_t k);

/* dx = dout (x > 0), alpha * dout (x < 0), 0 (x == 0); dalpha (k) = column sums of x * dout
 * where x < 0. scratch holds minidl_column_scratch_floats(k) floats; dx must not alias dout or x. */
void minidl_prelu_backward(float *dx, float *dalpha, const float *dout, const float *x, const float *alpha,
                           int64_t rows, int64_t k, float *scratch);

#endif
