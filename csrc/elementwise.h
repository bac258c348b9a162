/* Elementwise ops, bias and activations of the cpu backend (float32, C-contiguous).
 * n counts elements; (rows, c) views a tensor as rows of its last axis. Outputs may alias
 * inputs wherever minidl/backends/base.py allows it. */
#ifndef MINIDL_ELEMENTWISE_H
#define MINIDL_ELEMENTWISE_H

#include <stdint.h>

/* Floats of scratch bias_grad and the batchnorm ops need for c channels. */
int64_t minidl_column_scratch_floats(int64_t c);

void minidl_add(float *out, const float *a, const float *b, int64_t n);
void minidl_axpby(float *out, float alpha, const float *x, float beta, const float *y, int64_t n);
void minidl_multiply(float *out, const float *a, const float *b, int64_t n);
/* out (rows, c) = x (rows, c) + bias (c) */
void minidl_bias_add(float *out, const float *x, const float *bias, int64_t rows, int64_t c);
/* dbias (c) = column sums of dout (rows, c) */
void minidl_bias_grad(float *dbias, const float *dout, int64_t rows, int64_t c, float *scratch);

/* kind: enum minidl_activation of internal/vector_kernels.h (the order of minidl/activations.py):
 * 0 linear, 1 relu, 2 leaky_relu (slope alpha), 3 sigmoid, 4 tanh, 5 softmax (each row), 6 gelu,
 * ... 17 relu6; alpha is leaky_relu's slope and elu's alpha. */
void minidl_activation_forward(float *out, const float *x, int kind, float alpha, int64_t rows, int64_t c);
/* dx = dout * f'(x), through the forward output y and, for the kinds whose derivative is not
 * a function of y (gelu, silu, elu, softplus, hard_silu, mish), the forward input x (may be
 * NULL for the others) */
void minidl_activation_backward(float *dx, const float *dout, const float *y, const float *x, int kind,
                                float alpha, int64_t rows, int64_t c);

/* Copy a block of `width` columns between two row-major matrices with `rows` rows:
 * dst[r, dst_offset + j] = src[r, src_offset + j] (concatenate and its backward). */
void minidl_copy_columns(float *dst, const float *src, int64_t dst_cols, int64_t dst_offset,
                         int64_t src_cols, int64_t src_offset, int64_t width, int64_t rows);

#endif
